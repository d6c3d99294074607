// Graph passes: rewrites that keep a graph's results and make it cheaper to
// run. Each takes a verified graph, leaves a verified graph, and returns how
// many nodes it removed or replaced, so callers (and tests) can see it acted.
// All are pure rewrites of SSA values; updates and outputs are preserved.
//
// Passes that need values fixed at compile time (constant folding, batch-norm
// folding) act on kConstant values only: captured tensors are read by
// reference on every run and may change. `freeze` turns captured tensors into
// constants for deployment (the Predictor does this on load).
#pragma once

#include <cstddef>

#include "oar/graph/graph.h"

namespace oar::graph {

// Removes nodes none of whose outputs are read (by a node, an output or an
// update), then tensors nothing reads.
size_t eliminate_dead_code(Graph& graph);

// Makes later copies of a node with the same op, inputs and attributes read
// the first one's outputs (random ops without a fixed seed are never merged:
// each draws its own numbers), then removes them.
size_t eliminate_common_subexpressions(Graph& graph);

// Evaluates nodes whose inputs are all constants (and nodes without inputs
// that are not random) once, now, replacing them by constants. `expand` is
// left alone: folding it would store the broadcast tensor in full.
size_t fold_constants(Graph& graph);

// conv2d(x, W, b) followed by inference-mode batch_norm with constant
// parameters and statistics becomes one conv2d with W' = W * s and
// b' = (b - mean) * s + beta, where s = gamma / sqrt(var + eps).
size_t fold_batch_norm_into_conv(Graph& graph);

// Fusion with the kernels every device has: add(matmul(x, permute(W)), b)
// becomes linear(x, W, b) (one GEMM with its bias epilogue), and
// add(conv2d(x, W), b shaped [1, C, 1, 1] or [C, 1, 1]) becomes conv2d(x, W, b).
// Only where the intermediate has no other reader and no dtype promotion is involved.
size_t fuse_bias(Graph& graph);

// conv2d or linear whose only reader is relu, sigmoid or tanh becomes
// conv2d_act / linear_act (the activation in the same kernel: a oneDNN
// post-op on the CPU), where `device_type` has that kernel for the dtype.
size_t fuse_activation(Graph& graph, int32_t device_type);

// Elementwise-chain fusion: maximal chains of same-dtype elementwise functor
// nodes (add, mul, exp, clamp, ... from kernel_primitives' .def files) of one
// output shape, each intermediate read only inside its chain, become one
// fused_elementwise node, where `device_type` has a kernel for it (the CPU
// plugin does; elsewhere the node would only decompose again, so nothing is
// fused). Returns the number of nodes fused away.
size_t fuse_elementwise(Graph& graph, int32_t device_type);

// The inverse of fuse_activation and fuse_elementwise: conv2d_act and
// linear_act become conv2d / linear followed by their activation, and
// fused_elementwise its chain of catalog ops again. For a consumer that knows
// only the catalog's plain ops, such as a subgraph-offload driver (a graph
// saved or imported with those fusions still reaches it whole). Returns the
// number of fused nodes expanded.
size_t unfuse(Graph& graph);

// Views that change nothing (a reshape to the same shape, an identity
// permutation, an expand or slice that keeps every element) read their input instead.
size_t eliminate_identity_views(Graph& graph);

// Captured tensors become constants holding a copy of their current values
// (the graph stops following the model). Refused (GraphError) when an update
// targets a captured value: such a graph has state.
size_t freeze(Graph& graph);

// The inference pipeline: freeze, fold batch norms and constants, merge
// common subexpressions, drop dead code; `device_fusion` as for optimize.
void optimize_for_inference(Graph& graph, Device device, bool device_fusion = true);
// What every traced graph gets (captured tensors stay by reference): constant
// folding, identity views, bias fusion, common subexpressions, dead code, and
// activation and elementwise fusion for the device the graph will run on.
// `device_fusion` false skips the fusions into ops only some devices have
// (conv2d_act, linear_act, fused_elementwise): a graph meant for ONNX export.
void optimize(Graph& graph, Device device, bool device_fusion = true);

}  // namespace oar::graph
