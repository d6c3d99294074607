// Launch helpers (see launch.h).
#include "launch.h"

namespace oar_ocl {

std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

ErrorFlag::ErrorFlag(OpContext& c) : c_(c) {
  buf_ = static_cast<cl_mem>(c.args.workspace(sizeof(int64_t)));
  int64_t init = kNoError;
  oar_ocl::check(clEnqueueFillBuffer(c.queue, buf_, &init, sizeof(init), 0, sizeof(init), 0, nullptr, nullptr),
                 "clEnqueueFillBuffer(error flag)");
}

void ErrorFlag::check(const std::string& what) {
  int64_t v = 0;
  oar_ocl::check(clEnqueueReadBuffer(c_.queue, buf_, CL_TRUE, 0, sizeof(v), &v, 0, nullptr, nullptr),
                 "clEnqueueReadBuffer(error flag)");
  if (v != kNoError) oar::sdk::fail(OAR_STATUS_OUT_OF_RANGE, what + ": index " + std::to_string(v) + " is out of range");
}

}  // namespace oar_ocl
