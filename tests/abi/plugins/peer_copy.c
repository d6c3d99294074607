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
#include <stdio.h>
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

OAR_PLUGIN_EXPORT oar_status_t oar_plugin_entry(const oar_host_api* host,
                                                const oar_plugin_api** out_plugin);

oar_status_t oar_plugin_entry(const oar_host_api* host, const oar_plugin_api** out_plugin) {
  if (host == NULL || out_plugin == NULL) return OAR_STATUS_INVALID_ARGUMENT;
  testdev_set_host(host);
  if (host->abi_major != OAR_ABI_VERSION_MAJOR) {
    char msg[160];
    sprintf(msg, "%s plugin is built for ABI %d.x but the host offers ABI %u.%u", PEERDEV_NAME,
            OAR_ABI_VERSION_MAJOR, (unsigned)host->abi_major, (unsigned)host->abi_minor);
    return testdev_fail(OAR_STATUS_VERSION_MISMATCH, msg);
  }
  testdev_set_device_count(2);
  testdev_set_capability_flags(OAR_CAPABILITY_PEER_COPY);
  testdev_fill_api(&g_api, PEERDEV_NAME);
  g_api.device_type = PEERDEV_NAME;
  g_api.memory_copy_peer = pd_memory_copy_peer;
#ifdef PEERDEV_AS_ABI_1_0
  g_api.struct_size = offsetof(oar_plugin_api, memory_copy_peer);
  g_api.abi_minor = 0;
  g_api.plugin_version = "1.0.0 (ABI test plugin, built as if against ABI 1.0)";
#else
  g_api.plugin_version = "1.1.0 (ABI test plugin with peer copies)";
#endif
  *out_plugin = &g_api;
  return OAR_STATUS_OK;
}
