// Zero-copy views share storage and index like NumPy; contiguous() and
// clone() copy; invalid views raise typed errors naming the shapes.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {
Tensor iota(const Shape& shape, Device dev, DType dt = DType::f32) {
  std::vector<double> v(size_t(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  return make_tensor(v, shape, dt, dev);
}
}  // namespace

TEST(TensorViews, ViewsShareStorageAndIndexCorrectly) {
  for (Device dev : devices()) {
    Tensor x = iota({2, 3, 4}, dev);
    Tensor t = x.transpose(0, 2);  // [4,3,2]
    EXPECT_TRUE(t.storage() == x.storage());
    EXPECT_FALSE(t.is_contiguous());
    std::vector<double> want;
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 2; ++i) want.push_back(i * 12 + j * 4 + k);
    EXPECT_EQ(host_values(t), want);
    Tensor tc = t.contiguous();
    EXPECT_TRUE(tc.is_contiguous());
    EXPECT_FALSE(tc.storage() == x.storage());
    EXPECT_EQ(host_values(tc), want);

    Tensor p = x.permute({1, 2, 0});  // [3,4,2]
    EXPECT_EQ(p.shape(), (Shape{3, 4, 2}));
    EXPECT_EQ(host_values(p)[1], 12);

    Tensor s = x.slice(2, 1, 4, 2);  // [2,3,2] cols 1,3
    EXPECT_EQ(host_values(s), (std::vector<double>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}));
    EXPECT_EQ(host_values(x.slice(0, -1, 100)), host_values(x.select(0, 1).unsqueeze(0)));
    EXPECT_EQ(host_values(x.select(1, -1)), (std::vector<double>{8, 9, 10, 11, 20, 21, 22, 23}));
    EXPECT_EQ(host_values(x.narrow(2, 2, 2).select(0, 0).select(0, 0)), (std::vector<double>{2, 3}));

    Tensor r = x.reshape({6, -1});
    EXPECT_EQ(r.shape(), (Shape{6, 4}));
    EXPECT_TRUE(r.storage() == x.storage());
    Tensor tr = t.reshape({-1});  // non-viewable: copies
    EXPECT_EQ(host_values(tr), want);
    EXPECT_THROW(t.view({-1}), ShapeError);
    // a view that is possible on a non-contiguous tensor: split a transposed dim
    Tensor xt = iota({4, 6}, dev).t();  // [6,4]
    Tensor v = xt.view({2, 3, 4});
    EXPECT_TRUE(v.storage() == xt.storage());
    EXPECT_EQ(host_values(v), host_values(xt));

    Tensor e = iota({3, 1}, dev).expand({2, 3, 4});
    EXPECT_EQ(e.strides()[0], 0);
    EXPECT_EQ(host_values(e)[5], 1);
    EXPECT_EQ(host_values(e.contiguous()), host_values(e));
    EXPECT_THROW(iota({3, 2}, dev).expand({3, 4}), ShapeError);

    Tensor u = iota({3}, dev).unsqueeze(0).unsqueeze(-1);
    EXPECT_EQ(u.shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(u.squeeze().shape(), (Shape{3}));
    EXPECT_EQ(u.squeeze(0).shape(), (Shape{3, 1}));
    EXPECT_EQ(u.squeeze(1).shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(iota({2, 3, 4}, dev).flatten(1).shape(), (Shape{2, 12}));

    // writes through a view are visible in the base
    Tensor base = Tensor::zeros({2, 3}, DType::f32, dev);
    base.select(1, 1).copy_(make_tensor({5, 6}, {2}, DType::f32, dev));
    EXPECT_EQ(host_values(base), (std::vector<double>{0, 5, 0, 0, 6, 0}));
    Tensor c = base.clone();
    c.copy_(Tensor::ones({}, DType::f32, dev));
    EXPECT_EQ(host_values(base)[1], 5);
    EXPECT_EQ(host_values(c), std::vector<double>(6, 1));
  }
}

TEST(TensorViews, ScalarsAndItem) {
  for (Device dev : devices()) {
    Tensor s = make_tensor({3.5}, {}, DType::f64, dev);
    EXPECT_EQ(s.dim(), 0);
    EXPECT_EQ(s.numel(), 1);
    EXPECT_EQ(s.item(), 3.5);
    EXPECT_EQ(s.unsqueeze(0).shape(), (Shape{1}));
    EXPECT_THROW(iota({2}, dev).item(), ValueError);
    EXPECT_EQ(Tensor::zeros({0, 4}, DType::f32, dev).numel(), 0);
  }
}

TEST(TensorViews, TypedErrors) {
  for (Device dev : devices()) {
    Tensor x = iota({2, 3}, dev);
    EXPECT_THROW(x.transpose(0, 2), IndexError);
    EXPECT_THROW(x.select(0, 2), IndexError);
    EXPECT_THROW(x.select(0, -3), IndexError);
    EXPECT_THROW(x.permute({0, 0}), ValueError);
    EXPECT_THROW(x.permute({0}), ShapeError);
    EXPECT_THROW(x.reshape({4, -1}), ShapeError);
    EXPECT_THROW(x.reshape({-1, -1}), ShapeError);
    EXPECT_THROW(x.slice(1, 0, 2, 0), ValueError);
    EXPECT_THROW(x.narrow(1, 2, 5), IndexError);
    EXPECT_THROW(x.as_strided({10}, {1}, 0), IndexError);
    EXPECT_THROW(x.t().t().unsqueeze(3), IndexError);
    EXPECT_THROW(Tensor::from_vector<float>({1, 2, 3}, {2, 2}, dev), ShapeError);
    EXPECT_THROW(Tensor().shape(), ValueError);
    try {
      x.reshape({4, 2});
      FAIL();
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find("[4, 2]"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("6"), std::string::npos) << e.what();
    }
  }
}

TEST(TensorViews, DeviceTransfers) {
  auto devs = devices();
  for (Device a : devs)
    for (Device b : devs) {
      Tensor x = iota({3, 4}, a, DType::i32).t();
      Tensor y = x.to(b);
      EXPECT_EQ(y.device(), b);
      EXPECT_EQ(host_values(y), host_values(x));
    }
}
