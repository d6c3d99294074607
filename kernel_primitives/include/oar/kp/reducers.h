// Reduction functors, written once for every backend: an accumulator type,
// an identity, how one element enters (with its index, for arg-reductions),
// how two partial results combine (tree reductions, threads, blocks), and
// how the final value is produced from the accumulator and the count.
#pragma once

#include <cstdint>

#include "oar/kp/math.h"
#include "oar/kp/numeric.h"

namespace oar::kp {

// kInterleavable: the result does not depend on the order elements enter (a
// backend may give a run several accumulators and combine them).
template <class Acc> struct SumReducer {
  using acc_t = Acc;
  static constexpr bool kInterleavable = true;
  OAR_KP_HD Acc init() const { return Acc(0); }
  template <class X> OAR_KP_HD Acc step(Acc a, X x, int64_t) const { return a + Acc(x); }
  OAR_KP_HD Acc combine(Acc a, Acc b) const { return a + b; }
  OAR_KP_HD Acc finish(Acc a, int64_t) const { return a; }
};

template <class Acc> struct ProdReducer {
  using acc_t = Acc;
  static constexpr bool kInterleavable = true;
  OAR_KP_HD Acc init() const { return Acc(1); }
  template <class X> OAR_KP_HD Acc step(Acc a, X x, int64_t) const { return a * Acc(x); }
  OAR_KP_HD Acc combine(Acc a, Acc b) const { return a * b; }
  OAR_KP_HD Acc finish(Acc a, int64_t) const { return a; }
};

template <class Acc> struct MeanReducer : SumReducer<Acc> {
  OAR_KP_HD Acc finish(Acc a, int64_t n) const { return n ? a / Acc(n) : Acc(NAN); }
};

// NaN propagates: once the accumulator is NaN it stays NaN.
template <class Acc, bool kMax> struct MinMaxReducer {
  using acc_t = Acc;
  static constexpr bool kInterleavable = true;
  Acc identity;
  OAR_KP_HD Acc init() const { return identity; }
  template <class X> OAR_KP_HD Acc step(Acc a, X x, int64_t) const { return pick(a, Acc(x)); }
  OAR_KP_HD Acc combine(Acc a, Acc b) const { return pick(a, b); }
  OAR_KP_HD Acc finish(Acc a, int64_t) const { return a; }
  OAR_KP_HD static Acc pick(Acc a, Acc b) {
    if (math::isnan_(a)) return a;
    if (math::isnan_(b)) return b;
    return kMax ? (b > a ? b : a) : (b < a ? b : a);
  }
};

template <class V> struct ValueIndex {
  V value;
  int64_t index;
};

// First index of the max (min); a NaN counts as the extreme, first NaN wins.
template <class V, bool kMax> struct ArgReducer {
  using acc_t = ValueIndex<V>;
  OAR_KP_HD acc_t init() const { return {V(0), -1}; }
  template <class X> OAR_KP_HD acc_t step(acc_t a, X x, int64_t i) const {
    return combine(a, acc_t{V(x), i});
  }
  OAR_KP_HD acc_t combine(acc_t a, acc_t b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    bool an = math::isnan_(a.value), bn = math::isnan_(b.value);
    if (an || bn) {
      if (an && bn) return a.index < b.index ? a : b;
      return an ? a : b;
    }
    bool better = kMax ? b.value > a.value : b.value < a.value;
    if (better || (b.value == a.value && b.index < a.index)) return b;
    return a;
  }
  OAR_KP_HD int64_t finish(acc_t a, int64_t) const { return a.index; }
};

// Welford/Chan: numerically stable variance, mergeable across threads.
template <class Acc> struct VarState {
  Acc mean;
  Acc m2;
  int64_t n;
};
template <class Acc> struct VarReducer {
  using acc_t = VarState<Acc>;
  int64_t correction = 1;
  OAR_KP_HD acc_t init() const { return {Acc(0), Acc(0), 0}; }
  template <class X> OAR_KP_HD acc_t step(acc_t a, X x, int64_t) const {
    a.n += 1;
    Acc d = Acc(x) - a.mean;
    a.mean += d / Acc(a.n);
    a.m2 += d * (Acc(x) - a.mean);
    return a;
  }
  OAR_KP_HD acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    int64_t n = a.n + b.n;
    Acc d = b.mean - a.mean;
    acc_t r;
    r.n = n;
    r.mean = a.mean + d * Acc(b.n) / Acc(n);
    r.m2 = a.m2 + b.m2 + d * d * Acc(a.n) * Acc(b.n) / Acc(n);
    return r;
  }
  OAR_KP_HD Acc finish(acc_t a, int64_t) const {
    int64_t dof = a.n - correction;
    return dof > 0 ? a.m2 / Acc(dof) : Acc(NAN);
  }
};

}  // namespace oar::kp
