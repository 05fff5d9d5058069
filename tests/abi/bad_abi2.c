/* A library claiming plugin ABI 2.0 in a hand-written manifest: a host of ABI 1 must refuse it
 * from the manifest alone, naming both versions and the fix, and never run its code. */
#define _POSIX_C_SOURCE 200809L
#include <schedhost/plugin.h>

#include "bad_libs.h"

__attribute__((section(SCHEDHOST_MANIFEST_SECTION), used)) static const char manifest[] =
    "schedhost-manifest 1\n"
    "abi 2.0\n"
    "min-host-minor 0\n"
    "sdk 2.0.0\n"
    "compiler " SCHEDHOST_COMPILER_TAG
    "\n"
    "plugin FutureMajor 2.0.0\n";

SCHEDHOST_BAD_LIB_CONSTRUCTOR("bad_abi2")

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(schedhost_library_negotiation* io) {
  io->plugin_abi_major = 2;
  io->plugin_abi_minor = 0;
  return 1;
}
