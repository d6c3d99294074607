// oar::nn::Module: registration, traversal, hooks, train/eval, in-place
// device and dtype conversion, and state_dict / load_state_dict.
#include "oar/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <typeinfo>

#include "oar/autograd.h"
#include "oar/error.h"

namespace oar::nn {

namespace detail {
struct HookTable {
  uint64_t next_id = 1;
  std::vector<std::pair<uint64_t, ForwardPreHook>> pre;
  std::vector<std::pair<uint64_t, ForwardHook>> post;
};
}  // namespace detail

namespace {

std::string demangle(const char* mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = (status == 0 && out) ? out : mangled;
  std::free(out);
  return name;
}

template <class Hooks>
void erase_id(Hooks& hooks, uint64_t id) {
  for (auto it = hooks.begin(); it != hooks.end(); ++it)
    if (it->first == id) {
      hooks.erase(it);
      return;
    }
}

// Rebinds `t` to the storage and geometry of `src`, keeping t's identity and
// autograd metadata (requires_grad, hooks) as PyTorch's `param.data = src`.
void set_data(Tensor& t, const Tensor& src) {
  TensorImpl& dst = t.impl();
  const TensorImpl& s = src.impl();
  dst.storage = s.storage;
  dst.shape = s.shape;
  dst.strides = s.strides;
  dst.offset = s.offset;
  dst.dtype = s.dtype;
}

template <class Convert>
void convert_in_place(Tensor& t, Convert convert) {
  if (!t.defined()) return;
  autograd::NoGradGuard no_grad;
  Tensor grad = t.grad();
  Tensor moved = convert(t.detach());
  if (moved.device() == t.device() && moved.dtype() == t.dtype()) return;
  set_data(t, moved);
  if (grad.defined()) t.set_grad(convert(grad));
}

}  // namespace

void RemovableHandle::remove() {
  if (auto table = table_.lock()) {
    erase_id(table->pre, id_);
    erase_id(table->post, id_);
  }
  table_.reset();
}

Module::Module() : hooks_(std::make_shared<detail::HookTable>()) {}
Module::Module(std::string name) : name_(std::move(name)), hooks_(std::make_shared<detail::HookTable>()) {}
Module::~Module() = default;

const std::string& Module::name() const {
  if (name_.empty()) name_ = demangle(typeid(*this).name());
  return name_;
}

Tensor Module::forward(const Tensor&) {
  throw NotImplementedError(str("module '", name(), "' does not implement forward(const Tensor&)"));
}

Tensor Module::forward_inputs(const std::vector<Tensor>& inputs) {
  if (inputs.size() != 1)
    throw ValueError(str("module '", name(), "' takes 1 input, got ", inputs.size()));
  return forward(inputs[0]);
}

Tensor Module::call(std::vector<Tensor> inputs) {
  // Copies, so a hook may remove itself (or others) while running.
  auto pre = hooks_->pre;
  auto post = hooks_->post;
  for (auto& [id, hook] : pre) {
    std::vector<Tensor> replaced = hook(*this, inputs);
    if (!replaced.empty()) inputs = std::move(replaced);
  }
  Tensor output = forward_inputs(inputs);
  for (auto& [id, hook] : post) {
    Tensor replaced = hook(*this, inputs, output);
    if (replaced.defined()) output = std::move(replaced);
  }
  return output;
}

RemovableHandle Module::register_forward_pre_hook(ForwardPreHook hook) {
  if (!hook) throw ValueError("register_forward_pre_hook: empty hook");
  uint64_t id = hooks_->next_id++;
  hooks_->pre.emplace_back(id, std::move(hook));
  return RemovableHandle(hooks_, id);
}

RemovableHandle Module::register_forward_hook(ForwardHook hook) {
  if (!hook) throw ValueError("register_forward_hook: empty hook");
  uint64_t id = hooks_->next_id++;
  hooks_->post.emplace_back(id, std::move(hook));
  return RemovableHandle(hooks_, id);
}

void Module::check_new_name(const std::string& n, const char* what) const {
  if (n.empty()) throw ValueError(str("register_", what, ": name must not be empty"));
  if (n.find('.') != std::string::npos)
    throw ValueError(str("register_", what, ": name '", n, "' must not contain '.'"));
  if (parameters_.contains(n) || buffers_.contains(n) || children_.contains(n))
    throw ValueError(str("register_", what, ": '", n, "' is already registered in module '", name(), "'"));
}

Tensor& Module::register_parameter(std::string n, Tensor tensor, bool requires_grad) {
  check_new_name(n, "parameter");
  if (tensor.defined()) {
    if (!tensor.is_leaf())
      throw ValueError(str("register_parameter: '", n, "' is not a leaf tensor; register tensor.detach()"));
    tensor.set_requires_grad(requires_grad);
  }
  return parameters_.insert(n, std::move(tensor));
}

Tensor& Module::register_buffer(std::string n, Tensor tensor, bool persistent) {
  check_new_name(n, "buffer");
  if (!persistent) non_persistent_.push_back(n);
  return buffers_.insert(n, std::move(tensor));
}

void Module::add_child(std::string n, std::shared_ptr<Module> child) {
  check_new_name(n, "module");
  if (!child) throw ValueError(str("register_module: '", n, "' is a null module"));
  children_.insert(n, std::move(child));
}

void Module::collect(const std::string& prefix, bool recurse, bool params, bool persistent_only,
                     StateDict& out) const {
  const StateDict& own = params ? parameters_ : buffers_;
  for (const auto& [n, t] : own) {
    if (!t.defined()) continue;
    if (persistent_only && !params &&
        std::find(non_persistent_.begin(), non_persistent_.end(), n) != non_persistent_.end())
      continue;
    out.insert(prefix + n, t);
  }
  if (!recurse) return;
  for (const auto& [n, child] : children_) child->collect(prefix + n + ".", true, params, persistent_only, out);
}

StateDict Module::named_parameters(bool recurse) const {
  StateDict out;
  collect("", recurse, true, false, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

StateDict Module::named_buffers(bool recurse) const {
  StateDict out;
  collect("", recurse, false, false, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  std::vector<std::shared_ptr<Module>> out;
  if (include_self) {
    auto self = weak_from_this().lock();
    if (!self)
      throw ValueError(str("modules(include_self = true): module '", name(), "' is not owned by a shared_ptr"));
    out.push_back(self);
  }
  for (const auto& [n, child] : children_) {
    auto sub = child->modules(true);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& [n, child] : children_) child->apply(fn);
  fn(*this);
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& [n, child] : children_) child->train(on);
}

void Module::to(Device device) {
  auto convert = [device](const Tensor& t) { return t.to(device); };
  for (auto& [n, t] : parameters_) convert_in_place(t, convert);
  for (auto& [n, t] : buffers_) convert_in_place(t, convert);
  for (const auto& [n, child] : children_) child->to(device);
}

void Module::to(DType dtype) {
  if (!is_floating(dtype)) throw DTypeError(str("Module::to: dtype must be floating, got ", dtype_name(dtype)));
  auto convert = [dtype](const Tensor& t) { return is_floating(t.dtype()) ? t.to(dtype) : t; };
  for (auto& [n, t] : parameters_) convert_in_place(t, convert);
  for (auto& [n, t] : buffers_) convert_in_place(t, convert);
  for (const auto& [n, child] : children_) child->to(dtype);
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      autograd::NoGradGuard no_grad;
      g.copy_(Tensor::zeros({}, g.dtype(), g.device()));
    }
  }
}

StateDict Module::state_dict() const {
  StateDict live;
  collect("", true, true, true, live);
  collect("", true, false, true, live);
  StateDict out;
  for (const auto& [n, t] : live) out.insert(n, t.detach());
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state_dict, bool strict) {
  StateDict live;
  collect("", true, true, true, live);
  collect("", true, false, true, live);
  LoadStateDictResult result;
  for (const auto& [n, t] : live)
    if (!state_dict.contains(n)) result.missing_keys.push_back(n);
  for (const auto& [n, t] : state_dict)
    if (!live.contains(n)) result.unexpected_keys.push_back(n);
  if (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty())) {
    std::string msg = str("Error(s) in loading state_dict for ", name(), ":");
    auto list = [&msg](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      msg += str(" ", what, " key(s) in state_dict:");
      for (size_t i = 0; i < keys.size(); ++i) msg += str(i ? ", \"" : " \"", keys[i], "\"");
      msg += ".";
    };
    list("Missing", result.missing_keys);
    list("Unexpected", result.unexpected_keys);
    throw ValueError(msg);
  }
  // Validate everything first so a bad entry leaves the module untouched.
  for (const auto& [n, dst] : live) {
    const Tensor* src = state_dict.find(n);
    if (!src) continue;
    if (!src->defined()) throw ValueError(str("load_state_dict: entry '", n, "' is an undefined tensor"));
    if (src->shape() != dst.shape())
      throw ShapeError(str("load_state_dict: size mismatch for '", n, "': copying a tensor with shape ",
                           shape_str(src->shape()), " from the state dict, the shape in the current module is ",
                           shape_str(dst.shape())));
    if (src->dtype() != dst.dtype())
      throw DTypeError(str("load_state_dict: dtype mismatch for '", n, "': the state dict has ",
                           dtype_name(src->dtype()), ", the current module has ", dtype_name(dst.dtype())));
  }
  autograd::NoGradGuard no_grad;
  for (auto& [n, dst] : live)
    if (const Tensor* src = state_dict.find(n)) dst.copy_(*src);
  return result;
}

}  // namespace oar::nn
