#include "oar/dispatch.h"

#include "oar/autograd.h"

#include <array>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/kernel_coverage.h"
#include "oar/generator.h"
#include "oar/graph/trace.h"
#include "oar/kernel_registry.h"
#include "oar/log.h"
#include "oar/op_registry.h"
#include "oar/runtime.h"

namespace oar {

namespace {

struct WorkspaceList {
  Device device;
  std::vector<Storage> blocks;
};

std::mutex g_fallback_mutex;
std::map<std::pair<std::string, std::string>, int64_t> g_fallback_counts;
std::atomic<int64_t> g_fallback_total{0};

// Converts a user-given attribute value to the schema's type where that is lossless.
AttrValue coerce_attr(const OpSchema& op, const AttrSpec& spec, const AttrValue& v) {
  auto bad = [&]() -> AttrValue {
    throw ValueError(str("op '", op.name, "': attribute '", spec.name, "' expects ",
                         attr_type_name(spec.type)));
  };
  switch (spec.type) {
    case AttrType::kInt:
      if (auto p = std::get_if<int64_t>(&v)) return *p;
      if (auto p = std::get_if<bool>(&v)) return int64_t(*p);
      if (auto p = std::get_if<double>(&v)) {
        if (std::floor(*p) == *p && std::isfinite(*p)) return int64_t(*p);
      }
      return bad();
    case AttrType::kFloat:
      if (auto p = std::get_if<double>(&v)) return *p;
      if (auto p = std::get_if<int64_t>(&v)) return double(*p);
      if (auto p = std::get_if<bool>(&v)) return double(*p);
      return bad();
    case AttrType::kBool:
      if (auto p = std::get_if<bool>(&v)) return *p;
      if (auto p = std::get_if<int64_t>(&v)) {
        if (*p == 0 || *p == 1) return *p == 1;
      }
      return bad();
    case AttrType::kString:
      if (std::holds_alternative<std::string>(v)) return v;
      return bad();
    case AttrType::kInts:
      if (std::holds_alternative<std::vector<int64_t>>(v)) return v;
      if (auto p = std::get_if<int64_t>(&v)) return std::vector<int64_t>{*p};
      return bad();
    case AttrType::kFloats:
      if (std::holds_alternative<std::vector<double>>(v)) return v;
      if (auto p = std::get_if<std::vector<int64_t>>(&v))
        return std::vector<double>(p->begin(), p->end());
      return bad();
    case AttrType::kDType:
      if (std::holds_alternative<DType>(v)) return v;
      if (auto p = std::get_if<std::string>(&v)) return dtype_from_name(*p);
      return bad();
  }
  return bad();
}

}  // namespace

Attrs normalize_attrs(const OpSchema& op, const Attrs& given) {
  for (const auto& [name, value] : given.items()) {
    bool known = false;
    for (const auto& spec : op.attrs) known |= spec.name == name;
    if (!known) {
      std::string names;
      for (const auto& spec : op.attrs) names += (names.empty() ? "" : ", ") + spec.name;
      throw ValueError(str("op '", op.name, "' has no attribute '", name, "' (attributes: ",
                           names.empty() ? "none" : names, ")"));
    }
  }
  Attrs out;
  for (const auto& spec : op.attrs) {
    if (given.has(spec.name)) {
      out.set(spec.name, coerce_attr(op, spec, given.get(spec.name)));
    } else if (spec.default_value) {
      out.set(spec.name, *spec.default_value);
    } else {
      throw ValueError(str("op '", op.name, "': missing required attribute '", spec.name, "' (",
                           attr_type_name(spec.type), ")"));
    }
  }
  return out;
}

std::optional<DType> promoted_dtype(const OpSchema& op, size_t count,
                                    const std::function<std::optional<PromotionOperand>(size_t)>& operand_of) {
  if (op.dtype_policy == DTypePolicy::kNone) return std::nullopt;
  std::optional<DType> dims, zero;  // promoted over dimensioned and over 0-dim inputs
  for (size_t i = 0; i < count; ++i) {
    std::optional<PromotionOperand> d = operand_of(i);
    if (!d || !op.inputs[std::min(i, op.inputs.size() - 1)].promoted) continue;
    std::optional<DType>& into = d->zero_dim ? zero : dims;
    into = into ? promote_types(*into, d->dtype) : d->dtype;
  }
  // PyTorch's rule: 0-dim operands decide only when the dimensioned ones are
  // bool, or when they bring floating point to integers.
  std::optional<DType> common = dims ? dims : zero;
  if (dims && zero && !is_floating(*dims) && (*dims == DType::boolean || is_floating(*zero)))
    common = promote_types(*dims, *zero);
  if (common && op.dtype_policy == DTypePolicy::kPromoteToFloat && !is_floating(*common)) common = default_float_dtype();
  return common;
}

namespace {

std::string signature_str(const std::vector<DType>& sig) {
  std::string s = "(";
  for (size_t i = 0; i < sig.size(); ++i) s += (i ? ", " : "") + std::string(dtype_name(sig[i]));
  return s + ")";
}

// Index of the schema input spec each tensor argument belongs to.
size_t spec_of(const OpSchema& op, size_t arg) {
  return std::min(arg, op.inputs.size() - 1);
}

void check_inputs(const OpSchema& op, const std::vector<Tensor>& inputs) {
  bool variadic = !op.inputs.empty() && op.inputs.back().variadic;
  size_t fixed = variadic ? op.inputs.size() - 1 : op.inputs.size();
  if (variadic ? inputs.size() < fixed + 1 : inputs.size() != fixed)
    throw ValueError(str("op '", op.name, "' takes ", variadic ? "at least " : "",
                         variadic ? fixed + 1 : fixed, " tensor input(s), got ", inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& spec = op.inputs[spec_of(op, i)];
    if (!inputs[i].defined() && !spec.optional)
      throw ValueError(str("op '", op.name, "': input '", spec.name, "' is undefined"));
    if (inputs[i].defined() && inputs[i].dim() > OAR_MAX_DIMS)
      throw ShapeError(str("op '", op.name, "': input '", spec.name, "' has ", inputs[i].dim(),
                           " dimensions; kernels support at most ", OAR_MAX_DIMS));
  }
}

Device common_device(const OpSchema& op, const std::vector<Tensor>& inputs,
                     const CallOptions& options) {
  std::optional<Device> device;
  size_t first = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    Device d = inputs[i].device();
    if (!device) {
      device = d;
      first = i;
    } else if (*device != d) {
      throw DeviceError(str("op '", op.name, "': expected all tensors on the same device, but input '",
                            op.inputs[spec_of(op, first)].name, "' is on ", device->str(),
                            " and input '", op.inputs[spec_of(op, i)].name, "' is on ", d.str()));
    }
  }
  if (device) return *device;
  return options.device ? *options.device : Device::default_device();
}

// The inputs after the schema's dtype policy: `inputs` itself when nothing
// needs a cast (no copy on the hot path), else `owned` holding the casts.
const std::vector<Tensor>& apply_dtype_policy(const OpSchema& op, const std::vector<Tensor>& inputs,
                                              std::vector<Tensor>& owned) {
  if (op.dtype_policy == DTypePolicy::kNone) return inputs;
  std::optional<DType> common = promoted_dtype(op, inputs.size(), [&](size_t i) -> std::optional<PromotionOperand> {
    if (!inputs[i].defined()) return std::nullopt;
    return PromotionOperand{inputs[i].dtype(), inputs[i].dim() == 0};
  });
  if (!common) return inputs;
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i)
    any |= inputs[i].defined() && op.inputs[spec_of(op, i)].promoted && inputs[i].dtype() != *common;
  if (!any) return inputs;
  owned = inputs;
  for (size_t i = 0; i < owned.size(); ++i)
    if (owned[i].defined() && op.inputs[spec_of(op, i)].promoted && owned[i].dtype() != *common)
      owned[i] = owned[i].to(*common);
  return owned;
}

void record_fallback(const OpSchema& op, const std::string& device_type,
                     const std::vector<DType>& sig) {
  std::string mode = Flags::instance().get("OAR_FALLBACK");
  if (mode == "error")
    throw NotImplementedError(str("op '", op.name, "' has no kernel for ", signature_str(sig),
                                  " on device type '", device_type,
                                  "' and OAR_FALLBACK=error forbids running it on the CPU"));
  bool first;
  {
    std::lock_guard<std::mutex> lock(g_fallback_mutex);
    first = g_fallback_counts[{op.name, device_type}]++ == 0;
  }
  ++g_fallback_total;
  if (first && mode == "warn")
    log_message(LogLevel::kWarning,
                str("op '", op.name, "' has no kernel for ", signature_str(sig), " on '",
                    device_type, "'; running it on the CPU (warned once; OAR_FALLBACK=error "
                    "makes this an error)"));
}

std::vector<Tensor> run(const OpSchema& op, const std::vector<Tensor>& raw_inputs,
                        const Attrs& attrs, Device device, const std::vector<Tensor>* given_outputs);

std::vector<Tensor> run_fallback(const OpSchema& op, const std::vector<Tensor>& inputs,
                                 const Attrs& attrs, Device device) {
  Device cpu{Runtime::get().cpu_type(), 0};
  std::vector<Tensor> moved;
  for (const auto& t : inputs) moved.push_back(t.defined() ? t.to(cpu) : t);
  std::vector<Tensor> outs = run(op, moved, attrs, cpu, nullptr);
  for (auto& t : outs) t = t.to(device);
  return outs;
}

// Results computed elsewhere (a decomposition, the CPU fallback) written into
// the caller's outputs on `device` by the copy kernel.
const std::vector<Tensor>& copy_into(const std::vector<Tensor>& results, const std::vector<Tensor>& outputs,
                                     Device device) {
  const OpSchema& copy = OpRegistry::instance().get("copy");
  for (size_t i = 0; i < results.size(); ++i) {
    const std::vector<Tensor> into{outputs[i]};
    run(copy, {results[i]}, {}, device, &into);
  }
  return outputs;
}

std::vector<Tensor> run(const OpSchema& op, const std::vector<Tensor>& raw_inputs,
                        const Attrs& attrs, Device device, const std::vector<Tensor>* given_outputs) {
  std::vector<Tensor> owned;
  const std::vector<Tensor>* prepared = &apply_dtype_policy(op, raw_inputs, owned);
  // Copy-on-write: broadcasting or contiguity below may replace inputs.
  auto mutable_inputs = [&]() -> std::vector<Tensor>& {
    if (prepared != &owned) {
      owned = *prepared;
      prepared = &owned;
    }
    return owned;
  };
  const std::vector<Tensor>& inputs = *prepared;
  InferContext ictx{op, inputs, attrs, device};
  std::vector<TensorMeta> metas = op.infer(ictx);
  if (!op.variadic_outputs && metas.size() != op.outputs.size())
    throw InternalError(str("op '", op.name, "': inference produced ", metas.size(),
                            " outputs, schema declares ", op.outputs.size()));

  // Kernel signature from the prepared inputs (on the stack: this is the hot path).
  DType sig_buf[9];
  size_t n_sig = 0;
  for (size_t i = 0; i < inputs.size() && n_sig < 9; ++i) {
    size_t s = spec_of(op, i);
    if (!op.inputs[s].in_signature) continue;
    if (op.inputs[s].variadic && i > s) continue;  // a list contributes its first dtype
    sig_buf[n_sig++] = inputs[i].dtype();
  }
  Runtime& rt = Runtime::get();
  const auto& registry = KernelRegistry::instance();
  const std::vector<KernelEntry>* impls = registry.lookup(op.id, device.type, sig_buf, n_sig);
  std::vector<Tensor> outs;
  if (impls == nullptr && op.decompose) {
    // The composite's own node (recorded by call) carries the gradient, not its parts.
    autograd::NoGradGuard no_grad;
    outs = op.decompose(inputs, attrs);
  }
  // No outputs where inference promised some: the decomposition declines these dtypes (matmul's serves
  // integers only), and a kernel or the fallback below serves them.
  if (impls == nullptr && op.decompose && (!outs.empty() || metas.empty())) {
    for (size_t i = 0; i < outs.size() && i < metas.size(); ++i)
      if (outs[i].shape() != metas[i].shape || outs[i].dtype() != metas[i].dtype)
        throw InternalError(str("op '", op.name, "': its decomposition produced ", shape_str(outs[i].shape()), " ",
                                dtype_name(outs[i].dtype()), ", inference says ", shape_str(metas[i].shape), " ",
                                dtype_name(metas[i].dtype)));
    // Into the caller's outputs (an in-place update such as adam_step) only
    // after every part has read its inputs, which may be those outputs.
    return given_outputs == nullptr ? outs : copy_into(outs, *given_outputs, device);
  }
  if (impls == nullptr) {
    std::vector<DType> sig(sig_buf, sig_buf + n_sig);
    auto sigs = registry.signatures(op.id, device.type);
    bool cpu_has = device.type != rt.cpu_type() && rt.cpu_type() >= 0 &&
                   registry.lookup(op.id, rt.cpu_type(), sig.data(), sig.size()) != nullptr;
    if (cpu_has) {
      record_fallback(op, device.type_name(), sig);
      std::vector<Tensor> outs = run_fallback(op, raw_inputs, attrs, device);
      return given_outputs == nullptr ? outs : copy_into(outs, *given_outputs, device);
    }
    if (sigs.empty())
      throw NotImplementedError(str("op '", op.name, "' has no kernel on device type '",
                                    device.type_name(), "'"));
    std::string have;
    for (const auto& s : sigs) have += (have.empty() ? "" : ", ") + signature_str(s);
    throw DTypeError(str("op '", op.name, "' does not support dtype ", signature_str(sig), " on ",
                         device.type_name(), "; supported: ", have));
  }

  // Elementwise ops see every input at the output shape (stride 0 where broadcast).
  if (op.broadcast && !metas.empty()) {
    for (size_t i = 0; i < prepared->size(); ++i) {
      const Tensor& t = (*prepared)[i];
      if (t.defined() && t.shape() != metas[0].shape) mutable_inputs()[i] = t.expand(metas[0].shape);
    }
  }
  if (!op.strided_inputs)
    for (size_t i = 0; i < prepared->size(); ++i) {
      const Tensor& t = (*prepared)[i];
      if (t.defined() && !t.is_contiguous()) mutable_inputs()[i] = t.contiguous();
    }

  const std::vector<Tensor>& kernel_inputs = *prepared;  // after broadcasting and contiguity

  std::vector<Tensor> outputs;
  if (given_outputs) {
    outputs = *given_outputs;
  } else {
    outputs.reserve(metas.size());
    for (auto& m : metas) outputs.push_back(Tensor::empty(std::move(m.shape), m.dtype, device));
  }
  std::vector<oar_attr> abi = abi_attrs(attrs);
  launch_kernel(op, device, *impls, kernel_inputs, outputs, abi);
  return outputs;
}

// Tensors in ABI form, as views into tensors alive for the call.
oar_tensor_view abi_view(const Tensor& t) {
  oar_tensor_view v{};
  v.struct_size = sizeof(v);
  if (!t.defined()) return v;
  v.data = t.storage_data();
  v.offset = t.offset();
  v.dtype = static_cast<oar_dtype_t>(t.dtype());
  v.ndim = static_cast<int32_t>(t.dim());
  v.shape = t.shape().data();
  v.strides = t.strides().data();
  return v;
}

}  // namespace

std::vector<oar_attr> abi_attrs(const Attrs& attrs) {
  std::vector<oar_attr> out;
  out.reserve(attrs.items().size());
  for (const auto& [name, value] : attrs.items()) {
    oar_attr a{};
    a.struct_size = sizeof(a);
    a.name = name.c_str();
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, int64_t>) a.kind = OAR_ATTR_INT, a.i = v;
          else if constexpr (std::is_same_v<V, double>) a.kind = OAR_ATTR_FLOAT, a.f = v;
          else if constexpr (std::is_same_v<V, bool>) a.kind = OAR_ATTR_BOOL, a.i = v;
          else if constexpr (std::is_same_v<V, std::string>) a.kind = OAR_ATTR_STRING, a.s = v.c_str();
          else if constexpr (std::is_same_v<V, std::vector<int64_t>>)
            a.kind = OAR_ATTR_INTS, a.ints = v.data(), a.count = int64_t(v.size());
          else if constexpr (std::is_same_v<V, std::vector<double>>)
            a.kind = OAR_ATTR_FLOATS, a.floats = v.data(), a.count = int64_t(v.size());
          else a.kind = OAR_ATTR_DTYPE, a.i = static_cast<int64_t>(v);
        },
        value);
    out.push_back(a);
  }
  return out;
}

void launch_kernel(const OpSchema& op, Device device, const std::vector<KernelEntry>& impls,
                   const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                   const std::vector<oar_attr>& attrs) {
  bool all_empty = !outputs.empty();
  for (const auto& t : outputs) all_empty &= t.numel() == 0;
  if (all_empty) return;
  // Small argument lists (almost every op) live on the stack.
  constexpr size_t kInline = 8;
  std::array<oar_tensor_view, kInline> in_inline, out_inline;
  std::vector<oar_tensor_view> in_heap, out_heap;
  oar_tensor_view* in_views = in_inline.data();
  oar_tensor_view* out_views = out_inline.data();
  if (inputs.size() > kInline) in_heap.resize(inputs.size()), in_views = in_heap.data();
  if (outputs.size() > kInline) out_heap.resize(outputs.size()), out_views = out_heap.data();
  for (size_t i = 0; i < inputs.size(); ++i) in_views[i] = abi_view(inputs[i]);
  for (size_t i = 0; i < outputs.size(); ++i) out_views[i] = abi_view(outputs[i]);
  WorkspaceList workspace{device, {}};
  oar_kernel_context ctx{};
  ctx.struct_size = sizeof(ctx);
  ctx.host = Runtime::host_api();
  ctx.op_name = op.name.c_str();
  ctx.device_index = device.index;
  ctx.stream = nullptr;
  ctx.inputs = in_views;
  ctx.num_inputs = static_cast<int32_t>(inputs.size());
  ctx.outputs = out_views;
  ctx.num_outputs = static_cast<int32_t>(outputs.size());
  ctx.attrs = attrs.data();
  ctx.num_attrs = static_cast<int32_t>(attrs.size());
  ctx.host_context = &workspace;

  std::string reasons;
  for (const auto& impl : impls) {
    if (impl.supports) {
      char reason[512] = {0};
      if (!impl.supports(&ctx, reason, sizeof(reason))) {
        reasons += str(reasons.empty() ? "" : "; ", impl.impl_name, ": ", reason);
        continue;
      }
    }
    Runtime::clear_last_error();
    oar_status_t st = impl.fn(&ctx);
    if (st != OAR_STATUS_OK) {
      std::string msg = Runtime::take_last_error();
      throw_status(st, str("op '", op.name, "' on ", device.str(), " (", impl.impl_name,
                           "): ", msg.empty() ? status_name(st) : msg));
    }
    count_kernel_run(op.id, device.type);
    return;
  }
  throw NotImplementedError(str("op '", op.name, "' on ", device.str(),
                                ": no implementation accepts these arguments (", reasons, ")"));
}

oar_status_t dispatch_workspace_allocate(void* host_context, uint64_t size, void** out) {
  auto* ws = static_cast<WorkspaceList*>(host_context);
  try {
    Storage s = allocate_storage(ws->device, size);
    *out = s->data();
    ws->blocks.push_back(std::move(s));
    return OAR_STATUS_OK;
  } catch (const std::exception& e) {
    Runtime::host_api()->set_error(OAR_STATUS_OUT_OF_MEMORY, e.what());
    return OAR_STATUS_OUT_OF_MEMORY;
  }
}

namespace {
// PyTorch lets a 0-d CPU tensor (a number held in a tensor: a distribution's
// loc, a loss weight) join tensors on another device. Such inputs are copied
// to the other inputs' device (Tensor::to records the copy, so gradients
// flow back); false when there is nothing to move.
bool move_cpu_scalars(const std::vector<Tensor>& inputs, std::vector<Tensor>& moved) {
  if (inputs.size() < 2) return false;
  std::optional<Device> target;
  bool cpu_scalar = false;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (t.dim() == 0 && t.device() == Device::cpu()) cpu_scalar = true;
    else if (!target) target = t.device();
  }
  if (!cpu_scalar || !target || *target == Device::cpu()) return false;
  moved = inputs;
  for (Tensor& t : moved)
    if (t.defined() && t.dim() == 0 && t.device() == Device::cpu()) t = t.to(*target);
  return true;
}
}  // namespace

std::vector<Tensor> call(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& given,
                         const CallOptions& options) {
  check_inputs(op, inputs);
  if (std::vector<Tensor> moved; move_cpu_scalars(inputs, moved)) return call(op, moved, given, options);
  Attrs attrs = normalize_attrs(op, given);
  // A view runs as its Tensor method, which records its own gradient and graph node.
  if (op.view) return op.decompose(inputs, attrs);
  graph::Tracer* tracer = graph::Tracer::active();
  // A public composite (flip, logsumexp, ...) is a convenience of the API: a
  // graph records its parts, which export to ONNX and take part in fusion passes.
  // So does a gradient: the parts record it. Inference still checks the call.
  const bool public_composite = op.decompose && op.role == OpRole::kPublic &&
                                (op.gradient == Gradient::kDecomposition || op.gradient == Gradient::kNone);
  const bool parts_carry_gradient = op.gradient == Gradient::kDecomposition && autograd::is_grad_enabled() &&
                                    autograd::any_requires_grad(inputs);
  if (public_composite && (tracer != nullptr || parts_carry_gradient)) {
    op.infer(InferContext{op, inputs, attrs, common_device(op, inputs, options)});
    return op.decompose(inputs, attrs);
  }
  // A fusion has no gradient rule (its catalog entry says so): when a gradient
  // is wanted it runs as its parts, each recording its own node.
  if (op.gradient == Gradient::kDecomposition && autograd::is_grad_enabled() && autograd::any_requires_grad(inputs)) {
    std::vector<Tensor> outputs;
    if (tracer != nullptr) {
      graph::TraceSuspend one_node;
      outputs = op.decompose(inputs, attrs);
      tracer->record_op(op, inputs, attrs, outputs);
    } else {
      outputs = op.decompose(inputs, attrs);
    }
    return outputs;
  }
  Device device = common_device(op, inputs, options);
  // A graph draws fresh random numbers on each run: it records the seed the caller gave (-1: none).
  Attrs traced_attrs = tracer != nullptr ? attrs : Attrs{};
  if (op.needs_generator && attrs.has("seed") && attrs.get_int("seed") < 0) {
    // Offsets advance by an upper bound of values drawn; inference would be exact,
    // but a generous bound keeps streams of different ops disjoint.
    int64_t count = 1;
    if (!inputs.empty() && inputs[0].defined()) count = inputs[0].numel();
    if (attrs.has("shape")) count = numel_of(attrs.get_ints("shape"));
    auto [seed, offset] = reserve_random(static_cast<uint64_t>(std::max<int64_t>(count, 1)));
    attrs.set("seed", int64_t(seed & 0x7fffffffffffffffULL));
    attrs.set("offset", int64_t(offset));
  }
  std::vector<Tensor> outputs;
  if (tracer != nullptr) {
    graph::TraceSuspend one_node;  // casts and decompositions inside the op are not nodes of their own
    outputs = run(op, inputs, attrs, device, nullptr);
  } else {
    outputs = run(op, inputs, attrs, device, nullptr);
  }
  autograd::record_op(op, inputs, attrs, outputs);
  if (tracer != nullptr) tracer->record_op(op, inputs, traced_attrs, outputs);
  return outputs;
}

std::vector<Tensor> call(const std::string& op, const std::vector<Tensor>& inputs,
                         const Attrs& attrs, const CallOptions& options) {
  return call(OpRegistry::instance().get(op), inputs, attrs, options);
}

Tensor call1(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
             const CallOptions& options) {
  auto outs = call(op, inputs, attrs, options);
  return outs.at(0);
}

void call_out(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& given,
              const std::vector<Tensor>& outputs) {
  check_inputs(op, inputs);
  Attrs attrs = normalize_attrs(op, given);
  if (op.view) throw ValueError(str("op '", op.name, "' is a view: it cannot write into given outputs"));
  Device device = common_device(op, inputs, {});
  for (const auto& o : outputs)
    if (o.device() != device)
      throw DeviceError(str("op '", op.name, "': output is on ", o.device().str(),
                            " but inputs are on ", device.str()));
  graph::Tracer* tracer = graph::Tracer::active();
  if (tracer == nullptr) {
    run(op, inputs, attrs, device, &outputs);
    return;
  }
  for (const Tensor& o : outputs) tracer->before_write(o);
  {
    graph::TraceSuspend one_node;
    run(op, inputs, attrs, device, &outputs);
  }
  tracer->record_op(op, inputs, attrs, outputs, /*into_outputs=*/true);
}

int64_t fallback_count(const std::string& op, const std::string& device_type) {
  std::lock_guard<std::mutex> lock(g_fallback_mutex);
  auto it = g_fallback_counts.find({op, device_type});
  return it == g_fallback_counts.end() ? 0 : it->second;
}

int64_t fallback_count_total() { return g_fallback_total.load(); }

}  // namespace oar
