/* A library whose negotiation reply is wrong in a way chosen by the host version string, so
 * loader_test can drive every check the loader makes after dlopen with one library. With any
 * other host version it refuses the host. Its manifest is valid (ABI 1.0, min host minor 0). */
#include <schedhost/plugin.h>
#include <string.h>

SCHEDHOST_C_MANIFEST(0, "plugin Negotiator 1.0.0\n");

static int32_t neg_create(const schedhost_host_api* api, schedhost_host* host,
                          const schedhost_config* args, void** instance, schedhost_status* status) {
  (void)api;
  (void)host;
  (void)args;
  (void)status;
  *instance = NULL;
  return SCHEDHOST_SUCCESS;
}

#define NEG_DESCRIPTOR(var, size, name_literal)    \
  static const schedhost_plugin_descriptor var = { \
      size, {name_literal, sizeof name_literal - 1}, {"1.0.0", 5}, neg_create}

NEG_DESCRIPTOR(neg_good, sizeof(schedhost_plugin_descriptor), "Negotiator");
NEG_DESCRIPTOR(neg_other, sizeof(schedhost_plugin_descriptor), "Other");
NEG_DESCRIPTOR(neg_small, offsetof(schedhost_plugin_descriptor, post_bind), "Small");
NEG_DESCRIPTOR(neg_unnamed, sizeof(schedhost_plugin_descriptor), "");
NEG_DESCRIPTOR(neg_spaced, sizeof(schedhost_plugin_descriptor), "Two Words");

static const schedhost_plugin_descriptor* const neg_one[] = {&neg_good};
static const schedhost_plugin_descriptor* const neg_dup[] = {&neg_good, &neg_other, &neg_good};
static const schedhost_plugin_descriptor* const neg_small_table[] = {&neg_good, &neg_small};
static const schedhost_plugin_descriptor* const neg_unnamed_table[] = {&neg_unnamed};
static const schedhost_plugin_descriptor* const neg_spaced_table[] = {&neg_spaced};
static const schedhost_plugin_descriptor* const neg_null_entry[] = {&neg_good, NULL};

static int is(const schedhost_library_negotiation* io, const char* scenario) {
  return io->host_version.len == strlen(scenario) &&
         memcmp(io->host_version.data, scenario, io->host_version.len) == 0;
}

#define NEG_TABLE(t)                              \
  do {                                            \
    io->plugins = (t);                            \
    io->plugins_len = sizeof(t) / sizeof((t)[0]); \
  } while (0)

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(schedhost_library_negotiation* io) {
  io->plugin_abi_major = SCHEDHOST_ABI_MAJOR;
  io->plugin_abi_minor = SCHEDHOST_ABI_MINOR;
  io->min_host_abi_minor = 0;
  io->sdk_version.data = SCHEDHOST_SDK_VERSION;
  io->sdk_version.len = strlen(SCHEDHOST_SDK_VERSION);
  NEG_TABLE(neg_one);
  if (is(io, "good")) return 0;
  if (is(io, "reply-minor")) {
    io->plugin_abi_minor = SCHEDHOST_ABI_MINOR + 1; /* disagrees with the manifest */
    return 0;
  }
  if (is(io, "reply-min-host")) {
    io->min_host_abi_minor = 1;
    return 0;
  }
  if (is(io, "reply-major")) {
    io->plugin_abi_major = 2;
    return 0;
  }
  if (is(io, "no-plugins")) {
    io->plugins_len = 0;
    return 0;
  }
  if (is(io, "null-table")) {
    io->plugins = NULL;
    return 0;
  }
  if (is(io, "duplicate")) {
    NEG_TABLE(neg_dup);
    return 0;
  }
  if (is(io, "small")) {
    NEG_TABLE(neg_small_table);
    return 0;
  }
  if (is(io, "unnamed")) {
    NEG_TABLE(neg_unnamed_table);
    return 0;
  }
  if (is(io, "spaced")) {
    NEG_TABLE(neg_spaced_table);
    return 0;
  }
  if (is(io, "null-entry")) {
    NEG_TABLE(neg_null_entry);
    return 0;
  }
  io->error.data = "bad_negotiation only talks to its test scenarios";
  io->error.len = strlen(io->error.data);
  return 3;
}
