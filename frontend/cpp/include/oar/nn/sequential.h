// oar::nn::Sequential: a chain of single-input modules registered as "0",
// "1", ... (or under given names), so parameter names read "0.weight" as in
// PyTorch. `nn::Sequential seq(nn::Linear(2, 8), nn::ReLU(), nn::Linear(8, 1));`
// Each child is called through its operator(), so its hooks run.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "oar/nn/module.h"

namespace oar::nn {

namespace detail {
template <class T> struct is_module_ref : std::false_type {};
template <class M> struct is_module_ref<std::shared_ptr<M>> : std::is_base_of<Module, M> {};
template <class M> struct is_module_ref<ModuleHolder<M>> : std::is_base_of<Module, M> {};
template <class T>
concept ModuleRef = is_module_ref<std::decay_t<T>>::value;

template <class M> std::shared_ptr<Module> as_module(const std::shared_ptr<M>& m) { return m; }
template <class M> std::shared_ptr<Module> as_module(const ModuleHolder<M>& m) { return m.ptr(); }
}  // namespace detail

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <detail::ModuleRef... Ms>
    requires(sizeof...(Ms) > 0)
  explicit SequentialImpl(Ms&&... modules) {
    (push_back(detail::as_module(modules)), ...);
  }
  // Named children, in order (torch::nn::Sequential over an OrderedDict).
  explicit SequentialImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& named);

  // Appends a child named by its position.
  template <detail::ModuleRef M>
  void push_back(const M& module) {
    push_back(std::to_string(modules_.size()), detail::as_module(module));
  }
  void push_back(std::string name, std::shared_ptr<Module> module);

  Tensor forward(const Tensor& input) override;

  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  // The i-th child; IndexError when out of range.
  const std::shared_ptr<Module>& ptr(size_t index) const;
  Module& operator[](size_t index) const { return *ptr(index); }
  // The i-th child as its concrete type (nullptr when it is another type).
  template <class T>
  std::shared_ptr<T> ptr_as(size_t index) const {
    return std::dynamic_pointer_cast<T>(ptr(index));
  }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
using Sequential = ModuleHolder<SequentialImpl>;

}  // namespace oar::nn
