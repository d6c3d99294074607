// Catalog: indexing, joining/splitting, padding and classification losses
// (gather, index_select, scatter_add, index_add, embedding, concat, stack,
// split, pad, nll_loss, cross_entropy and their backward ops), with PyTorch's
// semantics and attribute names. Inference checks every shape, dtype and
// attribute so kernels only see valid layouts; index *values* can only be
// checked by the kernels, which report them as OAR_STATUS_OUT_OF_RANGE.
#include <cmath>

#include "catalog_util.h"

namespace oar {

using namespace catalog;

namespace {

using Metas = std::vector<TensorMeta>;

// Wraps a possibly negative axis into [0, rank), naming the op on error.
int64_t axis_in(const InferContext& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw IndexError(str("op '", c.schema.name, "': dim ", axis, " is out of range for input '",
                         c.schema.inputs[0].name, "' with ", c.ndim(0), " dimension(s) (expected in [", -rank,
                         ", ", rank - 1, "])"));
  return axis < 0 ? axis + rank : axis;
}
int64_t dim_attr(const InferContext& c) {
  int64_t nd = c.ndim(0);
  return axis_in(c, c.attrs.get_int("dim"), nd == 0 ? 1 : nd);
}

const std::string& input_name(const InferContext& c, size_t i) {
  return c.schema.inputs[std::min(i, c.schema.inputs.size() - 1)].name;
}

void require_not_bool(const InferContext& c, size_t i) {
  if (c.dtype(i) == DType::boolean)
    throw DTypeError(str("op '", c.schema.name, "' does not accept bool input '", input_name(c, i), "'"));
}

void require_same_ndim(const InferContext& c, size_t i, size_t j) {
  if (c.ndim(i) != c.ndim(j))
    throw ShapeError(str("op '", c.schema.name, "': input '", input_name(c, i), "' ", shape_str(c.shape(i)),
                         " must have as many dimensions as input '", input_name(c, j), "' ",
                         shape_str(c.shape(j))));
}

// index.size(d) <= of.size(d) for every d (other than `skip`, if >= 0).
void require_index_fits(const InferContext& c, size_t index, size_t of, int64_t skip) {
  for (int64_t d = 0; d < c.ndim(index); ++d)
    if (d != skip && c.shape(index)[d] > c.shape(of)[d])
      throw ShapeError(str("op '", c.schema.name, "': index ", shape_str(c.shape(index)),
                           " is larger than input '", input_name(c, of), "' ", shape_str(c.shape(of)),
                           " in dimension ", d, (skip >= 0 ? str(" (dim is ", skip, ")") : "")));
}

void require_vector_index(const InferContext& c, size_t i) {
  require_integral_index(c, i);
  if (c.ndim(i) > 1)
    throw ShapeError(
        str("op '", c.schema.name, "': index must be 1-D or 0-D, got shape ", shape_str(c.shape(i))));
}

OpSchema make(const std::string& name, std::vector<InputSpec> inputs, std::vector<std::string> outputs,
              std::vector<AttrSpec> attrs, InferFn infer, std::string doc,
              DTypePolicy policy = DTypePolicy::kNone) {
  return make_schema(name, std::move(inputs), std::move(outputs), std::move(attrs), std::move(infer),
                     std::move(doc), policy);
}

// ---- pad ----

std::vector<int64_t> pad_amounts(const InferContext& c, int64_t ndim) {
  const auto& pads = c.attrs.get_ints("pads");
  if (pads.size() % 2 != 0 || int64_t(pads.size()) > 2 * ndim)
    throw ValueError(str("op '", c.schema.name, "': pads must hold an even number of values, at most 2 * ",
                         ndim, " (two per dimension, last dimension first), got ", pads.size()));
  const auto& mode = c.attrs.get_string("mode");
  if (mode != "constant" && mode != "reflect" && mode != "replicate")
    throw ValueError(
        str("op '", c.schema.name, "': mode must be 'constant', 'reflect' or 'replicate', got '", mode, "'"));
  return pads;
}

// Padded shape of `in`; checks the per-mode constraints on pad sizes.
Shape padded_shape(const InferContext& c, const Shape& in) {
  auto pads = pad_amounts(c, int64_t(in.size()));
  const auto& mode = c.attrs.get_string("mode");
  Shape out = in;
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    size_t d = in.size() - 1 - k;
    int64_t lo = pads[2 * k], hi = pads[2 * k + 1], n = in[d];
    out[d] = n + lo + hi;
    if (out[d] < 0)
      throw ShapeError(str("op '", c.schema.name, "': pads (", lo, ", ", hi, ") give a negative size ",
                           out[d], " for dimension ", d, " of size ", n));
    if (mode == "reflect" && ((lo > 0 && lo >= n) || (hi > 0 && hi >= n)))
      throw ShapeError(str("op '", c.schema.name, "': reflect padding (", lo, ", ", hi,
                           ") must be smaller than the size ", n, " of dimension ", d));
    if (mode == "replicate" && n == 0 && (lo > 0 || hi > 0))
      throw ShapeError(str("op '", c.schema.name, "': cannot replicate-pad empty dimension ", d));
  }
  return out;
}

// ---- losses ----

void check_reduction(const InferContext& c) {
  const auto& r = c.attrs.get_string("reduction");
  if (r != "none" && r != "mean" && r != "sum")
    throw ValueError(
        str("op '", c.schema.name, "': reduction must be 'none', 'mean' or 'sum', got '", r, "'"));
}

// Checks (scores [N, C, d...] or [C], target [N, d...] or []) starting at input
// `first`; returns the loss output shape.
Shape loss_shape(const InferContext& c, size_t first) {
  size_t s = first, t = first + 1;
  require_floating(c, s);
  require_integral_index(c, t);
  check_reduction(c);
  const Shape& x = c.shape(s);
  if (x.empty())
    throw ShapeError(str("op '", c.schema.name, "': input '", input_name(c, s),
                         "' must have a class dimension, got a 0-d tensor"));
  Shape want;
  if (x.size() >= 2) {
    want = {x[0]};
    want.insert(want.end(), x.begin() + 2, x.end());
  }
  if (c.shape(t) != want)
    throw ShapeError(str("op '", c.schema.name, "': target shape ", shape_str(c.shape(t)),
                         " does not match input '", input_name(c, s), "' ", shape_str(x),
                         " (expected target shape ", shape_str(want), ")"));
  if (c.schema.name.rfind("cross_entropy", 0) == 0) {
    double ls = c.attrs.get_float("label_smoothing");
    if (!(ls >= 0.0 && ls <= 1.0))
      throw ValueError(str("op '", c.schema.name, "': label_smoothing must be in [0, 1], got ", ls));
  }
  return c.attrs.get_string("reduction") == "none" ? want : Shape{};
}

Metas loss_forward(const InferContext& c) { return {{loss_shape(c, 0), c.dtype(0)}}; }

Metas loss_backward(const InferContext& c) {
  Shape ys = loss_shape(c, 1);
  require_floating(c, 0);
  if (c.shape(0) != ys)
    throw ShapeError(str("op '", c.schema.name, "': grad_y shape ", shape_str(c.shape(0)),
                         " does not match the loss shape ", shape_str(ys), " (reduction '",
                         c.attrs.get_string("reduction"), "')"));
  return {{c.shape(1), c.dtype(1)}};
}

std::vector<AttrSpec> loss_attrs(bool smoothing) {
  std::vector<AttrSpec> a = {attr("reduction", AttrType::kString, std::string("mean")),
                             attr("ignore_index", AttrType::kInt, int64_t(-100))};
  if (smoothing) a.push_back(attr("label_smoothing", AttrType::kFloat, 0.0));
  return a;
}

void register_loss_ops(OpRegistry& r) {
  const auto P = DTypePolicy::kPromote;
  r.add(make("nll_loss", {InputSpec{"log_probs"}, unpromoted("target")}, {"y"}, loss_attrs(false),
             loss_forward,
             "negative log likelihood -log_probs[n, target[n], ...]; log_probs [N, C, d...] or [C], target "
             "[N, d...] or [] (i64/i32); mean divides by the number of targets != ignore_index"),
        {"[4,5]{-3:0} [4]{0:5}", "[2,3,4]{-3:0} [2,4]{0:3} reduction='sum'", "[6,5]{-3:0} [6]{0:5} reduction='none' ignore_index=2",
         "[5]{-3:0} []{0:5}"});
  r.add(backward_kernel(make("nll_loss_backward", {InputSpec{"grad_y"}, InputSpec{"log_probs"}, unpromoted("target")},
                             {"grad_log_probs"}, loss_attrs(false), loss_backward, "gradient of nll_loss", P)),
        {"[] [4,5] [4]{0:5}", "[4] [4,5] [4]{0:5} reduction='none'", "[] [6,5] [6]{0:5} ignore_index=1"});
  r.add(make("cross_entropy", {InputSpec{"logits"}, unpromoted("target")}, {"y"}, loss_attrs(true),
             loss_forward,
             "fused log_softmax over dim 1 + nll_loss, with PyTorch's label_smoothing: "
             "(1 - e) * nll + e / C * sum_c -log_softmax"),
        {"[4,5] [4]{0:5}", "[4,5] [4]{0:5} label_smoothing=0.1", "[2,3,4] [2,4]{0:3} reduction='none'",
         "[6,5] [6]{0:5} reduction='sum' ignore_index=3"});
  r.add(backward_kernel(make("cross_entropy_backward", {InputSpec{"grad_y"}, InputSpec{"logits"}, unpromoted("target")},
                             {"grad_logits"}, loss_attrs(true), loss_backward,
                             "gradient of cross_entropy: grad * (softmax - (1 - e) * onehot - e / C)", P)),
        {"[] [4,5] [4]{0:5}", "[4] [4,5] [4]{0:5} reduction='none' label_smoothing=0.1",
         "[] [2,3,4] [2,4]{0:3} reduction='sum'"});
}

// ---- concat / stack / split ----

// A 1-D empty tensor, which concat skips as PyTorch does.
bool legacy_empty(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

Metas concat_infer(const InferContext& c) {
  size_t ref = 0;
  while (ref + 1 < c.inputs.size() && legacy_empty(c.inputs[ref])) ++ref;
  const Shape& s0 = c.shape(ref);
  if (s0.empty())
    throw ShapeError(
        str("op 'concat': tensor ", ref, " is 0-d; zero-dimensional tensors cannot be concatenated"));
  int64_t dim = axis_in(c, c.attrs.get_int("dim"), int64_t(s0.size()));
  Shape out = s0;
  out[dim] = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Shape& s = c.shape(i);
    if (legacy_empty(c.inputs[i]) && s.size() != s0.size()) continue;
    bool ok = s.size() == s0.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = int64_t(d) == dim || s[d] == s0[d];
    if (!ok)
      throw ShapeError(str("op 'concat': tensor ", i, " has shape ", shape_str(s), " but tensor ", ref,
                           " has shape ", shape_str(s0), "; sizes must match except in dim ", dim));
    out[dim] += s[dim];
  }
  return {{out, c.dtype(0)}};
}

Metas stack_infer(const InferContext& c) {
  const Shape& s0 = c.shape(0);
  int64_t dim = axis_in(c, c.attrs.get_int("dim"), int64_t(s0.size()) + 1);
  for (size_t i = 1; i < c.inputs.size(); ++i)
    if (c.shape(i) != s0)
      throw ShapeError(str("op 'stack': tensor ", i, " has shape ", shape_str(c.shape(i)),
                           " but tensor 0 has shape ", shape_str(s0),
                           "; stacked tensors must have equal shapes"));
  Shape out = s0;
  out.insert(out.begin() + dim, int64_t(c.inputs.size()));
  return {{out, c.dtype(0)}};
}

Metas split_infer(const InferContext& c) {
  if (c.ndim(0) == 0)
    throw ShapeError("op 'split': input 'x' must have at least one dimension, got a 0-d tensor");
  int64_t dim = dim_attr(c);
  int64_t total = 0;
  for (int64_t s : c.attrs.get_ints("sizes")) {
    if (s < 0) throw ValueError(str("op 'split': sizes must be >= 0, got ", s));
    total += s;
  }
  if (total != c.shape(0)[dim])
    throw ShapeError(str("op 'split': sizes sum to ", total, " but input 'x' ", shape_str(c.shape(0)),
                         " has size ", c.shape(0)[dim], " in dim ", dim));
  Metas out;
  for (int64_t s : c.attrs.get_ints("sizes")) {
    Shape sh = c.shape(0);
    sh[dim] = s;
    out.push_back({sh, c.dtype(0)});
  }
  return out;
}

// ---- embedding ----

void check_padding_idx(const InferContext& c, int64_t num_weights) {
  int64_t p = c.attrs.get_int("padding_idx");
  if (p != -1 && (p < 0 || p >= num_weights))
    throw ValueError(
        str("op '", c.schema.name, "': padding_idx ", p, " must be -1 (none) or in [0, ", num_weights, ")"));
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  const auto P = DTypePolicy::kPromote;
  const auto dim_a = [] { return attr("dim", AttrType::kInt, int64_t(0)); };

  r.add(make(
      "gather", {InputSpec{"x"}, InputSpec{"index"}}, {"y"}, {attr("dim", AttrType::kInt)},
      [](const InferContext& c) {
        require_integral_index(c, 1);
        int64_t dim = dim_attr(c);
        require_same_ndim(c, 1, 0);
        require_index_fits(c, 1, 0, dim);
        return Metas{{c.shape(1), c.dtype(0)}};
      },
      "y[i][j][k] = x[i][index[i][j][k]][k] (dim = 1); y has index's shape"),
        {"[3,5] [3,4]{0:5} dim=1", "[4,3] [2,3]{0:4} dim=0", "[2,3,4] [2,3,2]{0:4} dim=-1"});

  r.add(make(
      "index_select", {InputSpec{"x"}, InputSpec{"index"}}, {"y"}, {attr("dim", AttrType::kInt)},
      [](const InferContext& c) {
        require_vector_index(c, 1);
        int64_t dim = dim_attr(c);
        int64_t n = c.input(1).numel();
        if (c.ndim(0) == 0) {
          if (n != 1)
            throw ShapeError(str("op 'index_select': a 0-d input takes exactly one index, got ", n));
          return Metas{{Shape{}, c.dtype(0)}};
        }
        Shape out = c.shape(0);
        out[dim] = n;
        return Metas{{out, c.dtype(0)}};
      },
      "the entries of x at positions `index` (1-D) along dim"),
        {"[4,5] [3]{0:4} dim=0", "[4,5] [7]{0:5} dim=1", "[2,3,4] [2]{0:3} dim=1"});

  r.add(make(
      "scatter_add", {InputSpec{"x"}, unpromoted("index"), InputSpec{"src"}}, {"y"},
      {attr("dim", AttrType::kInt)},
      [](const InferContext& c) {
        require_integral_index(c, 1);
        require_not_bool(c, 0);
        int64_t dim = dim_attr(c);
        require_same_ndim(c, 1, 0);
        require_same_ndim(c, 2, 0);
        require_index_fits(c, 1, 0, dim);
        require_index_fits(c, 1, 2, -1);
        return Metas{{c.shape(0), c.dtype(0)}};
      },
      "copy of x with y[i][index[i][j][k]][k] += src[i][j][k] (dim = 1); x and src promoted", P),
        {"[3,5] [3,4]{0:5} [3,4] dim=1", "[4,3] [6,3]{0:4} [6,3] dim=0"});

  r.add(make(
      "index_add", {InputSpec{"x"}, unpromoted("index"), InputSpec{"src"}}, {"y"},
      {attr("dim", AttrType::kInt), attr("alpha", AttrType::kFloat, 1.0)},
      [](const InferContext& c) {
        require_vector_index(c, 1);
        require_not_bool(c, 0);
        int64_t dim = dim_attr(c);
        Shape want = c.shape(0);
        if (!want.empty())
          want[dim] = c.input(1).numel();
        else if (c.input(1).numel() != 1)
          throw ShapeError(
              str("op 'index_add': a 0-d input takes exactly one index, got ", c.input(1).numel()));
        if (c.shape(2) != want)
          throw ShapeError(str("op 'index_add': src shape ", shape_str(c.shape(2)), " must be ",
                               shape_str(want), " (x ", shape_str(c.shape(0)), " with dim ", dim,
                               " of the index's length)"));
        double alpha = c.attrs.get_float("alpha");
        if (!is_floating(c.dtype(0)) && std::floor(alpha) != alpha)
          throw ValueError(str("op 'index_add': alpha ", alpha, " must be an integer for ",
                               dtype_name(c.dtype(0)), " tensors"));
        return Metas{{c.shape(0), c.dtype(0)}};
      },
      "copy of x with y[..., index[k], ...] += alpha * src[..., k, ...] along dim", P),
        {"[4,5] [3]{0:4} [3,5] dim=0 alpha=2", "[4,5] [6]{0:5} [4,6] dim=1"});

  r.add(make(
      "embedding", {InputSpec{"weight"}, InputSpec{"indices"}}, {"y"},
      {attr("padding_idx", AttrType::kInt, int64_t(-1))},
      [](const InferContext& c) {
        require_floating(c, 0);
        require_integral_index(c, 1);
        require_ndim(c, 0, 2);
        check_padding_idx(c, c.shape(0)[0]);
        Shape out = c.shape(1);
        out.push_back(c.shape(0)[1]);
        return Metas{{out, c.dtype(0)}};
      },
      "rows of weight [V, D] at indices: y = indices.shape + [D]; padding_idx (-1: none) only "
      "affects the gradient"),
        {"[10,4] [2,3]{0:10}", "[7,3] [5]{0:7} padding_idx=2"});

  r.add(backward_kernel(make(
      "embedding_backward", {InputSpec{"grad"}, InputSpec{"indices"}}, {"grad_weight"},
      {attr("num_weights", AttrType::kInt), attr("padding_idx", AttrType::kInt, int64_t(-1))},
      [](const InferContext& c) {
        require_floating(c, 0);
        require_integral_index(c, 1);
        int64_t v = c.attrs.get_int("num_weights");
        if (v < 0) throw ValueError(str("op 'embedding_backward': num_weights must be >= 0, got ", v));
        check_padding_idx(c, v);
        Shape lead(c.shape(0).begin(), c.shape(0).end() - (c.ndim(0) > 0 ? 1 : 0));
        if (c.ndim(0) != c.ndim(1) + 1 || lead != c.shape(1))
          throw ShapeError(str("op 'embedding_backward': grad shape ", shape_str(c.shape(0)),
                               " must be indices shape ", shape_str(c.shape(1)), " + [D]"));
        return Metas{{{v, c.shape(0).back()}, c.dtype(0)}};
      },
      "sum of grad rows per index into [num_weights, D]; the padding_idx row stays zero")),
        {"[2,3,4] [2,3]{0:10} num_weights=10", "[5,3] [5]{0:7} num_weights=7 padding_idx=2"});

  r.add(make("concat", {variadic("xs")}, {"y"}, {dim_a()}, concat_infer,
             "join tensors along an existing dim (1-D empty tensors are skipped)", P),
        {"([2,3] [2,4] [2,1]) dim=1", "([2,3] [4,3]) dim=0", "([3] [0] [2]) dim=0"});
  r.add(make("stack", {variadic("xs")}, {"y"}, {dim_a()}, stack_infer,
             "join equally shaped tensors along a new dim", P),
        {"([2,3] [2,3] [2,3]) dim=1", "([4] [4]) dim=0", "([2,3] [2,3]) dim=-1"});
  {
    OpSchema s = make("split", {InputSpec{"x"}}, {}, {attr("sizes", AttrType::kInts), dim_a()}, split_infer,
                      "sections of x along dim with the given sizes (which sum to x.size(dim))");
    s.variadic_outputs = true;
    r.add(std::move(s), {"[5,4] sizes=[2,3] dim=0", "[3,6] sizes=[1,2,3] dim=1", "[2,5] sizes=[5,0] dim=-1"});
  }

  r.add(make(
      "pad", {InputSpec{"x"}}, {"y"},
      {attr("pads", AttrType::kInts), attr("mode", AttrType::kString, std::string("constant")),
       attr("value", AttrType::kFloat, 0.0)},
      [](const InferContext& c) {
        return Metas{{padded_shape(c, c.shape(0)), c.dtype(0)}};
      },
      "F.pad: pads (left, right, top, bottom, ...) from the last dim; negative pads crop; mode "
      "constant (value), reflect (pad < size) or replicate"),
        {"[2,3,4] pads=[1,2]", "[2,3,4] pads=[1,1,2,0] mode='reflect'", "[2,3,4] pads=[2,1] mode='replicate'",
         "[2,3,4] pads=[-1,2] value=1.5"});
  r.add(backward_kernel(make(
      "pad_backward", {InputSpec{"grad_y"}}, {"grad_x"},
      {attr("pads", AttrType::kInts), attr("mode", AttrType::kString, std::string("constant")),
       attr("input_shape", AttrType::kInts)},
      [](const InferContext& c) {
        require_not_bool(c, 0);
        Shape in = c.attrs.get_ints("input_shape");
        check_shape_nonnegative(in);
        Shape want = padded_shape(c, in);
        if (c.shape(0) != want)
          throw ShapeError(str("op 'pad_backward': grad_y shape ", shape_str(c.shape(0)),
                               " must be the padded shape ", shape_str(want), " of input_shape ",
                               shape_str(in)));
        return Metas{{in, c.dtype(0)}};
      },
      "gradient of pad: sums grad_y over every output position each input element was copied to")),
        {"[2,3,7] pads=[1,2] input_shape=[2,3,4]", "[2,5,6] pads=[1,1,2,0] mode='reflect' input_shape=[2,3,4]",
         "[2,3,7] pads=[2,1] mode='replicate' input_shape=[2,3,4]"});

  register_loss_ops(r);
}

}  // namespace oar
