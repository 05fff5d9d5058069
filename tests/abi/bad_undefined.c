/* A library that passes every check on the file but needs a symbol nobody provides: dlopen
 * with RTLD_NOW must fail, and the loader must report dlerror()'s reason with the file name. */
#include <schedhost/plugin.h>

SCHEDHOST_C_MANIFEST(0, "plugin Unresolved 1.0.0\n");

extern int schedhost_symbol_no_host_has(void);

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(schedhost_library_negotiation* io) {
  (void)io;
  return schedhost_symbol_no_host_has();
}
