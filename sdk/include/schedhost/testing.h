/*
 * schedhost testing, C API: the harness of testing.hpp (the real host in-process) for test
 * runners in other languages; the Rust crate's `schedhost_plugin::testing` is built on it.
 * libschedhost-testing.so exports these functions beside the C++ API.
 *
 * Every call takes a request and answers a JSON text the library allocates (free it with
 * schedhost_testing_free): {"ok": <result>} or {"error": "<why>"}. The requests, their fields
 * and their results mirror testing.hpp one to one and are listed in docs/plugin-authoring.md
 * ("The harness from other languages"). A handle is used by one thread at a time; a cycle must
 * be deleted before its harness.
 *
 * Version 1. Requests and result fields are only ever added.
 */
#ifndef SCHEDHOST_TESTING_H_
#define SCHEDHOST_TESTING_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this API (1). */
#define SCHEDHOST_TESTING_C_API_VERSION 1u

typedef struct schedhost_testing_harness schedhost_testing_harness;
typedef struct schedhost_testing_cycle schedhost_testing_cycle;

/** The version this library speaks. */
uint32_t schedhost_testing_api_version(void);

/** Makes a harness: options {"libraries": [paths], "plugin_dir": "..."}; *out is NULL on error. */
char* schedhost_testing_harness_new(const char* options_json, schedhost_testing_harness** out);
/** Deletes a harness (NULL is fine). */
void schedhost_testing_harness_delete(schedhost_testing_harness* harness);
/** A harness request {"op": "use_plugins" | "set_config" | "add_objects" | "plugin_names" |
 *  "pre_enqueue" | "schedule_one" | "bindings" | "events_to_register" | "hint", ...}. */
char* schedhost_testing_harness_call(schedhost_testing_harness* harness, const char* request_json);

/** Starts a cycle for the pod of `pod_yaml`; *out is NULL on error. */
char* schedhost_testing_cycle_start(schedhost_testing_harness* harness, const char* pod_yaml,
                                    schedhost_testing_cycle** out);
/** Deletes a cycle (NULL is fine). */
void schedhost_testing_cycle_delete(schedhost_testing_cycle* cycle);
/** A cycle request {"op": "pre_filter" | "pre_filter_nodes" | "add_pod" | "remove_pod" |
 *  "filter" | "filter_all" | "post_filter" | "pre_score" | "score" | "reserve" | "unreserve" |
 *  "permit" | "pre_bind" | "bind" | "post_bind", ...}. */
char* schedhost_testing_cycle_call(schedhost_testing_cycle* cycle, const char* request_json);

/** `schedctl simulate` as a function: {"op": "simulate" | "explain", "config": TOML,
 *  "manifests": YAML, "libraries": [...], "plugin_dir": "...", "base_dir": "...", "seed": N}. */
char* schedhost_testing_run(const char* request_json);

/** Frees a text this library returned (NULL is fine). */
void schedhost_testing_free(char* text);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCHEDHOST_TESTING_H_ */
