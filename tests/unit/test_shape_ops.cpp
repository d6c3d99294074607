// Tests of concat, stack, split, pad and pad_backward against plain reference
// loops on all dtypes, with non-contiguous (transposed, step-sliced, expanded)
// inputs, negative dims, empty tensors, dtype promotion across lists, the
// adjoint identity of pad_backward and the typed errors for bad arguments.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

std::vector<double> sample(int64_t n, DType d, uint32_t seed, double lo = -20, double hi = 20) {
  if (d == DType::boolean) return random_values(n, 0, 1, seed, d);
  if (d == DType::u8 && lo < 0) lo = 0;
  auto v = random_values(n, lo, hi, seed, d);
  for (auto& x : v) x = round_to(x, d);
  return v;
}


// `values` (row-major over `shape`) as a transposed, non-contiguous view.
Tensor transposed(const std::vector<double>& values, const Shape& shape, DType d, Device dev) {
  size_t nd = shape.size();
  Shape ts = shape;
  std::swap(ts[nd - 1], ts[nd - 2]);
  std::vector<double> buf(values.size());
  std::vector<int64_t> idx(nd, 0);
  if (!values.empty()) do {
      auto t = idx;
      std::swap(t[nd - 1], t[nd - 2]);
      buf[size_t(flat_index(t, ts))] = values[size_t(flat_index(idx, shape))];
    } while (next_index(idx, shape));
  return make_tensor(buf, ts, d, dev).transpose(int64_t(nd) - 2, int64_t(nd) - 1);
}

// `values` as a step-2 slice along dim 0 of a larger tensor.
Tensor sliced(const std::vector<double>& values, const Shape& shape, DType d, Device dev) {
  Shape bs = shape;
  bs[0] *= 2;
  int64_t row = numel_of(shape) / shape[0];
  std::vector<double> buf(size_t(numel_of(bs)), 1.0);
  for (int64_t r = 0; r < shape[0]; ++r)
    std::copy_n(values.begin() + r * row, row, buf.begin() + 2 * r * row);
  return make_tensor(buf, bs, d, dev).slice(0, 0, bs[0], 2);
}

// Reference concat of row-major value lists along `dim`.
std::vector<double> concat_ref(const std::vector<std::vector<double>>& vs, const std::vector<Shape>& shapes,
                               int64_t dim) {
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shapes[0][size_t(d)];
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < vs.size(); ++i) {
      int64_t block = int64_t(vs[i].size()) / outer;
      out.insert(out.end(), vs[i].begin() + o * block, vs[i].begin() + (o + 1) * block);
    }
  return out;
}

}  // namespace

TEST(Concat, MatchesReferenceAllDTypesAndDims) {
  for (Device dev : devices())
    for (DType dt : all_dtypes)
      for (int64_t dim : {0, 1, 2, -1, -2}) {
        int64_t nd = normalize_axis(dim, 3);
        std::vector<Shape> shapes(3, Shape{2, 3, 4});
        shapes[1][size_t(nd)] = 1;
        shapes[2][size_t(nd)] = 0;  // an empty member
        std::vector<std::vector<double>> vs;
        for (uint32_t i = 0; i < 3; ++i) vs.push_back(sample(numel_of(shapes[i]), dt, 20 + i));
        std::vector<Tensor> xs{transposed(vs[0], shapes[0], dt, dev), sliced(vs[1], shapes[1], dt, dev),
                               make_tensor(vs[2], shapes[2], dt, dev)};
        Tensor y = call1("concat", xs, {{"dim", dim}});
        Shape ys{2, 3, 4};
        ys[size_t(nd)] += 1;
        ASSERT_EQ(y.shape(), ys);
        ASSERT_EQ(y.dtype(), dt);
        EXPECT_EQ(host_values(y), concat_ref(vs, shapes, nd)) << dt << " dim " << dim;
      }
}

TEST(Concat, PromotionExpandedLegacyEmptyAndErrors) {
  for (Device dev : devices()) {
    Tensor a = make_tensor({1, 2}, {1, 2}, DType::i32, dev);
    Tensor b = make_tensor({0.5, 1.5}, {1, 2}, DType::f32, dev).expand({2, 2});  // stride 0
    Tensor c = Tensor::zeros({0}, DType::u8, dev);                               // legacy 1-D empty: skipped
    Tensor y = call1("concat", {a, b, c}, {{"dim", int64_t(0)}});
    EXPECT_EQ(y.dtype(), DType::f32);
    EXPECT_EQ(host_values(y), (std::vector<double>{1, 2, 0.5, 1.5, 0.5, 1.5}));
    Tensor bools = make_tensor({1, 0}, {2}, DType::boolean, dev);
    Tensor z = call1("concat", {bools, make_tensor({-3}, {1}, DType::i8, dev)});
    EXPECT_EQ(z.dtype(), DType::i8);
    EXPECT_EQ(host_values(z), (std::vector<double>{1, 0, -3}));

    try {
      call1("concat", {a, Tensor::zeros({1, 3}, DType::i32, dev)}, {{"dim", int64_t(0)}});
      ADD_FAILURE() << "expected ShapeError";
    } catch (const ShapeError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("tensor 1"), std::string::npos) << m;
      EXPECT_NE(m.find("[1, 3]"), std::string::npos) << m;
    }
    EXPECT_THROW(call1("concat", {a, Tensor::zeros({2}, DType::i32, dev)}), ShapeError);
    EXPECT_THROW(call1("concat", {Tensor::zeros({}, DType::f32, dev)}), ShapeError);
    EXPECT_THROW(call1("concat", {a, a}, {{"dim", int64_t(2)}}), IndexError);
    EXPECT_THROW(call1("concat", {}), ValueError);
  }
}

TEST(Stack, MatchesReferenceAllDTypesAndDims) {
  for (Device dev : devices())
    for (DType dt : all_dtypes)
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        Shape s{3, 2};
        int64_t nd = normalize_axis(dim, 3);
        std::vector<std::vector<double>> vs;
        for (uint32_t i = 0; i < 4; ++i) vs.push_back(sample(6, dt, 30 + i));
        std::vector<Tensor> xs{make_tensor(vs[0], s, dt, dev), transposed(vs[1], s, dt, dev),
                               sliced(vs[2], s, dt, dev), make_tensor(vs[3], s, dt, dev)};
        Tensor y = call1("stack", xs, {{"dim", dim}});
        Shape ys = s;
        ys.insert(ys.begin() + nd, 4);
        ASSERT_EQ(y.shape(), ys);
        std::vector<double> want;
        std::vector<int64_t> idx(3, 0);
        do {
          std::vector<int64_t> src = idx;
          int64_t which = src[size_t(nd)];
          src.erase(src.begin() + nd);
          want.push_back(vs[size_t(which)][size_t(flat_index(src, s))]);
        } while (next_index(idx, ys));
        EXPECT_EQ(host_values(y), want) << dt << " dim " << dim;
      }
}

TEST(Stack, EmptyPromotionAndErrors) {
  for (Device dev : devices()) {
    Tensor e = Tensor::zeros({0, 3}, DType::f32, dev);
    EXPECT_EQ(call1("stack", {e, e}, {{"dim", int64_t(1)}}).shape(), (Shape{0, 2, 3}));
    Tensor y =
        call1("stack", {make_tensor({1}, {}, DType::i64, dev), make_tensor({2.5}, {}, DType::f64, dev)});
    EXPECT_EQ(y.dtype(), DType::f64);
    EXPECT_EQ(host_values(y), (std::vector<double>{1, 2.5}));
    Tensor a = Tensor::zeros({2, 3}, DType::f32, dev);
    EXPECT_THROW(call1("stack", {a, Tensor::zeros({3, 2}, DType::f32, dev)}), ShapeError);
    EXPECT_THROW(call1("stack", {a, a}, {{"dim", int64_t(3)}}), IndexError);
    EXPECT_THROW(call1("stack", {a, a}, {{"dim", int64_t(-4)}}), IndexError);
  }
}

TEST(Split, MatchesReferenceAndRoundTrips) {
  for (Device dev : devices())
    for (DType dt : all_dtypes)
      for (int64_t dim : {0, 1, -1}) {
        Shape s{4, 6, 2};
        int64_t nd = normalize_axis(dim, 3);
        std::vector<int64_t> sizes = nd == 2 ? std::vector<int64_t>{1, 0, 1} : std::vector<int64_t>{1, 0, 3};
        if (nd == 1) sizes = {2, 0, 3, 1};
        auto v = sample(48, dt, 40);
        for (const Tensor& x :
             {make_tensor(v, s, dt, dev), transposed(v, s, dt, dev), sliced(v, s, dt, dev)}) {
          auto parts = call(std::string("split"), {x}, {{"sizes", sizes}, {"dim", dim}});
          ASSERT_EQ(parts.size(), sizes.size());
          int64_t at = 0;
          for (size_t p = 0; p < parts.size(); ++p) {
            Shape ps = s;
            ps[size_t(nd)] = sizes[p];
            ASSERT_EQ(parts[p].shape(), ps);
            ASSERT_EQ(parts[p].dtype(), dt);
            std::vector<double> want;
            std::vector<int64_t> idx(3, 0);
            if (numel_of(ps) > 0) do {
                auto src = idx;
                src[size_t(nd)] += at;
                want.push_back(v[size_t(flat_index(src, s))]);
              } while (next_index(idx, ps));
            EXPECT_EQ(host_values(parts[p]), want) << dt << " dim " << dim << " part " << p;
            at += sizes[p];
          }
          EXPECT_EQ(host_values(call1("concat", parts, {{"dim", dim}})), v);
        }
      }
}

TEST(Split, Errors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({4, 3}, DType::f32, dev);
    EXPECT_THROW(call(std::string("split"), {x}, {{"sizes", std::vector<int64_t>{1, 2}}}), ShapeError);
    EXPECT_THROW(call(std::string("split"), {x}, {{"sizes", std::vector<int64_t>{5, -1}}}), ValueError);
    EXPECT_THROW(call(std::string("split"), {x}, {{"sizes", std::vector<int64_t>{4}}, {"dim", int64_t(2)}}),
                 IndexError);
    EXPECT_THROW(call(std::string("split"), {Tensor::zeros({}, DType::f32, dev)},
                      {{"sizes", std::vector<int64_t>{1}}}),
                 ShapeError);
  }
}

namespace {

// Reference F.pad: source coordinate of each padded coordinate, per dim.
int64_t pad_source(int64_t o, int64_t lo, int64_t n, const std::string& mode) {
  int64_t i = o - lo;
  if (i >= 0 && i < n) return i;
  if (mode == "constant") return -1;
  if (mode == "replicate") return i < 0 ? 0 : n - 1;
  return i < 0 ? -i : 2 * (n - 1) - i;  // reflect
}

Shape padded(const Shape& s, const std::vector<int64_t>& pads) {
  Shape out = s;
  for (size_t k = 0; k < pads.size() / 2; ++k) out[s.size() - 1 - k] += pads[2 * k] + pads[2 * k + 1];
  return out;
}

std::vector<double> pad_ref(const std::vector<double>& v, const Shape& s, const std::vector<int64_t>& pads,
                            const std::string& mode, double value) {
  Shape ys = padded(s, pads);
  std::vector<double> out;
  std::vector<int64_t> idx(s.size(), 0);
  if (numel_of(ys) == 0) return out;
  do {
    std::vector<int64_t> src(s.size());
    bool fill = false;
    for (size_t d = 0; d < s.size(); ++d) {
      size_t k = s.size() - 1 - d;
      int64_t lo = 2 * k < pads.size() ? pads[2 * k] : 0;
      src[d] = pad_source(idx[d], lo, s[d], mode);
      fill |= src[d] < 0;
    }
    out.push_back(fill ? value : v[size_t(flat_index(src, s))]);
  } while (next_index(idx, ys));
  return out;
}

}  // namespace

TEST(Pad, MatchesReferenceAllModesAndDTypes) {
  const std::vector<std::vector<int64_t>> pad_sets = {
      {2, 1}, {1, 2, 2, 1}, {-1, 2, 0, -1}, {1, 0, 0, 2, 1, 1}, {}};
  Shape s{3, 4, 5};
  for (Device dev : devices())
    for (DType dt : all_dtypes)
      for (const char* mode : {"constant", "reflect", "replicate"})
        for (const auto& pads : pad_sets) {
          auto v = sample(60, dt, 50);
          double value = dt == DType::boolean ? 1 : is_floating(dt) ? 2.5 : 7;
          auto want = pad_ref(v, s, pads, mode, value);
          for (const Tensor& x :
               {make_tensor(v, s, dt, dev), transposed(v, s, dt, dev), sliced(v, s, dt, dev)}) {
            Tensor y = call1("pad", {x}, {{"pads", pads}, {"mode", std::string(mode)}, {"value", value}});
            ASSERT_EQ(y.shape(), padded(s, pads));
            EXPECT_EQ(host_values(y), want) << dt << " " << mode << " pads " << shape_str(pads);
          }
        }
}

TEST(Pad, ExpandedEmptyAndErrors) {
  for (Device dev : devices()) {
    Tensor x = make_tensor({1, 2, 3}, {3}, DType::f32, dev).expand({2, 3});
    EXPECT_EQ(host_values(call1("pad", {x},
                                {{"pads", std::vector<int64_t>{1, 1}}, {"mode", std::string("reflect")}})),
              (std::vector<double>{2, 1, 2, 3, 2, 2, 1, 2, 3, 2}));
    Tensor e = Tensor::zeros({0, 2}, DType::f32, dev);
    EXPECT_EQ(call1("pad", {e}, {{"pads", std::vector<int64_t>{1, 1}}}).shape(), (Shape{0, 4}));
    Tensor z = call1("pad", {Tensor::zeros({2, 0}, DType::f32, dev)},
                     {{"pads", std::vector<int64_t>{1, 0}}, {"value", 3.0}});
    EXPECT_EQ(host_values(z), (std::vector<double>{3, 3}));
    Tensor a = Tensor::zeros({2, 3}, DType::f32, dev);
    auto pad = [&](std::vector<int64_t> p, std::string mode) {
      return call1("pad", {a}, {{"pads", p}, {"mode", mode}});
    };
    EXPECT_THROW(pad({1, 1}, "circularish"), ValueError);
    EXPECT_THROW(pad({1}, "constant"), ValueError);
    EXPECT_THROW(pad({1, 1, 1, 1, 1, 1}, "constant"), ValueError);
    EXPECT_THROW(pad({3, 0}, "reflect"), ShapeError);
    EXPECT_THROW(pad({-2, -2}, "constant"), ShapeError);
    EXPECT_THROW(
        call1("pad", {e.t()}, {{"pads", std::vector<int64_t>{1, 0}}, {"mode", std::string("replicate")}}),
        ShapeError);
  }
}

TEST(PadBackward, IsTheAdjointOfPad) {
  // pad is linear: grad_x[i] = <grad_y, pad(e_i)> exactly, checked in f64.
  const std::vector<std::vector<int64_t>> pad_sets = {
      {2, 1}, {1, 2, 2, 1}, {-1, 2, 0, -1}, {1, 1, 0, 2, 1, 0}};
  Shape s{2, 3, 4};
  for (Device dev : devices())
    for (const char* mode : {"constant", "reflect", "replicate"})
      for (const auto& pads : pad_sets) {
        Shape ys = padded(s, pads);
        auto g = sample(numel_of(ys), DType::f64, 60, -1, 1);
        Attrs attrs{{"pads", pads}, {"mode", std::string(mode)}};
        std::vector<double> want;
        for (int64_t i = 0; i < numel_of(s); ++i) {
          std::vector<double> e(size_t(numel_of(s)), 0.0);
          e[size_t(i)] = 1;
          auto pe = host_values(call1("pad", {make_tensor(e, s, DType::f64, dev)}, attrs));
          double dot = 0;
          for (size_t k = 0; k < pe.size(); ++k) dot += pe[k] * g[k];
          want.push_back(dot);
        }
        Attrs battrs = attrs;
        battrs.set("input_shape", s);
        Tensor gx = call1("pad_backward", {transposed(g, ys, DType::f64, dev)}, battrs);
        ASSERT_EQ(gx.shape(), s);
        expect_close(host_values(gx), want, 1e-12, 1e-12, std::string("pad_backward ") + mode);
      }
}

TEST(PadBackward, AccumulatesInEveryNumericDType) {
  Shape s{2, 3};
  std::vector<int64_t> pads{2, 2, 1, 0};
  for (Device dev : devices())
    for (DType dt : all_dtypes) {
      if (dt == DType::boolean) continue;
      Shape ys = padded(s, pads);
      auto g = sample(numel_of(ys), dt, 61, -4, 4);
      for (const char* mode : {"constant", "reflect", "replicate"}) {
        std::vector<double> want(6, 0.0);
        std::vector<int64_t> idx(2, 0);
        do {
          int64_t r = pad_source(idx[0], 1, 2, mode), c = pad_source(idx[1], 2, 3, mode);
          if (r >= 0 && c >= 0) want[size_t(r * 3 + c)] += g[size_t(flat_index(idx, ys))];
        } while (next_index(idx, ys));
        Tensor gx = call1("pad_backward", {make_tensor(g, ys, dt, dev)},
                          {{"pads", pads}, {"mode", std::string(mode)}, {"input_shape", s}});
        expect_close(host_values(gx), want, tolerance(dt), tolerance(dt),
                     std::string(dtype_name(dt)) + " " + mode);
      }
    }
  for (Device dev : devices()) {
    Tensor g = Tensor::zeros({3, 4}, DType::f32, dev);
    Attrs a{{"pads", std::vector<int64_t>{1, 1}}, {"input_shape", Shape{3, 3}}};
    EXPECT_THROW(call1("pad_backward", {g}, a), ShapeError);
    EXPECT_THROW(call1("pad_backward", {g.to(DType::boolean)},
                       {{"pads", std::vector<int64_t>{1, 1}}, {"input_shape", Shape{3, 2}}}),
                 DTypeError);
    EXPECT_THROW(
        call1(
            "pad_backward", {g},
            {{"pads", std::vector<int64_t>{1, 1}}, {"mode", std::string("x")}, {"input_shape", Shape{3, 2}}}),
        ValueError);
  }
}

TEST(ShapeOps, LargeTensorsSplitAcrossThreads) {
  for (Device dev : devices()) {
    auto a = sample(500 * 300, DType::f32, 90), b = sample(500 * 200, DType::f32, 91);
    Tensor ta = make_tensor(a, {500, 300}, DType::f32, dev), tb = make_tensor(b, {500, 200}, DType::f32, dev);
    Tensor y = call1("concat", {ta, tb}, {{"dim", int64_t(1)}});
    EXPECT_EQ(host_values(y), concat_ref({a, b}, {{500, 300}, {500, 200}}, 1));
    auto parts =
        call(std::string("split"), {y}, {{"sizes", std::vector<int64_t>{300, 200}}, {"dim", int64_t(-1)}});
    EXPECT_EQ(host_values(parts[0]), a);
    EXPECT_EQ(host_values(parts[1]), b);
    Tensor s = call1("stack", {ta, ta}, {{"dim", int64_t(2)}});
    std::vector<double> sw;
    for (double v : a) sw.insert(sw.end(), {v, v});
    EXPECT_EQ(host_values(s), sw);
    std::vector<int64_t> pads{3, 2, -1, 4};
    for (const char* mode : {"constant", "reflect", "replicate"}) {
      Tensor p = call1("pad", {ta}, {{"pads", pads}, {"mode", std::string(mode)}});
      EXPECT_EQ(host_values(p), pad_ref(a, {500, 300}, pads, mode, 0.0)) << mode;
      auto g = sample(numel_of(p.shape()), DType::f64, 92, -1, 1);
      std::vector<double> want(a.size(), 0.0);
      std::vector<int64_t> idx(2, 0);
      do {
        int64_t r = pad_source(idx[0], -1, 500, mode), c = pad_source(idx[1], 3, 300, mode);
        if (r >= 0 && c >= 0) want[size_t(r * 300 + c)] += g[size_t(flat_index(idx, p.shape()))];
      } while (next_index(idx, p.shape()));
      Tensor gx = call1("pad_backward", {make_tensor(g, p.shape(), DType::f64, dev)},
                        {{"pads", pads}, {"mode", std::string(mode)}, {"input_shape", Shape{500, 300}}});
      expect_close(host_values(gx), want, 1e-12, 1e-12, std::string("large pad_backward ") + mode);
    }
  }
}
