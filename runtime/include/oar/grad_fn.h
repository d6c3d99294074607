// A handle on a node of the autograd graph: what `tensor.grad_fn`
// is in PyTorch. It names the backward function that produced a tensor and
// lists, per input of that function, the node the input's gradient flows
// into next (`next_functions`), down to the AccumulateGrad nodes of the
// leaves. Tutorials and debugging code walk the graph this way; holding a
// handle keeps its node alive, as a Python reference to grad_fn does in PyTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "oar/autograd.h"
#include "oar/tensor.h"

namespace oar {

namespace autograd {
struct Node;
}

class GradFn {
 public:
  GradFn() = default;
  explicit GradFn(std::shared_ptr<autograd::Node> node) : node_(std::move(node)) {}

  // The tensor's grad_fn; empty for a leaf or a tensor without history.
  static GradFn of(const Tensor& t);

  bool defined() const { return node_ != nullptr; }
  // oar's name ("mulBackward", "AccumulateGrad").
  std::string name() const;
  // Per input of this node: the node its gradient flows into (empty when the
  // input needs no gradient) and which of that node's outputs it is.
  std::vector<std::pair<GradFn, uint32_t>> next_functions() const;
  // For an AccumulateGrad node, the leaf it accumulates into (undefined for
  // other nodes, or once the leaf is gone).
  Tensor variable() const;
  // Hooks run by every later backward through this node (see NodePreHook and
  // NodeHook in oar/autograd.h); on a leaf's AccumulateGrad node the hook runs
  // after the gradient was accumulated, with no input gradients.
  void register_prehook(autograd::NodePreHook hook) const;
  void register_hook(autograd::NodeHook hook) const;
  // Identity of the node (two handles on one node compare equal).
  const void* id() const { return node_.get(); }

 private:
  std::shared_ptr<autograd::Node> node_;
};

}  // namespace oar
