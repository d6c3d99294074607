#include "oar/generator.h"

#include <mutex>

namespace oar {

namespace {
std::mutex g_mutex;
uint64_t g_seed = 0x5eed;
uint64_t g_offset = 0;
}  // namespace

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_seed = seed;
  g_offset = 0;
}

uint64_t initial_seed() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_seed;
}

std::pair<uint64_t, uint64_t> random_state() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return {g_seed, g_offset};
}

void set_random_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_seed = seed;
  g_offset = offset;
}

std::pair<uint64_t, uint64_t> reserve_random(uint64_t count) {
  std::lock_guard<std::mutex> lock(g_mutex);
  uint64_t offset = g_offset;
  g_offset += (count + 3) / 4 * 4;  // Philox yields 4 values per counter
  return {g_seed, offset};
}

}  // namespace oar
