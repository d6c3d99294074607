// The inputs of the generated op tests. An op's example calls come from its
// catalog entry (OpSchema::examples, grammar there); an op without any is
// elementwise and gets generated shapes. Each example is then varied the same
// way for every op: as written, with every input non-contiguous, with negative
// strides, with an empty batch dimension; elementwise ops also get scalars,
// broadcasting and (at the full level) a large tensor. Values are seeded by
// the case id, so a reproduced case sees the same numbers.
#pragma once

#include <string>
#include <vector>

#include "oar/op_schema.h"
#include "oar/tensor.h"

namespace oar::conformance {

struct TensorSpec {
  bool omitted = false;  // "-": an optional input left out
  Shape shape;
  bool has_range = false;
  double lo = 0, hi = 0;  // "{lo:hi}": floats in [lo, hi], integers in [lo, hi)
};

struct ExampleInput {
  bool list = false;  // "( ... )": the tensors of a variadic input
  std::vector<TensorSpec> tensors;
};

struct Example {
  std::string text;
  std::vector<ExampleInput> inputs;
  Attrs attrs;
  bool large = false;  // "large:" prefix: full level only
};

// Parses one example of `op`; throws CheckFailure naming the op and the text.
Example parse_example(const OpSchema& op, const std::string& text);

// The examples a case is built from: the catalog's, or generated ones ("*" in
// the catalog adds the generated ones to written ones). `variant` names each:
// "ex0", "ex1", ... for written ones, "gen", "scalar", "broadcast", "large".
struct NamedExample {
  std::string name;
  Example example;
};
std::vector<NamedExample> examples_for(const OpSchema& op, bool full_level);

// How an example is laid out in memory on the device under test.
enum class Layout { kContiguous, kNonContiguous, kNegativeStrides, kEmpty };
const char* layout_name(Layout l);
// Whether `layout` changes anything for this example (e.g. no input to make
// non-contiguous), so no case is generated that repeats another.
bool layout_applies(const Example& ex, Layout layout);

// Materialised inputs: the tensors on `device` in `layout`, with dtypes from
// the kernel signature `sig` (in_signature inputs in order; a list takes its
// slot's dtype; optional inputs the first dtype). Values depend only on `seed`.
struct Sample {
  std::vector<Tensor> inputs;
  Attrs attrs;
};
Sample make_sample(const OpSchema& op, const Example& ex, const std::vector<DType>& sig, Layout layout,
                   Device device, uint64_t seed);

// Casts the floating inputs of `s` to `dtype` (the CPU reference computes
// in f64 where the op allows: an independent path and a truer value).
void upcast_floats(Sample& s, DType dtype);

uint64_t seed_of(const std::string& case_id);

// The signatures a composite with no kernel anywhere (flip, logsumexp, ...)
// is tested at: its data inputs f32, then f64; index inputs i64, a mask bool.
std::vector<std::vector<DType>> composite_signatures(const OpSchema& op);

// The signatures an op is tested at on `device_type`: the device's own, the
// CPU's for an op the device runs decomposed (`decomposed` set), or
// composite_signatures for one that has no kernel anywhere (also decomposed).
std::vector<std::vector<DType>> test_signatures(const OpSchema& op, int32_t device_type, bool& decomposed);

}  // namespace oar::conformance
