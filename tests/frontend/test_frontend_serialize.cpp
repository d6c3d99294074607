// State-dict serialization (oar::save / oar::load, docs/serialization.md):
// bit-identical round trips for every dtype (and 0-d, empty and
// non-contiguous tensors), module save/load, the documented header layout,
// atomic writes (no temporary left behind, the old file intact when the
// write fails), and an oar::IOError naming the file and the problem for
// truncated, foreign, newer-version and corrupted files.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;
namespace fs = std::filesystem;

namespace {

// A fresh directory per test, removed afterwards.
class FrontendSerialize : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("oar_serialize_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

std::vector<unsigned char> read_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& p, const std::vector<unsigned char>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// Raw bytes of a tensor's elements, for bit-exact comparison.
std::vector<unsigned char> raw(const Tensor& t) {
  std::vector<unsigned char> b(size_t(t.numel()) * t.itemsize());
  if (!b.empty()) t.copy_to_host(b.data(), t.dtype());
  return b;
}

StateDict sample() {
  StateDict sd;
  for (DType dt : all_dtypes) {
    auto v = random_values(6, -100, 100, uint32_t(dt) + 1, dt);
    sd.insert(std::string("t_") + dtype_name(dt), make_tensor(v, {2, 3}, dt, Device::cpu()));
  }
  std::vector<float> special = {0.0f, -0.0f, 1e-40f, std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(), 3.14159f};
  sd.insert("special", Tensor::from_vector(special, {6}));
  sd.insert("scalar", Tensor::full({}, 2.5, DType::f64));
  sd.insert("empty", Tensor::zeros({0, 4}));
  sd.insert("transposed", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).t());
  return sd;
}

template <class Fn>
std::string io_error_of(Fn fn) {
  try {
    fn();
  } catch (const IOError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

}  // namespace

TEST_F(FrontendSerialize, RoundTripIsBitIdentical) {
  StateDict sd = sample();
  oar::save(sd, path("a.oar"));
  StateDict back = oar::load(path("a.oar"));
  ASSERT_EQ(back.keys(), sd.keys());
  for (const auto& [name, t] : sd) {
    const Tensor& u = back[name];
    EXPECT_EQ(u.dtype(), t.dtype()) << name;
    EXPECT_EQ(u.shape(), t.shape()) << name;
    EXPECT_EQ(raw(u), raw(t)) << name;
  }
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.oar"})) << "no temporary file is left";
  // Header as documented: magic, version 1, entry count.
  auto bytes = read_bytes(path("a.oar"));
  ASSERT_GE(bytes.size(), 20u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "OARSTATE");
  EXPECT_EQ(bytes[8], 1);
  EXPECT_EQ(bytes[12], sd.size());
  // First entry: name_length 5, "t_f32", dtype code 0, ndim 2, shape [2, 3], 24 bytes.
  EXPECT_EQ(bytes[20], 5);
  EXPECT_EQ(std::string(bytes.begin() + 24, bytes.begin() + 29), "t_f32");
  EXPECT_EQ(bytes[29], 0);
  EXPECT_EQ(bytes[33], 2);
  EXPECT_EQ(bytes[37], 2);
  EXPECT_EQ(bytes[45], 3);
  EXPECT_EQ(bytes[53], 24);
}

TEST_F(FrontendSerialize, ModuleSaveLoad) {
  manual_seed(5);
  nn::Sequential a(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::Flatten(), nn::Linear(8, 3));
  a(make_tensor(random_values(32, -1, 1, 3), {2, 1, 4, 4}, DType::f32, Device::cpu()));  // moves running stats
  oar::save(a, path("m.oar"));
  manual_seed(6);
  nn::Sequential b(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::Flatten(), nn::Linear(8, 3));
  oar::load(b, path("m.oar"));
  auto sa = a->state_dict(), sb = b->state_dict();
  ASSERT_EQ(sa.keys(), sb.keys());
  for (const auto& [name, t] : sa) EXPECT_EQ(raw(sb[name]), raw(t)) << name;
  a->eval();
  b->eval();
  Tensor x = Tensor::ones({1, 1, 4, 4});
  EXPECT_EQ(raw(a(x)), raw(b(x)));
  // Loading into a different architecture names the problem.
  nn::Sequential other(nn::Linear(3, 3));
  EXPECT_THROW(oar::load(other, path("m.oar")), ValueError);
}

TEST_F(FrontendSerialize, FailedWriteKeepsOriginal) {
  const std::string p = path("keep.oar");
  StateDict first;
  first.insert("w", Tensor::ones({3}));
  oar::save(first, p);
  const auto original = read_bytes(p);
  // The temporary name is taken by a directory: creating the file fails.
  const std::string tmp = p + ".tmp." + std::to_string(::getpid());
  fs::create_directory(tmp);
  StateDict second;
  second.insert("w", Tensor::zeros({5}));
  std::string msg = io_error_of([&] { oar::save(second, p); });
  EXPECT_NE(msg.find(p), std::string::npos) << msg;
  EXPECT_EQ(read_bytes(p), original);
  fs::remove(tmp);
  // A directory that does not exist.
  msg = io_error_of([&] { oar::save(second, path("missing/dir/x.oar")); });
  EXPECT_NE(msg.find("missing/dir/x.oar"), std::string::npos) << msg;
  EXPECT_EQ(listing(), (std::vector<std::string>{"keep.oar"}));
  // Overwriting succeeds once the path is free again.
  oar::save(second, p);
  EXPECT_EQ(oar::load(p)["w"].shape(), (Shape{5}));
}

TEST_F(FrontendSerialize, CorruptFilesRaiseIOError) {
  const std::string good = path("good.oar");
  oar::save(sample(), good);
  const auto bytes = read_bytes(good);
  auto expect_io = [&](const std::string& name, const std::vector<unsigned char>& content, const char* problem) {
    const std::string p = path(name);
    write_bytes(p, content);
    std::string msg = io_error_of([&] { oar::load(p); });
    EXPECT_NE(msg.find(p), std::string::npos) << name << ": " << msg;
    EXPECT_NE(msg.find(problem), std::string::npos) << name << ": " << msg;
  };
  // Truncated at many points: inside the magic, the header, an entry, the checksum.
  for (size_t keep : {size_t(0), size_t(5), size_t(10), size_t(17), size_t(40), bytes.size() / 2, bytes.size() - 3,
                      bytes.size() - 8})
    expect_io("trunc" + std::to_string(keep), {bytes.begin(), bytes.begin() + std::ptrdiff_t(keep)}, "truncated");
  expect_io("foreign", {'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "not an oar state file");
  auto newer = bytes;
  newer[8] = 2;
  expect_io("newer", newer, "newer");
  auto flipped = bytes;
  flipped[bytes.size() - 20] ^= 0x10;  // inside the last entry's data
  expect_io("flipped", flipped, "checksum mismatch");
  auto bad_sum = bytes;
  bad_sum.back() ^= 0xff;
  expect_io("badsum", bad_sum, "checksum mismatch");
  auto trailing = bytes;
  trailing.push_back(0);
  expect_io("trailing", trailing, "unexpected bytes");
  std::string msg = io_error_of([&] { oar::load(path("absent.oar")); });
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
  EXPECT_THROW(oar::save(StateDict{{"u", Tensor()}}, path("u.oar")), ValueError);
}
