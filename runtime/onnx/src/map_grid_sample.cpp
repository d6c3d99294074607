// ONNX GridSample (4-D, opset 16) as a sum of gathers: the grid gives, per
// output pixel, a source position; each interpolation tap (1 nearest, 4
// bilinear, 16 bicubic) is a gather from the flattened image at the tap's
// integer position times its weight. Coordinates follow the ONNX/PyTorch
// rules: unnormalization with or without align_corners, border clamping,
// reflection, and zero padding as taps that weigh nothing. AffineGrid
// (opset 20), which makes such grids, is a matmul with a constant table.
#include "import_context.h"

namespace oar::onnx::detail {

namespace {

struct GridContext {
  NodeContext& c;
  Value* image;  // [N, C, H * W]
  int64_t n, ch, h, w, ho, wo;
  bool align_corners;
  std::string padding;
  DType d;

  Value* s(double v) { return c.scalar(v, d); }

  // [-1, 1] -> pixel coordinates
  Value* unnormalize(Value* g, int64_t size) {
    if (align_corners) return c.mul(c.add(g, s(1)), s(double(size - 1) / 2));
    return c.div(c.sub(c.mul(c.add(g, s(1)), s(double(size))), s(1)), s(2));
  }

  Value* clip(Value* v, int64_t size) { return c.op("clamp", {v}, {{"min", 0.0}, {"max", double(size - 1)}}); }

  // reflect into [twice_low / 2, twice_high / 2] by folding back and forth
  Value* reflect(Value* v, double twice_low, double twice_high) {
    if (twice_low == twice_high) return c.mul(v, s(0));
    double low = twice_low / 2, span = (twice_high - twice_low) / 2;
    Value* dist = c.op("abs", {c.sub(v, s(low))});
    Value* extra = c.op("fmod", {dist, s(span)});
    Value* flips = c.op("floor", {c.div(dist, s(span))});
    Value* even = c.op("eq", {c.op("fmod", {flips, s(2)}), s(0)});
    return c.where(even, c.add(extra, s(low)), c.add(c.sub(s(span), extra), s(low)));
  }

  // the padding mode applied to a coordinate (zeros: left as is, masked later)
  Value* pad_coordinate(Value* v, int64_t size) {
    if (padding == "border") return clip(v, size);
    if (padding == "reflection") {
      Value* r = align_corners ? reflect(v, 0, 2.0 * double(size - 1)) : reflect(v, -1, 2.0 * double(size) - 1);
      return clip(r, size);
    }
    return v;
  }

  // image values at integer positions (x, y) [N, Ho, Wo], times weight; zero outside
  Value* tap(Value* x, Value* y, Value* weight) {
    Value* inside = c.op("logical_and", {c.op("logical_and", {c.op("ge", {x, s(0)}), c.op("le", {x, s(double(w - 1))})}),
                                         c.op("logical_and", {c.op("ge", {y, s(0)}), c.op("le", {y, s(double(h - 1))})})});
    Value* flat = c.add(c.mul(clip(y, h), s(double(w))), clip(x, w));
    Value* idx = c.cast(c.reshape(flat, {n, 1, ho * wo}), DType::i64);
    Value* vals = c.op("gather", {image, c.expand(idx, {n, ch, ho * wo})}, {{"dim", int64_t(2)}});
    Value* wt = c.where(inside, weight, s(0));
    return c.mul(vals, c.reshape(wt, {n, 1, ho * wo}));
  }
};

constexpr double kCubicA = -0.75;  // PyTorch's and ONNX's bicubic coefficient

// the cubic convolution weight of distance t in [0, 2)
Value* cubic(GridContext& g, Value* t, bool near) {
  NodeContext& c = g.c;
  double a = kCubicA;
  if (near)  // ((a + 2) t - (a + 3)) t^2 + 1
    return c.add(c.mul(c.sub(c.mul(g.s(a + 2), t), g.s(a + 3)), c.mul(t, t)), g.s(1));
  // ((a t - 5 a) t + 8 a) t - 4 a
  return c.sub(c.mul(c.add(c.mul(c.sub(c.mul(g.s(a), t), g.s(5 * a)), t), g.s(8 * a)), t), g.s(4 * a));
}

std::vector<Value*> grid_sample_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* grid = c.required_input(1);
  if (c.rank(x) != 4 || c.rank(grid) != 4 || c.shape(grid)[3] != 2)
    c.unsupported("GridSample other than 4-D input with a [N, H_out, W_out, 2] grid (N-D sampling, opset 20, is not mapped)");
  // opset 20 renamed bilinear / bicubic to linear / cubic (and allows N-D, refused above)
  std::string mode = c.attr_string("mode", c.opset() < 20 ? "bilinear" : "linear");
  if (c.opset() >= 20 && mode == "linear") mode = "bilinear";
  if (c.opset() >= 20 && mode == "cubic") mode = "bicubic";
  const Shape& xs = c.shape(x);
  GridContext g{c,        c.reshape(x, {xs[0], xs[1], xs[2] * xs[3]}),
                xs[0],    xs[1],
                xs[2],    xs[3],
                c.shape(grid)[1], c.shape(grid)[2],
                c.attr_int("align_corners", 0) != 0, c.attr_string("padding_mode", "zeros"),
                c.dtype(x)};
  if (g.padding != "zeros" && g.padding != "border" && g.padding != "reflection")
    c.invalid(str("unknown padding_mode '", g.padding, "'"));
  Value* gx = g.unnormalize(c.op("select", {grid}, {{"dim", int64_t(3)}, {"index", int64_t(0)}}), g.w);
  Value* gy = g.unnormalize(c.op("select", {grid}, {{"dim", int64_t(3)}, {"index", int64_t(1)}}), g.h);
  Value* out = nullptr;
  auto accumulate = [&](Value* v) { out = out == nullptr ? v : c.add(out, v); };
  if (mode == "nearest" || mode == "bilinear") {
    gx = g.pad_coordinate(gx, g.w);
    gy = g.pad_coordinate(gy, g.h);
    if (mode == "nearest") {
      accumulate(g.tap(c.op("round", {gx}), c.op("round", {gy}), c.op("fill", {}, {{"shape", c.shape(gx)}, {"value", 1.0}, {"dtype", g.d}})));
    } else {
      Value* x0 = c.op("floor", {gx});
      Value* y0 = c.op("floor", {gy});
      Value* tx = c.sub(gx, x0);
      Value* ty = c.sub(gy, y0);
      Value* x1 = c.add(x0, g.s(1));
      Value* y1 = c.add(y0, g.s(1));
      Value* one = g.s(1);
      accumulate(g.tap(x0, y0, c.mul(c.sub(one, tx), c.sub(one, ty))));
      accumulate(g.tap(x1, y0, c.mul(tx, c.sub(one, ty))));
      accumulate(g.tap(x0, y1, c.mul(c.sub(one, tx), ty)));
      accumulate(g.tap(x1, y1, c.mul(tx, ty)));
    }
  } else if (mode == "bicubic") {
    Value* x0 = c.op("floor", {gx});
    Value* y0 = c.op("floor", {gy});
    Value* tx = c.sub(gx, x0);
    Value* ty = c.sub(gy, y0);
    Value* one = g.s(1);
    Value* wx[4] = {cubic(g, c.add(tx, one), false), cubic(g, tx, true), cubic(g, c.sub(one, tx), true),
                    cubic(g, c.sub(g.s(2), tx), false)};
    Value* wy[4] = {cubic(g, c.add(ty, one), false), cubic(g, ty, true), cubic(g, c.sub(one, ty), true),
                    cubic(g, c.sub(g.s(2), ty), false)};
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        // each tap's position goes through the padding mode on its own
        Value* px = g.pad_coordinate(c.add(x0, g.s(double(j - 1))), g.w);
        Value* py = g.pad_coordinate(c.add(y0, g.s(double(i - 1))), g.h);
        accumulate(g.tap(px, py, c.mul(wx[j], wy[i])));
      }
  } else {
    c.invalid(str("unknown mode '", mode, "'"));
  }
  return {c.reshape(out, {g.n, g.ch, g.ho, g.wo})};
}

// AffineGrid (opset 20): the sampling grid GridSample reads, theta applied to
// the normalized coordinates of every output position. Those coordinates
// are a constant [positions, n + 1] table (x first, then y, z, and 1).
std::vector<Value*> affine_grid_op(NodeContext& c) {
  Value* theta = c.required_input(0);  // [N, n, n + 1]
  std::vector<int64_t> size = c.constant_ints(1, "size");  // [N, C, (D,) H, W]
  if (size.size() != 4 && size.size() != 5) c.invalid("size must be [N, C, H, W] or [N, C, D, H, W]");
  int64_t n = int64_t(size.size()) - 2;
  if (c.rank(theta) != 3 || c.shape(theta)[0] != size[0] || c.shape(theta)[1] != n || c.shape(theta)[2] != n + 1)
    c.invalid(str("theta must be [N, ", n, ", ", n + 1, "], got ", shape_str(c.shape(theta))));
  bool align = c.attr_int("align_corners", 0) != 0;
  auto coord = [&](int64_t i, int64_t len) {
    if (len == 1) return 0.0;
    return align ? -1.0 + 2.0 * double(i) / double(len - 1) : (2.0 * double(i) + 1.0) / double(len) - 1.0;
  };
  Shape spatial(size.begin() + 2, size.end());
  int64_t positions = numel_of(spatial);
  std::vector<double> base;
  base.reserve(size_t(positions * (n + 1)));
  for (int64_t p = 0; p < positions; ++p) {
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t i = n, rest = p; i-- > 0;) idx[size_t(i)] = rest % spatial[size_t(i)], rest /= spatial[size_t(i)];
    for (int64_t i = n; i-- > 0;) base.push_back(coord(idx[size_t(i)], spatial[size_t(i)]));  // x is the last dim
    base.push_back(1.0);
  }
  DType d = c.dtype(theta);
  Value* table = c.constant(Tensor::from_vector(base, {positions, n + 1}, Device::cpu()).to(d));
  table = c.expand(c.reshape(table, {1, positions, n + 1}), {size[0], positions, n + 1});
  Value* grid = c.op("matmul", {table, c.permute(theta, {0, 2, 1})});  // [N, positions, n]
  Shape out{size[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(n);
  return {c.reshape(grid, out)};
}

}  // namespace

void register_grid_sample_mappers(MapperTable& t) {
  t.add("GridSample", grid_sample_op);
  t.add("AffineGrid", affine_grid_op);
}

}  // namespace oar::onnx::detail
