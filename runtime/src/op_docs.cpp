#include "oar/op_docs.h"

#include <set>
#include <sstream>

#include "oar/kernel_registry.h"
#include "oar/op_registry.h"
#include "oar/runtime.h"

namespace oar {

namespace {

std::string attr_value_text(const AttrValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, bool>) os << (x ? "true" : "false");
        else if constexpr (std::is_same_v<V, std::string>) os << '"' << x << '"';
        else if constexpr (std::is_same_v<V, DType>) os << dtype_name(x);
        else if constexpr (std::is_same_v<V, std::vector<int64_t>> || std::is_same_v<V, std::vector<double>>) {
          os << '[';
          for (size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
          os << ']';
        } else os << x;
      },
      v);
  return os.str();
}

const char* policy_text(DTypePolicy p) {
  switch (p) {
    case DTypePolicy::kNone: return "as given";
    case DTypePolicy::kPromote: return "promoted to a common dtype";
    case DTypePolicy::kPromoteToFloat: return "promoted; integers computed as f32";
  }
  return "";
}

const char* role_text(OpRole r) {
  switch (r) {
    case OpRole::kPublic: return "public";
    case OpRole::kBackwardKernel: return "backward kernel";
    case OpRole::kFusion: return "fusion";
    case OpRole::kOptimizer: return "optimizer update";
  }
  return "";
}

std::string escape_pipes(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

}  // namespace

std::string catalog_markdown(bool with_kernels) {
  std::ostringstream os;
  const auto& ops = OpRegistry::instance().all();
  os << "# Op catalog\n\n"
     << "Generated from the catalog (`runtime/src/catalog/`) by `oar-op-docs`; do not edit by hand.\n"
     << ops.size() << " ops.\n\n"
     << "Role: public ops are `oar.<op>`, `Tensor.<op>` and `oar::<op>`; backward kernels, fusions and\n"
     << "optimizer updates (called by `oar.optim` and `oar::optim`) are called by name only (`oar.ops.<op>`,\n"
     << "`oar::call`). Gradient: how outputs get theirs (docs/autograd.md).\n\n"
     << "| op | inputs | outputs | attributes (default) | input dtypes | role | gradient | description |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  for (const auto& op : ops) {
    std::string ins, outs, attrs;
    for (const auto& i : op->inputs)
      ins += (ins.empty() ? "" : ", ") + i.name + (i.variadic ? "..." : "") + (i.optional ? "?" : "");
    if (op->variadic_outputs) outs = "variadic";
    for (const auto& o : op->outputs) outs += (outs.empty() ? "" : ", ") + o;
    for (const auto& a : op->attrs)
      attrs += (attrs.empty() ? "" : ", ") + a.name + ": " + attr_type_name(a.type) +
               (a.default_value ? " (" + attr_value_text(*a.default_value) + ")" : "");
    os << "| `" << op->name << "` | " << (ins.empty() ? "-" : ins) << " | " << outs << " | "
       << escape_pipes(attrs.empty() ? "-" : attrs) << " | " << policy_text(op->dtype_policy) << " | "
       << role_text(op->role) << " | " << gradient_name(op->gradient) << " | " << escape_pipes(op->doc)
       << (op->view       ? " (view: a Tensor method on every device, no kernel)"
           : op->decompose ? " (composite: runs as other ops where a device has no kernel)"
                           : "")
       << " |\n";
  }
  // The example calls oar-conformance generates its op tests from (OpSchema::examples).
  os << "\n## Example calls\n\nThe calls `oar-conformance` tests every device's kernels on (grammar in "
        "`runtime/include/oar/op_schema.h`); an op without any is tested as elementwise on generated shapes, "
        "and `*` adds those to the written ones.\n\n| op | example calls |\n|---|---|\n";
  for (const auto& op : ops) {
    if (op->examples.empty()) continue;
    std::string text;
    for (const auto& e : op->examples) text += (text.empty() ? "`" : ", `") + e + "`";
    os << "| `" << op->name << "` | " << escape_pipes(text) << " |\n";
  }
  if (!with_kernels) return os.str();
  const Runtime& rt = Runtime::get();
  for (const auto& p : rt.plugins()) {
    os << "\n## Kernels on `" << p->device_type << "` (plugin " << p->name << ")\n\n"
       << "| op | dtype signatures |\n|---|---|\n";
    for (const auto& op : ops) {
      auto sigs = KernelRegistry::instance().signatures(op->id, p->device_type_id);
      std::string text;
      for (const auto& s : sigs) {
        std::string one;
        for (DType d : s) {
          if (!one.empty()) one += ',';
          one += dtype_name(d);
        }
        if (!text.empty()) text += ' ';
        text += '(';
        text += one;
        text += ')';
      }
      if (text.empty()) text = op->view ? "none (view)" : op->decompose ? "none (decomposed)" : "none";
      os << "| `" << op->name << "` | " << text << " |\n";
    }
  }
  return os.str();
}

}  // namespace oar
