// Launch helpers (see launch.h).
#include "launch.h"

namespace oar_ocl {

std::mutex& launch_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace oar_ocl

