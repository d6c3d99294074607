// The creation family: fill, arange and the random ops (uniform, normal,
// bernoulli, dropout), written once (creation.kp). Creation ops have no
// tensor input: their signature is empty and the output dtype comes from the
// op's `dtype` attribute, carried by the output view.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "oar/kp/family/register.h"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct CreationKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/creation.kp"
};

template <class B>
struct Creation {
  static Launch output_launch(const oar_tensor_view& y) {
    Launch L;
    L.family = "creation";
    L.t = y.dtype;
    L.lanes = sdk::numel(y);
    L.p[0] = operand(y);
    return L;
  }
  static void seed(const sdk::KernelArgs& a, Launch& L) {
    L.A.i[0] = a.attr_int("seed");
    L.A.i[1] = a.attr_int("offset");
  }

  static void fill(B& b) {
    Launch L = output_launch(b.args().output(0));
    L.A.f[0] = param_bits(b.args().attr_float("value"));
    OAR_KP_LAUNCH(CreationKernels, kAll, b, L, fill);
  }
  static void arange(B& b) {
    Launch L = output_launch(b.args().output(0));
    L.A.f[0] = param_bits(b.args().attr_float("start"));
    L.A.f[1] = param_bits(b.args().attr_float("step"));
    OAR_KP_LAUNCH(CreationKernels, kAll, b, L, arange);
  }
  static void uniform(B& b) {
    Launch L = output_launch(b.args().output(0));
    seed(b.args(), L);
    L.A.f[0] = param_bits(b.args().attr_float("low"));
    L.A.f[1] = param_bits(b.args().attr_float("high"));
    OAR_KP_LAUNCH(CreationKernels, kAll, b, L, uniform);
  }
  static void normal(B& b) {
    Launch L = output_launch(b.args().output(0));
    seed(b.args(), L);
    L.A.f[0] = param_bits(b.args().attr_float("mean"));
    L.A.f[1] = param_bits(b.args().attr_float("std"));
    OAR_KP_LAUNCH(CreationKernels, kAll, b, L, normal);
  }

  // Probabilities are checked on the device first: one outside [0, 1] is an
  // error naming it, never a silent draw.
  static void bernoulli(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& p = a.input(0);
    const int64_t n = sdk::numel(p);
    if (n > 0) {
      Launch S = output_launch(p);
      const int64_t chunk = std::max<int64_t>(1024, (n + 4095) / 4096);
      S.lanes = (n + chunk - 1) / chunk;
      S.work_per_lane = chunk;
      S.p[0] = b.temp(uint64_t(S.lanes) * sizeof(int64_t));
      S.p[1] = operand(p);
      S.A.i[2] = n, S.A.i[3] = chunk;
      OAR_KP_LAUNCH(CreationKernels, kFloat, b, S, probability_scan);
      std::vector<int64_t> first(static_cast<size_t>(S.lanes));
      b.read(S.p[0], first.data(), first.size() * sizeof(int64_t));
      for (int64_t f : first)
        if (f >= 0)
          sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "bernoulli: probabilities must be in [0, 1], got " +
                                                     std::to_string(read_element<double>(b, p, f)));
    }
    Launch L = output_launch(a.output(0));
    seed(a, L);
    L.p[1] = operand(p);
    OAR_KP_LAUNCH(CreationKernels, kFloat, b, L, bernoulli);
  }

  static void dropout(B& b) {
    const sdk::KernelArgs& a = b.args();
    Launch L = output_launch(a.output(0));
    seed(a, L);
    const double p = a.attr_float("p");
    L.p[1] = operand(a.output(1));
    L.p[2] = operand(a.input(0));
    L.A.f[0] = param_bits(p);
    L.A.f[1] = param_bits(1.0 / (1.0 - p));
    OAR_KP_LAUNCH(CreationKernels, kFloat, b, L, dropout);
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("fill", "", DTypeSet::kAll, entry<B, &fill>);
    r.add("arange", "", DTypeSet::kAll, entry<B, &arange>);
    r.add("uniform", "", DTypeSet::kAll, entry<B, &uniform>);
    r.add("normal", "", DTypeSet::kAll, entry<B, &normal>);
    r.add("bernoulli", "T", DTypeSet::kFloat, entry<B, &bernoulli>);
    return r.add("dropout", "T", DTypeSet::kFloat, entry<B, &dropout>);
  }
};

}  // namespace oar::kp::family
