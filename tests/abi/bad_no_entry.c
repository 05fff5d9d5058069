/* A library with a valid manifest whose entry symbol is misspelt: the loader must see from
 * .dynsym that schedhost_plugin_library_v1 is missing and refuse before dlopen. */
#define _POSIX_C_SOURCE 200809L
#include <schedhost/plugin.h>

#include "bad_libs.h"

SCHEDHOST_C_MANIFEST(0, "plugin NoEntry 1.0.0\n");

SCHEDHOST_BAD_LIB_CONSTRUCTOR("bad_no_entry")

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v0(schedhost_library_negotiation* io) {
  (void)io;
  return 0;
}
