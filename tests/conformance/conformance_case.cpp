#include "conformance_case.h"

#include "oar/error.h"

namespace oar::conformance {

const char* status_name(Status s) {
  switch (s) {
    case Status::kPass: return "PASS";
    case Status::kFail: return "FAIL";
    case Status::kSkip: return "SKIP";
    case Status::kCrash: return "CRASH";
    case Status::kTimeout: return "TIMEOUT";
    case Status::kAllowed: return "ALLOWED";
  }
  return "?";
}

bool parse_status(const std::string& text, Status& out) {
  for (Status s : {Status::kPass, Status::kFail, Status::kSkip, Status::kCrash, Status::kTimeout, Status::kAllowed})
    if (text == status_name(s)) {
      out = s;
      return true;
    }
  return false;
}

void fail(const std::string& reason) { throw CheckFailure(reason); }

Outcome run_guarded(const std::function<Outcome()>& run) {
  try {
    return run();
  } catch (const CheckFailure& e) {
    return {Status::kFail, e.what()};
  } catch (const NotApplicable& e) {
    return {Status::kSkip, e.what()};
  } catch (const Error& e) {
    return {Status::kFail, std::string("unexpected error: ") + e.what()};
  } catch (const std::exception& e) {
    return {Status::kFail, std::string("unexpected exception: ") + e.what()};
  }
}

}  // namespace oar::conformance
