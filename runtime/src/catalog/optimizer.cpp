// Optimizer updates as ops: sgd_step and adam_step (Adam and AdamW) update
// lists of parameters and their state in one call, with PyTorch's rules
// (docs/kernel_families.md, "Optimizer updates"). The kernels are the optimizer family
// (kernel_primitives/include/oar/kp/family/optimizer.kp), written once for
// every device family; the frontends (oar.optim, oar::optim via
// frontend/cpp/src/fused_update.cpp) and training graphs call them with the
// state tensors as outputs, so the update happens in place. A device
// without the kernels runs the decomposition below, the same rule in
// elementwise ops.
#include <cmath>
#include <cstring>

#include "catalog_util.h"
#include "oar/dispatch.h"

namespace oar {

using namespace catalog;

namespace {

// The lists after input 0 (the hyperparameter tensor), by name.
struct ListLayout {
  std::vector<const char*> names;  // input lists
  size_t n = 0;                    // tensors per list
};

ListLayout sgd_layout(const Attrs& a) {
  ListLayout l{{"params", "grads"}};
  if (a.get_float("momentum") != 0) l.names.push_back("momentum_buffers");
  return l;
}

ListLayout adam_layout(const Attrs& a) {
  ListLayout l{{"params", "grads", "exp_avgs", "exp_avg_sqs"}};
  if (a.get_bool("amsgrad")) l.names.push_back("max_exp_avg_sqs");
  if (a.get_floats("steps").empty()) l.names.push_back("steps");
  return l;
}

const Tensor& at(const std::vector<Tensor>& in, const ListLayout& l, size_t list, size_t k) {
  return in[1 + list * l.n + k];
}

void require_value(bool ok, const std::string& op, const char* what, double value) {
  if (!ok) throw ValueError(str(op, ": invalid ", what, ": ", value));
}

// A one-element f32 tensor: the learning rate or a step count.
void require_f32_scalar(const std::string& op, const std::string& what, const Tensor& t) {
  if (t.numel() != 1 || t.dtype() != DType::f32)
    throw DTypeError(str(op, ": ", what, " must be a one-element float32 tensor, got ", dtype_name(t.dtype()),
                         shape_str(t.shape())));
}

// Input 0: [lr], [lr, momentum] (sgd_step) or [lr, beta1[, beta2]]
// (adam_step) as contiguous f32; the kernels read them in that order.
void require_hyper(const std::string& op, const Tensor& t, int64_t most) {
  if (t.dtype() != DType::f32 || t.numel() < 1 || t.numel() > most || (t.numel() > 1 && !t.is_contiguous()))
    throw DTypeError(str(op, ": the hyperparameter input must be a contiguous float32 tensor of 1 to ", most,
                         " elements (", most == 2 ? "lr, momentum" : "lr, beta1, beta2", "), got ",
                         dtype_name(t.dtype()), shape_str(t.shape()), t.is_contiguous() ? "" : " (not contiguous)"));
}

// Checks the lists against the layout and returns the outputs: the lists
// other than grads and steps, shaped as the parameters.
std::vector<TensorMeta> infer_lists(const InferContext& c, ListLayout& l) {
  const std::string& op = c.schema.name;
  const size_t tensors = c.inputs.size() - 1;
  if (tensors == 0 || tensors % l.names.size() != 0) {
    std::string names;
    for (const char* n : l.names) names += str(names.empty() ? "" : ", ", n);
    throw ValueError(str(op, ": expected ", l.names.size(), " lists of equal length (", names, ") after lr, got ",
                         tensors, " tensors"));
  }
  l.n = tensors / l.names.size();
  if (c.inputs[0].defined()) require_hyper(op, c.inputs[0], c.schema.name == "sgd_step" ? 2 : 3);
  const DType dtype = at(c.inputs, l, 0, 0).dtype();
  if (!is_floating(dtype)) throw DTypeError(str(op, ": parameters must be floating point, got ", dtype_name(dtype)));
  std::vector<TensorMeta> out;
  for (size_t list = 0; list < l.names.size(); ++list) {
    const bool steps = std::string(l.names[list]) == "steps";
    for (size_t k = 0; k < l.n; ++k) {
      const Tensor& t = at(c.inputs, l, list, k);
      const Tensor& p = at(c.inputs, l, 0, k);
      if (!t.defined()) throw ValueError(str(op, ": ", l.names[list], "[", k, "] is undefined"));
      if (steps) {
        require_f32_scalar(op, str("steps[", k, "]"), t);
        continue;
      }
      if (t.shape() != p.shape())
        throw ShapeError(str(op, ": ", l.names[list], "[", k, "] has shape ", shape_str(t.shape()), " but params[",
                             k, "] has shape ", shape_str(p.shape())));
      if (t.dtype() != dtype)
        throw DTypeError(str(op, ": ", l.names[list], "[", k, "] is ", dtype_name(t.dtype()), " but params[0] is ",
                             dtype_name(dtype), " (one call updates tensors of one dtype)"));
      if (list != 1) out.push_back({t.shape(), dtype});
    }
  }
  return out;
}

// ---- the rules in elementwise ops, for devices without the kernels ----

Tensor scaled(const Tensor& t, double v) { return op2("mul", t, scalar_like(v, t)); }

// Hyperparameter k (0 = lr, then momentum or beta1, beta2) as an operand of
// t's ops: element k of the tensor input when it holds one, else the attribute.
Tensor hyper(const Tensor& t, const std::vector<Tensor>& in, const Attrs& a, int64_t k, const char* attr) {
  if (in[0].defined() && in[0].numel() > k)
    return in[0].numel() == 1 ? in[0] : call1("select", {in[0].reshape({in[0].numel()})}, {{"dim", int64_t(0)}, {"index", k}});
  return scalar_like(a.get_float(attr), t);
}

// The learning rate times t: from the tensor input when there is one.
Tensor times_lr(const Tensor& t, const std::vector<Tensor>& in, const Attrs& a) {
  return in[0].defined() ? op2("mul", t, hyper(t, in, a, 0, "lr")) : scaled(t, a.get_float("lr"));
}

std::vector<Tensor> sgd_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  ListLayout l = sgd_layout(a);
  l.n = (in.size() - 1) / l.names.size();
  const double momentum = a.get_float("momentum"), wd = a.get_float("weight_decay");
  std::vector<Tensor> params, buffers;  // momentum: whether there are buffers; its value may come from in[0]
  for (size_t k = 0; k < l.n; ++k) {
    const Tensor& p = at(in, l, 0, k);
    Tensor d = at(in, l, 1, k);
    if (a.get_bool("maximize")) d = call1("neg", {d});
    if (wd != 0) d = op2("add", d, scaled(p, wd));
    if (momentum != 0) {
      const Tensor m = hyper(p, in, a, 1, "momentum");
      Tensor buf = a.get_bool("init_buffers")
                       ? d.clone()
                       : op2("add", op2("mul", at(in, l, 2, k), m), scaled(d, 1 - a.get_float("dampening")));
      d = a.get_bool("nesterov") ? op2("add", d, op2("mul", buf, m)) : buf;
      buffers.push_back(buf);
    }
    params.push_back(op2("sub", p, times_lr(d, in, a)));
  }
  params.insert(params.end(), buffers.begin(), buffers.end());
  return params;
}

std::vector<Tensor> adam_decompose(const std::vector<Tensor>& in, const Attrs& a) {
  ListLayout l = adam_layout(a);
  l.n = (in.size() - 1) / l.names.size();
  const bool amsgrad = a.get_bool("amsgrad");
  const std::vector<double> steps = a.get_floats("steps");
  const double wd = a.get_float("weight_decay");
  std::vector<Tensor> params, ms, vs, vmaxes;
  for (size_t k = 0; k < l.n; ++k) {
    Tensor p = at(in, l, 0, k), d = at(in, l, 1, k);
    const Tensor b1 = hyper(p, in, a, 1, "beta1"), b2 = hyper(p, in, a, 2, "beta2");
    const Tensor one = scalar_like(1, p);
    if (a.get_bool("maximize")) d = call1("neg", {d});
    if (wd != 0) {
      if (a.get_bool("decoupled_weight_decay")) p = op2("sub", p, times_lr(scaled(p, wd), in, a));
      else d = op2("add", d, scaled(p, wd));
    }
    Tensor m = op2("add", op2("mul", at(in, l, 2, k), b1), op2("mul", d, op2("sub", one, b1)));
    Tensor v = op2("add", op2("mul", at(in, l, 3, k), b2), op2("mul", op2("mul", d, d), op2("sub", one, b2)));
    Tensor second = v;
    if (amsgrad) vmaxes.push_back(second = op2("maximum", at(in, l, 4, k), v));
    Tensor bias1, bias2_sqrt;
    if (steps.empty()) {
      const Tensor& t = at(in, l, 4 + amsgrad, k);
      bias1 = op2("sub", scalar_like(1, t), op2("pow", b1.to(t.dtype()), t));
      bias2_sqrt = call1("sqrt", {op2("sub", scalar_like(1, t), op2("pow", b2.to(t.dtype()), t))});
    } else {  // on the host in double, as the kernels (infer refuses beta tensors with these)
      bias1 = scalar_like(1 - std::pow(a.get_float("beta1"), steps[k]), p);
      bias2_sqrt = scalar_like(std::sqrt(1 - std::pow(a.get_float("beta2"), steps[k])), p);
    }
    Tensor denom = op2("add", op2("div", call1("sqrt", {second}), bias2_sqrt), scalar_like(a.get_float("eps"), p));
    params.push_back(op2("sub", p, op2("div", times_lr(op2("div", m, denom), in, a), bias1)));
    ms.push_back(m);
    vs.push_back(v);
  }
  for (auto* list : {&ms, &vs, &vmaxes}) params.insert(params.end(), list->begin(), list->end());
  return params;
}

// Output o is element o % n of the o / n-th updated list (params, then the
// state lists: every list but grads and steps), which is that list's input.
int64_t updated_input(size_t o, size_t n_inputs, const ListLayout& l) {
  size_t n = (n_inputs - 1) / l.names.size();
  if (n == 0) return -1;
  size_t list = o / n == 0 ? 0 : o / n + 1;  // grads (list 1) are not updated
  if (list >= l.names.size() || std::strcmp(l.names[list], "steps") == 0) return -1;
  return int64_t(1 + list * n + o % n);
}

OpSchema optimizer_op(const std::string& name, std::vector<AttrSpec> attrs, InferFn infer, DecomposeFn decompose,
                      std::string doc) {
  InputSpec tensors = variadic("tensors");
  tensors.promoted = false;
  OpSchema s = make_schema(name, {optional_input("hyper"), tensors}, {}, std::move(attrs), std::move(infer),
                           std::move(doc), DTypePolicy::kNone);
  s.variadic_outputs = true;
  s.role = OpRole::kOptimizer;
  s.gradient = Gradient::kNone;
  s.decompose = std::move(decompose);
  s.output_alias = [name](size_t o, size_t n_inputs, const Attrs& a) -> int64_t {
    if (name == "sgd_step") return updated_input(o, n_inputs, sgd_layout(a));
    if (name == "adam_step") return updated_input(o, n_inputs, adam_layout(a));
    return -1;
  };
  return s;
}

}  // namespace

void register_optimizer_ops(OpRegistry& r) {
  r.add(optimizer_op(
      "sgd_step",
      {attr("lr", AttrType::kFloat, 1e-3), attr("momentum", AttrType::kFloat, 0.0),
       attr("dampening", AttrType::kFloat, 0.0), attr("weight_decay", AttrType::kFloat, 0.0),
       attr("nesterov", AttrType::kBool, false), attr("maximize", AttrType::kBool, false),
       attr("init_buffers", AttrType::kBool, false)},
      [](const InferContext& c) {
        const Attrs& a = c.attrs;
        require_value(a.get_float("lr") >= 0, "sgd_step", "learning rate", a.get_float("lr"));
        require_value(a.get_float("momentum") >= 0, "sgd_step", "momentum value", a.get_float("momentum"));
        require_value(a.get_float("weight_decay") >= 0, "sgd_step", "weight_decay value", a.get_float("weight_decay"));
        if (a.get_bool("nesterov") && (a.get_float("momentum") <= 0 || a.get_float("dampening") != 0))
          throw ValueError("sgd_step: Nesterov momentum requires a momentum and zero dampening");
        ListLayout l = sgd_layout(a);
        return infer_lists(c, l);
      },
      sgd_decompose,
      "SGD update of lists params, grads[, momentum_buffers] (after an optional f32 tensor [lr] or [lr, momentum] "
      "that overrides those attributes: a training graph refreshes it), in place when the outputs are the inputs; outputs params[, momentum_buffers]. init_buffers: the "
      "buffers start as the gradients (the first step)"),
        {"- ([4,3] [5] [4,3] [5]) lr=0.1", "- ([4,3] [4,3] [4,3]) lr=0.1 momentum=0.9 weight_decay=0.01",
         "- ([6] [6] [6]) lr=0.05 momentum=0.5 nesterov=true maximize=true"});
  r.add(optimizer_op(
      "adam_step",
      {attr("lr", AttrType::kFloat, 1e-3), attr("beta1", AttrType::kFloat, 0.9), attr("beta2", AttrType::kFloat, 0.999),
       attr("eps", AttrType::kFloat, 1e-8), attr("weight_decay", AttrType::kFloat, 0.0),
       attr("amsgrad", AttrType::kBool, false), attr("maximize", AttrType::kBool, false),
       attr("decoupled_weight_decay", AttrType::kBool, false), attr("steps", AttrType::kFloats, std::vector<double>{})},
      [](const InferContext& c) {
        const Attrs& a = c.attrs;
        require_value(a.get_float("lr") >= 0, "adam_step", "learning rate", a.get_float("lr"));
        require_value(a.get_float("eps") >= 0, "adam_step", "epsilon value", a.get_float("eps"));
        for (const char* b : {"beta1", "beta2"})
          require_value(a.get_float(b) >= 0 && a.get_float(b) < 1, "adam_step", b, a.get_float(b));
        require_value(a.get_float("weight_decay") >= 0, "adam_step", "weight_decay value", a.get_float("weight_decay"));
        ListLayout l = adam_layout(a);
        std::vector<TensorMeta> out = infer_lists(c, l);
        const std::vector<double>& steps = a.get_floats("steps");
        if (!steps.empty() && steps.size() != l.n)
          throw ValueError(str("adam_step: ", steps.size(), " steps for ", l.n, " parameters"));
        for (double s : steps) require_value(s >= 1, "adam_step", "step count (the first step is 1)", s);
        if (!steps.empty() && c.inputs[0].defined() && c.inputs[0].numel() > 1)
          throw ValueError("adam_step: betas from the hyperparameter tensor need step counts as tensors (attribute "
                           "steps empty): the bias corrections are computed from both");
        return out;
      },
      adam_decompose,
      "Adam/AdamW update of lists params, grads, exp_avgs, exp_avg_sqs[, max_exp_avg_sqs][, steps] (after an "
      "optional f32 tensor [lr], [lr, beta1] or [lr, beta1, beta2] that overrides those attributes), in place when the outputs are the inputs; outputs params, "
      "exp_avgs, exp_avg_sqs[, max_exp_avg_sqs]. Step counts come from attribute steps (one per parameter) or, "
      "when it is empty, from one-element f32 tensors"),
        {"- ([4,3] [5] [4,3] [5] [4,3] [5] [4,3]{0:1} [5]{0:1}) lr=0.01 steps=[3,1]",
         "- ([4,3] [4,3] [4,3] [4,3]{0:1} [4,3]{0:1}) amsgrad=true steps=[2] weight_decay=0.1",
         "- ([6] [6] [6] [6]{0:1}) decoupled_weight_decay=true weight_decay=0.01 maximize=true steps=[5]"});
}

}  // namespace oar
