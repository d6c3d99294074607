// ops/<op>/<signature>/<example>[.<layout>]: every (op, dtype signature) the
// device registers, on every example of the op's catalog entry in every
// memory layout, against the CPU reference. Ops a device has no kernel for
// but that decompose into other ops (linear, the optimizer updates) run as
// their decomposition on the device, with the CPU's signatures.
#include <algorithm>

#include "compare.h"
#include "conformance_case.h"
#include "oar/core.h"
#include "op_samples.h"

namespace oar::conformance {

namespace {

std::string signature_id(const std::vector<DType>& sig) {
  std::string s;
  for (DType d : sig) s += (s.empty() ? "" : "-") + std::string(dtype_name(d));
  return s.empty() ? "none" : s;
}

// The dtype column of the coverage matrix: the first input that takes part in
// promotion (the data), not a condition or an index.
std::string column_of(const OpSchema& op, const std::vector<DType>& sig) {
  if (sig.empty()) return "";
  size_t slot = 0;
  for (const auto& in : op.inputs) {
    if (!in.in_signature) continue;
    if (slot >= sig.size()) break;
    if (in.promoted) return dtype_name(sig[slot]);
    ++slot;
  }
  return dtype_name(sig[0]);
}

bool any_floating(const Sample& s) {
  for (const auto& t : s.inputs)
    if (t.defined() && is_floating(t.dtype())) return true;
  return false;
}

std::vector<Tensor> run_reference(const OpSchema& op, const Example& ex, const std::vector<DType>& sig,
                                  Layout layout, const Attrs& attrs, uint64_t seed, bool& widened) {
  const Device cpu = Device::cpu();
  Sample ref = make_sample(op, ex, sig, layout == Layout::kEmpty ? Layout::kEmpty : Layout::kContiguous, cpu, seed);
  widened = false;
  if (!op.needs_generator && any_floating(ref)) {
    Sample wide = ref;
    upcast_floats(wide, DType::f64);
    try {
      auto outs = call(op, wide.inputs, attrs, {cpu});
      widened = true;
      return outs;
    } catch (const Error&) {
      // no f64 form of this op on the CPU: the reference keeps the dtypes
    }
  }
  return call(op, ref.inputs, attrs, {cpu});
}

Outcome run_op_case(const Target& t, const OpSchema& op, const Example& ex, const std::vector<DType>& sig,
                    Layout layout, const Attrs& attrs, const std::string& id) {
  const uint64_t seed = seed_of(id);
  bool widened = false;
  std::vector<Tensor> want;
  std::string ref_error;
  try {
    want = run_reference(op, ex, sig, layout, attrs, seed, widened);
  } catch (const Error& e) {
    ref_error = e.what();
    // Only an example emptied by the suite may be refused; a catalog example must run.
    if (layout != Layout::kEmpty)
      fail("the CPU reference refuses the example \"" + ex.text + "\"" +
           (op.examples.empty() ? " (an op that is not elementwise needs example calls in its catalog entry, "
                                  "OpSchema::examples)"
                                : "") +
           ": " + ref_error);
  }
  Sample dev = make_sample(op, ex, sig, layout, t.device, seed);
  std::vector<Tensor> got;
  try {
    got = call(op, dev.inputs, attrs, {t.device});
  } catch (const Error& e) {
    if (!ref_error.empty()) return {Status::kPass, "rejected as on the CPU: " + std::string(e.what())};
    fail(std::string("error where the CPU succeeds: ") + e.what());
  }
  if (!ref_error.empty()) fail("succeeds where the CPU refuses: " + ref_error);
  require(got.size() == want.size(),
          std::to_string(got.size()) + " outputs, the CPU gives " + std::to_string(want.size()));
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].defined() && got[i].device() != t.device)
      fail("output " + std::to_string(i) + " is on " + got[i].device().str());
    std::string diff = op.needs_generator ? compare_distributions(got[i], want[i])
                                          : compare_tensors(got[i], want[i], 
                                              tolerance_for(op.name, got[i].defined() ? got[i].dtype() : DType::f32));
    if (!diff.empty()) fail("output " + std::to_string(i) + " (" + op.outputs.at(std::min(i, op.outputs.size() - 1)) +
                            "): " + diff);
  }
  if (op.needs_generator) {  // the same seed draws the same numbers again
    auto again = call(op, dev.inputs, attrs, {t.device});
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i].defined()) {
        std::string diff = compare_tensors(again[i], got[i], {0, 0});
        if (!diff.empty()) fail("the same seed drew other numbers the second time: " + diff);
      }
  }
  return {};
}

// Whether the schema's own inference takes these attributes (a creation op's
// dtype): a dtype the op refuses everywhere is no case for a device.
bool schema_accepts(const OpSchema& op, const Attrs& attrs, Device device) {
  try {
    const std::vector<Tensor> none;
    Attrs normal = normalize_attrs(op, attrs);
    op.infer(InferContext{op, none, normal, device});
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

void add_op_cases(const Target& t, std::vector<Case>& cases) {
  const bool full = t.level == Level::kFull;
  const uint64_t dtype_mask = Runtime::get().capabilities(t.device).dtype_mask;
  for (const auto& op_ptr : OpRegistry::instance().all()) {
    const OpSchema& op = *op_ptr;
    if (op.view) continue;  // a Tensor method: no kernel anywhere
    bool decomposed = false;
    auto sigs = test_signatures(op, t.device.type, decomposed);
    if (sigs.empty()) continue;  // not registered: the coverage matrix says so
    std::vector<NamedExample> examples;
    try {
      examples = examples_for(op, full);
    } catch (const std::exception& e) {
      std::string why = e.what();
      cases.push_back({"ops/" + op.name + "/catalog", 10, op.name, "", [why] { return Outcome{Status::kFail, why}; }});
      continue;
    }
    const std::string prefix = "ops/" + op.name + "/";
    for (const auto& sig : sigs) {
      // Creation ops have one empty signature: one case per dtype instead.
      for (const auto& named : examples) {
        const Example& ex = named.example;
        std::vector<std::pair<DType, Attrs>> runs;
        if (op.creation && !ex.attrs.has("dtype")) {
          for (DType d : all_dtypes)
            if ((dtype_mask & (uint64_t(1) << int(d))) && schema_accepts(op, Attrs(ex.attrs).set("dtype", d), t.device))
              runs.push_back({d, Attrs(ex.attrs).set("dtype", d)});
        } else if (op.creation) {
          runs.push_back({ex.attrs.get_dtype("dtype"), ex.attrs});
        } else {
          runs.push_back({sig.empty() ? DType::f32 : sig[0], ex.attrs});
        }
        for (const auto& [dtype, attrs] : runs) {
          const std::string column = op.creation ? dtype_name(dtype) : column_of(op, sig);
          const std::string sig_id = op.creation ? column : signature_id(sig);
          for (Layout layout : {Layout::kContiguous, Layout::kNonContiguous, Layout::kNegativeStrides, Layout::kEmpty}) {
            if (!layout_applies(ex, layout)) continue;
            if (!full && layout == Layout::kNegativeStrides && named.name != "gen" && named.name != "ex0") continue;
            std::string id = prefix + sig_id + "/" + named.name;
            if (layout != Layout::kContiguous) id += std::string(".") + layout_name(layout);
            Case c;
            c.id = id;
            c.op = op.name + (decomposed ? " (decomposed)" : "");
            c.dtype = column;
            c.budget_s = ex.large ? 120 : 30;
            const OpSchema* opp = &op;
            c.run = [&t, opp, ex, sig, layout, attrs, id] {
              return run_op_case(t, *opp, ex, sig, layout, attrs, id);
            };
            cases.push_back(std::move(c));
          }
        }
      }
    }
  }
}

}  // namespace oar::conformance
