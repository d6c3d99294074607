// Prints docs/ops.md: the op catalog and per-device kernel coverage.
#include <cstdio>

#include "oar/error.h"
#include "oar/op_docs.h"

int main() {
  try {
    std::fputs(oar::catalog_markdown().c_str(), stdout);
    return 0;
  } catch (const oar::Error& e) {
    std::fprintf(stderr, "oar-op-docs: %s: %s\n", oar::error_kind_name(e.kind()), e.what());
    return 1;
  }
}
