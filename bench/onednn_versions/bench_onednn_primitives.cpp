// The oneDNN primitives oar's CPU plugin runs for ResNet-18 (32x32, batch 32),
// ResNet-50 (224x224, batch 8 and 1) and the transformer encoder (d_model 512,
// batch 16 x sequence 128), timed alone in the layouts the plugin asks for
// (format_tag::any for convolutions, plain for the rest). The same source
// builds against oneDNN 2.x (Debian's 2.6) and 3.x (the PyPI wheel), so
// bench/onednn_versions.sh can run both and print their ratio: that is how
// issue 18 chooses the oneDNN version. Prints one line per primitive:
//   <name> TAB <median ms> TAB <implementation oneDNN picked>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

engine eng(engine::kind::cpu, 0);
stream strm(eng);
int rounds = 20;

memory::desc md(memory::dims d, tag t, dt type = dt::f32) { return memory::desc(d, type, t); }

// A memory of `d` filled with small values (so no denormals or overflow skew the timings).
memory filled(const memory::desc& d) {
  memory m(d, eng);
  float* p = static_cast<float*>(m.get_data_handle());
  size_t n = d.get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = float(int(i % 13) - 6) * 0.01f;
  return m;
}

void report(const std::string& name, const primitive& p, std::unordered_map<int, memory> args, const char* impl) {
  for (int i = 0; i < 3; ++i) p.execute(strm, args);
  strm.wait();
  std::vector<double> ms;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    p.execute(strm, args);
    strm.wait();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  std::printf("%s\t%.3f\t%s\n", name.c_str(), ms[ms.size() / 2], impl);
  std::fflush(stdout);
}

struct Conv {
  std::string name;
  memory::dim n, ic, oc, hw, k, stride, pad;
  bool train;
  tag act = tag::any;  // activations' layout: any (the primitive's blocked choice) or nhwc
};

void bench_conv(const Conv& c) {
  memory::dim ohw = (c.hw + 2 * c.pad - c.k) / c.stride + 1;
  auto src = md({c.n, c.ic, c.hw, c.hw}, c.act), wei = md({c.oc, c.ic, c.k, c.k}, tag::any),
       dst = md({c.n, c.oc, ohw, ohw}, c.act);
  memory::dims strides{c.stride, c.stride}, pad{c.pad, c.pad};
  auto prop = c.train ? prop_kind::forward_training : prop_kind::forward_inference;
  auto alg = algorithm::convolution_direct;
#if DNNL_VERSION_MAJOR >= 3
  convolution_forward::primitive_desc fwd(eng, prop, alg, src, wei, dst, strides, pad, pad);
#else
  convolution_forward::primitive_desc fwd(convolution_forward::desc(prop, alg, src, wei, dst, strides, pad, pad), eng);
#endif
  memory s = filled(fwd.src_desc()), w = filled(fwd.weights_desc()), d = filled(fwd.dst_desc());
  report(c.name + (c.train ? " fwd" : " infer"), convolution_forward(fwd),
         {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}}, fwd.impl_info_str());
  if (!c.train) return;
#if DNNL_VERSION_MAJOR >= 3
  convolution_backward_data::primitive_desc bd(eng, alg, src, wei, dst, strides, pad, pad, fwd);
  convolution_backward_weights::primitive_desc bw(eng, alg, src, wei, dst, strides, pad, pad, fwd);
#else
  convolution_backward_data::primitive_desc bd(
      convolution_backward_data::desc(alg, src, wei, dst, strides, pad, pad), eng, fwd);
  convolution_backward_weights::primitive_desc bw(
      convolution_backward_weights::desc(alg, src, wei, dst, strides, pad, pad), eng, fwd);
#endif
  memory dd = filled(bd.diff_dst_desc()), ds = filled(bd.diff_src_desc()), bww = filled(bd.weights_desc());
  report(c.name + " bwd_data", convolution_backward_data(bd),
         {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, bww}, {DNNL_ARG_DIFF_SRC, ds}}, bd.impl_info_str());
  memory ws = filled(bw.src_desc()), wdd = filled(bw.diff_dst_desc()), dw = filled(bw.diff_weights_desc());
  report(c.name + " bwd_weights", convolution_backward_weights(bw),
         {{DNNL_ARG_SRC, ws}, {DNNL_ARG_DIFF_DST, wdd}, {DNNL_ARG_DIFF_WEIGHTS, dw}}, bw.impl_info_str());
}

void bench_bnorm(const std::string& name, memory::dims d, tag layout) {
  auto x = md(d, layout), stat = md({d[1]}, tag::x);
  auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
#if DNNL_VERSION_MAJOR >= 3
  batch_normalization_forward::primitive_desc fwd(eng, prop_kind::forward_training, x, x, 1e-5f, flags);
  batch_normalization_backward::primitive_desc bwd(eng, prop_kind::backward, x, x, x, 1e-5f, flags, fwd);
#else
  batch_normalization_forward::primitive_desc fwd(
      batch_normalization_forward::desc(prop_kind::forward_training, x, 1e-5f, flags), eng);
  batch_normalization_backward::primitive_desc bwd(
      batch_normalization_backward::desc(prop_kind::backward, x, x, 1e-5f, flags), eng, fwd);
#endif
  memory src = filled(x), dst = filled(x), diff = filled(x), dsrc = filled(x);
  memory mean = filled(stat), var = filled(stat), scale = filled(stat), shift = filled(stat);
  memory dscale = filled(stat), dshift = filled(stat);
  report(name + " fwd", batch_normalization_forward(fwd),
         {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var},
          {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}},
         fwd.impl_info_str());
  std::unordered_map<int, memory> bwd_args = {
      {DNNL_ARG_SRC, src},        {DNNL_ARG_DIFF_DST, diff},          {DNNL_ARG_DIFF_SRC, dsrc},
      {DNNL_ARG_MEAN, mean},      {DNNL_ARG_VARIANCE, var},           {DNNL_ARG_SCALE, scale},
      {DNNL_ARG_DIFF_SCALE, dscale}, {DNNL_ARG_DIFF_SHIFT, dshift}};
#if DNNL_VERSION_MAJOR < 3
  bwd_args[DNNL_ARG_SHIFT] = shift;  // 2.x wants it passed (unused); 3.x refuses it
#endif
  report(name + " bwd", batch_normalization_backward(bwd), bwd_args, bwd.impl_info_str());
}

void bench_matmul(const std::string& name, memory::dim m, memory::dim k, memory::dim n) {
  auto a = md({m, k}, tag::ab), b = md({k, n}, tag::ab), c = md({m, n}, tag::ab);
#if DNNL_VERSION_MAJOR >= 3
  matmul::primitive_desc pd(eng, a, b, c);
#else
  matmul::primitive_desc pd(matmul::desc(a, b, c), eng);
#endif
  report(name, matmul(pd), {{DNNL_ARG_SRC, filled(a)}, {DNNL_ARG_WEIGHTS, filled(b)}, {DNNL_ARG_DST, filled(c)}},
         pd.impl_info_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) rounds = std::max(1, std::atoi(argv[1]));
  const dnnl_version_t* v = dnnl_version();
  std::printf("# oneDNN %d.%d.%d, %d rounds, median\n", v->major, v->minor, v->patch, rounds);
  const Conv convs[] = {
      {"r18 conv3x3 64c 32x32 b32", 32, 64, 64, 32, 3, 1, 1, true},
      {"r18 conv3x3 128c 16x16 b32", 32, 128, 128, 16, 3, 1, 1, true},
      {"r18 conv3x3 256c 8x8 b32", 32, 256, 256, 8, 3, 1, 1, true},
      {"r18 conv3x3 512c 4x4 b32", 32, 512, 512, 4, 3, 1, 1, true},
      {"r50 conv7x7 s2 3->64 224 b8", 8, 3, 64, 224, 7, 2, 3, true},
      {"r50 conv1x1 256->64 56x56 b8", 8, 256, 64, 56, 1, 1, 0, true},
      {"r50 conv3x3 64c 56x56 b8", 8, 64, 64, 56, 3, 1, 1, true},
      {"r50 conv3x3 512c 7x7 b8", 8, 512, 512, 7, 3, 1, 1, true},
      {"r50 conv3x3 64c 56x56 b1", 1, 64, 64, 56, 3, 1, 1, false},
      {"r50 conv1x1 1024->256 14x14 b1", 1, 1024, 256, 14, 1, 1, 0, false},
      {"r50 conv3x3 512c 7x7 b1", 1, 512, 512, 7, 3, 1, 1, false},
      // channels-last activations (what a tensor's strides can express) against the blocked ones above
      {"r18 conv3x3 64c 32x32 b32 nhwc", 32, 64, 64, 32, 3, 1, 1, true, tag::nhwc},
      {"r18 conv3x3 256c 8x8 b32 nhwc", 32, 256, 256, 8, 3, 1, 1, true, tag::nhwc},
      {"r50 conv1x1 256->64 56x56 b8 nhwc", 8, 256, 64, 56, 1, 1, 0, true, tag::nhwc},
      {"r50 conv3x3 64c 56x56 b1 nhwc", 1, 64, 64, 56, 3, 1, 1, false, tag::nhwc},
      {"r50 conv1x1 1024->256 14x14 b1 nhwc", 1, 1024, 256, 14, 1, 1, 0, false, tag::nhwc},
  };
  for (const Conv& c : convs) bench_conv(c);
  bench_bnorm("bnorm 32x64x32x32 nchw", {32, 64, 32, 32}, tag::nchw);
  bench_bnorm("bnorm 32x64x32x32 nChw16c", {32, 64, 32, 32}, tag::nChw16c);
  bench_bnorm("bnorm 8x256x56x56 nchw", {8, 256, 56, 56}, tag::nchw);
  bench_matmul("matmul 2048x512x2048 (ffn1)", 2048, 512, 2048);
  bench_matmul("matmul 2048x2048x512 (ffn2)", 2048, 2048, 512);
  bench_matmul("matmul 2048x512x1536 (qkv)", 2048, 512, 1536);
  return 0;
}
