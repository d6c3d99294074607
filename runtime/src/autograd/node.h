// Graph nodes of the autograd tape (private to the core). A node maps the
// gradients of its outputs to gradients of its inputs and knows, per input,
// the edge to the node that produced it (or the leaf's accumulator).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "oar/autograd.h"

namespace oar {

namespace autograd {

struct Node;

struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
  bool valid() const { return node != nullptr; }
};

struct Node : std::enable_shared_from_this<Node> {
  Node();
  virtual ~Node();  // frees the chain of nodes behind it without recursion
  virtual std::string name() const = 0;
  // grads: one per output (undefined = zero). Returns one per input edge.
  virtual std::vector<Tensor> apply(const std::vector<Tensor>& grads) = 0;
  virtual void release_saved() {}

  uint64_t sequence_nr;
  size_t num_outputs = 1;
  std::vector<Edge> next;  // per input
  std::vector<Shape> input_shapes;
  std::vector<DType> input_dtypes;
  std::vector<Device> input_devices;
  std::vector<std::vector<TensorHook>> output_hooks;       // per output (non-leaf tensor hooks)
  std::vector<std::weak_ptr<TensorImpl>> retained_outputs;  // per output, for retain_grad()
  std::vector<NodePreHook> pre_hooks;  // grad_fn.register_prehook
  std::vector<NodeHook> post_hooks;    // grad_fn.register_hook
  bool released = false;
};

// Drops a reference to a node; a chain of nodes freed this way is freed by a
// loop, not by recursive destructors (a graph of 10^6 in-place updates would
// overflow the stack).
void release_node(std::shared_ptr<Node> node);
// Drops a saved tensor's history the same way (its grad_fn, when no one else
// holds the tensor's autograd state).
void release_history(Tensor& saved);

// Accumulates into a leaf tensor's .grad (after the leaf's hooks).
struct AccumulateGrad : Node {
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf(std::move(leaf)) {}
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const std::vector<Tensor>& grads) override;
  std::shared_ptr<TensorImpl> leaf;

 private:
  static bool accumulates_in_place(const Tensor& grad, const Tensor& g);
  static void add_into(Tensor& grad, const Tensor& g);
};

}  // namespace autograd

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;  // set for non-leaves
  uint32_t output_nr = 0;
  std::weak_ptr<autograd::Node> grad_accumulator;
  std::vector<autograd::TensorHook> hooks;  // leaves only; non-leaf hooks live on grad_fn
};

namespace autograd {

// The edge a gradient for `t` must flow into (invalid if t needs no grad).
Edge edge_of(const Tensor& t);
// Makes `t` a non-leaf output `output_nr` of `node`.
void set_history(Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr);
// Fills next/input metadata of `node` from its inputs.
void collect_inputs(Node& node, const std::vector<Tensor>& inputs);
// A tensor sharing t's storage and geometry, with no autograd history.
Tensor alias_without_history(const Tensor& t);
// Gives a view written through (or whose base was written) a history from
// its base's current one; records the memory's version as seen.
void refresh_view_history(TensorImpl& view);

}  // namespace autograd
}  // namespace oar
