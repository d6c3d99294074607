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
struct GradContext {
  const OpSchema& op;
  const std::vector<Tensor>& inputs;   // as the op received them
  const std::vector<Tensor>& outputs;  // the op's outputs (connected to the graph)
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

void register_grad_rule(const std::string& op, GradRule rule);
// Ops whose outputs carry no gradient (comparisons, arg-reductions, random draws).
void register_non_differentiable(const std::string& op);
const GradRule* find_grad_rule(const OpSchema& op);
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

// Sums `grad` down to `shape` (undoing broadcasting).
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace oar::autograd
