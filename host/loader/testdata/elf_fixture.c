/* A small shared object for elf_file_test: a manifest section, exported and imported
 * symbols of several kinds. Never loaded. */
#include <schedhost/plugin.h>
#include <stdio.h>

SCHEDHOST_C_MANIFEST(0, "plugin Fixture 1.2.3\n");

__attribute__((visibility("default"))) int fixture_data = 42;
__attribute__((visibility("default"), weak)) int fixture_weak(void) { return 1; }
__attribute__((visibility("hidden"))) int fixture_hidden(void) { return 2; }

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(schedhost_library_negotiation* io) {
  (void)io;
  return puts("imported") + fixture_hidden();
}
