// The graph text format: a Graph's structure (values, nodes with typed
// attributes, updates, outputs) as versioned, line-based text, without the
// tensors' data. Saved graphs (oar/jit.h's save/load, docs/serialization.md)
// store this text beside the tensors, which are referred to by value id.
// Parsing re-runs each op's shape inference, so a file whose shapes do not
// match what this build infers is rejected rather than run.
//
//   oar-graph 1
//   value 0 input 4:arg0 f32 2 16 64
//   value 1 captured 8:0.weight f32 2 32 64
//   node linear in 0 1 _ out 3 f32 2 16 32 attrs 0
//   update 1 3
//   output 3
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "oar/graph/graph.h"

namespace oar::graph {

// The version this build writes; it reads 1..kGraphTextVersion.
inline constexpr int kGraphTextVersion = 1;

std::string to_text(const Graph& graph);

// `tensor_of(id)` supplies the data of captured and constant value `id`.
// Throws IOError naming `source` (a file name) and the line for malformed
// text, unknown ops or attributes, newer versions or metas that disagree with
// inference.
std::unique_ptr<Graph> from_text(const std::string& text, const std::function<Tensor(int32_t id)>& tensor_of,
                                 const std::string& source);

}  // namespace oar::graph
