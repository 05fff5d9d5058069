/* A plugin library that exports only its entry symbol but keeps thread-local data: the export
 * check must refuse it for its TLS segment alone. Never loaded. */
#include <schedhost/plugin.h>

SCHEDHOST_C_MANIFEST(0, "plugin Tls 1.0.0\n");

static _Thread_local int calls;

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(schedhost_library_negotiation* io) {
  (void)io;
  return ++calls;
}
