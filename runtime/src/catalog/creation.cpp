// Catalog: ops that create tensors (fill, arange) and random ops. Random ops
// take `seed`/`offset` attributes; -1 (the default) lets dispatch draw them
// from the global generator (oar::manual_seed) so results are reproducible
// and identical on every device (counter-based Philox).
#include <cmath>

#include "catalog_util.h"

namespace oar {

using namespace catalog;

namespace {
OpSchema creation(const std::string& name, std::string doc, std::vector<AttrSpec> attrs, InferFn infer) {
  OpSchema s;
  s.name = name;
  s.outputs = {"y"};
  s.attrs = std::move(attrs);
  s.infer = std::move(infer);
  s.creation = true;
  s.gradient = Gradient::kNone;  // no tensor input to differentiate (bernoulli's p included)
  s.doc = std::move(doc);
  return s;
}

std::vector<TensorMeta> shape_dtype_meta(const InferContext& c) {
  Shape shape = c.attrs.get_ints("shape");
  check_shape_nonnegative(shape);
  return {{shape, c.attrs.get_dtype("dtype")}};
}

std::vector<AttrSpec> with_seed(std::vector<AttrSpec> attrs) {
  attrs.push_back(attr("seed", AttrType::kInt, int64_t(-1)));
  attrs.push_back(attr("offset", AttrType::kInt, int64_t(0)));
  return attrs;
}
}  // namespace

void register_creation_ops(OpRegistry& r) {
  r.add(creation("fill", "tensor of `shape` filled with `value`",
                 {attr("shape", AttrType::kInts), attr("value", AttrType::kFloat, 0.0),
                  attr("dtype", AttrType::kDType, DType::f32)},
                 shape_dtype_meta),
        {"shape=[3,4] value=2.5", "shape=[] value=-1", "shape=[0,4] value=1", "large:shape=[1031,1029] value=3"});
  r.add(creation("arange", "start, start+step, ... < end",
                 {attr("start", AttrType::kFloat, 0.0), attr("end", AttrType::kFloat),
                  attr("step", AttrType::kFloat, 1.0), attr("dtype", AttrType::kDType, DType::i64)},
                 [](const InferContext& c) {
                   double start = c.attrs.get_float("start"), end = c.attrs.get_float("end"),
                          step = c.attrs.get_float("step");
                   if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
                     throw ValueError("arange: step must be non-zero and bounds finite");
                   if ((end - start) / step < 0)
                     throw ValueError(str("arange: step ", step, " moves away from end ", end));
                   double n = std::ceil((end - start) / step);
                   if (n > 1e12) throw ValueError("arange: too many elements");
                   return std::vector<TensorMeta>{{{int64_t(n)}, c.attrs.get_dtype("dtype")}};
                 }),
        {"start=0 end=10", "start=-3 end=7 step=0.5 dtype=f32", "start=10 end=1 step=-3 dtype=i32"});
  auto floating_shape = [](const InferContext& c) {
    auto m = shape_dtype_meta(c);
    if (!is_floating(m[0].dtype))
      throw DTypeError(str("op '", c.schema.name, "' creates floating tensors, got dtype ",
                           dtype_name(m[0].dtype)));
    return m;
  };
  {
    OpSchema s = creation("uniform", "uniform samples in [low, high)",
                          with_seed({attr("shape", AttrType::kInts), attr("low", AttrType::kFloat, 0.0),
                                     attr("high", AttrType::kFloat, 1.0),
                                     attr("dtype", AttrType::kDType, DType::f32)}),
                          [floating_shape](const InferContext& c) {
                            if (!(c.attrs.get_float("low") <= c.attrs.get_float("high")))
                              throw ValueError("uniform: low must be <= high");
                            return floating_shape(c);
                          });
    s.needs_generator = true;
    r.add(std::move(s), {"shape=[64,64] low=-1 high=3 seed=7", "shape=[64,64] seed=11 offset=4"});
  }
  {
    OpSchema s = creation("normal", "normal samples with mean and std",
                          with_seed({attr("shape", AttrType::kInts), attr("mean", AttrType::kFloat, 0.0),
                                     attr("std", AttrType::kFloat, 1.0),
                                     attr("dtype", AttrType::kDType, DType::f32)}),
                          [floating_shape](const InferContext& c) {
                            if (!(c.attrs.get_float("std") >= 0))
                              throw ValueError("normal: std must be >= 0");
                            return floating_shape(c);
                          });
    s.needs_generator = true;
    r.add(std::move(s), {"shape=[64,64] mean=1 std=2 seed=7", "shape=[64,64] seed=11 offset=4"});
  }
  {
    OpSchema s = creation("bernoulli", "1 with probability p (each element of the input), else 0",
                          with_seed({}), [](const InferContext& c) {
                            require_floating(c, 0);
                            return std::vector<TensorMeta>{{c.shape(0), c.dtype(0)}};
                          });
    s.creation = false;
    s.inputs = {InputSpec{"p"}};
    s.needs_generator = true;
    r.add(std::move(s), {"[64,64]{0:1} seed=7"});
  }
  {
    OpSchema s = creation("dropout",
                          "training: y = x * mask / (1 - p), mask ~ Bernoulli(1 - p); also returns mask",
                          with_seed({attr("p", AttrType::kFloat, 0.5)}), [](const InferContext& c) {
                            require_floating(c, 0);
                            double p = c.attrs.get_float("p");
                            if (!(p >= 0 && p < 1)) throw ValueError(str("dropout: p must be in [0, 1), got ", p));
                            return std::vector<TensorMeta>{{c.shape(0), c.dtype(0)}, {c.shape(0), c.dtype(0)}};
                          });
    s.creation = false;
    s.gradient = Gradient::kRule;  // y = x * mask / (1 - p)
    s.inputs = {InputSpec{"x"}};
    s.outputs = {"y", "mask"};
    s.needs_generator = true;
    r.add(std::move(s), {"[64,64] p=0.3 seed=7", "[64,64] p=0 seed=3"});
  }
}

}  // namespace oar
