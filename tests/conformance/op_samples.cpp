#include "op_samples.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "conformance_case.h"
#include "oar/error.h"
#include "oar/kernel_registry.h"
#include "oar/runtime.h"

namespace oar::conformance {

namespace {

// ---- parsing ----

struct Cursor {
  const std::string& text;
  const OpSchema& op;
  size_t pos = 0;

  [[noreturn]] void error(const std::string& what) const {
    fail("op '" + op.name + "': bad catalog example \"" + text + "\" at column " + std::to_string(pos) + ": " +
         what);
  }
  void skip_space() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  }
  bool done() {
    skip_space();
    return pos >= text.size();
  }
  char peek() { return done() ? '\0' : text[pos]; }
  void expect(char c) {
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++pos;
  }
  std::string word() {  // up to a space or a closing bracket
    skip_space();
    size_t start = pos;
    while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])) && text[pos] != ']' &&
           text[pos] != ')' && text[pos] != ',' && text[pos] != '}' && text[pos] != ':')
      ++pos;
    if (start == pos) error("expected a value");
    return text.substr(start, pos - start);
  }
  double number() {
    std::string w = word();
    try {
      size_t used = 0;
      double v = std::stod(w, &used);
      if (used != w.size()) error("not a number: " + w);
      return v;
    } catch (const std::logic_error&) {
      error("not a number: " + w);
    }
  }
  std::vector<double> numbers() {  // "[a,b,...]"
    expect('[');
    std::vector<double> v;
    if (peek() == ']') {
      ++pos;
      return v;
    }
    for (;;) {
      v.push_back(number());
      if (peek() == ',') {
        ++pos;
        continue;
      }
      expect(']');
      return v;
    }
  }
  TensorSpec tensor() {
    TensorSpec t;
    if (peek() == '-') {
      ++pos;
      t.omitted = true;
      return t;
    }
    for (double d : numbers()) {
      if (d < 0 || d != std::floor(d)) error("dimensions are integers >= 0");
      t.shape.push_back(int64_t(d));
    }
    if (pos < text.size() && text[pos] == '{') {
      ++pos;
      t.has_range = true;
      t.lo = number();
      expect(':');
      t.hi = number();
      expect('}');
    }
    return t;
  }
  AttrValue attr_value(const AttrSpec& spec) {
    skip_space();
    switch (spec.type) {
      case AttrType::kInt: return int64_t(number());
      case AttrType::kFloat: return number();
      case AttrType::kBool: {
        std::string w = word();
        if (w != "true" && w != "false") error("a bool is true or false");
        return w == "true";
      }
      case AttrType::kString: {
        expect('\'');
        size_t end = text.find('\'', pos);
        if (end == std::string::npos) error("unterminated string");
        std::string v = text.substr(pos, end - pos);
        pos = end + 1;
        return v;
      }
      case AttrType::kInts: {
        std::vector<int64_t> v;
        for (double d : numbers()) v.push_back(int64_t(d));
        return v;
      }
      case AttrType::kFloats: return numbers();
      case AttrType::kDType: return dtype_from_name(word());
    }
    error("unknown attribute type");
  }
};

const AttrSpec* find_attr(const OpSchema& op, const std::string& name) {
  for (const auto& a : op.attrs)
    if (a.name == name) return &a;
  return nullptr;
}

// ---- values ----

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<double> values_for(const TensorSpec& spec, DType dtype, uint64_t seed) {
  std::vector<double> v(size_t(numel_of(spec.shape)));
  uint64_t state = seed;
  double lo = spec.has_range ? spec.lo : (is_floating(dtype) ? -2.0 : -4.0);
  double hi = spec.has_range ? spec.hi : (is_floating(dtype) ? 2.0 : 5.0);
  if (dtype == DType::u8) lo = std::max(lo, 0.0);
  for (double& x : v) {
    double u = double(splitmix(state) >> 11) * 0x1.0p-53;
    if (dtype == DType::boolean) x = u < 0.5;
    else if (is_floating(dtype)) x = lo + u * (hi - lo);
    else x = std::floor(lo + u * (hi - lo));
  }
  return v;
}

// Host values of logical shape `shape` placed on `device` in `layout`.
Tensor place(const std::vector<double>& values, const Shape& shape, DType dtype, Layout layout, Device device) {
  const Device cpu = Device::cpu();
  auto upload = [&](const std::vector<double>& host, const Shape& s) {
    Tensor t = Tensor::from_host(host.data(), int64_t(host.size()), s, DType::f64, cpu).to(dtype);
    return device == cpu ? t : t.to(device);
  };
  const int64_t nd = int64_t(shape.size());
  if (layout == Layout::kNonContiguous && nd >= 1 && numel_of(shape) >= 2) {
    // Every element at an even position of a buffer twice as wide; the odd
    // positions hold a value no kernel should ever read back.
    Shape wide = shape;
    wide.back() *= 2;
    std::vector<double> host(size_t(numel_of(wide)), 77.0);
    for (size_t i = 0; i < values.size(); ++i) host[2 * i] = values[i];
    Shape strides = contiguous_strides(wide);
    strides.back() = 2;
    return upload(host, wide).as_strided(shape, strides, 0);
  }
  if (layout == Layout::kNegativeStrides && nd >= 1 && shape.back() >= 2) {
    const int64_t last = shape.back();
    std::vector<double> host(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t row = int64_t(i) / last, col = int64_t(i) % last;
      host[size_t(row * last + (last - 1 - col))] = values[i];
    }
    Shape strides = contiguous_strides(shape);
    strides.back() = -1;
    return upload(host, shape).as_strided(shape, strides, last - 1);
  }
  return upload(values, shape);
}

TensorSpec generic_tensor(Shape shape) {
  TensorSpec t;
  t.shape = std::move(shape);
  return t;
}

// Generated examples of an elementwise op: one tensor per required input.
std::vector<NamedExample> generated(const OpSchema& op, bool full_level) {
  std::vector<NamedExample> out;
  size_t tensors = 0;
  for (const auto& in : op.inputs)
    if (!in.optional) ++tensors;
  auto make = [&](const std::vector<Shape>& shapes) {
    Example ex;
    ex.text = "generated elementwise sample";
    size_t k = 0;
    for (const auto& in : op.inputs) {
      ExampleInput e;
      TensorSpec omitted;
      omitted.omitted = true;
      if (in.optional) e.tensors.push_back(omitted);
      else e.tensors.push_back(generic_tensor(shapes[k++ % shapes.size()]));
      ex.inputs.push_back(e);
    }
    return ex;
  };
  if (op.creation || tensors == 0) return out;
  out.push_back({"gen", make({{3, 5}})});
  out.push_back({"scalar", make({{}})});
  if (op.broadcast && tensors >= 2) out.push_back({"broadcast", make({{3, 1, 4}, {2, 4}, {3, 2, 1}})});
  if (full_level) out.push_back({"large", make({{1031, 1029}})});
  return out;
}

}  // namespace

Example parse_example(const OpSchema& op, const std::string& text) {
  Example ex;
  ex.text = text;
  Cursor c{text, op};
  const std::string large = "large:";
  if (text.rfind(large, 0) == 0) {
    ex.large = true;
    c.pos = large.size();
  }
  while (!c.done()) {
    char ch = c.peek();
    if (ch == '[' || ch == '-') {
      ex.inputs.push_back(ExampleInput{false, {c.tensor()}});
    } else if (ch == '(') {
      ++c.pos;
      ExampleInput list{true, {}};
      while (c.peek() != ')') {
        if (c.done()) c.error("unterminated list");
        list.tensors.push_back(c.tensor());
      }
      ++c.pos;
      ex.inputs.push_back(list);
    } else {
      size_t eq = text.find('=', c.pos);
      if (eq == std::string::npos) c.error("expected a tensor, a list or name=value");
      std::string name = text.substr(c.pos, eq - c.pos);
      const AttrSpec* spec = find_attr(op, name);
      if (!spec) c.error("no attribute '" + name + "'");
      c.pos = eq + 1;
      ex.attrs.set(name, c.attr_value(*spec));
    }
  }
  if (ex.inputs.size() > op.inputs.size())
    c.error(std::to_string(ex.inputs.size()) + " inputs for " + std::to_string(op.inputs.size()) + " declared");
  for (size_t i = 0; i < ex.inputs.size(); ++i)
    if (ex.inputs[i].list != op.inputs[i].variadic)
      c.error("input '" + op.inputs[i].name + (op.inputs[i].variadic ? "' is a list: ( ... )" : "' is not a list"));
  return ex;
}

std::vector<NamedExample> examples_for(const OpSchema& op, bool full_level) {
  std::vector<NamedExample> out;
  bool generate = op.examples.empty();
  int k = 0;
  for (const auto& text : op.examples) {
    if (text == "*") {
      generate = true;
      continue;
    }
    Example ex = parse_example(op, text);
    std::string name = "ex" + std::to_string(k++);
    if (!ex.large || full_level) out.push_back({name, std::move(ex)});
  }
  if (generate) {
    auto gen = generated(op, full_level);
    out.insert(out.begin(), gen.begin(), gen.end());
  }
  return out;
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kContiguous: return "";
    case Layout::kNonContiguous: return "noncontig";
    case Layout::kNegativeStrides: return "negstride";
    case Layout::kEmpty: return "empty";
  }
  return "?";
}

namespace {
const TensorSpec* first_tensor(const Example& ex) {
  if (ex.inputs.empty() || ex.inputs[0].tensors.empty() || ex.inputs[0].tensors[0].omitted) return nullptr;
  return &ex.inputs[0].tensors[0];
}
}  // namespace

bool layout_applies(const Example& ex, Layout layout) {
  if (layout == Layout::kContiguous) return true;
  if (layout == Layout::kEmpty) {
    const TensorSpec* t = first_tensor(ex);
    return t && !t->shape.empty() && t->shape[0] > 0;
  }
  for (const auto& in : ex.inputs)
    for (const auto& t : in.tensors) {
      if (t.omitted || t.shape.empty()) continue;
      if (layout == Layout::kNonContiguous && numel_of(t.shape) >= 2) return true;
      if (layout == Layout::kNegativeStrides && t.shape.back() >= 2 && numel_of(t.shape) >= 2) return true;
    }
  return false;
}

Sample make_sample(const OpSchema& op, const Example& ex, const std::vector<DType>& sig, Layout layout,
                   Device device, uint64_t seed) {
  Sample s;
  s.attrs = ex.attrs;
  const TensorSpec* first = first_tensor(ex);
  const int64_t batch = first && !first->shape.empty() ? first->shape[0] : -1;
  size_t slot = 0;
  uint64_t k = 0;
  for (size_t i = 0; i < ex.inputs.size(); ++i) {
    const InputSpec& spec = op.inputs[i];
    DType dtype = sig.empty() ? DType::f32 : sig[0];
    if (spec.in_signature) {
      if (slot >= sig.size())
        fail("op '" + op.name + "': example \"" + ex.text + "\" has more inputs than the kernel signature");
      dtype = sig[slot++];
    }
    for (const TensorSpec& t : ex.inputs[i].tensors) {
      ++k;
      if (t.omitted) {
        s.inputs.emplace_back();
        continue;
      }
      TensorSpec shaped = t;
      if (layout == Layout::kEmpty && !shaped.shape.empty() && shaped.shape[0] == batch) shaped.shape[0] = 0;
      std::vector<double> values = values_for(shaped, dtype, seed * 1000003u + k);
      s.inputs.push_back(place(values, shaped.shape, dtype, layout == Layout::kEmpty ? Layout::kContiguous : layout,
                               device));
    }
  }
  return s;
}

void upcast_floats(Sample& s, DType dtype) {
  for (auto& t : s.inputs)
    if (t.defined() && is_floating(t.dtype()) && t.dtype() != dtype) t = t.to(dtype);
}

uint64_t seed_of(const std::string& case_id) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : case_id) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<std::vector<DType>> composite_signatures(const OpSchema& op) {
  std::vector<std::vector<DType>> sigs;
  for (DType data : {DType::f32, DType::f64}) {
    std::vector<DType> sig;
    for (const auto& in : op.inputs)
      if (in.in_signature) sig.push_back(in.promoted ? data : in.name == "mask" ? DType::boolean : DType::i64);
    if (std::find(sigs.begin(), sigs.end(), sig) == sigs.end()) sigs.push_back(std::move(sig));
  }
  return sigs;
}

std::vector<std::vector<DType>> test_signatures(const OpSchema& op, int32_t device_type, bool& decomposed) {
  const auto& reg = KernelRegistry::instance();
  auto sigs = reg.signatures(op.id, device_type);
  decomposed = false;
  if (sigs.empty() && op.decompose && !op.view) {
    sigs = reg.signatures(op.id, Runtime::get().cpu_type());
    if (sigs.empty() && op.gradient == Gradient::kDecomposition && op.role == OpRole::kPublic)
      sigs = composite_signatures(op);
    decomposed = !sigs.empty();
  }
  std::sort(sigs.begin(), sigs.end());
  return sigs;
}

}  // namespace oar::conformance
