/*
 * The peer-copy scenario's plugins: two "testdev" devices sharing host memory
 * that report OAR_CAPABILITY_PEER_COPY but not host-accessible memory, so the
 * core has exactly two ways to move a tensor from device 0 to device 1: the
 * ABI 1.1 memory_copy_peer entry, or d2h + h2d through a host staging buffer.
 *
 * Built twice (tests/abi/CMakeLists.txt):
 *  - liboar_plugin_peerdev.so: a current (1.1) table with memory_copy_peer;
 *  - liboar_plugin_peerdev_v10.so (PEERDEV_AS_ABI_1_0): the same table, but
 *    declared as ABI 1.0 with a struct_size that ends before memory_copy_peer,
 *    as a plugin compiled against the 1.0 headers would. The field is still
 *    filled in, so a core that read past struct_size would call it: the
 *    counter shows that it does not, and the copy takes the staging path.
 * Each copy counts the calls of its own memory_copy_peer; the test reads the
 * count through the exported peerdev_peer_copy_calls().
 */
#include <stddef.h>
#include <string.h>

#include "testdev_device.h"

#ifdef PEERDEV_AS_ABI_1_0
#define PEERDEV_NAME "peerdev_v10"
#else
#define PEERDEV_NAME "peerdev"
#endif

static oar_plugin_api g_api;
static uint64_t g_peer_copy_calls = 0;

OAR_PLUGIN_EXPORT uint64_t peerdev_peer_copy_calls(void);
uint64_t peerdev_peer_copy_calls(void) { return g_peer_copy_calls; }

static oar_status_t pd_memory_copy_peer(int32_t dst_device, void* dst, uint64_t dst_offset,
                                        int32_t src_device, const void* src, uint64_t src_offset,
                                        uint64_t size) {
  oar_status_t st = testdev_check_device(dst_device);
  if (st != OAR_STATUS_OK) return st;
  st = testdev_check_device(src_device);
  if (st != OAR_STATUS_OK) return st;
  ++g_peer_copy_calls;
  if (size == 0) return OAR_STATUS_OK;
  if (dst == NULL || src == NULL)
    return testdev_fail(OAR_STATUS_INVALID_ARGUMENT, "memory_copy_peer: null pointer");
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, (size_t)size);
  return OAR_STATUS_OK;
}

#ifdef PEERDEV_AS_ABI_1_0
/* Filled in past the 1.0 struct_size, like memory_copy_peer: a core that read
 * it would declare this flag. */
static const oar_flag_definition kHiddenFlag = {sizeof(oar_flag_definition), "OAR_PEERDEV_V10_HIDDEN",
                                                OAR_FLAG_TYPE_BOOL, "0", "Past struct_size: never read.", NULL};
static const oar_flag_definition* const kHiddenFlags[] = {&kHiddenFlag};
#endif

static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  testdev_set_host(host);
  testdev_set_device_count(2);
  testdev_set_capability_flags(OAR_CAPABILITY_PEER_COPY);
  testdev_fill_entries(api);
  api->device_type = PEERDEV_NAME;
  api->memory_copy_peer = pd_memory_copy_peer;
#ifdef PEERDEV_AS_ABI_1_0
  api->struct_size = offsetof(oar_plugin_api, memory_copy_peer);
  api->flag_count = 1;
  api->flags = kHiddenFlags;
  api->plugin_version = "1.0.0 (ABI test plugin, built as if against ABI 1.0)";
#else
  api->plugin_version = "1.1.0 (ABI test plugin with peer copies)";
#endif
  return OAR_STATUS_OK;
}

#ifdef PEERDEV_AS_ABI_1_0
OAR_PLUGIN_DEFINE_ENTRY_FOR_ABI(PEERDEV_NAME, OAR_ABI_VERSION_MAJOR, 0, &g_api, fill)
#else
OAR_PLUGIN_DEFINE_ENTRY(PEERDEV_NAME, &g_api, fill)
#endif
