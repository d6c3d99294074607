// Atomic read-modify-write of any element type, for CUDA and HIP. The
// runtimes add atomically only 32/64-bit integers, float and double; 8- and
// 16-bit elements (i8, u8, f16, bf16) are updated by a compare-and-swap loop
// on the aligned 32-bit word holding them, which leaves the neighbouring
// bytes as they are. atomic_add rounds to the element type after every
// addition, as a sequential loop storing into T does, so only the order of
// the additions differs from the CPU's loops (integers: not even that).
#pragma once

#include <cstdint>
#include <type_traits>

#include "oar/kp/gpu/runtime.h"
#include "oar/kp/numeric.h"

namespace oar::kp::gpu {

// The unsigned integer of an element's width, and the bits of a value in it.
template <class T> using bits_t =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, unsigned long long>>>;

template <class T>
__device__ __forceinline__ bits_t<T> to_bits(T v) {
  if constexpr (std::is_same_v<T, float>) return __float_as_uint(v);
  else if constexpr (std::is_same_v<T, double>) return static_cast<unsigned long long>(__double_as_longlong(v));
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) return v.bits;
  else return static_cast<bits_t<T>>(v);
}

template <class T>
__device__ __forceinline__ T from_bits(bits_t<T> b) {
  if constexpr (std::is_same_v<T, float>) return __uint_as_float(b);
  else if constexpr (std::is_same_v<T, double>) return __longlong_as_double(static_cast<long long>(b));
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    T v;
    v.bits = b;
    return v;
  } else {
    return static_cast<T>(b);
  }
}

// *p = f(*p) atomically; f maps a T to a T and may be called several times.
template <class T, class F>
__device__ __forceinline__ void atomic_update(T* p, F f) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "unsupported width");
  if constexpr (sizeof(T) >= 4) {
    using W = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
    W* word = reinterpret_cast<W*>(p);
    W old = *word, assumed;
    do {
      assumed = old;
      old = atomicCAS(word, assumed, static_cast<W>(to_bits(f(from_bits<T>(static_cast<bits_t<T>>(assumed))))));
    } while (old != assumed);  // compares bits, so a NaN does not loop forever
  } else {
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(address & ~uintptr_t(3));
    const unsigned int shift = static_cast<unsigned int>(address & 3) * 8u;
    const unsigned int mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      T v = from_bits<T>(static_cast<bits_t<T>>((assumed & mask) >> shift));
      unsigned int updated = (static_cast<unsigned int>(to_bits(f(v))) << shift) & mask;
      old = atomicCAS(word, assumed, (assumed & ~mask) | updated);
    } while (old != assumed);
  }
}

// What atomic_add adds to a T: its compute type for floating types, and a
// 64-bit two's complement value for integers (taken modulo the width).
template <class T> using addend_t = std::conditional_t<is_floating_v<T>, compute_t<T>, uint64_t>;

// *p = T(compute(*p) + v) for floating T; *p += v modulo 2^bits for integers.
template <class T>
__device__ __forceinline__ void atomic_add(T* p, addend_t<T> v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    atomicAdd(p, v);
  } else if constexpr (is_floating_v<T>) {
    atomic_update(p, [v](T old) { return T(static_cast<float>(old) + v); });
  } else if constexpr (sizeof(T) == 4) {
    atomicAdd(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(v));
  } else if constexpr (sizeof(T) == 8) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomic_update(p, [v](T old) { return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(old)) + v); });
  }
}

}  // namespace oar::kp::gpu
