// matmul against a double-precision loop over the definition, on every float
// dtype, with broadcast batch dims, transposed / sliced / expanded operands
// (read in place or copied by the kernel), a strided output, K = 0, ranks
// beyond oneDNN's limit (reference kernel in f32), and typed errors.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// out[b..., m, n] = sum_k a[b..., m, k] * b[b..., k, n], batch dims broadcast.
std::vector<double> ref_matmul(const Tensor& a, const Tensor& b, Shape* out_shape) {
  std::vector<double> av = host_values(a), bv = host_values(b);
  const Shape &as = a.shape(), &bs = b.shape();
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  Shape batch = broadcast_shapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2));
  *out_shape = batch;
  out_shape->push_back(M);
  out_shape->push_back(N);
  // Offset of a batch index into an operand's contiguous values.
  auto offset = [&](const Shape& s, const std::vector<int64_t>& idx) {
    int64_t off = 0, stride = s[s.size() - 2] * s.back();
    for (size_t i = s.size() - 2, j = idx.size(); i-- > 0;) {
      --j;
      if (s[i] != 1) off += idx[j] * stride;
      stride *= s[i];
    }
    return off;
  };
  std::vector<double> out;
  std::vector<int64_t> idx(batch.size(), 0);
  do {
    int64_t oa = offset(as, idx), ob = offset(bs, idx);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += av[size_t(oa + m * K + k)] * bv[size_t(ob + k * N + n)];
        out.push_back(acc);
      }
  } while (!batch.empty() && next_index(idx, batch));
  return out;
}

void check(const Tensor& a, const Tensor& b, const std::string& what) {
  Shape shape;
  std::vector<double> want = ref_matmul(a, b, &shape);
  Tensor y = call1("matmul", {a, b});
  ASSERT_EQ(y.shape(), shape) << what;
  ASSERT_EQ(y.dtype(), a.dtype()) << what;
  double tol = tolerance(a.dtype());
  double k = double(a.shape().back());
  expect_close(host_values(y), want, tol, tol * (1 + std::sqrt(k)), what + " " + dtype_name(a.dtype()));
}

Tensor rand(const Shape& s, DType d, Device dev, uint32_t seed) {
  return make_tensor(random_values(numel_of(s), -1, 1, seed, d), s, d, dev);
}

}  // namespace

TEST(NNMatmul, Plain2DAllDTypes) {
  for (Device dev : devices())
    for (DType d : kFloatTypes) {
      check(rand({5, 7}, d, dev, 1), rand({7, 3}, d, dev, 2), "5x7 @ 7x3");
      check(rand({1, 16}, d, dev, 3), rand({16, 1}, d, dev, 4), "row @ column");
      check(rand({33, 64}, d, dev, 5), rand({64, 17}, d, dev, 6), "33x64 @ 64x17");
    }
}

TEST(NNMatmul, BatchBroadcast) {
  for (Device dev : devices())
    for (DType d : kFloatTypes) {
      check(rand({2, 1, 4, 6}, d, dev, 7), rand({3, 6, 5}, d, dev, 8), "[2,1,4,6] @ [3,6,5]");
      check(rand({3, 4, 6}, d, dev, 9), rand({6, 5}, d, dev, 10), "3-D @ 2-D");
      check(rand({4, 6}, d, dev, 11), rand({2, 3, 6, 5}, d, dev, 12), "2-D @ 4-D");
      check(rand({2, 1, 3, 1, 2, 4}, d, dev, 13), rand({1, 5, 1, 2, 4, 3}, d, dev, 14), "6-D broadcast");
    }
}

TEST(NNMatmul, TransposedAndSlicedOperands) {
  for (Device dev : devices())
    for (DType d : kFloatTypes) {
      Tensor at = rand({7, 5}, d, dev, 15).t();                 // [5, 7] column-major
      Tensor bt = rand({3, 7}, d, dev, 16).t();                 // [7, 3] column-major
      ASSERT_FALSE(at.is_contiguous());
      check(at, rand({7, 3}, d, dev, 17), "a.t() @ b");
      check(rand({5, 7}, d, dev, 18), bt, "a @ b.t()");
      check(at, bt, "a.t() @ b.t()");
      Tensor a3 = rand({4, 6, 5}, d, dev, 19).transpose(-1, -2);  // [4, 5, 6]
      Tensor b3 = rand({4, 3, 6}, d, dev, 20).transpose(-1, -2);  // [4, 6, 3]
      check(a3, b3, "batched transposes");
      Tensor wide = rand({5, 20}, d, dev, 21);
      check(wide.slice(1, 2, 9), rand({7, 3}, d, dev, 22), "row slice with leading dimension 20");
      check(rand({6, 5, 9}, d, dev, 23).slice(0, 0, 6, 2), rand({9, 4}, d, dev, 24), "batch step 2");
      // No unit stride in either matrix dim: the kernel copies.
      Tensor stepped = rand({10, 14}, d, dev, 25).slice(0, 0, 10, 2).slice(1, 0, 14, 2);  // [5, 7]
      check(stepped, rand({7, 3}, d, dev, 26), "stepped rows and columns");
      Tensor batch_t = rand({5, 4, 7}, d, dev, 27).transpose(0, 1);  // [4, 5, 7], batch stride 7
      check(batch_t, rand({4, 7, 2}, d, dev, 28), "permuted batch");
    }
}

TEST(NNMatmul, ExpandedOperands) {
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::f64}) {
      Tensor a = rand({1, 4, 6}, d, dev, 29).expand({3, 4, 6});
      check(a, rand({3, 6, 5}, d, dev, 30), "expanded a batch");
      Tensor b = rand({6, 5}, d, dev, 31).unsqueeze(0).expand({3, 6, 5});
      check(a, b, "both expanded");
      Tensor rows = rand({1, 6}, d, dev, 32).expand({4, 6});  // row stride 0
      check(rows, rand({6, 2}, d, dev, 33), "expanded rows");
    }
}

TEST(NNMatmul, EmptyInnerDimAndManyDims) {
  for (Device dev : devices())
    for (DType d : kFloatTypes) {
      Tensor y = call1("matmul", {Tensor::zeros({3, 0}, d, dev), Tensor::zeros({0, 4}, d, dev)});
      EXPECT_EQ(y.shape(), (Shape{3, 4}));
      EXPECT_EQ(host_values(y), std::vector<double>(12, 0.0));
      Tensor e = call1("matmul", {Tensor::zeros({0, 3}, d, dev), Tensor::zeros({3, 4}, d, dev)});
      EXPECT_EQ(e.shape(), (Shape{0, 4}));
      // 13 dims exceed oneDNN's limit: the reference kernel serves f32 too.
      Shape big(11, 1);
      big.push_back(2);
      big.push_back(3);
      big.push_back(4);
      check(rand(big, d, dev, 34), rand({4, 5}, d, dev, 35), "13-D");
    }
}

TEST(NNMatmul, StridedOutputAndPromotion) {
  for (Device dev : devices()) {
    Tensor a = rand({5, 7}, DType::f32, dev, 36), b = rand({7, 3}, DType::f32, dev, 37);
    Shape shape;
    std::vector<double> want = ref_matmul(a, b, &shape);
    Tensor out = Tensor::empty({3, 5}, DType::f32, dev).t();  // [5, 3] column-major
    call_out(OpRegistry::instance().get("matmul"), {a, b}, {}, {out});
    expect_close(host_values(out), want, 1e-5, 1e-5, "transposed output");
    Tensor y = call1("matmul", {a, b.to(DType::f64)});
    EXPECT_EQ(y.dtype(), DType::f64);
    expect_close(host_values(y), want, 1e-12, 1e-12, "f32 @ f64 promotes");
  }
}

TEST(NNMatmul, RepeatedCallsAreStable) {
  for (Device dev : devices()) {
    Tensor a = rand({64, 48}, DType::f32, dev, 38), b = rand({48, 32}, DType::f32, dev, 39);
    std::vector<double> first = host_values(call1("matmul", {a, b}));
    for (int i = 0; i < 5; ++i) EXPECT_EQ(host_values(call1("matmul", {a, b})), first);
    // A column-major operand may take another GEMM kernel (cuBLAS picks by
    // layout, summing in another order: seen on an H200), so it matches to
    // rounding, not bit for bit; repeating one layout stays bitwise.
    std::vector<double> strided = host_values(call1("matmul", {a.t().contiguous().t(), b}));
    expect_close(strided, first, 1e-5, 1e-5, "column-major operand");
    for (int i = 0; i < 3; ++i) EXPECT_EQ(host_values(call1("matmul", {a.t().contiguous().t(), b})), strided);
  }
}

// Integer products are exact (summed in i64, as PyTorch's CPU matmul), batch dims broadcast.
TEST(NNMatmul, IntegersMultiplyExactly) {
  for (Device dev : devices())
    for (DType dt : {DType::i64, DType::i32, DType::u8}) {
      Tensor a = make_tensor({1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5}, {2, 2, 3}, dt, dev);
      Tensor b = make_tensor({7, 8, 9, 10, 11, 12}, {3, 2}, dt, dev);
      Tensor y = call1("matmul", {a, b});
      EXPECT_EQ(y.dtype(), dt) << dev.str();
      EXPECT_EQ(host_values(y), (std::vector<double>{58, 64, 139, 154, 31, 34, 112, 124})) << dev.str();
    }
}

TEST(NNMatmul, Errors) {
  for (Device dev : devices()) {
    Tensor a = Tensor::zeros({3, 4}, DType::f32, dev);
    EXPECT_THROW(call1("matmul", {a, Tensor::zeros({5, 2}, DType::f32, dev)}), ShapeError);
    EXPECT_THROW(call1("matmul", {a, Tensor::zeros({4}, DType::f32, dev)}), ShapeError);
    EXPECT_THROW(call1("matmul", {Tensor::zeros({2, 3, 4}, DType::f32, dev), Tensor::zeros({3, 4, 2}, DType::f32, dev)}),
                 ShapeError);
    EXPECT_THROW(call1("matmul", {a.to(DType::boolean), Tensor::zeros({4, 2}, DType::boolean, dev)}), DTypeError);
    try {
      call1("matmul", {a, Tensor::zeros({5, 2}, DType::f32, dev)});
    } catch (const ShapeError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("[3, 4]"), std::string::npos) << msg;
      EXPECT_NE(msg.find("[5, 2]"), std::string::npos) << msg;
    }
  }
}
