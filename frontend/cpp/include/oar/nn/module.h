// oar::nn::Module: the base of every layer and model, with PyTorch's
// semantics. A module owns named parameters (leaf tensors that require grad),
// buffers (running statistics and other state that is saved but not trained)
// and child modules; names nest with dots ("features.0.weight"). Calling a
// module runs its forward pre-hooks, forward() and forward hooks.
//
// Modules live in shared_ptrs. ModuleHolder<Impl> wraps one the way
// torch::nn::Linear wraps LinearImpl: `nn::Linear fc(3, 4); fc(x); fc->weight`.
//
// to(device) / to(dtype) convert parameters and buffers in place (the tensor
// handle keeps its identity, like PyTorch's param.data = ...), so member
// copies such as LinearImpl::weight and an optimizer's parameter list stay
// valid.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oar/ordered_dict.h"
#include "oar/tensor.h"

namespace oar::nn {

class Module;
template <class Impl> class ModuleHolder;

namespace detail {
struct HookTable;
}

// A pre-hook sees the module and its inputs; a non-empty result replaces the inputs.
using ForwardPreHook = std::function<std::vector<Tensor>(Module& module, const std::vector<Tensor>& inputs)>;
// A hook sees the inputs and the output; a defined result replaces the output.
using ForwardHook =
    std::function<Tensor(Module& module, const std::vector<Tensor>& inputs, const Tensor& output)>;

// Returned by register_forward_*hook; remove() unregisters the hook (idempotent).
class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::weak_ptr<detail::HookTable> table, uint64_t id) : table_(std::move(table)), id_(id) {}
  void remove();

 private:
  std::weak_ptr<detail::HookTable> table_;
  uint64_t id_ = 0;
};

// What load_state_dict(strict = false) skipped.
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;     // in the module, not in the state dict
  std::vector<std::string> unexpected_keys;  // in the state dict, not in the module
};

using oar::StateDict;

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module();
  // `name` overrides the type name used in messages.
  explicit Module(std::string name);
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The module's type name ("oar::nn::LinearImpl"), or the name given to the constructor.
  const std::string& name() const;

  // ---- forward ----
  // Override this for single-input modules. The default throws NotImplementedError.
  virtual Tensor forward(const Tensor& input);
  // Run hooks around forward (one input; two for losses and other binary modules).
  Tensor operator()(const Tensor& input) { return call({input}); }
  Tensor operator()(const Tensor& input, const Tensor& other) { return call({input, other}); }
  Tensor call(std::vector<Tensor> inputs);

  RemovableHandle register_forward_pre_hook(ForwardPreHook hook);
  RemovableHandle register_forward_hook(ForwardHook hook);

  // ---- registration ----
  // Names are non-empty, contain no '.', and are unique within the module.
  // A parameter must be a leaf; an undefined tensor registers an absent one
  // (PyTorch's None), skipped by parameters() and state_dict().
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // Non-persistent buffers are moved by to() but left out of state_dict().
  Tensor& register_buffer(std::string name, Tensor tensor, bool persistent = true);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "register_module needs a Module subclass");
    add_child(std::move(name), module);
    return module;
  }
  template <class M>
  ModuleHolder<M> register_module(std::string name, ModuleHolder<M> holder) {
    add_child(std::move(name), holder.ptr());
    return holder;
  }

  // ---- traversal (registration order; nested names joined with '.') ----
  std::vector<Tensor> parameters(bool recurse = true) const;
  StateDict named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  StateDict named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  // All descendants, depth first; include_self needs this module to be owned by a shared_ptr.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  // Calls fn on every descendant, then on this module (as torch.nn.Module.apply).
  void apply(const std::function<void(Module&)>& fn);

  // ---- mode, device, gradients ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void to(Device device);
  void to(DType dtype);  // floating parameters and buffers only, as in PyTorch
  void zero_grad(bool set_to_none = true);

  // ---- state ----
  // Parameters and persistent buffers by dotted name, detached (sharing storage).
  StateDict state_dict() const;
  // Copies values into the module's tensors. Shape or dtype mismatches always
  // throw (ShapeError / DTypeError naming the key) and nothing is copied;
  // with strict, missing or unexpected keys throw ValueError listing them.
  LoadStateDictResult load_state_dict(const StateDict& state_dict, bool strict = true);

 protected:
  // Routes the inputs of call() to forward; modules of another arity override it.
  virtual Tensor forward_inputs(const std::vector<Tensor>& inputs);

 private:
  void add_child(std::string name, std::shared_ptr<Module> child);
  void check_new_name(const std::string& name, const char* what) const;
  void collect(const std::string& prefix, bool recurse, bool params, bool persistent_only, StateDict& out) const;

  mutable std::string name_;  // filled lazily: typeid(*this) is the base type inside constructors
  bool training_ = true;
  StateDict parameters_;
  StateDict buffers_;
  std::vector<std::string> non_persistent_;
  OrderedDict<std::string, std::shared_ptr<Module>> children_;
  std::shared_ptr<detail::HookTable> hooks_;
};

// Owns a shared_ptr<Impl>: `Linear fc(3, 4)` constructs LinearImpl(3, 4);
// `Linear fc{nullptr}` is empty until assigned. fc(x) calls the module,
// fc->member reaches the implementation.
template <class Impl>
class ModuleHolder {
 public:
  ModuleHolder()
    requires std::is_default_constructible_v<Impl>
      : impl_(std::make_shared<Impl>()) {}
  ModuleHolder(std::nullptr_t) {}  // NOLINT: empty holder, as torch's
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT
  template <class Head, class... Tail>
    requires(!std::is_same_v<std::decay_t<Head>, ModuleHolder> && !std::is_same_v<std::decay_t<Head>, std::nullptr_t> &&
             !std::is_same_v<std::decay_t<Head>, std::shared_ptr<Impl>> &&
             std::is_constructible_v<Impl, Head, Tail...>)
  explicit(sizeof...(Tail) == 0) ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    if (!impl_) throw ValueError("accessing an empty ModuleHolder (constructed with nullptr)");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  template <class... Args>
  Tensor operator()(Args&&... args) const {
    return (*get())(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace oar::nn
