/* CNodeLabel: a plugin written in plain C99 (built with -std=c99 -pedantic), proving that the
 * ABI needs nothing from C++. Filter admits nodes labelled c99=yes; Score is the node's number
 * of labels. The manifest comes from SCHEDHOST_C_MANIFEST. */
#include <schedhost/plugin.h>
#include <stdlib.h>
#include <string.h>

SCHEDHOST_C_MANIFEST(0, "plugin CNodeLabel 1.0.0\n");

typedef struct c99_instance {
  const schedhost_host_api* api;
  schedhost_id label_key;   /* "c99" */
  schedhost_id label_value; /* "yes" */
} c99_instance;

static schedhost_str c99_str(const char* s) {
  schedhost_str out;
  out.data = s;
  out.len = strlen(s);
  return out;
}

static int32_t c99_create(const schedhost_host_api* api, schedhost_host* host,
                          const schedhost_config* args, void** instance, schedhost_status* status) {
  c99_instance* self = (c99_instance*)malloc(sizeof *self);
  (void)args;
  if (self == NULL) {
    api->status_add_reason(status, c99_str("CNodeLabel: out of memory"));
    return SCHEDHOST_ERROR;
  }
  self->api = api;
  self->label_key = api->intern(host, c99_str("c99"));
  self->label_value = api->intern(host, c99_str("yes"));
  *instance = self;
  return SCHEDHOST_SUCCESS;
}

static void c99_destroy(void* instance) { free(instance); }

static int32_t c99_filter(void* instance, const schedhost_cycle_state* state,
                          const schedhost_pod_view* pod, const schedhost_node_info_view* ni,
                          schedhost_status* status) {
  const c99_instance* self = (const c99_instance*)instance;
  const schedhost_labels* labels = &ni->node->labels;
  size_t i;
  (void)state;
  (void)pod;
  for (i = 0; i < labels->len; ++i) {
    if (labels->items[i].key == self->label_key) {
      if (labels->items[i].value == self->label_value) return SCHEDHOST_SUCCESS;
      break;
    }
  }
  self->api->status_add_reason(status, c99_str("node(s) didn't have label c99=yes"));
  return SCHEDHOST_UNSCHEDULABLE;
}

static int32_t c99_score(void* instance, const schedhost_cycle_state* state,
                         const schedhost_pod_view* pod, const schedhost_node_info_view* ni,
                         int64_t* score, schedhost_status* status) {
  (void)instance;
  (void)state;
  (void)pod;
  (void)status;
  *score = (int64_t)ni->node->labels.len;
  return SCHEDHOST_SUCCESS;
}

static const schedhost_plugin_descriptor c99_descriptor = {
    sizeof(schedhost_plugin_descriptor),
    {"CNodeLabel", 10},
    {"1.0.0", 5},
    c99_create,
    c99_destroy,
    NULL, /* pre_enqueue */
    NULL, /* queue_sort_less */
    NULL, /* events_to_register */
    NULL, /* pre_filter */
    NULL, /* pre_filter_add_pod */
    NULL, /* pre_filter_remove_pod */
    c99_filter,
    NULL, /* post_filter */
    NULL, /* pre_score */
    c99_score,
    NULL, /* normalize_score */
    NULL, /* reserve */
    NULL, /* unreserve */
    NULL, /* permit */
    NULL, /* pre_bind */
    NULL, /* bind */
    NULL  /* post_bind */
};

static const schedhost_plugin_descriptor* const c99_plugins[] = {&c99_descriptor};

SCHEDHOST_EXPORT int32_t schedhost_plugin_library_v1(schedhost_library_negotiation* io) {
  static const char sdk[] = SCHEDHOST_SDK_VERSION;
  if (io == NULL || !SCHEDHOST_HAS_FIELD(io, schedhost_library_negotiation, error)) return 1;
  io->plugin_abi_major = SCHEDHOST_ABI_MAJOR;
  io->plugin_abi_minor = SCHEDHOST_ABI_MINOR;
  io->min_host_abi_minor = 0;
  io->sdk_version.data = sdk;
  io->sdk_version.len = sizeof sdk - 1;
  if (io->host_abi_major != SCHEDHOST_ABI_MAJOR) {
    io->error = c99_str("CNodeLabel is built for ABI major 1");
    return 1;
  }
  if (!SCHEDHOST_HAS_FIELD(io->api, schedhost_host_api, intern) ||
      io->api->status_add_reason == NULL || io->api->intern == NULL) {
    io->error = c99_str("CNodeLabel needs status_add_reason and intern from the host");
    return 1;
  }
  io->plugins = c99_plugins;
  io->plugins_len = 1;
  return 0;
}
