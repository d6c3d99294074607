// oar::<op> (oar/ops.h) is generated from the op catalog at build time: every
// public catalog op is a C++ function, with the catalog's attribute defaults,
// and none is written by hand. Values are checked against direct formulas.
#include <cmath>
#include <set>

#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

TEST(FrontendOps, EveryPublicCatalogOpIsAFunction) {
  std::set<std::string> generated;
  for (const auto& f : op_functions()) generated.insert(f.op);
  std::vector<std::string> missing, internal;
  for (const auto& op : OpRegistry::instance().all()) {
    bool is_public = op->role == OpRole::kPublic;
    if (is_public && !generated.count(op->name)) missing.push_back(op->name);
    if (!is_public && generated.count(op->name)) internal.push_back(op->name);
  }
  EXPECT_TRUE(missing.empty()) << "public catalog ops without oar::<op>: " << ::testing::PrintToString(missing);
  EXPECT_TRUE(internal.empty()) << "backward kernels or fusions exposed as oar::<op>: "
                                << ::testing::PrintToString(internal);
  EXPECT_GE(generated.size(), 90u);
}

TEST(FrontendOps, DefOnlyOpIsAFunctionWithItsGradient) {
  // softsign is one line of kernel_primitives' unary_ops.def and nothing else.
  std::vector<double> v{-3.0, -0.5, 0.0, 0.25, 4.0};
  for (Device dev : devices()) {
    Tensor x = make_tensor(v, {5}, DType::f64, dev);
    x.set_requires_grad(true);
    Tensor y = softsign(x);
    sum(y).backward();
    std::vector<double> want, dwant;
    for (double e : v) want.push_back(e / (1 + std::fabs(e))), dwant.push_back(1 / std::pow(1 + std::fabs(e), 2));
    expect_close(host_values(y), want, 1e-12, 1e-12, "softsign on " + dev.str());
    expect_close(host_values(x.grad()), dwant, 1e-12, 1e-12, "softsign' on " + dev.str());
  }
}

TEST(FrontendOps, AttributesTakeTheCatalogDefaults) {
  Tensor x = make_tensor({-2.0, 0.5, 3.0, 1.0, -1.0, 0.0}, {2, 3}, DType::f32, Device::cpu());
  EXPECT_EQ(host_values(clamp(x)), host_values(x));  // min -inf, max +inf
  EXPECT_EQ(host_values(clamp(x, -1.0, 1.0)), (std::vector<double>{-1, 0.5, 1, 1, -1, 0}));
  EXPECT_EQ(host_values(leaky_relu(x)), (std::vector<double>{-2.0f * 0.01f, 0.5, 3, 1, -0.01f, 0}));
  EXPECT_EQ(host_values(sum(x)), (std::vector<double>{1.5}));
  Tensor s = sum(x, {1}, true);
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  EXPECT_EQ(host_values(s), (std::vector<double>{1.5, 0}));
  EXPECT_EQ(host_values(select(x, 1, 2)), (std::vector<double>{3, 0}));
  Tensor a = arange(0, 4);
  EXPECT_EQ(a.dtype(), DType::i64);
  EXPECT_EQ(host_values(a), (std::vector<double>{0, 1, 2, 3}));
}

TEST(FrontendOps, ListsCreationAndSeveralOutputs) {
  Tensor a = make_tensor({1, 2, 3, 4}, {2, 2}, DType::f32, Device::cpu());
  Tensor b = make_tensor({5, 6}, {2, 1}, DType::f32, Device::cpu());
  Tensor c = concat({a, b}, 1);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(host_values(c), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  std::vector<Tensor> parts = split(c, {2, 1}, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(host_values(parts[1]), (std::vector<double>{5, 6}));
  for (Device dev : devices()) {
    Tensor u = uniform({100}, 2.0, 3.0, DType::f32, 7, 0, dev);
    EXPECT_EQ(u.device(), dev);
    for (double e : host_values(u)) EXPECT_TRUE(e >= 2.0 && e < 3.0) << e;
    EXPECT_EQ(host_values(uniform({100}, 2.0, 3.0, DType::f32, 7, 0, dev)), host_values(u));  // seeded
  }
}

TEST(FrontendOps, MatchesTheHandWrittenFunctional) {
  Tensor img = make_tensor(random_values(2 * 5 * 5, -1, 1, 3), {1, 2, 5, 5}, DType::f32, Device::cpu());
  Tensor w = make_tensor(random_values(3 * 2 * 3 * 3, -1, 1, 4), {3, 2, 3, 3}, DType::f32, Device::cpu());
  Tensor want = nn::functional::conv2d(img, w, Tensor(), 1, 1);
  expect_close(host_values(conv2d(img, w, Tensor(), {1, 1}, {1, 1})), host_values(want), 1e-6, 1e-6, "conv2d");
}

}  // namespace

// The composites and bitwise ops as a C++ user calls them: a small attention
// score with einsum, a stable softmax denominator with logsumexp, label
// statistics with unique and bincount, a segment max with scatter_reduce, and
// bit masks on integer ids. Values against direct formulas.
TEST(FrontendOps, CompositesAndBitwiseOpsAsAUserWritesThem) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor q = make_tensor({1, 0, 0, 1, 1, 1}, {1, 2, 3}, DType::f32, dev);  // [batch, query, dim]
    Tensor k = make_tensor({1, 2, 3, 0, 0, 1}, {1, 2, 3}, DType::f32, dev);  // [batch, key, dim]
    Tensor scores = einsum({q, k}, "bqd,bkd->bqk");
    EXPECT_EQ(scores.shape(), (Shape{1, 2, 2}));
    EXPECT_EQ(host_values(scores), (std::vector<double>{1, 0, 6, 1}));
    Tensor lse = logsumexp(scores, {-1});
    EXPECT_NEAR(host_values(lse)[1], std::log(std::exp(6.0) + std::exp(1.0)), 1e-5);
    EXPECT_EQ(host_values(flip(scores, {2})), (std::vector<double>{0, 1, 1, 6}));

    Tensor labels = make_tensor({3, 1, 3, 0, 1, 3}, {6}, DType::i64, dev);
    auto u = unique(labels);  // values, inverse, counts
    EXPECT_EQ(host_values(u[0]), (std::vector<double>{0, 1, 3}));
    EXPECT_EQ(host_values(u[2]), (std::vector<double>{1, 2, 3}));
    EXPECT_EQ(host_values(bincount(labels, Tensor())), (std::vector<double>{1, 2, 0, 3}));
    // Positions of the odd labels.
    Tensor odd = nonzero(bitwise_and(labels, make_tensor({1}, {}, DType::i64, dev)));
    EXPECT_EQ(odd.shape(), (Shape{5, 1}));
    EXPECT_EQ(host_values(odd), (std::vector<double>{0, 1, 2, 4, 5}));

    Tensor values = make_tensor({0.5, -1, 2, 7, 3, -4}, {6}, DType::f32, dev);
    Tensor segment_max = scatter_reduce(Tensor::full({4}, -100, DType::f32, dev), labels, values, 0, "amax", false);
    EXPECT_EQ(host_values(segment_max), (std::vector<double>{7, 3, -100, 2}));

    Tensor ids = make_tensor({5, 12, 255, 1024}, {4}, DType::i64, dev);
    Tensor low = bitwise_and(ids, make_tensor({0xff}, {}, DType::i64, dev));
    EXPECT_EQ(host_values(low), (std::vector<double>{5, 12, 255, 0}));
    EXPECT_EQ(host_values(bitwise_right_shift(ids, make_tensor({2}, {}, DType::i64, dev))),
              (std::vector<double>{1, 3, 63, 256}));
    EXPECT_EQ(host_values(bitwise_not(make_tensor({0, -1}, {2}, DType::i32, dev))), (std::vector<double>{-1, 0}));
  }
}
