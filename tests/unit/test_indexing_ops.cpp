// Tests of gather, index_select, scatter_add, index_add, embedding and
// embedding_backward against plain double-precision reference loops, on every
// registered dtype, both index dtypes, non-contiguous (transposed, step-sliced,
// expanded) inputs, negative dims, empty tensors, and the typed errors for bad
// dtypes, shapes, dims and out-of-range index values.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

using Layouts = std::vector<std::pair<std::string, Tensor>>;

// Values exactly representable in `d`, so copies compare exactly.
std::vector<double> sample(int64_t n, DType d, uint32_t seed, double lo = -20, double hi = 20) {
  if (d == DType::boolean) return random_values(n, 0, 1, seed, d);
  if (d == DType::u8 && lo < 0) lo = 0;
  auto v = random_values(n, lo, hi, seed, d);
  for (auto& x : v) x = round_to(x, d);
  return v;
}

// Integer values in [lo, hi): sums of a few of them are exact in every dtype.
std::vector<double> small_ints(int64_t n, DType d, uint32_t seed, double lo, double hi) {
  auto v = sample(n, d, seed, lo, hi);
  for (auto& x : v) x = std::round(x);
  return v;
}

std::vector<double> index_values(int64_t n, int64_t bound, uint32_t seed) {
  std::vector<double> v = random_values(n, 0, double(bound), seed, DType::f64);
  for (auto& x : v) x = std::min(std::floor(x), double(bound - 1));
  return v;
}


// The same logical values as a contiguous tensor, a transposed view and a
// step-2 slice (the last two are non-contiguous).
Layouts layouts(const std::vector<double>& values, const Shape& shape, DType d, Device dev) {
  Layouts out{{"contiguous", make_tensor(values, shape, d, dev)}};
  size_t nd = shape.size();
  if (nd >= 2 && numel_of(shape) > 0) {
    Shape ts = shape;
    std::swap(ts[nd - 1], ts[nd - 2]);
    std::vector<double> buf(values.size());
    std::vector<int64_t> idx(nd, 0);
    do {
      auto t = idx;
      std::swap(t[nd - 1], t[nd - 2]);
      buf[size_t(flat_index(t, ts))] = values[size_t(flat_index(idx, shape))];
    } while (next_index(idx, shape));
    out.push_back({"transposed", make_tensor(buf, ts, d, dev).transpose(int64_t(nd) - 2, int64_t(nd) - 1)});
  }
  if (nd >= 1) {
    Shape bs = shape;
    bs[0] *= 2;
    int64_t row = shape[0] ? numel_of(shape) / shape[0] : 0;
    std::vector<double> buf(size_t(numel_of(bs)), 1.0);
    for (int64_t r = 0; r < shape[0]; ++r)
      std::copy_n(values.begin() + r * row, row, buf.begin() + 2 * r * row);
    out.push_back({"sliced", make_tensor(buf, bs, d, dev).slice(0, 0, bs[0], 2)});
  }
  return out;
}

Attrs dim_attr(int64_t d) { return {{"dim", d}}; }

}  // namespace

TEST(Gather, MatchesReferenceAllDTypesLayoutsAndDims) {
  for (Device dev : devices())
    for (DType dt : all_dtypes)
      for (DType ix : {DType::i64, DType::i32})
        for (int64_t dim : {0, 1, 2, -1, -3}) {
          Shape xs{3, 4, 5}, is{2, 3, 4};
          int64_t nd = normalize_axis(dim, 3);
          is[size_t(nd)] = 6;  // the gathered dim may be longer than x's
          auto xv = sample(numel_of(xs), dt, 1);
          auto iv = index_values(numel_of(is), xs[size_t(nd)], 2);
          std::vector<double> want;
          std::vector<int64_t> idx(3, 0);
          do {
            auto src = idx;
            src[size_t(nd)] = int64_t(iv[size_t(flat_index(idx, is))]);
            want.push_back(xv[size_t(flat_index(src, xs))]);
          } while (next_index(idx, is));
          for (auto& [xn, x] : layouts(xv, xs, dt, dev))
            for (auto& [in, index] : layouts(iv, is, ix, dev)) {
              Tensor y = call1("gather", {x, index}, dim_attr(dim));
              ASSERT_EQ(y.shape(), is);
              ASSERT_EQ(y.dtype(), dt);
              EXPECT_EQ(host_values(y), want) << dt << " " << ix << " dim " << dim << " " << xn << "/" << in;
            }
        }
}

TEST(Gather, ExpandedEmptyAndErrors) {
  for (Device dev : devices()) {
    // x expanded along dim 0 (stride 0), index expanded along dim 1
    Tensor x = make_tensor({1, 2, 3}, {1, 3}, DType::f32, dev).expand({4, 3});
    Tensor index = make_tensor({2, 0, 1, 1}, {4, 1}, DType::i64, dev).expand({4, 2});
    EXPECT_EQ(host_values(call1("gather", {x, index}, dim_attr(1))),
              (std::vector<double>{3, 3, 1, 1, 2, 2, 2, 2}));
    Tensor empty_index = Tensor::zeros({0, 3}, DType::i64, dev);
    EXPECT_EQ(call1("gather", {x, empty_index}, dim_attr(0)).shape(), (Shape{0, 3}));

    Tensor a = make_tensor(sample(12, DType::f32, 3), {3, 4}, DType::f32, dev);
    Tensor bad = make_tensor({0, 4, 1}, {1, 3}, DType::i64, dev);
    EXPECT_THROW(call1("gather", {a, bad}, dim_attr(1)), IndexError);
    try {
      call1("gather", {a, bad}, dim_attr(1));
    } catch (const IndexError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("gather"), std::string::npos) << m;
      EXPECT_NE(m.find("index 4"), std::string::npos) << m;
      EXPECT_NE(m.find("[0, 4)"), std::string::npos) << m;
    }
    EXPECT_THROW(call1("gather", {a, make_tensor({-1}, {1, 1}, DType::i32, dev)}, dim_attr(0)), IndexError);
    EXPECT_THROW(call1("gather", {a, make_tensor({0}, {1, 1}, DType::f32, dev)}, dim_attr(0)), DTypeError);
    EXPECT_THROW(call1("gather", {a, make_tensor({0}, {1, 1}, DType::i8, dev)}, dim_attr(0)), DTypeError);
    EXPECT_THROW(call1("gather", {a, make_tensor({0}, {1, 1}, DType::i64, dev)}, dim_attr(2)), IndexError);
    EXPECT_THROW(call1("gather", {a, make_tensor({0}, {1, 1}, DType::i64, dev)}, dim_attr(-3)), IndexError);
    EXPECT_THROW(call1("gather", {a, make_tensor({0}, {1}, DType::i64, dev)}, dim_attr(0)), ShapeError);
    EXPECT_THROW(call1("gather", {a, Tensor::zeros({1, 5}, DType::i64, dev)}, dim_attr(0)), ShapeError);
  }
}

TEST(IndexSelect, MatchesReferenceAllDTypes) {
  for (Device dev : devices())
    for (DType dt : all_dtypes)
      for (DType ix : {DType::i64, DType::i32})
        for (int64_t dim : {0, 1, -1}) {
          Shape xs{3, 4, 5};
          int64_t nd = normalize_axis(dim, 3);
          auto xv = sample(60, dt, 4);
          auto iv = index_values(7, xs[size_t(nd)], 5);
          Shape ys = xs;
          ys[size_t(nd)] = 7;
          std::vector<double> want;
          std::vector<int64_t> idx(3, 0);
          do {
            auto src = idx;
            src[size_t(nd)] = int64_t(iv[size_t(idx[size_t(nd)])]);
            want.push_back(xv[size_t(flat_index(src, xs))]);
          } while (next_index(idx, ys));
          for (auto& [xn, x] : layouts(xv, xs, dt, dev))
            for (auto& [in, index] : layouts(iv, {7}, ix, dev)) {
              Tensor y = call1("index_select", {x, index}, dim_attr(dim));
              ASSERT_EQ(y.shape(), ys);
              EXPECT_EQ(host_values(y), want) << dt << " dim " << dim << " " << xn << "/" << in;
            }
        }
}

TEST(IndexSelect, ScalarEmptyAndErrors) {
  for (Device dev : devices()) {
    Tensor x = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f64, dev);
    EXPECT_EQ(host_values(call1("index_select", {x, make_tensor({2}, {}, DType::i64, dev)}, dim_attr(1))),
              (std::vector<double>{3, 6}));
    EXPECT_EQ(call1("index_select", {x, Tensor::zeros({0}, DType::i64, dev)}, dim_attr(0)).shape(),
              (Shape{0, 3}));
    EXPECT_THROW(call1("index_select", {x, make_tensor({3}, {1}, DType::i64, dev)}, dim_attr(1)), IndexError);
    EXPECT_THROW(call1("index_select", {x, make_tensor({-1}, {1}, DType::i64, dev)}, dim_attr(1)),
                 IndexError);
    EXPECT_THROW(call1("index_select", {x, Tensor::zeros({1, 1}, DType::i64, dev)}, dim_attr(0)), ShapeError);
    EXPECT_THROW(call1("index_select", {x, Tensor::zeros({1}, DType::u8, dev)}, dim_attr(0)), DTypeError);
    EXPECT_THROW(call1("index_select", {x, Tensor::zeros({1}, DType::i64, dev)}, dim_attr(2)), IndexError);
  }
}

TEST(ScatterAdd, MatchesReferenceNumericDTypes) {
  for (Device dev : devices())
    for (DType dt : all_dtypes) {
      if (dt == DType::boolean) continue;
      for (DType ix : {DType::i64, DType::i32})
        for (int64_t dim : {0, 1, -1}) {
          // index smaller than x outside dim and smaller than src everywhere
          Shape xs{4, 5, 3}, is{3, 4, 2}, ss{3, 5, 3};
          int64_t nd = normalize_axis(dim, 3);
          is[size_t(nd)] = 5;
          ss[size_t(nd)] = 6;
          auto xv = small_ints(numel_of(xs), dt, 6, -8, 8), sv = small_ints(numel_of(ss), dt, 7, -8, 8);
          auto iv = index_values(numel_of(is), xs[size_t(nd)], 8);  // with collisions
          std::vector<double> want = xv;
          std::vector<int64_t> idx(3, 0);
          do {
            auto dst = idx;
            dst[size_t(nd)] = int64_t(iv[size_t(flat_index(idx, is))]);
            want[size_t(flat_index(dst, xs))] += sv[size_t(flat_index(idx, ss))];
          } while (next_index(idx, is));
          for (auto& [sn, src] : layouts(sv, ss, dt, dev)) {
            Tensor x = make_tensor(xv, xs, dt, dev);
            Tensor y = call1("scatter_add", {x, make_tensor(iv, is, ix, dev), src}, dim_attr(dim));
            ASSERT_EQ(y.shape(), xs);
            ASSERT_EQ(y.dtype(), dt);
            EXPECT_EQ(host_values(y), want) << dt << " dim " << dim << " " << sn;
            EXPECT_EQ(host_values(x), xv) << "scatter_add must not modify x";
          }
        }
    }
}

TEST(ScatterAdd, PromotionEmptyAndErrors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({3}, DType::f32, dev);
    Tensor index = make_tensor({0, 2, 0}, {3}, DType::i64, dev);
    Tensor src = make_tensor({0.25, 0.5, 1e-10}, {3}, DType::f64, dev);
    Tensor y = call1("scatter_add", {x, index, src}, dim_attr(0));
    EXPECT_EQ(y.dtype(), DType::f64);
    expect_close(host_values(y), {0.25 + 1e-10, 0, 0.5}, 1e-15, 0, "promoted scatter_add");
    Tensor e = call1("scatter_add", {x, Tensor::zeros({0}, DType::i64, dev), src}, dim_attr(0));
    EXPECT_EQ(host_values(e), (std::vector<double>{0, 0, 0}));
    EXPECT_THROW(call1("scatter_add", {x, make_tensor({3}, {1}, DType::i64, dev), src}, dim_attr(0)),
                 IndexError);
    EXPECT_THROW(call1("scatter_add", {x, index.to(DType::f32), src}, dim_attr(0)), DTypeError);
    Tensor b = Tensor::zeros({3}, DType::boolean, dev);
    EXPECT_THROW(call1("scatter_add", {b, index, b}, dim_attr(0)), DTypeError);
    EXPECT_THROW(call1("scatter_add", {x, index, Tensor::zeros({2}, DType::f32, dev)}, dim_attr(0)),
                 ShapeError);
    EXPECT_THROW(call1("scatter_add", {x, index, Tensor::zeros({3, 1}, DType::f32, dev)}, dim_attr(0)),
                 ShapeError);
    EXPECT_THROW(call1("scatter_add", {x, index, src}, dim_attr(1)), IndexError);
  }
}

TEST(IndexAdd, MatchesReferenceNumericDTypes) {
  for (Device dev : devices())
    for (DType dt : all_dtypes) {
      if (dt == DType::boolean) continue;
      double alpha = is_floating(dt) ? 0.5 : 2.0;
      for (int64_t dim : {0, 1, -1}) {
        Shape xs{3, 4, 5};
        int64_t nd = normalize_axis(dim, 3);
        Shape ss = xs;
        ss[size_t(nd)] = 6;
        auto xv = small_ints(numel_of(xs), dt, 9, -8, 8), sv = small_ints(numel_of(ss), dt, 10, -8, 8);
        if (dt == DType::u8)
          for (auto& v : sv) v = std::floor(v / 4);  // keep u8 sums in range
        auto iv = index_values(6, xs[size_t(nd)], 11);
        std::vector<double> want = xv;
        std::vector<int64_t> idx(3, 0);
        do {
          auto dst = idx;
          dst[size_t(nd)] = int64_t(iv[size_t(idx[size_t(nd)])]);
          want[size_t(flat_index(dst, xs))] += alpha * sv[size_t(flat_index(idx, ss))];
        } while (next_index(idx, ss));
        for (auto& [sn, src] : layouts(sv, ss, dt, dev)) {
          Tensor y =
              call1("index_add", {make_tensor(xv, xs, dt, dev), make_tensor(iv, {6}, DType::i32, dev), src},
                    {{"dim", dim}, {"alpha", alpha}});
          EXPECT_EQ(host_values(y), want) << dt << " dim " << dim << " " << sn;
        }
      }
    }
}

TEST(IndexAdd, Errors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({3, 2}, DType::i32, dev);
    Tensor index = make_tensor({0, 2}, {2}, DType::i64, dev);
    Tensor src = Tensor::ones({2, 2}, DType::i32, dev);
    EXPECT_EQ(host_values(call1("index_add", {x, index, src}, dim_attr(0))),
              (std::vector<double>{1, 1, 0, 0, 1, 1}));
    EXPECT_THROW(call1("index_add", {x, index, src}, {{"dim", int64_t(0)}, {"alpha", 0.5}}), ValueError);
    EXPECT_THROW(call1("index_add", {x, index, Tensor::ones({3, 2}, DType::i32, dev)}, dim_attr(0)),
                 ShapeError);
    EXPECT_THROW(call1("index_add", {x, make_tensor({0, 3}, {2}, DType::i64, dev), src}, dim_attr(0)),
                 IndexError);
    EXPECT_THROW(call1("index_add", {x, index.reshape({1, 2}), src}, dim_attr(0)), ShapeError);
    EXPECT_THROW(call1("index_add", {x, index, src}, dim_attr(-3)), IndexError);
  }
}

TEST(Embedding, ForwardMatchesReference) {
  for (Device dev : devices())
    for (DType dt : {DType::f32, DType::f64, DType::f16, DType::bf16})
      for (DType ix : {DType::i64, DType::i32}) {
        auto wv = sample(35, dt, 12, -2, 2);
        auto iv = index_values(6, 7, 13);
        iv[0] = 2;  // the padding row is still looked up in the forward
        std::vector<double> want;
        for (double i : iv)
          for (int64_t d = 0; d < 5; ++d) want.push_back(wv[size_t(int64_t(i) * 5 + d)]);
        for (auto& [wn, w] : layouts(wv, {7, 5}, dt, dev))
          for (auto& [in, index] : layouts(iv, {2, 3}, ix, dev)) {
            Tensor y = call1("embedding", {w, index}, {{"padding_idx", int64_t(2)}});
            ASSERT_EQ(y.shape(), (Shape{2, 3, 5}));
            EXPECT_EQ(host_values(y), want) << dt << " " << wn << "/" << in;
          }
        Tensor w = make_tensor(wv, {7, 5}, dt, dev);
        EXPECT_EQ(call1("embedding", {w, Tensor::zeros({0, 4}, ix, dev)}).shape(), (Shape{0, 4, 5}));
      }
}

TEST(Embedding, BackwardMatchesReference) {
  for (Device dev : devices())
    for (DType dt : {DType::f32, DType::f64, DType::f16, DType::bf16})
      for (int64_t pad : {int64_t(-1), int64_t(2)}) {
        auto gv = sample(30, dt, 14, -2, 2);
        std::vector<double> iv{2, 0, 2, 6, 0, 2};  // duplicates, and the padding row
        std::vector<double> want(35, 0.0);
        for (size_t m = 0; m < iv.size(); ++m)
          if (int64_t(iv[m]) != pad)
            for (size_t d = 0; d < 5; ++d) want[size_t(iv[m]) * 5 + d] += gv[m * 5 + d];
        for (auto& [gn, g] : layouts(gv, {6, 5}, dt, dev)) {
          Tensor gw =
              call1("embedding_backward", {g.reshape({2, 3, 5}), make_tensor(iv, {2, 3}, DType::i64, dev)},
                    {{"num_weights", int64_t(7)}, {"padding_idx", pad}});
          ASSERT_EQ(gw.shape(), (Shape{7, 5}));
          expect_close(host_values(gw), want, tolerance(dt), tolerance(dt), "embedding_backward " + gn);
        }
      }
}

TEST(Embedding, Errors) {
  for (Device dev : devices()) {
    Tensor w = Tensor::ones({4, 3}, DType::f32, dev);
    EXPECT_THROW(call1("embedding", {w, make_tensor({4}, {1}, DType::i64, dev)}), IndexError);
    EXPECT_THROW(call1("embedding", {w, make_tensor({-1}, {1}, DType::i64, dev)}), IndexError);
    EXPECT_THROW(call1("embedding", {w, make_tensor({1}, {1}, DType::f32, dev)}), DTypeError);
    EXPECT_THROW(call1("embedding", {w.to(DType::i32), make_tensor({1}, {1}, DType::i64, dev)}), DTypeError);
    EXPECT_THROW(
        call1("embedding", {Tensor::ones({4}, DType::f32, dev), Tensor::zeros({1}, DType::i64, dev)}),
        ShapeError);
    EXPECT_THROW(call1("embedding", {w, Tensor::zeros({1}, DType::i64, dev)}, {{"padding_idx", int64_t(4)}}),
                 ValueError);
    Tensor g = Tensor::ones({2, 3}, DType::f32, dev);
    Tensor i = make_tensor({0, 5}, {2}, DType::i64, dev);
    EXPECT_THROW(call1("embedding_backward", {g, i}, {{"num_weights", int64_t(5)}}), IndexError);
    EXPECT_THROW(call1("embedding_backward", {g, i}, {{"num_weights", int64_t(-1)}}), ValueError);
    EXPECT_THROW(call1("embedding_backward", {Tensor::ones({3, 3}, DType::f32, dev), i},
                       {{"num_weights", int64_t(6)}}),
                 ShapeError);
  }
}

TEST(Indexing, LargeTensorsSplitAcrossThreads) {
  for (Device dev : devices()) {
    // gather over 150k outputs; the first bad index is reported even when several chunks see one
    Shape xs{300, 400}, is{300, 500};
    auto xv = sample(numel_of(xs), DType::f32, 80);
    auto iv = index_values(numel_of(is), 400, 81);
    std::vector<double> want;
    for (int64_t i = 0; i < numel_of(is); ++i)
      want.push_back(xv[size_t(i / 500 * 400 + int64_t(iv[size_t(i)]))]);
    Tensor x = make_tensor(xv, xs, DType::f32, dev);
    EXPECT_EQ(host_values(call1("gather", {x, make_tensor(iv, is, DType::i64, dev)}, dim_attr(1))), want);
    iv[100000] = 400;
    iv[140000] = -5;
    try {
      call1("gather", {x, make_tensor(iv, is, DType::i32, dev)}, dim_attr(1));
      ADD_FAILURE() << "expected IndexError";
    } catch (const IndexError& e) {
      EXPECT_NE(std::string(e.what()).find("index 400 at position 100000"), std::string::npos) << e.what();
    }

    // scatter_add and index_add with many collisions
    auto sv = small_ints(64 * 2000, DType::f64, 82, -8, 8);
    auto si = index_values(64 * 2000, 50, 83);
    std::vector<double> sa(64 * 50, 0.0);
    for (int64_t i = 0; i < 64 * 2000; ++i)
      sa[size_t(i / 2000 * 50 + int64_t(si[size_t(i)]))] += sv[size_t(i)];
    Tensor y = call1("scatter_add",
                     {Tensor::zeros({64, 50}, DType::f64, dev), make_tensor(si, {64, 2000}, DType::i64, dev),
                      make_tensor(sv, {64, 2000}, DType::f64, dev)},
                     dim_attr(1));
    EXPECT_EQ(host_values(y), sa);
    auto ai = index_values(2000, 100, 84);
    auto av = small_ints(2000 * 300, DType::i32, 85, -8, 8);
    std::vector<double> ia(100 * 300, 0.0);
    for (int64_t k = 0; k < 2000; ++k)
      for (int64_t j = 0; j < 300; ++j)
        ia[size_t(int64_t(ai[size_t(k)]) * 300 + j)] += av[size_t(k * 300 + j)];
    Tensor z = call1("index_add",
                     {Tensor::zeros({100, 300}, DType::i32, dev), make_tensor(ai, {2000}, DType::i64, dev),
                      make_tensor(av, {2000, 300}, DType::i32, dev)},
                     dim_attr(0));
    EXPECT_EQ(host_values(z), ia);

    // embedding forward and backward
    auto wv = sample(500 * 64, DType::f32, 86, -1, 1);
    auto ev = index_values(20000, 500, 87);
    Tensor e = call1("embedding", {make_tensor(wv, {500, 64}, DType::f32, dev),
                                   make_tensor(ev, {20000}, DType::i64, dev)});
    auto got = host_values(e);
    bool same = true;
    for (int64_t m = 0; m < 20000; ++m)
      for (int64_t d = 0; d < 64; ++d)
        same &= got[size_t(m * 64 + d)] == wv[size_t(int64_t(ev[size_t(m)]) * 64 + d)];
    EXPECT_TRUE(same);
    auto gv = small_ints(20000 * 64, DType::f32, 88, -4, 4);
    std::vector<double> gw(500 * 64, 0.0);
    for (int64_t m = 0; m < 20000; ++m)
      for (int64_t d = 0; d < 64; ++d) gw[size_t(int64_t(ev[size_t(m)]) * 64 + d)] += gv[size_t(m * 64 + d)];
    Tensor g =
        call1("embedding_backward",
              {make_tensor(gv, {20000, 64}, DType::f32, dev), make_tensor(ev, {20000}, DType::i64, dev)},
              {{"num_weights", int64_t(500)}});
    EXPECT_EQ(host_values(g), gw);
  }
}
