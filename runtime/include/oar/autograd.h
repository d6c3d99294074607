// Reverse-mode automatic differentiation. Eager dispatch records a node per
// differentiable op call whose inputs require grad; gradients are computed by
// rules written with other ops (runtime/src/autograd/rules_*.cpp), so with
// create_graph the backward pass is itself recorded and higher-order
// gradients work on every device. View ops (reshape, transpose, slice, ...)
// and device transfers record nodes too.
//
// Semantics follow PyTorch: leaves accumulate into .grad; backward frees the
// graph's saved tensors unless retain_graph; grad() returns gradients without
// touching .grad; hooks on a tensor see (and may replace) its gradient.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oar/op_schema.h"
#include "oar/tensor.h"

namespace oar::autograd {

// ---- grad mode (thread-local, as in PyTorch) ----
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

struct NoGradGuard : GradModeGuard {
  NoGradGuard() : GradModeGuard(false) {}
};

// A hook sees the gradient of a tensor; returning a defined tensor replaces it.
using TensorHook = std::function<Tensor(const Tensor& grad)>;
// Hooks on a node of the graph (PyTorch's grad_fn.register_prehook/register_hook).
// A pre-hook sees the gradients of the node's outputs before it runs; a hook,
// the gradients it computed for its inputs and those of its outputs. Undefined
// entries are gradients that are zero/absent. Returning a non-empty vector (one
// entry per gradient seen) replaces them; an empty one keeps them.
using NodePreHook = std::function<std::vector<Tensor>(const std::vector<Tensor>& grad_outputs)>;
using NodeHook = std::function<std::vector<Tensor>(const std::vector<Tensor>& grad_inputs,
                                                   const std::vector<Tensor>& grad_outputs)>;

// ---- running the backward pass ----
// Accumulates d(sum of roots * grad_roots) into the .grad of reachable leaves.
// A root with one element may omit its grad (1 is used).
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots = {},
              bool retain_graph = false, bool create_graph = false);

// Gradients of `outputs` w.r.t. `inputs`; .grad is left untouched.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool create_graph = false, bool allow_unused = false);

// ---- gradient rules (author-facing) ----

// The tensors an op saved for its gradient rule. Reading one checks that no
// in-place op has written its memory since the op ran (PyTorch's version
// counter rule): a rule that needs an overwritten value raises ValueError
// instead of computing a wrong gradient. Rules read only what they use.
class SavedTensors {
 public:
  SavedTensors(const std::vector<Tensor>& tensors, const std::vector<uint32_t>* versions, const OpSchema& op,
               const char* role)
      : tensors_(tensors), versions_(versions), op_(op), role_(role) {}
  const Tensor& operator[](size_t i) const {
    const Tensor& t = tensors_[i];
    if (versions_ != nullptr && t.defined() && t.version() != (*versions_)[i]) throw_modified(i);
    return t;
  }
  const Tensor& at(size_t i) const { return (*this)[checked(i)]; }
  size_t size() const { return tensors_.size(); }
  bool empty() const { return tensors_.empty(); }
  // Shape, dtype and device stay valid after an in-place write: no check.
  const Tensor& meta(size_t i) const { return tensors_.at(i); }

 private:
  [[noreturn]] void throw_modified(size_t i) const;
  size_t checked(size_t i) const;
  const std::vector<Tensor>& tensors_;
  const std::vector<uint32_t>* versions_;
  const OpSchema& op_;
  const char* role_;
};

struct GradContext {
  const OpSchema& op;
  SavedTensors inputs;   // as the op received them
  SavedTensors outputs;  // the op's outputs (connected to the graph)
  const Attrs& attrs;
  const std::vector<Tensor>& grads;    // one per output; undefined = zero
  const std::vector<bool>& needs_grad; // per input

  bool needs(size_t i) const { return i < needs_grad.size() && needs_grad[i]; }
  // grads[i], or zeros shaped like outputs[i] when no gradient reached it.
  Tensor grad_or_zeros(size_t i) const;
};

// Returns one gradient per input (undefined where not needed). A gradient may
// have the broadcast shape or the promoted dtype of its input: the engine
// sums it down to the input's shape and casts it to the input's dtype.
using GradRule = std::function<std::vector<Tensor>(const GradContext&)>;

// Throws InternalError for an op not in the catalog or one that has a rule already.
void register_grad_rule(const std::string& op, GradRule rule);
const GradRule* find_grad_rule(const OpSchema& op);
// Whether the op's outputs carry no gradient (its schema's `gradient` is kNone:
// comparisons, arg-reductions, random draws); the catalog says so, not a rule.
bool is_non_differentiable(const OpSchema& op);

// ---- recording (used by dispatch and view ops) ----
// Connects outputs of `op` to a new graph node when grad mode is on and some
// input requires grad. Called by oar::call after the kernel ran.
void record_op(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
               std::vector<Tensor>& outputs);
// Records a single-input function (views, device copies): backward maps the
// output's gradient to the input's.
void record_function(const char* name, const Tensor& input, Tensor& output,
                     std::function<Tensor(const Tensor& grad)> backward);
bool any_requires_grad(const std::vector<Tensor>& tensors);

// A function whose forward ran outside autograd and whose backward is given
// (Python's autograd.Function). `backward` gets one gradient per output
// (zeros where none reached it, unless `materialize_grads` is false: then
// undefined) and returns one per input (undefined = none). Returns the
// outputs as new tensors (aliases of the given ones) that carry the history;
// outputs marked false in `differentiable`, or not floating, get none.
using CustomBackward = std::function<std::vector<Tensor>(const std::vector<Tensor>& grads)>;
std::vector<Tensor> record_custom(const std::string& name, const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& outputs, const std::vector<bool>& differentiable,
                                  bool materialize_grads, CustomBackward backward);

// ---- in-place writes (Tensor::copy_ and Tensor::update_) ----
// Whether writing `src` into `self` under grad mode must be recorded; refuses
// (ValueError) a leaf that requires grad, or a view of one.
bool inplace_needs_record(const Tensor& self, const Tensor& src);
// After `src` was written into `self`: self (or, when self is a view, its
// base) takes a history in which the overwritten values get no gradient and
// src gets the gradient of the part it filled.
void rebase_history(Tensor& self, const Tensor& src);
// After `t` took a new history: a retain_grad() on the old one moves to the
// new one (the retained gradient is of the tensor's current value).
void move_retained_grad(const Tensor& t, const std::shared_ptr<AutogradMeta>& old_meta);

// The gradient function of input.as_strided(shape, strides, offset): through
// storage space, so overlapping and partial views work (as_strided_grad.cpp).
std::function<Tensor(const Tensor&)> as_strided_backward(const Tensor& input, const Shape& shape,
                                                         const Shape& strides, int64_t offset);

// Sums `grad` down to `shape` (undoing broadcasting).
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace oar::autograd
