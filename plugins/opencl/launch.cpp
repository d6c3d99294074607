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

int64_t ErrorFlag::value() {
  int64_t v = 0;
  oar_ocl::check(clEnqueueReadBuffer(c_.queue, buf_, CL_TRUE, 0, sizeof(v), &v, 0, nullptr, nullptr),
                 "clEnqueueReadBuffer(error flag)");
  return v;
}


}  // namespace oar_ocl

namespace oar_ocl {

std::vector<double> read_element(OpContext& c, const oar_tensor_view& v, int64_t index) {
  int64_t off = v.offset;
  for (int d = v.ndim - 1; d >= 0; --d) {
    off += (index % v.shape[d]) * v.strides[d];
    index /= v.shape[d];
  }
  size_t size = oar::sdk::dtype_size(v.dtype);
  unsigned char buf[8] = {};
  oar_ocl::check(clEnqueueReadBuffer(c.queue, mem_of(v), CL_TRUE, size_t(off) * size, size, buf, 0, nullptr, nullptr),
                 "clEnqueueReadBuffer(element)");
  double value = oar::sdk::visit_dtype(v.dtype, [&]<class T>() {
    T t;
    std::memcpy(&t, buf, sizeof(T));
    return double(oar::kp::compute_t<T>(t));
  });
  return {value};
}

}  // namespace oar_ocl
