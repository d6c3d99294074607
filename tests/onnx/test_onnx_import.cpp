// ONNX import and export (liboar_onnx.so): an exported graph imports back to
// the same outputs on every device, TensorProto conversion keeps every
// dtype, bad files fail with typed errors naming the file, selected ONNX
// node tests pass, and the pass rate over all of Debian's node tests stays
// at or above 60% (docs/onnx_node_tests.md has the per-test table).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "oar/graph/executor.h"
#include "oar/onnx/node_test.h"
#include "oar/onnx/onnx.h"
#include "onnx/onnx_pb.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace oar;
using oar::testing::devices;
using oar::testing::host_values;
using oar::testing::make_tensor;
using oar::testing::random_values;

namespace {

const std::string kRoot = oar::onnx::kDefaultNodeTestRoot;

bool have_test_data() { return fs::exists(kRoot + "/test_relu/model.onnx"); }

// A scratch directory removed at the end of each test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("oar_onnx_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

Tensor constant(const std::vector<double>& values, const Shape& shape, DType dtype = DType::f32) {
  return make_tensor(values, shape, dtype, Device::cpu());
}

// A small CNN-like graph touching the common op families: conv, pooling,
// activations, reshape/permute/slice views, linear, reductions, integer
// promotion (an i64 input added to floats) and a comparison.
std::shared_ptr<graph::Graph> sample_graph() {
  auto g = std::make_shared<graph::Graph>();
  graph::Value* x = g->add_input("x", {{2, 3, 8, 8}, DType::f32});
  graph::Value* offset = g->add_input("offset", {{2, 1}, DType::i64});
  graph::Value* w = g->add_constant("conv_w", constant(random_values(4 * 3 * 9, -0.5, 0.5, 1), {4, 3, 3, 3}));
  graph::Value* b = g->add_constant("conv_b", constant(random_values(4, -0.1, 0.1, 2), {4}));
  graph::Value* y = g->add_node("conv2d", {x, w, b}, {{"padding", std::vector<int64_t>{1, 1}}})->outputs[0];
  y = g->add_node("gelu", {y}, {})->outputs[0];
  y = g->add_node("max_pool2d", {y}, {{"kernel_size", std::vector<int64_t>{2, 2}}})->outputs[0];  // [2, 4, 4, 4]
  y = g->add_node("permute", {y}, {{"dims", std::vector<int64_t>{0, 2, 3, 1}}})->outputs[0];
  y = g->add_node("slice", {y}, {{"dim", int64_t(1)}, {"start", int64_t(1)}, {"end", int64_t(4)}})->outputs[0];
  y = g->add_node("reshape", {y}, {{"shape", std::vector<int64_t>{2, -1}}})->outputs[0];  // [2, 48]
  graph::Value* lw = g->add_constant("fc_w", constant(random_values(5 * 48, -0.2, 0.2, 3), {5, 48}));
  y = g->add_node("linear", {y, lw, nullptr}, {})->outputs[0];  // [2, 5]
  y = g->add_node("add", {y, offset}, {})->outputs[0];           // i64 promoted to f32
  graph::Value* probs = g->add_node("softmax", {y}, {{"dim", int64_t(1)}})->outputs[0];
  graph::Value* total = g->add_node("sum", {y}, {{"dims", std::vector<int64_t>{1}}})->outputs[0];
  graph::Value* big = g->add_node("gt", {probs, g->add_constant("", constant({0.2}, {}))}, {})->outputs[0];
  graph::Value* idx = g->add_node("argmax", {y}, {{"dims", std::vector<int64_t>{1}}, {"keepdim", true}})->outputs[0];
  g->set_outputs({probs, total, big, idx});
  return g;
}

std::vector<Tensor> sample_inputs(Device d) {
  return {make_tensor(random_values(2 * 3 * 64, -1, 1, 7), {2, 3, 8, 8}, DType::f32, d),
          make_tensor({1, -2}, {2, 1}, DType::i64, d)};
}

void expect_same_outputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].dtype(), b[i].dtype()) << "output " << i;
    ASSERT_EQ(a[i].shape(), b[i].shape()) << "output " << i;
    auto va = host_values(a[i]), vb = host_values(b[i]);
    for (size_t k = 0; k < va.size(); ++k) EXPECT_NEAR(va[k], vb[k], 1e-5) << "output " << i << " element " << k;
  }
}

// Expects `f` to throw oar error type E whose message contains every `parts`.
template <class E, class F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\n  lacks: " << p;
  } catch (const Error& e) {
    ADD_FAILURE() << "wrong error kind " << error_kind_name(e.kind()) << ": " << e.what();
  }
}

::onnx::ModelProto load_proto(const std::string& path) {
  ::onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(read_bytes(path))) << path;
  return m;
}

}  // namespace

TEST(OnnxExport, RoundTripGivesTheSameOutputsOnEveryDevice) {
  TempDir tmp;
  auto g = sample_graph();
  std::string path = tmp.file("sample.onnx");
  oar::onnx::export_model(*g, path);
  // written atomically: only the model is left in the directory
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(tmp.path)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1u);
  std::shared_ptr<const graph::Graph> back = oar::onnx::import_model(path);
  ASSERT_EQ(back->inputs().size(), 2u);
  EXPECT_EQ(back->inputs()[0]->name, "x");
  EXPECT_EQ(back->inputs()[1]->meta.dtype, DType::i64);
  for (const Device& d : devices()) {
    SCOPED_TRACE(d.str());
    graph::Executor original(g, d), imported(back, d);
    auto inputs = sample_inputs(d);
    expect_same_outputs(original.run(inputs), imported.run(inputs));
  }
}

TEST(OnnxExport, ExportedModelDeclaresOpsetAndInitializers) {
  auto g = sample_graph();
  ::onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(oar::onnx::export_model_bytes(*g, 15)));
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), 15);
  EXPECT_LE(m.ir_version(), oar::onnx::kMaxIrVersion);
  EXPECT_EQ(m.graph().input_size(), 2);
  EXPECT_EQ(m.graph().output_size(), 4);
  bool has_weight = false;
  for (const auto& init : m.graph().initializer()) has_weight |= init.name() == "conv_w";
  EXPECT_TRUE(has_weight);
  expect_error<ValueError>([&] { oar::onnx::export_model_bytes(*g, 99); }, {"opset 99"});
}

// Every opset the exporter writes re-imports to the same outputs; the IR
// version is the oldest that carries the opset (8 up to 18, 9 for 19-20, 10
// from 21), and opset 18+ writes Reduce axes as inputs and Gelu from 20.
TEST(OnnxExport, EveryOpsetRoundTripsInItsOwnForm) {
  auto g = sample_graph();
  graph::Value* x = g->inputs()[0];
  auto outs = g->outputs();
  outs.push_back(g->add_node("mean", {x}, {{"dims", std::vector<int64_t>{1, 3}}, {"keepdim", true}})->outputs[0]);
  outs.push_back(g->add_node("max", {x}, {{"dims", std::vector<int64_t>{2}}})->outputs[0]);
  auto halves = g->add_node("split", {x}, {{"sizes", std::vector<int64_t>{4, 4}}, {"dim", int64_t(2)}})->outputs;
  outs.insert(outs.end(), halves.begin(), halves.end());
  g->set_outputs(outs);
  graph::Executor original(g, Device::cpu());
  auto want = original.run(sample_inputs(Device::cpu()));
  for (int opset = 13; opset <= oar::onnx::kMaxOpset; ++opset) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    ::onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(oar::onnx::export_model_bytes(*g, opset)));
    EXPECT_EQ(m.ir_version(), opset <= 18 ? 8 : opset <= 20 ? 9 : 10);
    bool gelu = false;
    for (const auto& n : m.graph().node()) {
      gelu |= n.op_type() == "Gelu";
      bool axes_attr = false;
      for (const auto& a : n.attribute()) axes_attr |= a.name() == "axes";
      if (n.op_type() == "ReduceMean" || n.op_type() == "ReduceMax") {
        EXPECT_EQ(axes_attr, opset < 18) << n.op_type();
        EXPECT_EQ(n.input_size(), opset < 18 ? 1 : 2) << n.op_type();
      }
      if (n.op_type() == "Split") {
        EXPECT_EQ(n.input_size(), opset < 18 ? 2 : 1);
      }
    }
    EXPECT_EQ(gelu, opset >= 20);
    std::shared_ptr<const graph::Graph> back =
        oar::onnx::import_model_bytes(oar::onnx::export_model_bytes(*g, opset), "opset.onnx");
    graph::Executor imported(back, Device::cpu());
    expect_same_outputs(want, imported.run(sample_inputs(Device::cpu())));
  }
}

TEST(OnnxExport, OpWithoutMappingNamesTheOp) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", {{4}, DType::f32});
  g.set_outputs({g.add_node("dropout", {x}, {{"p", 0.5}})->outputs[0]});
  expect_error<NotImplementedError>([&] { oar::onnx::export_model_bytes(g); }, {"'dropout'"});
}

TEST(OnnxTensorProto, EveryDtypeRoundTrips) {
  for (DType d : all_dtypes) {
    SCOPED_TRACE(dtype_name(d));
    Tensor t = make_tensor(random_values(6, -3, 3, 11, d), {2, 3}, d, Device::cpu());
    ::onnx::TensorProto p;
    oar::onnx::tensor_to_proto(t, p);
    Tensor back = oar::onnx::tensor_from_proto(p);
    EXPECT_EQ(back.dtype(), d);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(host_values(back), host_values(t));
  }
}

TEST(OnnxTensorProto, TypedFieldsAreRead) {
  ::onnx::TensorProto p;
  p.set_data_type(::onnx::TensorProto::FLOAT16);
  p.add_dims(2);
  p.add_int32_data(0x3c00);  // 1.0
  p.add_int32_data(0xc000);  // -2.0
  EXPECT_EQ(host_values(oar::onnx::tensor_from_proto(p)), (std::vector<double>{1.0, -2.0}));
  ::onnx::TensorProto q;
  q.set_data_type(::onnx::TensorProto::INT64);
  q.add_dims(3);
  for (int64_t v : {5, -6, 7}) q.add_int64_data(v);
  EXPECT_EQ(host_values(oar::onnx::tensor_from_proto(q)), (std::vector<double>{5, -6, 7}));
  q.add_dims(2);  // 6 values needed, 3 given
  expect_error<ValueError>([&] { oar::onnx::tensor_from_proto(q); }, {"3 values"});
  ::onnx::TensorProto s;
  s.set_data_type(::onnx::TensorProto::STRING);
  expect_error<DTypeError>([&] { oar::onnx::tensor_from_proto(s); }, {"STRING"});
}

// 16-bit and unsigned 32/64-bit integers have no oar dtype: they are read
// widened (INT16/UINT16 -> i32, UINT32/UINT64 -> i64) with every value exact,
// from typed fields and raw_data; a UINT64 beyond i64 is refused by name.
TEST(OnnxTensorProto, NarrowAndUnsignedIntegersAreWidened) {
  ::onnx::TensorProto u16;
  u16.set_data_type(::onnx::TensorProto::UINT16);
  u16.add_dims(3);
  for (int v : {0, 1, 65535}) u16.add_int32_data(v);
  Tensor t = oar::onnx::tensor_from_proto(u16);
  EXPECT_EQ(t.dtype(), DType::i32);
  EXPECT_EQ(host_values(t), (std::vector<double>{0, 1, 65535}));
  ::onnx::TensorProto i16;
  i16.set_data_type(::onnx::TensorProto::INT16);
  i16.add_dims(2);
  const int16_t raw16[] = {-32768, 123};
  i16.set_raw_data(std::string(reinterpret_cast<const char*>(raw16), sizeof(raw16)));
  EXPECT_EQ(host_values(oar::onnx::tensor_from_proto(i16)), (std::vector<double>{-32768, 123}));
  ::onnx::TensorProto u32;
  u32.set_data_type(::onnx::TensorProto::UINT32);
  u32.add_dims(2);
  for (uint64_t v : {uint64_t(4294967295u), uint64_t(7)}) u32.add_uint64_data(v);
  Tensor w = oar::onnx::tensor_from_proto(u32);
  EXPECT_EQ(w.dtype(), DType::i64);
  EXPECT_EQ(w.to_vector<int64_t>(), (std::vector<int64_t>{4294967295LL, 7}));
  ::onnx::TensorProto u64;
  u64.set_data_type(::onnx::TensorProto::UINT64);
  u64.add_dims(1);
  u64.add_uint64_data(uint64_t(1) << 63);
  expect_error<ValueError>([&] { oar::onnx::tensor_from_proto(u64); }, {"UINT64 value 9223372036854775808", "i64"});
  u64.add_dims(0);  // truncated raw data is refused too
  u64.clear_uint64_data();
  u64.set_raw_data(std::string(4, '\0'));
  u64.clear_dims();
  u64.add_dims(1);
  expect_error<ValueError>([&] { oar::onnx::tensor_from_proto(u64); }, {"raw_data holds 4 bytes"});
}

TEST(OnnxImport, MissingFileIsAnIOError) {
  expect_error<IOError>([] { oar::onnx::import_model("/nonexistent/dir/model.onnx"); }, {"/nonexistent/dir/model.onnx"});
}

TEST(OnnxImport, CorruptFileNamesTheFile) {
  TempDir tmp;
  std::string path = tmp.file("corrupt.onnx");
  write_bytes(path, std::string("\xff\xff\xff\xff this is not protobuf \x01\x02", 28));
  expect_error<IOError>([&] { oar::onnx::import_model(path); }, {path, "not a valid ONNX model"});
  std::string empty = tmp.file("empty.onnx");
  write_bytes(empty, "");
  expect_error<IOError>([&] { oar::onnx::import_model(empty); }, {empty, "empty"});
}

TEST(OnnxImport, TruncatedFileNamesTheFile) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  TempDir tmp;
  std::string bytes = read_bytes(kRoot + "/test_conv_with_strides_padding/model.onnx");
  ASSERT_GT(bytes.size(), 40u);
  // Cut at several places: inside a field (parse error) or at a boundary
  // (missing graph, inputs or opset); every cut is a typed error naming the file.
  for (size_t cut : {bytes.size() / 2, bytes.size() - 3, size_t(10)}) {
    SCOPED_TRACE(cut);
    std::string path = tmp.file("truncated_" + std::to_string(cut) + ".onnx");
    write_bytes(path, bytes.substr(0, cut));
    try {
      oar::onnx::import_model(path);
      ADD_FAILURE() << "a model truncated to " << cut << " bytes imported";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::kIO || e.kind() == ErrorKind::kValue) << error_kind_name(e.kind());
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST(OnnxImport, NewerOpsetOrIrVersionIsRefused) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  TempDir tmp;
  ::onnx::ModelProto m = load_proto(kRoot + "/test_relu/model.onnx");
  m.mutable_opset_import(0)->set_version(oar::onnx::kMaxOpset + 1);
  std::string path = tmp.file("new_opset.onnx");
  write_bytes(path, m.SerializeAsString());
  expect_error<ValueError>([&] { oar::onnx::import_model(path); }, {path, "opset " + std::to_string(oar::onnx::kMaxOpset + 1)});

  ::onnx::ModelProto ir = load_proto(kRoot + "/test_relu/model.onnx");
  ir.set_ir_version(oar::onnx::kMaxIrVersion + 1);
  std::string ir_path = tmp.file("new_ir.onnx");
  write_bytes(ir_path, ir.SerializeAsString());
  expect_error<ValueError>([&] { oar::onnx::import_model(ir_path); }, {ir_path, "IR version"});
}

TEST(OnnxImport, UnmappedOpNamesOpTypeAndNode) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  TempDir tmp;
  ::onnx::ModelProto m = load_proto(kRoot + "/test_relu/model.onnx");
  m.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  m.mutable_graph()->mutable_node(0)->set_name("strange");
  std::string path = tmp.file("unmapped.onnx");
  write_bytes(path, m.SerializeAsString());
  expect_error<NotImplementedError>([&] { oar::onnx::import_model(path); }, {path, "'NoSuchOp'", "'strange'"});
}

TEST(OnnxImport, UnsupportedElementTypeIsADTypeError) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  expect_error<DTypeError>([] { oar::onnx::import_model(kRoot + "/test_cast_FLOAT_to_STRING/model.onnx"); }, {"STRING"});
}

TEST(OnnxImport, SequenceInputsAreRefusedNotCrashed) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  oar::onnx::NodeTestResult r = oar::onnx::run_node_test(kRoot + "/test_sequence_insert_at_back");
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.reason.find("unsupported input type"), std::string::npos) << r.reason;
}

TEST(OnnxNodeTests, SelectedTestsPass) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  for (const char* name : {"test_relu", "test_conv_with_strides_padding", "test_gemm_default_single_elem_vector_bias",
                           "test_softmax_axis_1", "test_reshape_negative_dim", "test_maxpool_2d_pads",
                           "test_nllloss_NCd1d2d3_sum_weight_high_ii", "test_resize_upsample_scales_cubic",
                           "test_layer_normalization_4d_axis1", "test_slice_neg_steps", "test_batchnorm_example",
                           "test_lstm_with_peepholes", "test_gridsample_bicubic", "test_einsum_batch_diagonal",
                           "test_convtranspose_output_shape", "test_top_k_smallest", "test_mod_mixed_sign_int64"}) {
    oar::onnx::NodeTestResult r = oar::onnx::run_node_test(kRoot + "/" + name);
    EXPECT_TRUE(r.passed) << name << ": " << r.reason;
  }
}

TEST(OnnxNodeTests, WrongExpectationFails) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  // The comparison is real: test_relu with one expected value changed fails.
  TempDir tmp;
  fs::path dir = tmp.path / "test_relu_altered";
  fs::create_directories(dir / "test_data_set_0");
  fs::copy_file(kRoot + "/test_relu/model.onnx", dir / "model.onnx");
  fs::copy_file(kRoot + "/test_relu/test_data_set_0/input_0.pb", dir / "test_data_set_0/input_0.pb");
  std::vector<double> expected = host_values(oar::onnx::load_tensor(kRoot + "/test_relu/test_data_set_0/output_0.pb"));
  expected[7] += 0.5;
  ::onnx::TensorProto altered;
  oar::onnx::tensor_to_proto(constant(expected, {3, 4, 5}), altered);
  write_bytes((dir / "test_data_set_0/output_0.pb").string(), altered.SerializeAsString());
  oar::onnx::NodeTestResult r = oar::onnx::run_node_test(dir.string());
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.reason.find("element 7"), std::string::npos) << r.reason;
}

// Every node test that passes also passes after export and re-import: the
// exporter writes ONNX for everything the importer produces (the mapped
// compositions, folded constants, views) and its output imports back.
TEST(OnnxNodeTests, PassingTestsSurviveExportAndReimport) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  size_t passing = 0;
  std::vector<std::string> broken;
  for (const auto& dir : oar::onnx::list_node_tests(kRoot)) {
    if (!oar::onnx::run_node_test(dir).passed) continue;
    ++passing;
    std::string name = fs::path(dir).filename().string();
    try {
      std::vector<Tensor> inputs, expected;
      inputs = oar::onnx::load_node_test_tensors(dir, "input_");
      expected = oar::onnx::load_node_test_tensors(dir, "output_");
      oar::onnx::ImportOptions options;
      for (const Tensor& t : inputs) options.input_shapes.push_back(t.shape());
      options.input_values = inputs;
      auto g = oar::onnx::import_model(dir + "/model.onnx", options);
      std::string bytes = oar::onnx::export_model_bytes(*g);
      oar::onnx::ImportOptions shapes_only;
      shapes_only.input_shapes = options.input_shapes;  // the exported model has its parameters folded in
      std::shared_ptr<const graph::Graph> back = oar::onnx::import_model_bytes(bytes, name + " (exported)", shapes_only);
      graph::Executor run(back, Device::cpu());
      auto outputs = run.run(inputs);
      bool same = outputs.size() == expected.size();
      for (size_t i = 0; same && i < outputs.size(); ++i) {
        same = outputs[i].dtype() == expected[i].dtype() && outputs[i].shape() == expected[i].shape();
        auto a = host_values(outputs[i]), e = host_values(expected[i]);
        double rtol = expected[i].dtype() == DType::bf16 ? 1e-2 : 1e-3;
        for (size_t k = 0; same && k < a.size(); ++k)
          same = (std::isnan(a[k]) && std::isnan(e[k])) || a[k] == e[k] || std::abs(a[k] - e[k]) <= 1e-5 + rtol * std::abs(e[k]);
      }
      if (!same) broken.push_back(name + ": outputs differ");
    } catch (const Error& e) {
      broken.push_back(name + ": " + e.what());
    }
  }
  std::printf("export round trip: %zu of %zu passing node tests\n", passing - broken.size(), passing);
  for (const auto& b : broken) ADD_FAILURE() << b;
}

TEST(OnnxNodeTests, PassRateOverAllNodeTestsIsAtLeast60Percent) {
  if (!have_test_data()) GTEST_SKIP() << "libonnx-testdata is not installed";
  auto dirs = oar::onnx::list_node_tests(kRoot);
  ASSERT_GE(dirs.size(), 900u) << "expected Debian's 932 node tests under " << kRoot;
  size_t passed = 0;
  for (const auto& dir : dirs) passed += oar::onnx::run_node_test(dir).passed;
  double rate = double(passed) / double(dirs.size());
  std::printf("ONNX node tests on cpu: passed %zu of %zu (%.1f%%)\n", passed, dirs.size(), 100 * rate);
  EXPECT_GE(rate, 0.60);
}
