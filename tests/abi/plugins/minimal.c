/*
 * liboar_plugin_minimal.so: the smallest table a 1.2 core accepts. It is
 * testdev with every optional entry left NULL, among them the twelve that
 * 1.2 made optional (streams, events, memory_set, memory_copy_d2d), and one
 * "neg" kernel. The core must load it and run an op end to end: tensors in,
 * kernel, tensors out, copies to and from the CPU.
 */
#include "testdev_device.h"

static oar_plugin_api g_api;

static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  testdev_set_host(host);
  testdev_fill_entries(api);
  api->device_type = "minimaldev";
  api->plugin_version = "0.1.0 (required entries only)";
  api->register_kernels = testdev_register_neg;
  api->shutdown = NULL;
  api->memory_get_stats = NULL;
  api->memory_copy_d2d = NULL;
  api->memory_set = NULL;
  api->stream_create = NULL;
  api->stream_destroy = NULL;
  api->stream_synchronize = NULL;
  api->stream_query = NULL;
  api->stream_wait_event = NULL;
  api->event_create = NULL;
  api->event_destroy = NULL;
  api->event_record = NULL;
  api->event_synchronize = NULL;
  api->event_query = NULL;
  return OAR_STATUS_OK;
}

OAR_PLUGIN_DEFINE_ENTRY("minimal", &g_api, fill)
