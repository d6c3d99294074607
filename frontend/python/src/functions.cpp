// Module-level functions of oar._C: generic op calls (the Python op wrappers
// are generated from op_schemas()), tensor creation, DLPack import, seeding,
// grad mode, autograd.grad, flags and oar.info().
#include <dlpack/dlpack.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

#include "bindings.h"
#include "oar/info_report.h"
#include "oar/dlpack.h"
#include "oar/plugin_loader.h"
#ifdef OAR_HAVE_CPP_FRONTEND
#include "oar/serialize.h"
#endif

namespace oar::py {

namespace {

std::vector<Tensor> tensor_list(nb::handle seq) {
  std::vector<Tensor> out;
  for (nb::handle e : seq) {
    if (e.is_none()) out.emplace_back();
    else if (nb::isinstance<Tensor>(e)) out.push_back(nb::cast<Tensor>(e));
    else if (nb::isinstance<nb::list>(e) || nb::isinstance<nb::tuple>(e))
      for (nb::handle x : e) out.push_back(nb::cast<Tensor>(x));  // a variadic input
    else throw DTypeError(str("expected a Tensor, got ", nb::cast<std::string>(nb::repr(e.type()))));
  }
  return out;
}

nb::object attr_to_python(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, std::vector<int64_t>> || std::is_same_v<V, std::vector<double>>) {
          nb::list l;
          for (auto e : x) l.append(e);
          return l;
        } else {
          return nb::cast(x);
        }
      },
      v);
}

Tensor import_dlpack(nb::handle obj) {
  nb::object capsule = nb::borrow(obj);
  if (nb::hasattr(obj, "__dlpack__")) capsule = obj.attr("__dlpack__")();
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw ValueError("from_dlpack: expected an object with __dlpack__ or an unused 'dltensor' capsule");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // ownership moves to oar
  return from_dlpack(m);
}

}  // namespace

namespace {

// A Python callable held by a C++ autograd node, which may be freed on any
// thread: the reference is dropped under the GIL (and leaked once the
// interpreter is gone).
struct PyCallable {
  nb::object fn;
  explicit PyCallable(nb::object f) : fn(std::move(f)) {}
  PyCallable(const PyCallable&) = delete;
  PyCallable& operator=(const PyCallable&) = delete;
  ~PyCallable() {
    if (!Py_IsInitialized()) {
      fn.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    fn.reset();
  }
};

}  // namespace

void bind_functions(nb::module_& m) {
  // autograd.Function: `backward(grads) -> list of (Tensor | None)` per input.
  m.def("_record_custom", [](const std::string& name, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& outputs, const std::vector<int>& differentiable_flags,
                             bool materialize_grads, nb::callable backward) {
    const std::vector<bool> differentiable(differentiable_flags.begin(), differentiable_flags.end());
    auto fn = std::make_shared<PyCallable>(nb::borrow<nb::object>(backward));
    return autograd::record_custom(
        name, inputs, outputs, differentiable, materialize_grads,
        [fn, n = inputs.size()](const std::vector<Tensor>& grads) -> std::vector<Tensor> {
          nb::gil_scoped_acquire gil;
          nb::list args;
          for (const Tensor& g : grads) args.append(g.defined() ? nb::cast(g) : nb::none());
          nb::object r = fn->fn(args);
          std::vector<Tensor> out;
          for (nb::handle h : r) out.push_back(h.is_none() ? Tensor() : nb::cast<Tensor>(h));
          if (out.size() != n) throw ValueError("custom backward: wrong number of gradients");
          return out;
        });
  });
  m.def("call", [](const std::string& name, nb::handle inputs, nb::dict attrs, nb::handle device) {
    CallOptions opts;
    if (!device.is_none()) opts.device = to_device(device);
    std::vector<Tensor> in = tensor_list(inputs);
    Attrs a = to_attrs(attrs);
    std::vector<Tensor> outs;
    {
      nb::gil_scoped_release release;  // kernels may run long; other Python threads go on
      outs = call(name, in, a, opts);
    }
    return wrap_outputs(std::move(outs));
  }, nb::arg("name"), nb::arg("inputs"), nb::arg("attrs") = nb::dict(), nb::arg("device") = nb::none());

  // F.linear's fast path: typed arguments, no name lookup, and the GIL kept for
  // products too small to let another thread in before they finish.
  m.def("linear", [](const Tensor& input, const Tensor& weight, std::optional<Tensor> bias) {
    if (weight.dim() == 1) {  // torch allows a vector weight: a dot product per row
      Tensor y = matmul_any(input, weight);
      return bias ? call1("add", {y, *bias}) : y;
    }
    static const OpSchema& linear = OpRegistry::instance().get("linear");
    std::vector<Tensor> in{input, weight, bias ? *bias : Tensor()};
    if (input.numel() * (weight.dim() == 2 ? weight.size(0) : 1) < (int64_t(1) << 18))  // multiply-adds
      return std::move(call(linear, in)[0]);
    nb::gil_scoped_release release;
    return std::move(call(linear, in)[0]);
  }, nb::arg("input"), nb::arg("weight"), nb::arg("bias").none() = nb::none(),
  "linear(input, weight, bias=None) -> input @ weight.T + bias; input [..., in_features], "
  "weight [out_features, in_features] (or [in_features]), bias [out_features]");

  m.def("op_schemas", [] {
    nb::list ops;
    for (const auto& s : OpRegistry::instance().all()) {
      nb::dict d;
      d["name"] = s->name;
      nb::list ins, attrs, outs;
      for (const auto& i : s->inputs) {
        nb::dict e;
        e["name"] = i.name;
        e["variadic"] = i.variadic;
        e["optional"] = i.optional;
        ins.append(e);
      }
      for (const auto& a : s->attrs) {
        nb::dict e;
        e["name"] = a.name;
        e["type"] = attr_type_name(a.type);
        e["has_default"] = bool(a.default_value);
        e["default"] = a.default_value ? attr_to_python(*a.default_value) : nb::none();
        attrs.append(e);
      }
      for (const auto& o : s->outputs) outs.append(o);
      d["inputs"] = ins;
      d["attrs"] = attrs;
      d["outputs"] = outs;
      d["variadic_outputs"] = s->variadic_outputs;
      d["creation"] = s->creation;
      d["elementwise"] = s->broadcast;
      d["public"] = s->role == OpRole::kPublic;
      d["gradient"] = gradient_name(s->gradient);
      d["doc"] = s->doc;
      ops.append(d);
    }
    return ops;
  });

  m.def("tensor", [](nb::handle data, nb::handle dtype, nb::handle device, bool requires_grad) {
    std::optional<DType> dt;
    if (!dtype.is_none()) dt = to_dtype(dtype);
    Tensor t = tensor_from_data(data, dt, device.is_none() ? Device::default_device() : to_device(device));
    if (requires_grad) t.set_requires_grad(true);
    return t;
  }, nb::arg("data"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(), nb::arg("requires_grad") = false);

  m.def("from_dlpack", &import_dlpack);
  m.def("to_dtype", &to_dtype);
  m.def("to_device", &to_device);
  m.def("default_device", [] { return Device::default_device(); });
  m.def("manual_seed", [](uint64_t s) { manual_seed(s); });
  m.def("initial_seed", [] { return initial_seed(); });
  m.def("promote_types", [](DType a, DType b) { return promote_types(a, b); });
  m.def("default_float_dtype", [] { return default_float_dtype(); });
  m.def("set_default_float_dtype", [](DType d) { set_default_float_dtype(d); });
  m.def("get_rng_state", [] { return random_state(); });
  m.def("set_rng_state", [](uint64_t seed, uint64_t offset) { set_random_state(seed, offset); });
  m.def("is_grad_enabled", &autograd::is_grad_enabled);
  m.def("set_grad_enabled", &autograd::set_grad_enabled);
  m.def("autograd_grad", [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs, bool retain_graph,
                            bool create_graph, bool allow_unused) {
    std::vector<Tensor> gos = tensor_list(grad_outputs);
    auto res = autograd::grad(tensor_list(outputs), tensor_list(inputs), gos, retain_graph, create_graph, allow_unused);
    nb::list l;
    for (auto& r : res) l.append(r.defined() ? nb::cast(r) : nb::none());
    return nb::tuple(l);
  });
  m.def("autograd_backward", [](nb::handle tensors, nb::handle grads, bool retain_graph, bool create_graph) {
    std::vector<Tensor> gs = tensor_list(grads);
    autograd::backward(tensor_list(tensors), gs, retain_graph, create_graph);
  });
#ifdef OAR_HAVE_CPP_FRONTEND
  // State dicts in the versioned, checksummed format of docs/serialization.md
  // (shared with the C++ frontend, so checkpoints move between the two).
  m.def("save_state_dict", [](const std::vector<std::pair<std::string, Tensor>>& items, const std::string& path) {
    StateDict sd;
    for (const auto& [k, v] : items) sd.insert(k, v.detach());
    nb::gil_scoped_release release;
    save(sd, path);
  });
  m.def("load_state_dict", [](const std::string& path, nb::handle device) {
    StateDict sd;
    {
      std::optional<Device> dev;
      if (!device.is_none()) dev = to_device(device);
      nb::gil_scoped_release release;
      sd = dev ? load(path, *dev) : load(path);
    }
    std::vector<std::pair<std::string, Tensor>> out;
    for (auto& [k, v] : sd) out.emplace_back(k, v);
    return out;
  }, nb::arg("path"), nb::arg("device").none() = nb::none());
#endif
  // A plugin's flags exist once plugins have loaded: a name the core does not
  // define starts the runtime before it is looked up (and only then).
  auto flags_knowing = [](const std::string& name) -> Flags& {
    if (!Flags::instance().is_defined(name)) Runtime::get();
    return Flags::instance();
  };
  m.def("set_flag", [flags_knowing](const std::string& n, const std::string& v) { flags_knowing(n).set(n, v); });
  m.def("get_flag", [flags_knowing](const std::string& n) { return flags_knowing(n).get(n); });
  m.def("fallback_count", [](const std::string& op, const std::string& dev) { return fallback_count(op, dev); });
  // `python -m oar.info`: the text (or JSON) oar-info prints, from the same code.
  m.def("info_report", [](bool json) { return json ? info_report_json() : info_report_text(); },
        nb::arg("json") = false);
  m.def("info", [] {
    Runtime& rt = Runtime::get();
    nb::dict info;
    info["abi_version"] = std::to_string(OAR_ABI_VERSION_MAJOR) + "." + std::to_string(OAR_ABI_VERSION_MINOR);
    nb::list plugins, skipped, devices, flags;
    for (const auto& p : rt.plugins()) {
      nb::dict d;
      d["name"] = p->name;
      d["version"] = p->version;
      d["path"] = p->path;
      d["device_type"] = p->device_type;
      d["device_count"] = p->device_count;
      d["abi_version"] = std::to_string(p->abi_major) + "." + std::to_string(p->abi_minor);
      d["kernels"] = KernelRegistry::instance().entries_for_device(p->device_type_id).size();
      d["flags"] = p->declared_flags;
      nb::list rejected;
      for (const auto& r : p->rejected_flags) rejected.append(nb::make_tuple(r.name, r.reason));
      d["rejected_flags"] = rejected;
      plugins.append(d);
    }
    for (const auto& s : rt.skipped()) {
      nb::dict d;
      d["path"] = s.path;
      d["reason"] = s.reason;
      skipped.append(d);
    }
    for (const auto& dev : rt.devices()) devices.append(dev.str());
    for (const auto& f : Flags::instance().list()) {
      nb::dict d;
      d["name"] = f.definition.name;
      d["value"] = f.value;
      d["default"] = f.definition.default_value;
      d["help"] = f.definition.help;
      d["type"] = flag_type_name(f.definition.type);
      d["owner"] = f.owner;  // "" for a core flag, else the declaring plugin
      flags.append(d);
    }
    info["plugins"] = plugins;
    info["skipped_plugins"] = skipped;
    info["devices"] = devices;
    info["flags"] = flags;
    info["searched_dirs"] = rt.searched_dirs();
    return info;
  });
}

}  // namespace oar::py
