/*
 * liboar_plugin_flagdev.so: a testdev plugin that declares its own flags
 * (ABI 1.2). Three are valid: OAR_FLAGDEV_MODE (choice), OAR_FLAGDEV_SCALE
 * (float) and OAR_FLAGDEV_VERBOSE (bool). The others are wrong in one way
 * each, and the core must skip them with a reason while the plugin loads.
 * The device's name shows OAR_FLAGDEV_MODE as read back through
 * host->get_flag, so a test sees the plugin read its own flag.
 */
#include <stdio.h>

#include "testdev_device.h"

#define FLAG(name, type, default_value, doc, choices) \
  { sizeof(oar_flag_definition), name, type, default_value, doc, choices }

static const oar_flag_definition kMode =
    FLAG("OAR_FLAGDEV_MODE", OAR_FLAG_TYPE_CHOICE, "fast", "How the fake device pretends to work.", "fast, exact");
static const oar_flag_definition kScale =
    FLAG("OAR_FLAGDEV_SCALE", OAR_FLAG_TYPE_FLOAT, "1.5", "A number the fake device ignores.", NULL);
static const oar_flag_definition kVerbose =
    FLAG("OAR_FLAGDEV_VERBOSE", OAR_FLAG_TYPE_BOOL, "off", "Whether the fake device would talk.", NULL);
/* Each of these is refused, for the reason in its name. */
static const oar_flag_definition kWrongPrefix =
    FLAG("OAR_OTHER_THING", OAR_FLAG_TYPE_BOOL, "0", "Named after another plugin.", NULL);
static const oar_flag_definition kCoreName =
    FLAG("OAR_DEVICE", OAR_FLAG_TYPE_STRING, "cpu", "A core flag's name.", NULL);
static const oar_flag_definition kDuplicate =
    FLAG("OAR_FLAGDEV_MODE", OAR_FLAG_TYPE_STRING, "", "Declared twice.", NULL);
static const oar_flag_definition kBadType =
    FLAG("OAR_FLAGDEV_BAD_TYPE", 42, "0", "A type that does not exist.", NULL);
static const oar_flag_definition kBadDefault =
    FLAG("OAR_FLAGDEV_BAD_DEFAULT", OAR_FLAG_TYPE_INT, "ten", "An int whose default is a word.", NULL);
static const oar_flag_definition kNoChoices =
    FLAG("OAR_FLAGDEV_NO_CHOICES", OAR_FLAG_TYPE_CHOICE, "a", "A choice without choices.", NULL);
static const oar_flag_definition kNoDoc = FLAG("OAR_FLAGDEV_NO_DOC", OAR_FLAG_TYPE_BOOL, "0", NULL, NULL);
static const oar_flag_definition kTooSmall = {sizeof(size_t), "OAR_FLAGDEV_TOO_SMALL", 0, NULL, NULL, NULL};

static const oar_flag_definition* const kFlags[] = {
    &kMode, &kScale, &kVerbose, &kWrongPrefix, &kCoreName, &kDuplicate,
    &kBadType, &kBadDefault, &kNoChoices, &kNoDoc, &kTooSmall, NULL};

static oar_plugin_api g_api;

/* testdev's properties, with the device name telling OAR_FLAGDEV_MODE. */
static oar_status_t (*g_testdev_properties)(int32_t, oar_device_properties*);
static oar_status_t fd_device_get_properties(int32_t device, oar_device_properties* out) {
  char mode[32] = "";
  oar_status_t st = g_testdev_properties(device, out);
  if (st != OAR_STATUS_OK) return st;
  if (!testdev_host()->get_flag("OAR_FLAGDEV_MODE", mode, sizeof(mode)))
    return testdev_fail(OAR_STATUS_INTERNAL, "OAR_FLAGDEV_MODE is not known to the host");
  sprintf(out->name, "flagdev (mode %s)", mode);
  return OAR_STATUS_OK;
}

static oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  testdev_set_host(host);
  testdev_fill_entries(api);
  api->device_type = "flagdev";
  g_testdev_properties = api->device_get_properties;
  api->device_get_properties = fd_device_get_properties;
  api->flag_count = sizeof(kFlags) / sizeof(kFlags[0]);
  api->flags = kFlags;
  return OAR_STATUS_OK;
}

OAR_PLUGIN_DEFINE_ENTRY("flagdev", &g_api, fill)
