// Kernels registered by plugins, keyed by (op, device type, dtype signature),
// each key holding implementations ordered best first. Lookups go through a
// cache so steady-state dispatch does no string work.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "oar/abi/oar_kernel.h"
#include "oar/dtype.h"

namespace oar {

struct KernelEntry {
  int32_t op_id;
  int32_t device_type;
  std::vector<DType> signature;
  int32_t priority;
  std::string impl_name;
  oar_kernel_fn fn;
  oar_kernel_supports_fn supports;
};

class KernelRegistry {
 public:
  static KernelRegistry& instance();

  void add(KernelEntry entry);
  // Implementations for the key, best first; empty if none.
  const std::vector<KernelEntry>* lookup(int32_t op_id, int32_t device_type,
                                          const DType* signature, size_t n) const;
  // Signatures registered for (op, device type), for error messages and oar-info.
  std::vector<std::vector<DType>> signatures(int32_t op_id, int32_t device_type) const;
  std::vector<const KernelEntry*> entries_for_device(int32_t device_type) const;

  // An oar_kernel_registrar bound to this registry for one plugin's device type.
  oar_kernel_registrar make_registrar(int32_t device_type, const char* device_type_name,
                                      std::vector<std::string>* errors);

 private:
  static uint64_t key_of(int32_t op_id, int32_t device_type, const DType* sig, size_t n);
  mutable std::shared_mutex mutex_;
  std::unordered_map<uint64_t, std::vector<KernelEntry>> table_;
  std::vector<std::shared_ptr<void>> registrar_states_;
};

}  // namespace oar
