// oar-gen-cpp-ops <dir>: writes <dir>/oar/ops.h and <dir>/ops.cpp, the C++
// frontend's oar::<op> for every public op of the catalog, at build time. A
// new catalog entry (a new unary_ops.def line included) is oar::<op> with no
// code written for it. Signature: the op's tensor inputs (a variadic one as
// std::vector<Tensor>), then its attributes in catalog order with their
// catalog defaults; creation ops end with an optional device.
// Every elementwise op of one tensor whose attributes all have defaults (the
// ops Python's _catalog.install gives a Tensor.<op>_) also gets its in-place
// form oar::<op>_(self, attributes...), written through oar/inplace.h.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <variant>

#include "oar/op_registry.h"

namespace {

using namespace oar;

std::string cpp_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string cpp_double(double v) {
  if (v == std::numeric_limits<double>::infinity()) return "std::numeric_limits<double>::infinity()";
  if (v == -std::numeric_limits<double>::infinity()) return "-std::numeric_limits<double>::infinity()";
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {  // the shortest text that reads back exactly
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
}

const char* param_type(AttrType t) {
  switch (t) {
    case AttrType::kInt: return "int64_t";
    case AttrType::kFloat: return "double";
    case AttrType::kBool: return "bool";
    case AttrType::kString: return "const std::string&";
    case AttrType::kInts: return "const std::vector<int64_t>&";
    case AttrType::kFloats: return "const std::vector<double>&";
    case AttrType::kDType: return "DType";
  }
  return "?";
}

std::string default_text(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<V, int64_t>) return "int64_t(" + std::to_string(x) + ")";
        else if constexpr (std::is_same_v<V, double>) return cpp_double(x);
        else if constexpr (std::is_same_v<V, std::string>) return "std::string(" + cpp_string(x) + ")";
        else if constexpr (std::is_same_v<V, DType>) return "DType(" + std::to_string(int32_t(x)) + ") /* " + dtype_name(x) + " */";
        else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          std::string s = "std::vector<int64_t>{";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + "}";
        } else {
          std::string s = "std::vector<double>{";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + cpp_double(x[i]);
          return s + "}";
        }
      },
      v);
}

struct Param {
  std::string type, name, default_value;  // default_value empty: required
};

// The parameters of op's function; a default is kept only where every later
// parameter has one too (C++'s rule).
std::vector<Param> params_of(const OpSchema& op) {
  std::vector<Param> ps;
  for (const auto& in : op.inputs)
    ps.push_back({in.variadic ? "const std::vector<Tensor>&" : "const Tensor&", in.name, in.optional ? "Tensor()" : ""});
  for (const auto& a : op.attrs)
    ps.push_back({param_type(a.type), a.name, a.default_value ? default_text(*a.default_value) : ""});
  if (op.creation) ps.push_back({"std::optional<Device>", "device", "std::nullopt"});
  bool tail_defaulted = true;
  for (size_t i = ps.size(); i-- > 0;) {
    if (ps[i].default_value.empty()) tail_defaulted = false;
    if (!tail_defaulted) ps[i].default_value.clear();
  }
  return ps;
}

bool single_output(const OpSchema& op) { return !op.variadic_outputs && op.outputs.size() == 1; }

std::string declaration(const OpSchema& op, bool with_defaults) {
  std::string s = std::string(single_output(op) ? "Tensor " : "std::vector<Tensor> ") + op.name + "(";
  auto ps = params_of(op);
  for (size_t i = 0; i < ps.size(); ++i) {
    s += (i ? ", " : "") + ps[i].type + " " + ps[i].name;
    if (with_defaults && !ps[i].default_value.empty()) s += " = " + ps[i].default_value;
  }
  return s + ")";
}

std::string body(const OpSchema& op) {
  std::ostringstream os;
  os << "  static const OpSchema& op = OpRegistry::instance().get(" << cpp_string(op.name) << ");\n";
  std::string inputs;
  const InputSpec* variadic = nullptr;
  for (const auto& in : op.inputs) {
    if (in.variadic) variadic = &in;
    else inputs += (inputs.empty() ? "" : ", ") + in.name;
  }
  os << "  std::vector<Tensor> inputs{" << inputs << "};\n";
  if (variadic != nullptr) os << "  inputs.insert(inputs.end(), " << variadic->name << ".begin(), " << variadic->name << ".end());\n";
  os << "  Attrs attrs;\n";
  for (const auto& a : op.attrs) os << "  attrs.set(" << cpp_string(a.name) << ", AttrValue(" << a.name << "));\n";
  os << "  CallOptions options;\n";
  if (op.creation) os << "  options.device = device;\n";
  os << "  return call(op, inputs, attrs, options)" << (single_output(op) ? "[0]" : "") << ";\n";
  return os.str();
}

// The ops with an in-place form oar::<op>_: elementwise, one tensor input,
// every attribute defaulted, differentiable (comparisons and other
// no-gradient ops keep only their out-of-place form), as Python's
// _catalog._unary_same_kind. copy's in-place form is Tensor::copy_.
bool has_inplace_form(const OpSchema& op) {
  if (op.name == "copy" || op.creation || !op.broadcast || !single_output(op) || op.gradient == Gradient::kNone)
    return false;
  if (op.inputs.size() != 1 || op.inputs[0].variadic || op.inputs[0].optional) return false;
  for (const auto& a : op.attrs)
    if (!a.default_value) return false;
  return true;
}

std::string inplace_declaration(const OpSchema& op, bool with_defaults) {
  std::string s = "Tensor " + op.name + "_(const Tensor& self";
  for (const auto& a : op.attrs) {
    s += std::string(", ") + param_type(a.type) + " " + a.name;
    if (with_defaults) s += " = " + default_text(*a.default_value);
  }
  return s + ")";
}

// The op computed out of place from self.inplace_source() (a clone when
// autograd needs self's current values), then written into self.
std::string inplace_body(const OpSchema& op) {
  std::ostringstream os;
  os << "  static const OpSchema& op = OpRegistry::instance().get(" << cpp_string(op.name) << ");\n";
  os << "  Attrs attrs;\n";
  for (const auto& a : op.attrs) os << "  attrs.set(" << cpp_string(a.name) << ", AttrValue(" << a.name << "));\n";
  os << "  Tensor result = std::move(call(op, {self.inplace_source()}, attrs)[0]);\n";
  os << "  return inplace_assign(self, std::move(result), " << cpp_string(op.name + "_") << ");\n";
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: oar-gen-cpp-ops <output dir>\n";
    return 2;
  }
  namespace fs = std::filesystem;
  fs::path dir(argv[1]);
  fs::create_directories(dir / "oar");
  std::ostringstream h, cpp;
  h << "// Generated by oar-gen-cpp-ops from the op catalog; do not edit.\n"
       "// oar::<op> for every public catalog op: tensor inputs, then attributes in\n"
       "// catalog order with the catalog's defaults (docs/ops.md lists them).\n"
       "#pragma once\n\n#include <cstdint>\n#include <limits>\n#include <optional>\n#include <string>\n"
       "#include <vector>\n\n#include \"oar/device.h\"\n#include \"oar/dtype.h\"\n#include \"oar/tensor.h\"\n\n"
       "namespace oar {\n\n";
  cpp << "// Generated by oar-gen-cpp-ops from the op catalog; do not edit.\n"
         "#include \"oar/ops.h\"\n\n#include <utility>\n\n#include \"oar/dispatch.h\"\n#include \"oar/inplace.h\"\n"
         "#include \"oar/op_registry.h\"\n\nnamespace oar {\n\n";
  std::ostringstream table, inplace_table;
  for (const auto& op : OpRegistry::instance().all()) {
    if (op->role != OpRole::kPublic) continue;
    std::string doc = op->doc;
    for (char& c : doc)
      if (c == '\n') c = ' ';
    h << "// " << doc << "\n" << declaration(*op, true) << ";\n";
    cpp << declaration(*op, false) << " {\n" << body(*op) << "}\n\n";
    table << "      {" << cpp_string(op->name) << ", " << cpp_string(declaration(*op, true)) << "},\n";
    if (has_inplace_form(*op)) {
      h << "// in place: self = " << op->name << "(self, ...); returns self\n" << inplace_declaration(*op, true) << ";\n";
      cpp << inplace_declaration(*op, false) << " {\n" << inplace_body(*op) << "}\n\n";
      inplace_table << "      {" << cpp_string(op->name) << ", " << cpp_string(inplace_declaration(*op, true)) << "},\n";
    }
  }
  h << "\n// The generated functions by op name, with their declarations (tests and tools).\n"
       "struct OpFunction {\n  const char* op;\n  const char* declaration;\n};\n"
       "const std::vector<OpFunction>& op_functions();\n"
       "// The generated in-place forms oar::<op>_, by op name (op is the out-of-place op's name).\n"
       "const std::vector<OpFunction>& inplace_op_functions();\n\n}  // namespace oar\n";
  cpp << "const std::vector<OpFunction>& op_functions() {\n  static const std::vector<OpFunction> table{\n"
      << table.str() << "  };\n  return table;\n}\n\n"
      << "const std::vector<OpFunction>& inplace_op_functions() {\n  static const std::vector<OpFunction> table{\n"
      << inplace_table.str() << "  };\n  return table;\n}\n\n}  // namespace oar\n";
  std::ofstream(dir / "oar" / "ops.h") << h.str();
  std::ofstream(dir / "ops.cpp") << cpp.str();
  return 0;
}
