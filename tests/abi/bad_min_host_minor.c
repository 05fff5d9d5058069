/* A library that needs host ABI 1.99: a 1.0 host must refuse it from the manifest, telling the
 * operator to upgrade schedhost or rebuild against an older SDK, and never run its code. */
#define _POSIX_C_SOURCE 200809L
#include <schedhost/plugin.h>

#include "bad_libs.h"

SCHEDHOST_C_MANIFEST(99, "plugin NeedsNewerHost 1.0.0\n");

SCHEDHOST_BAD_LIB_CONSTRUCTOR("bad_min_host_minor")

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(schedhost_library_negotiation* io) {
  io->plugin_abi_major = SCHEDHOST_ABI_MAJOR;
  io->plugin_abi_minor = SCHEDHOST_ABI_MINOR;
  io->min_host_abi_minor = 99;
  return 1;
}
