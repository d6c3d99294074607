// Tensor indexing with NumPy's rules: basic indices (ints, slices, None,
// Ellipsis) make views; advanced indices (integer and boolean arrays, lists,
// tensors; ints too once any array is present) are broadcast together and
// paired element by element. The result dims of the advanced indices replace
// them in place when they are adjacent, and go first when a slice or None
// separates them. Reading gathers with index_select over the advanced dims
// flattened; assigning writes through the same flat index (last write wins
// for repeated indices, or sums with accumulate). Index values are checked
// on the host, so an out-of-range index is a clear IndexError on any device.
#include <unordered_map>

#include "bindings.h"

namespace oar::py {

namespace {

enum class IndexKind { kInt, kSlice, kNone, kEllipsis, kArray };

struct IndexItem {
  explicit IndexItem(IndexKind k) : kind(k) {}
  IndexKind kind;
  int64_t value = 0;               // kInt
  nb::handle slice;                // kSlice
  std::vector<int64_t> indices;    // kArray: flattened integer indices
  Shape shape;                     // kArray: their shape
  int64_t consumed = 1;            // dims of the indexed tensor it addresses
  bool from_mask = false;          // kArray produced by a boolean mask
};

bool is_integer_scalar(nb::handle e) {
  if (PyBool_Check(e.ptr())) return false;
  if (PyLong_Check(e.ptr())) return true;
  // NumPy integer scalars and 0-d integer tensors/arrays behave as ints.
  if (nb::isinstance<Tensor>(e)) {
    const Tensor& t = *nb::inst_ptr<Tensor>(e);
    return t.dim() == 0 && !is_floating(t.dtype()) && t.dtype() != DType::boolean;
  }
  if (nb::hasattr(e, "dtype") && nb::hasattr(e, "ndim") && nb::cast<int64_t>(e.attr("ndim")) == 0) {
    std::string kind = nb::cast<std::string>(e.attr("dtype").attr("kind"));
    return kind == "i" || kind == "u";
  }
  return false;
}

bool is_array_like(nb::handle e) {
  return nb::isinstance<Tensor>(e) || nb::isinstance<nb::list>(e) || nb::isinstance<nb::tuple>(e) ||
         (nb::hasattr(e, "__array__") && nb::hasattr(e, "dtype"));
}

std::string py_repr(nb::handle h) { return nb::cast<std::string>(nb::repr(h)); }

// An index array or mask as a host tensor, with its type checked.
Tensor index_array(nb::handle e) {
  Tensor t = nb::isinstance<Tensor>(e) ? *nb::inst_ptr<Tensor>(e) : tensor_from_data(e, std::nullopt, Device::cpu());
  if (t.numel() == 0 && is_floating(t.dtype())) t = t.to(DType::i64);  // x[[]] indexes nothing
  if (is_floating(t.dtype()))
    throw IndexError(str("tensors used as indices must be integer or bool tensors, got ", dtype_name(t.dtype())));
  return t;
}

// Splits a boolean mask into one integer array per dim it covers (nonzero).
void push_mask(std::vector<IndexItem>& items, const Tensor& mask) {
  std::vector<uint8_t> m = mask.to_vector<uint8_t>();
  const Shape& ms = mask.shape();
  int64_t k = int64_t(ms.size());
  std::vector<std::vector<int64_t>> coords(static_cast<size_t>(k));
  for (int64_t flat = 0; flat < int64_t(m.size()); ++flat) {
    if (!m[size_t(flat)]) continue;
    int64_t rest = flat;
    for (int64_t d = k - 1; d >= 0; --d) {
      coords[size_t(d)].push_back(rest % ms[size_t(d)]);
      rest /= ms[size_t(d)];
    }
  }
  for (int64_t d = 0; d < k; ++d) {
    IndexItem it(IndexKind::kArray);
    it.shape = {int64_t(coords[size_t(d)].size())};
    it.indices = std::move(coords[size_t(d)]);
    it.from_mask = true;
    it.value = ms[size_t(d)];  // the mask's extent, checked against the tensor
    items.push_back(std::move(it));
  }
}

std::vector<IndexItem> parse_key(nb::handle key) {
  std::vector<nb::handle> raw;
  if (nb::isinstance<nb::tuple>(key)) {
    for (nb::handle e : key) raw.push_back(e);
  } else {
    raw.push_back(key);
  }
  std::vector<IndexItem> items;
  for (nb::handle e : raw) {
    if (e.ptr() == Py_Ellipsis) {
      items.emplace_back(IndexKind::kEllipsis);
    } else if (e.is_none()) {
      items.emplace_back(IndexKind::kNone);
    } else if (is_integer_scalar(e)) {
      IndexItem it(IndexKind::kInt);
      it.value = nb::cast<int64_t>(nb::int_(e));
      items.push_back(it);
    } else if (PySlice_Check(e.ptr())) {
      IndexItem it(IndexKind::kSlice);
      it.slice = e;
      items.push_back(it);
    } else if (PyBool_Check(e.ptr())) {
      throw IndexError("a Python bool as an index is not supported; use a boolean tensor of the indexed shape");
    } else if (is_array_like(e)) {
      Tensor t = index_array(e);
      if (t.dtype() == DType::boolean) {
        if (t.dim() == 0) throw IndexError("a 0-d boolean tensor as an index is not supported");
        push_mask(items, t);
      } else {
        IndexItem it(IndexKind::kArray);
        it.shape = t.shape();
        it.indices = t.to_vector<int64_t>();
        items.push_back(std::move(it));
      }
    } else {
      throw IndexError(str("only integers, slices, None, Ellipsis and integer or boolean arrays are valid "
                           "indices, got ", py_repr(e)));
    }
  }
  bool any_array = false;
  int ellipses = 0;
  for (const auto& it : items) {
    any_array |= it.kind == IndexKind::kArray;
    ellipses += it.kind == IndexKind::kEllipsis;
  }
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  // With an array present, NumPy treats integers as 0-d advanced indices.
  if (any_array)
    for (auto& it : items)
      if (it.kind == IndexKind::kInt) {
        it.kind = IndexKind::kArray;
        it.indices = {it.value};
        it.shape = {};
      }
  return items;
}

// The key applied as basic indexing; advanced dims are kept whole, and
// `adv_dims` gets, per advanced item, the dim of the view it applies to.
Tensor apply_basic(const Tensor& self, std::vector<IndexItem>& items, std::vector<int64_t>& adv_dims) {
  int64_t consumed = 0;
  for (const auto& it : items)
    if (it.kind != IndexKind::kNone && it.kind != IndexKind::kEllipsis) consumed += it.consumed;
  if (consumed > self.dim())
    throw IndexError(str("too many indices for tensor of dimension ", self.dim(), " (got ", consumed, ")"));
  Tensor t = self;
  int64_t d = 0;
  for (auto& it : items) {
    switch (it.kind) {
      case IndexKind::kEllipsis:
        d += self.dim() - consumed;
        break;
      case IndexKind::kNone:
        t = t.unsqueeze(d++);
        break;
      case IndexKind::kInt: {
        int64_t n = t.shape()[size_t(d)];
        if (it.value < -n || it.value >= n)
          throw IndexError(str("index ", it.value, " is out of bounds for dimension ", d, " with size ", n));
        t = t.select(d, it.value < 0 ? it.value + n : it.value);
        break;
      }
      case IndexKind::kSlice: {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(it.slice.ptr(), &start, &stop, &step) < 0) throw nb::python_error();
        if (step <= 0) throw ValueError("slice step must be positive");
        Py_ssize_t len = PySlice_AdjustIndices(t.shape()[size_t(d)], &start, &stop, step);
        t = t.slice(d, start, start + len * step, step);
        ++d;
        break;
      }
      case IndexKind::kArray:
        if (it.from_mask && it.value != t.shape()[size_t(d)])
          throw IndexError(str("the shape of the mask does not match the indexed tensor at dimension ", d,
                               ": mask size ", it.value, ", tensor size ", t.shape()[size_t(d)]));
        adv_dims.push_back(d++);
        break;
    }
  }
  return t;
}

Shape broadcast_shapes(const std::vector<IndexItem>& arrays) {
  Shape out;
  for (const auto& a : arrays) {
    const Shape& s = a.shape;
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[out.size() - s.size() + i];
      int64_t v = s[i];
      if (o == 1) o = v;
      else if (v != 1 && v != o)
        throw IndexError(str("shape mismatch: indexing arrays could not be broadcast together with shapes ",
                             [&] {
                               std::string all;
                               for (const auto& b : arrays) all += shape_str(b.shape) + " ";
                               return all;
                             }()));
    }
  }
  return out;
}

// The element of a broadcast index array at a flat position of `shape`.
int64_t broadcast_at(const IndexItem& a, const Shape& shape, int64_t flat) {
  int64_t pos = 0, stride = 1;
  size_t lead = shape.size() - a.shape.size();
  for (size_t i = shape.size(); i-- > lead;) {
    int64_t coord = flat % shape[i];
    flat /= shape[i];
    int64_t n = a.shape[i - lead];
    if (n != 1) pos += coord * stride;
    stride *= n;
  }
  return a.indices[size_t(pos)];
}

// Advanced indexing resolved: the basic view, its dims permuted with the
// advanced ones first, and the flat index into those (row-major) dims.
struct Advanced {
  Tensor permuted;            // [adv dims..., rest...]
  Shape index_shape;          // broadcast shape of the index arrays
  std::vector<int64_t> flat;  // one entry per element of index_shape
  int64_t rows = 1;           // product of the advanced dims' sizes
  int64_t insert_at = 0;      // where the index dims go in the result
  Shape rest;                 // the non-advanced dims of the view
};

Advanced resolve(const Tensor& self, std::vector<IndexItem>& items) {
  std::vector<int64_t> adv_dims;
  Tensor t = apply_basic(self, items, adv_dims);
  std::vector<IndexItem> arrays;
  for (auto& it : items)
    if (it.kind == IndexKind::kArray) arrays.push_back(std::move(it));
  Advanced a;
  a.index_shape = broadcast_shapes(arrays);
  bool adjacent = true;
  for (size_t i = 1; i < adv_dims.size(); ++i) adjacent &= adv_dims[i] == adv_dims[i - 1] + 1;
  std::vector<int64_t> order(adv_dims.begin(), adv_dims.end());
  for (int64_t d = 0; d < t.dim(); ++d)
    if (std::find(adv_dims.begin(), adv_dims.end(), d) == adv_dims.end()) {
      order.push_back(d);
      a.rest.push_back(t.shape()[size_t(d)]);
    }
  a.insert_at = adjacent ? adv_dims.front() : 0;
  a.permuted = t.permute(order);
  int64_t count = numel_of(a.index_shape);
  a.flat.assign(size_t(count), 0);
  for (size_t k = 0; k < arrays.size(); ++k) {
    int64_t n = t.shape()[size_t(adv_dims[k])];
    a.rows *= n;
    for (int64_t e = 0; e < count; ++e) {
      int64_t v = broadcast_at(arrays[k], a.index_shape, e);
      if (v < -n || v >= n)
        throw IndexError(str("index ", v, " is out of bounds for dimension ", adv_dims[k], " with size ", n));
      a.flat[size_t(e)] = a.flat[size_t(e)] * n + (v < 0 ? v + n : v);
    }
  }
  return a;
}

bool has_array(const std::vector<IndexItem>& items) {
  for (const auto& it : items)
    if (it.kind == IndexKind::kArray) return true;
  return false;
}

// [index dims..., rest...] -> the result order (index dims at insert_at).
std::vector<int64_t> result_order(const Advanced& a) {
  int64_t k = int64_t(a.index_shape.size()), r = int64_t(a.rest.size());
  std::vector<int64_t> order;
  for (int64_t i = 0; i < a.insert_at; ++i) order.push_back(k + i);
  for (int64_t i = 0; i < k; ++i) order.push_back(i);
  for (int64_t i = a.insert_at; i < r; ++i) order.push_back(k + i);
  return order;
}

Tensor flat_rows(const Advanced& a) {
  Shape s{a.rows};
  s.insert(s.end(), a.rest.begin(), a.rest.end());
  return a.permuted.reshape(s);
}

Tensor index_tensor_of(const std::vector<int64_t>& v, Device device) {
  return Tensor::from_vector(v, {int64_t(v.size())}, device);
}

Tensor as_value(nb::handle value, const Tensor& like) {
  if (nb::isinstance<Tensor>(value)) return *nb::inst_ptr<Tensor>(value);
  if (is_python_scalar(value)) return Tensor::full({}, nb::cast<double>(value), like.dtype(), like.device());
  return tensor_from_data(value, like.dtype(), like.device());
}

// A value may have more dims than the indexed result when the extra leading
// ones have size 1 (NumPy and PyTorch drop them).
Tensor drop_leading_ones(Tensor v, int64_t rank) {
  while (v.dim() > rank && v.shape()[0] == 1) v = v.squeeze(0);
  return v;
}

void check_broadcastable(const Shape& value, const Shape& target) {
  bool ok = value.size() <= target.size();
  for (size_t i = 0; ok && i < value.size(); ++i) {
    int64_t v = value[value.size() - 1 - i], t = target[target.size() - 1 - i];
    ok = v == 1 || v == t;
  }
  if (!ok)
    throw ShapeError(str("shape mismatch: value of shape ", shape_str(value),
                         " cannot be broadcast to the indexing result of shape ", shape_str(target)));
}

// Writes `value` at the advanced positions of `a` (into self's memory).
void put(Advanced& a, const Tensor& value, bool accumulate) {
  Tensor rows = flat_rows(a);
  DType dt = rows.dtype();
  // The value in the permuted layout [index dims..., rest...], one row per index.
  Shape result_shape = a.index_shape;
  result_shape.insert(result_shape.end(), a.rest.begin(), a.rest.end());
  std::vector<int64_t> order = result_order(a);
  Shape shown(order.size());
  for (size_t i = 0; i < order.size(); ++i) shown[i] = result_shape[size_t(order[i])];
  Tensor v = drop_leading_ones(value.to(rows.device()).to(dt), int64_t(shown.size()));
  check_broadcastable(v.shape(), shown);
  v = v.expand(shown);
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[size_t(order[i])] = int64_t(i);
  Shape row_shape{numel_of(a.index_shape)};
  row_shape.insert(row_shape.end(), a.rest.begin(), a.rest.end());
  v = v.permute(inverse).reshape(row_shape);
  std::vector<int64_t> targets = a.flat;
  if (!accumulate) {  // repeated targets: the last write wins
    std::unordered_map<int64_t, int64_t> last;
    for (size_t i = 0; i < targets.size(); ++i) last[targets[i]] = int64_t(i);
    if (last.size() != targets.size()) {
      std::vector<int64_t> keep;
      for (size_t i = 0; i < targets.size(); ++i)
        if (last[targets[i]] == int64_t(i)) keep.push_back(int64_t(i));
      v = call1("index_select", {v, index_tensor_of(keep, v.device())}, {{"dim", int64_t(0)}});
      std::vector<int64_t> kept;
      for (int64_t i : keep) kept.push_back(targets[size_t(i)]);
      targets = std::move(kept);
    }
  }
  bool as_u8 = dt == DType::boolean;  // index_add has no bool kernel
  Tensor base = as_u8 ? rows.to(DType::u8) : rows;
  if (as_u8) v = v.to(DType::u8);
  Tensor idx = index_tensor_of(targets, rows.device());
  Tensor updated;
  if (accumulate) {
    updated = call1("index_add", {base, idx, v}, {{"dim", int64_t(0)}});
  } else {
    std::vector<uint8_t> hit(size_t(a.rows), 0);
    for (int64_t t : targets) hit[size_t(t)] = 1;
    Shape mask_shape(size_t(rows.dim()), 1);
    mask_shape[0] = a.rows;
    Tensor mask = Tensor::from_host(hit.data(), a.rows, mask_shape, DType::boolean, rows.device());
    Tensor scattered = call1("index_add", {Tensor::zeros(base.shape(), base.dtype(), base.device()), idx, v},
                             {{"dim", int64_t(0)}});
    updated = call1("where", {mask, scattered, base});
  }
  if (as_u8) updated = updated.to(DType::boolean);
  a.permuted.copy_(updated.reshape(a.permuted.shape()));
}

}  // namespace

Tensor index_get(const Tensor& self, nb::handle key) {
  std::vector<IndexItem> items = parse_key(key);
  if (!has_array(items)) {
    std::vector<int64_t> none;
    return apply_basic(self, items, none);
  }
  Advanced a = resolve(self, items);
  Tensor picked = call1("index_select", {flat_rows(a), index_tensor_of(a.flat, self.device())}, {{"dim", int64_t(0)}});
  Shape s = a.index_shape;
  s.insert(s.end(), a.rest.begin(), a.rest.end());
  picked = picked.reshape(s);
  if (a.insert_at == 0) return picked;
  return picked.permute(result_order(a));
}

void index_set(Tensor& self, nb::handle key, nb::handle value, bool accumulate) {
  std::vector<IndexItem> items = parse_key(key);
  Tensor v = as_value(value, self);
  if (!has_array(items)) {
    std::vector<int64_t> none;
    Tensor view = apply_basic(self, items, none);
    v = drop_leading_ones(v, view.dim());
    check_broadcastable(v.shape(), view.shape());
    if (accumulate) v = call1("add", {view, v});
    view.copy_(v);
    return;
  }
  Advanced a = resolve(self, items);
  put(a, v, accumulate);
}

}  // namespace oar::py
