// Seeded random number state. Random kernels use counter-based Philox
// (kernel_primitives/include/oar/kp/philox.h) keyed by (seed, offset), so the
// same seed gives the same numbers on every device; dispatch hands each random
// op the seed and a fresh offset range.
#pragma once

#include <cstdint>
#include <utility>

namespace oar {

void manual_seed(uint64_t seed);
uint64_t initial_seed();
// The whole state, (seed, next offset), to save and restore a stream
// (torch.get_rng_state / set_rng_state).
std::pair<uint64_t, uint64_t> random_state();
void set_random_state(uint64_t seed, uint64_t offset);
// Reserves `count` random values; returns (seed, offset of the first).
std::pair<uint64_t, uint64_t> reserve_random(uint64_t count);

}  // namespace oar
