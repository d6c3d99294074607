// OpenCL kernels for fill, arange and the random ops (uniform, normal,
// bernoulli, dropout). Random values come from the Philox source shared with
// the CPU (kp/opencl/random.h), element i from (seed, offset + i), so a seed
// gives the same tensor on cpu and opencl.
#include "launch.h"
#include "oar/kp/opencl/random.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

// The CPU's from_double: bool is v != 0, integers truncate through int64.
std::string store_from_real(oar_dtype_t dt) {
  if (dt == OAR_DTYPE_BOOL) return "#define STORE_REAL(p, i, v) Y_STORE(p, i, (v) != 0)\n";
  if (!kcl::type_info(dt).floating) return "#define STORE_REAL(p, i, v) Y_STORE(p, i, (long)(v))\n";
  return "#define STORE_REAL(p, i, v) Y_STORE(p, i, (Y_c)(v))\n";
}

// A generator kernel: y[i] = expr(i) for contiguous y, with real parameters
// a0, a1 and the Philox (seed, offset). With an input, `q` is its element i.
std::string generator_source(oar_dtype_t out, const std::string& expr, bool fp64, int has_input,
                             oar_dtype_t in = OAR_DTYPE_F32) {
  std::string s = kcl::prelude(fp64) + kcl::operand_defs("Y", out) + kcl::philox_source() + store_from_real(out);
  if (has_input) s += kcl::operand_defs("X0", in);
  s += "__kernel void oar_gen(__global Y_t* y, long y_off, ";
  if (has_input) s += "__global const X0_t* x, long x_off, ";
  s += "oar_real a0, oar_real a1, ulong seed, ulong offset, long n, __global long* err) {\n";
  s += "  long i = get_global_id(0);\n  if (i >= n) return;\n";
  if (has_input) s += "  oar_real q = (oar_real)X0_LOAD(x, x_off + i);\n";
  s += "  STORE_REAL(y, y_off + i, (" + expr + "));\n}\n";
  return s;
}

struct RealArgs {
  double a0 = 0, a1 = 0;
  uint64_t seed = 0, offset = 0;
};

// Runs a generator over output 0 (contiguous); `input` is -1 or an input index.
// Returns the error flag's raw value (ErrorFlag::kNoError when untouched).
void run_generator(const sdk::KernelArgs& a, const std::string& name, const std::string& expr, RealArgs r,
                   int input = -1, ErrorFlag* flag = nullptr) {
  OpContext c = op_context(a);
  const auto& y = a.output(0);
  int64_t n = sdk::numel(y);
  if (n == 0) return;
  oar_dtype_t in = input >= 0 ? a.input(input).dtype : OAR_DTYPE_F32;
  std::string key = "gen:" + name + ":" + std::to_string(y.dtype) + ":" + std::to_string(in);
  cl_kernel k = get_kernel(c.dev, key, [&] { return generator_source(y.dtype, expr, c.dev.fp64, input >= 0, in); },
                           "oar_gen");
  Launch l(k);
  l.view(y);
  if (input >= 0) l.view(a.input(input));
  if (c.dev.fp64) l.scalar<cl_double>(r.a0).scalar<cl_double>(r.a1);
  else l.scalar<cl_float>(float(r.a0)).scalar<cl_float>(float(r.a1));
  cl_mem err = flag ? flag->buffer() : nullptr;
  l.scalar<cl_ulong>(r.seed).scalar<cl_ulong>(r.offset).scalar<cl_long>(n).mem(err).run(c.queue, size_t(n));
}

RealArgs philox_args(const sdk::KernelArgs& a, double a0, double a1) {
  return {a0, a1, uint64_t(a.attr_int("seed")), uint64_t(a.attr_int("offset"))};
}

oar_status_t fill_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    run_generator(a, "fill", "a0", {a.attr_float("value"), 0, 0, 0});
  });
}

oar_status_t arange_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    run_generator(a, "arange", "a0 + (oar_real)i * a1", {a.attr_float("start"), a.attr_float("step"), 0, 0});
  });
}

oar_status_t uniform_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    run_generator(a, "uniform", "a0 + (a1 - a0) * oar_philox_uniform(seed, offset, i)",
                  philox_args(a, a.attr_float("low"), a.attr_float("high")));
  });
}

oar_status_t normal_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    run_generator(a, "normal", "a0 + a1 * oar_philox_normal(seed, offset, i)",
                  philox_args(a, a.attr_float("mean"), a.attr_float("std")));
  });
}

// A probability outside [0, 1] (or NaN) is reported like on the CPU: the
// kernel records the first bad element's index and the host raises.
oar_status_t bernoulli_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    ErrorFlag flag(c);
    run_generator(a, "bernoulli",
                  "(q >= 0 && q <= 1) ? (oar_philox_uniform(seed, offset, i) < q ? 1 : 0) : (err[0] = i, 0)",
                  philox_args(a, 0, 0), 0, &flag);
    int64_t bad = flag.value();
    if (bad != ErrorFlag::kNoError) {
      std::vector<double> p = read_element(c, a.input(0), bad);
      sdk::fail(OAR_STATUS_INVALID_ARGUMENT,
                "bernoulli: probabilities must be in [0, 1], got " + std::to_string(p[0]));
    }
  });
}

std::string dropout_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + kcl::operand_defs("Y", dt) + kcl::operand_defs("X0", dt) + kcl::philox_source();
  s += R"CLC(
__kernel void oar_dropout(__global Y_t* y, long y_off, __global Y_t* mask, long m_off,
                          __global const X0_t* x, long x_off, oar_real p, oar_real scale,
                          ulong seed, ulong offset, long n) {
  long i = get_global_id(0);
  if (i >= n) return;
  oar_real keep = oar_philox_uniform(seed, offset, i) >= p ? 1 : 0;
  Y_STORE(mask, m_off + i, (Y_c)keep);
  /* y = x * mask * scale, with mask read back in its own dtype as on the CPU */
  oar_real m = (oar_real)Y_LOAD(mask, m_off + i);
  Y_STORE(y, y_off + i, (Y_c)((oar_real)X0_LOAD(x, x_off + i) * m * scale));
}
)CLC";
  return s;
}

oar_status_t dropout_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto& x = a.input(0);
    const auto& y = a.output(0);
    const auto& mask = a.output(1);
    int64_t n = sdk::numel(y);
    if (n == 0) return;
    double p = a.attr_float("p");
    double scale = 1.0 / (1.0 - p);
    cl_kernel k = get_kernel(c.dev, "dropout:" + std::to_string(x.dtype),
                             [&] { return dropout_source(x.dtype, c.dev.fp64); }, "oar_dropout");
    Launch l(k);
    l.view(y).view(mask).view(x);
    if (c.dev.fp64) l.scalar<cl_double>(p).scalar<cl_double>(scale);
    else l.scalar<cl_float>(float(p)).scalar<cl_float>(float(scale));
    l.scalar<cl_ulong>(uint64_t(a.attr_int("seed")))
        .scalar<cl_ulong>(uint64_t(a.attr_int("offset")))
        .scalar<cl_long>(n)
        .run(c.queue, size_t(n));
  });
}

}  // namespace

oar_status_t register_creation_kernels(const oar_kernel_registrar* r) {
  // Creation ops have no tensor inputs: their signature is empty and the
  // output dtype comes from the `dtype` attribute.
  if (oar_status_t st = sdk::register_kernel(r, "fill", {}, fill_kernel, "kp-opencl")) return st;
  if (oar_status_t st = sdk::register_kernel(r, "arange", {}, arange_kernel, "kp-opencl")) return st;
  if (oar_status_t st = sdk::register_kernel(r, "uniform", {}, uniform_kernel, "philox-opencl")) return st;
  if (oar_status_t st = sdk::register_kernel(r, "normal", {}, normal_kernel, "philox-opencl")) return st;
  for (oar_dtype_t d : sdk::kFloatDTypes) {
    if (oar_status_t st = sdk::register_kernel(r, "bernoulli", {d}, bernoulli_kernel, "philox-opencl")) return st;
    if (oar_status_t st = sdk::register_kernel(r, "dropout", {d}, dropout_kernel, "philox-opencl")) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
