#include "oar/kernel_registry.h"

#include <algorithm>

#include "oar/error.h"
#include "oar/log.h"
#include "oar/op_registry.h"
#include "oar/runtime.h"

namespace oar {

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry* registry = new KernelRegistry();
  return *registry;
}

uint64_t KernelRegistry::key_of(int32_t op_id, int32_t device_type, const DType* sig, size_t n) {
  // 20 bits op, 8 bits device type, then 4 bits per dtype (at most 9).
  uint64_t key = (uint64_t(uint32_t(op_id)) & 0xFFFFF) | (uint64_t(uint32_t(device_type) & 0xFF) << 20);
  for (size_t i = 0; i < n && i < 9; ++i) key |= uint64_t(uint32_t(sig[i]) & 0xF) << (28 + 4 * i);
  return key | (uint64_t(n & 0xF) << 60);
}

void KernelRegistry::add(KernelEntry entry) {
  uint64_t key = key_of(entry.op_id, entry.device_type, entry.signature.data(), entry.signature.size());
  std::unique_lock lock(mutex_);
  auto& list = table_[key];
  list.push_back(std::move(entry));
  std::stable_sort(list.begin(), list.end(),
                   [](const KernelEntry& a, const KernelEntry& b) { return a.priority > b.priority; });
}

const std::vector<KernelEntry>* KernelRegistry::lookup(int32_t op_id, int32_t device_type,
                                                        const DType* signature, size_t n) const {
  uint64_t key = key_of(op_id, device_type, signature, n);
  std::shared_lock lock(mutex_);
  auto it = table_.find(key);
  return it == table_.end() ? nullptr : &it->second;
}

std::vector<std::vector<DType>> KernelRegistry::signatures(int32_t op_id, int32_t device_type) const {
  std::vector<std::vector<DType>> out;
  std::shared_lock lock(mutex_);
  for (const auto& [key, list] : table_)
    if (!list.empty() && list[0].op_id == op_id && list[0].device_type == device_type)
      out.push_back(list[0].signature);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<const KernelEntry*> KernelRegistry::entries_for_device(int32_t device_type) const {
  std::vector<const KernelEntry*> out;
  std::shared_lock lock(mutex_);
  for (const auto& [key, list] : table_)
    for (const auto& e : list)
      if (e.device_type == device_type) out.push_back(&e);
  return out;
}

namespace {
struct RegistrarState {
  KernelRegistry* registry;
  int32_t device_type;
};

oar_status_t register_kernel_cb(void* handle, const oar_kernel_def* def) {
  auto* state = static_cast<RegistrarState*>(handle);
  auto fail = [&](const std::string& msg) {
    Runtime::host_api()->set_error(OAR_STATUS_INVALID_ARGUMENT, msg.c_str());
    log_message(LogLevel::kWarning, msg);
    return OAR_STATUS_INVALID_ARGUMENT;
  };
  if (def == nullptr || !OAR_STRUCT_HAS(def, oar_kernel_def, supports) || def->op_name == nullptr ||
      def->fn == nullptr)
    return fail("register_kernel: incomplete oar_kernel_def (needs struct_size, op_name, fn)");
  const OpSchema* schema = OpRegistry::instance().find(def->op_name);
  if (schema == nullptr)
    return fail(str("register_kernel: op '", def->op_name, "' is not in the catalog"));
  if (def->num_dtypes < 0 || def->num_dtypes > 9)
    return fail(str("register_kernel: op '", def->op_name, "': bad dtype count ", def->num_dtypes));
  KernelEntry e;
  e.op_id = schema->id;
  e.device_type = state->device_type;
  for (int32_t i = 0; i < def->num_dtypes; ++i) {
    if (!is_valid_dtype(def->dtypes[i]))
      return fail(str("register_kernel: op '", def->op_name, "': invalid dtype ", def->dtypes[i]));
    e.signature.push_back(static_cast<DType>(def->dtypes[i]));
  }
  e.priority = def->priority;
  e.impl_name = def->impl_name ? def->impl_name : "";
  e.fn = def->fn;
  e.supports = def->supports;
  state->registry->add(std::move(e));
  return OAR_STATUS_OK;
}
}  // namespace

oar_kernel_registrar KernelRegistry::make_registrar(int32_t device_type, const char* device_type_name,
                                                    std::vector<std::string>* /*errors*/) {
  // One state per plugin, alive for the process (plugins may register lazily).
  auto* state = new RegistrarState{this, device_type};
  {
    std::unique_lock lock(mutex_);
    registrar_states_.push_back(std::shared_ptr<void>(state, [](void* p) { delete static_cast<RegistrarState*>(p); }));
  }
  oar_kernel_registrar r{};
  r.struct_size = sizeof(r);
  r.registry = state;
  r.device_type = device_type_name;
  r.register_kernel = register_kernel_cb;
  return r;
}

}  // namespace oar
