// The gradient of as_strided, which can make any view of a storage: entries
// that overlap (stride 0, sliding windows) and regions the input never shows.
// Gradients therefore move through storage space, restricted to the range the
// two geometries touch: the output gradient is added into a zero buffer at
// the output's storage positions (entries visited twice add up) and read back
// at the input's. Where the input itself shows one storage element k times
// (an expanded input), each of its entries gets 1/k, as in PyTorch, so that
// the gradients of the k aliases sum to the storage element's. Built from
// index_add and index_select, so it is differentiable again.
#include <algorithm>

#include "oar/autograd.h"
#include "oar/dispatch.h"

namespace oar::autograd {

namespace {

// Storage position of every entry of a geometry, in row-major entry order.
std::vector<int64_t> storage_positions(const Shape& shape, const Shape& strides, int64_t offset) {
  std::vector<int64_t> pos(size_t(numel_of(shape)));
  if (pos.empty()) return pos;
  Shape index(shape.size(), 0);
  int64_t at = offset;
  for (auto& p : pos) {
    p = at;
    for (size_t d = shape.size(); d-- > 0;) {  // odometer step, innermost first
      at += strides[d];
      if (++index[d] < shape[d]) break;
      at -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return pos;
}

Tensor index_tensor(std::vector<int64_t> pos, int64_t lo, Device device) {
  for (auto& p : pos) p -= lo;
  return Tensor::from_vector(pos, {int64_t(pos.size())}, device);
}

// 1/k for an input entry whose storage element the input shows k times; empty when every k is 1.
std::vector<double> alias_shares(const std::vector<int64_t>& in_pos) {
  std::vector<int64_t> sorted = in_pos;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) return {};
  std::vector<double> share(in_pos.size());
  for (size_t i = 0; i < in_pos.size(); ++i) {
    auto [first, last] = std::equal_range(sorted.begin(), sorted.end(), in_pos[i]);
    share[i] = 1.0 / double(last - first);
  }
  return share;
}

}  // namespace

std::function<Tensor(const Tensor&)> as_strided_backward(const Tensor& input, const Shape& shape,
                                                         const Shape& strides, int64_t offset) {
  const Shape in_shape = input.shape();
  std::vector<int64_t> in_pos = storage_positions(in_shape, input.strides(), input.offset());
  std::vector<int64_t> out_pos = storage_positions(shape, strides, offset);
  std::vector<double> shares = alias_shares(in_pos);
  int64_t lo = 0, hi = -1;
  if (!in_pos.empty() && !out_pos.empty()) {
    auto [in_lo, in_hi] = std::minmax_element(in_pos.begin(), in_pos.end());
    auto [out_lo, out_hi] = std::minmax_element(out_pos.begin(), out_pos.end());
    lo = std::min(*in_lo, *out_lo);
    hi = std::max(*in_hi, *out_hi);
  }
  return [=](const Tensor& g) {
    if (hi < lo) return Tensor::zeros(in_shape, g.dtype(), g.device());
    const Attrs along0{{"dim", int64_t(0)}};
    Tensor space = Tensor::zeros({hi - lo + 1}, g.dtype(), g.device());
    space = call1("index_add", {space, index_tensor(out_pos, lo, g.device()), g.reshape({g.numel()})}, along0);
    Tensor grad = call1("index_select", {space, index_tensor(in_pos, lo, g.device())}, along0);
    if (!shares.empty())
      grad = call1("mul", {grad, Tensor::from_vector(shares, {int64_t(shares.size())}, g.device()).to(g.dtype())});
    return grad.reshape(in_shape);
  };
}

}  // namespace oar::autograd
