// Broken adapter drivers, one per BROKEN_* definition, each failing one check
// of the driver loader (BROKEN_OLD_MINOR is a valid older-minor driver) (test_adapter_loader.cpp expects each to be skipped
// with its reason while the process goes on).
#include <cstddef>
#include <cstring>

#include "oar/adapter/oar_adapter_driver.h"

namespace {

oar_status_t context_create(const oar_adapter_option* const*, uint32_t, oar_adapter_context_t* out) {
  *out = reinterpret_cast<oar_adapter_context_t>(1);
  return OAR_STATUS_OK;
}
void context_destroy(oar_adapter_context_t) {}
oar_status_t query(oar_adapter_context_t, const oar_adapter_model*, uint32_t, int32_t* ok, char*, size_t) {
  *ok = 0;
  return OAR_STATUS_OK;
}
oar_status_t compile(oar_adapter_context_t, const oar_adapter_model*, oar_adapter_program_t*) {
  return OAR_STATUS_UNSUPPORTED;
}
void program_destroy(oar_adapter_program_t) {}
oar_status_t execute(oar_adapter_program_t, const oar_adapter_buffer* const*, uint32_t, const oar_adapter_buffer* const*,
                     uint32_t) {
  return OAR_STATUS_UNSUPPORTED;
}

oar_flag_definition bad_option = {sizeof(oar_flag_definition), "OAR_SOMEONE_ELSES_FLAG", OAR_FLAG_TYPE_INT, "1",
                                  "a flag outside the driver's prefix", nullptr};
const oar_flag_definition* bad_options[] = {&bad_option};

oar_adapter_driver_api table;

}  // namespace

#ifdef BROKEN_NO_ENTRY
#define ENTRY oar_adapter_driver_entry_v0  // a misspelled entry: the loader finds no symbol
#else
#define ENTRY oar_adapter_driver_entry
#endif
extern "C" OAR_PLUGIN_EXPORT oar_status_t ENTRY(const oar_adapter_host_api* host, const oar_adapter_driver_api** out) {
  std::memset(&table, 0, sizeof(table));
  table.struct_size = sizeof(table);
  table.abi_major = OAR_ADAPTER_ABI_VERSION_MAJOR;
  table.abi_minor = OAR_ADAPTER_ABI_VERSION_MINOR;
  table.name = BROKEN_NAME;
  table.vendor = "oar tests";
  table.version = "0.0.1";
  table.context_create = context_create;
  table.context_destroy = context_destroy;
  table.query_operation = query;
  table.compile = compile;
  table.program_destroy = program_destroy;
  table.execute = execute;
#ifdef BROKEN_ENTRY_FAILS
  host->set_error(OAR_STATUS_DEVICE_ERROR, "no NPU card found on the PCI bus");
  return OAR_STATUS_DEVICE_ERROR;
#endif
#ifdef BROKEN_ABI_MAJOR
  table.abi_major = 99;
#endif
#ifdef BROKEN_MISSING_COMPILE
  table.compile = nullptr;
#endif
#ifdef BROKEN_OLD_MINOR
  // Not broken: a driver built before serialization and events existed
  // (a shorter table); it loads, without a cache or asynchronous runs.
  table.serialize = nullptr;
  table.struct_size = offsetof(oar_adapter_driver_api, serialize);
#endif
#ifdef BROKEN_BAD_OPTION
  table.option_count = 1;
  table.options = bad_options;
#endif
  (void)host;
  (void)bad_options;
  *out = &table;
  return OAR_STATUS_OK;
}
