// Tracing: recording what eager code does into a Graph. While a Tracer is
// active on a thread, every op that thread dispatches (call, call_out), every
// view it takes and every in-place copy becomes part of the graph; nested
// calls (an op's decomposition, dispatch's own casts) are not recorded twice.
// Backward passes and optimizer steps are ops too, so running them under a
// tracer captures them (a training graph).
//
// Tensors are identified by their memory layout (storage, offset, shape,
// strides, dtype), so an alias made by detach() or autograd is the same value.
// A tensor the trace did not produce and was not given as an input is
// *captured*: the graph reads it by reference on each run (parameters,
// buffers, optimizer state). Writes into an input or captured tensor become
// the graph's updates.
//
// Tracing runs the code for real, but in-place writes into tensors that
// outlive the trace are undone when it ends (see before_write).
//
// What cannot be captured faithfully is an error (GraphError), never a
// silently frozen graph: reading a traced tensor's values on the host (item(),
// bool(), numpy() -- control flow that depends on data), writing into a view,
// or reading a view of a tensor written after the view was taken.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "oar/graph/graph.h"

namespace oar::graph {

class Tracer {
 public:
  // Starts recording on this thread; `inputs` become the graph's inputs, named
  // by `names` when given ("input0", "input1", ... otherwise). Tracers nest:
  // the innermost one records.
  explicit Tracer(const std::vector<Tensor>& inputs, const std::vector<std::string>& names = {});
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Names the value a tensor will have if it is captured (a parameter's
  // qualified name), for dumps and saved files.
  void name_tensor(const Tensor& t, const std::string& name);
  // Stops recording; `outputs` become the graph's outputs. An output that is
  // a captured tensor or an input is allowed (the graph returns it as is).
  std::unique_ptr<Graph> finish(const std::vector<Tensor>& outputs);

  // The tracer recording on this thread, or nullptr (also while suspended).
  static Tracer* active();

  // ---- hooks the core calls ----
  // `op` ran on `inputs` and produced `outputs` (into_outputs: wrote into
  // existing tensors, as call_out and copy_ do).
  void record_op(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
                 const std::vector<Tensor>& outputs, bool into_outputs = false);
  // `dst` is about to be written in place: a tensor that outlives the trace
  // (an input or captured one) is saved first, and restored when the trace
  // ends, so tracing has no side effects and the first graph run applies the
  // updates once, like every later run.
  void before_write(const Tensor& dst);
  // Whether `t` is a tensor the trace computed (not an input, a captured
  // tensor or one it has not seen): swapping its memory for another
  // computed tensor's needs no update recorded in the graph.
  bool created(const Tensor& t) const;
  // Throws GraphError when `t` holds a value computed from the graph's inputs
  // or written by the trace: reading it on the host would freeze data-dependent control flow.
  void check_host_read(const Tensor& t, const char* what);

 private:
  struct LayoutKey {
    const void* storage;
    int64_t offset;
    Shape shape, strides;
    DType dtype;
    bool operator==(const LayoutKey&) const = default;
  };
  struct LayoutHash {
    size_t operator()(const LayoutKey& k) const;
  };
  struct Entry {
    Value* value = nullptr;
    Value* state = nullptr;  // the input or captured value this layout holds (updates target it)
    bool stale = false;      // a view whose base was written after it was taken
  };

  static LayoutKey key_of(const Tensor& t);
  Value* value_of(const Tensor& t, const OpSchema& reader);
  void bind(const Tensor& t, Value* v);
  void write(const Tensor& dst, Value* v);
  void restore_saved();

  std::unique_ptr<Graph> graph_;
  std::unordered_map<LayoutKey, Entry, LayoutHash> entries_;
  std::unordered_map<const void*, std::vector<LayoutKey>> keys_by_storage_;
  std::unordered_map<const void*, std::string> names_;  // by TensorImpl
  std::vector<Tensor> keep_alive_;
  std::vector<std::pair<Tensor, Tensor>> saved_;  // (written tensor, its value before the trace wrote it)
  std::unordered_map<LayoutKey, bool, LayoutHash> saved_keys_;  // no storage is freed and reused while its key is mapped
  Tracer* previous_ = nullptr;
  bool finished_ = false;
  int32_t captured_ = 0;
};

// While alive, the calling thread's tracer records nothing: call() wraps the
// work inside one op with it so that op is one node.
class TraceSuspend {
 public:
  TraceSuspend();
  ~TraceSuspend();
  TraceSuspend(const TraceSuspend&) = delete;
  TraceSuspend& operator=(const TraceSuspend&) = delete;
};

}  // namespace oar::graph
