// Weak stand-ins for every entry point the plugin's loader resolves
// (vendor_loader.h's lists) that a fake does not implement, under the
// library's own symbol names: the loader finds them all, and a test that
// reaches one gets an error status, never a missing symbol. One library's
// list per build (OAR_FAKE_LIST).
#include "vendor_loader.h"

#define OAR_FAKE_STR_(x) #x
#define OAR_FAKE_STR(x) OAR_FAKE_STR_(x)
#define OAR_FAKE_STUB(prefix, name)                                                                  \
  extern "C" __attribute__((weak)) int oar_fake_stub_##prefix##name() __asm__(OAR_FAKE_STR(prefix##name)); \
  extern "C" __attribute__((weak)) int oar_fake_stub_##prefix##name() { return OAR_FAKE_ERROR; }

OAR_FAKE_LIST(OAR_FAKE_STUB)
