// ONNX Col2Im (opset 18): the inverse of im2col, summing every column entry
// into the image position its sliding block covers. The positions depend on
// the shapes only, so the importer computes the flat target of each entry
// once and the graph is one index_add into the padded image plus a crop.
#include "import_context.h"

namespace oar::onnx::detail {

namespace {

std::vector<Value*> col2im_op(NodeContext& c) {
  Value* x = c.required_input(0);  // [N, C * prod(block), L]
  std::vector<int64_t> image = c.constant_ints(1, "image_shape");
  std::vector<int64_t> block = c.constant_ints(2, "block_shape");
  size_t n = image.size();
  if (n == 0 || block.size() != n) c.invalid("image_shape and block_shape must have the same, non-zero length");
  if (c.rank(x) != 3) c.invalid("input must be [N, C * prod(block_shape), L]");
  std::vector<int64_t> dil = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (dil.size() != n || strides.size() != n || pads.size() != 2 * n)
    c.invalid(str("dilations and strides need ", n, " entries and pads ", 2 * n));
  int64_t blocks = 1, positions = 1;
  std::vector<int64_t> padded(n), slides(n);
  for (size_t i = 0; i < n; ++i) {
    padded[i] = image[i] + pads[i] + pads[i + n];
    int64_t extent = dil[i] * (block[i] - 1) + 1;
    if (strides[i] <= 0 || padded[i] < extent) c.invalid(str("block ", block[i], " does not fit image dim ", i));
    slides[i] = (padded[i] - extent) / strides[i] + 1;
    blocks *= block[i];
    positions *= slides[i];
  }
  const Shape& s = c.shape(x);
  if (s[1] % blocks) c.invalid(str("dim 1 (", s[1], ") is not a multiple of prod(block_shape) = ", blocks));
  if (s[2] != positions) c.invalid(str("L = ", s[2], " but the blocks slide over ", positions, " positions"));
  int64_t channels = s[1] / blocks, area = numel_of(Shape(padded.begin(), padded.end()));
  // flat target in [C, padded image] of each input entry (c, block b, position l)
  std::vector<int64_t> target;
  target.reserve(size_t(s[1] * s[2]));
  std::vector<int64_t> kb(n), pl(n);
  for (int64_t ch = 0; ch < channels; ++ch)
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t l = 0; l < positions; ++l) {
        int64_t rb = b, rl = l;
        for (size_t i = n; i-- > 0;) {
          kb[i] = rb % block[i], rb /= block[i];
          pl[i] = rl % slides[i], rl /= slides[i];
        }
        int64_t flat = 0;
        for (size_t i = 0; i < n; ++i) flat = flat * padded[i] + pl[i] * strides[i] + kb[i] * dil[i];
        target.push_back(ch * area + flat);
      }
  DType d = c.dtype(x);
  Value* zeros = c.op("fill", {}, {{"shape", Shape{s[0], channels * area}}, {"value", 0.0}, {"dtype", d}});
  Value* y = c.op("index_add", {zeros, c.ints(target), c.reshape(x, {s[0], s[1] * s[2]})}, {{"dim", int64_t(1)}});
  Shape out{s[0], channels};
  out.insert(out.end(), padded.begin(), padded.end());
  y = c.reshape(y, out);
  for (size_t i = 0; i < n; ++i) y = c.slice(y, int64_t(2 + i), pads[i], pads[i] + image[i]);
  return {y};
}

}  // namespace

void register_col2im_mappers(MapperTable& t) { t.add("Col2Im", col2im_op); }

}  // namespace oar::onnx::detail
