#include "test_util.h"

using namespace oar;

TEST(Smoke, AddOnCpu) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}, Device::cpu());
  Tensor b = Tensor::from_vector<float>({10, 20}, {2}, Device::cpu());
  Tensor c = call1("add", {a, b});
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{11, 22, 13, 24}));
  Tensor s = call1("sum", {c}, {{"dims", std::vector<int64_t>{0}}});
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{24, 46}));
  Tensor t = a.t().contiguous();
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
}
