#include "oar/op_schema.h"

#include "oar/error.h"
#include "oar/tensor.h"

namespace oar {

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kBool: return "bool";
    case AttrType::kString: return "string";
    case AttrType::kInts: return "ints";
    case AttrType::kFloats: return "floats";
    case AttrType::kDType: return "dtype";
  }
  return "?";
}

const char* gradient_name(Gradient g) {
  switch (g) {
    case Gradient::kRule: return "rule";
    case Gradient::kNone: return "none";
    case Gradient::kTensorMethod: return "tensor method";
    case Gradient::kDecomposition: return "decomposition";
    case Gradient::kFirstOrderOnly: return "first order only";
  }
  return "?";
}

Attrs& Attrs::set(const std::string& name, AttrValue value) {
  for (auto& [k, v] : items_)
    if (k == name) {
      v = std::move(value);
      return *this;
    }
  items_.emplace_back(name, std::move(value));
  return *this;
}

bool Attrs::has(const std::string& name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return true;
  return false;
}

const AttrValue& Attrs::get(const std::string& name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return v;
  throw ValueError(str("missing attribute '", name, "'"));
}

namespace {
template <class T>
const T& get_as(const Attrs& a, const std::string& name, const char* type) {
  const AttrValue& v = a.get(name);
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw ValueError(str("attribute '", name, "' is not of type ", type));
}
}  // namespace

int64_t Attrs::get_int(const std::string& n) const { return get_as<int64_t>(*this, n, "int"); }
double Attrs::get_float(const std::string& n) const { return get_as<double>(*this, n, "float"); }
bool Attrs::get_bool(const std::string& n) const { return get_as<bool>(*this, n, "bool"); }
const std::string& Attrs::get_string(const std::string& n) const {
  return get_as<std::string>(*this, n, "string");
}
const std::vector<int64_t>& Attrs::get_ints(const std::string& n) const {
  return get_as<std::vector<int64_t>>(*this, n, "ints");
}
const std::vector<double>& Attrs::get_floats(const std::string& n) const {
  return get_as<std::vector<double>>(*this, n, "floats");
}
DType Attrs::get_dtype(const std::string& n) const { return get_as<DType>(*this, n, "dtype"); }

const Tensor& InferContext::input(size_t i) const { return inputs.at(i); }
const Shape& InferContext::shape(size_t i) const { return inputs.at(i).shape(); }
DType InferContext::dtype(size_t i) const { return inputs.at(i).dtype(); }
int64_t InferContext::ndim(size_t i) const { return inputs.at(i).dim(); }

}  // namespace oar
