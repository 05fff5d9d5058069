/* abi-probe: one exported function per type of the plugin ABI, taking a pointer to it, so that
 * abidw records every type (abidiff sees only types reachable from exported symbols). The
 * committed dump abi-probe.abi is the baseline; see README.md and update-abi-baseline.sh.
 * The functions do nothing and are never called. */
#include <schedhost/plugin.h>

#define SCHEDHOST_PROBE(name, type)                                                           \
  __attribute__((visibility("default"), noinline)) void schedhost_abi_probe_##name(type* p) { \
    (void)p;                                                                                  \
  }

/* Plain-data structs and tables. */
SCHEDHOST_PROBE(str, schedhost_str)
SCHEDHOST_PROBE(label, schedhost_label)
SCHEDHOST_PROBE(labels, schedhost_labels)
SCHEDHOST_PROBE(annotation, schedhost_annotation)
SCHEDHOST_PROBE(resource, schedhost_resource)
SCHEDHOST_PROBE(resources, schedhost_resources)
SCHEDHOST_PROBE(requirement, schedhost_requirement)
SCHEDHOST_PROBE(label_selector, schedhost_label_selector)
SCHEDHOST_PROBE(node_selector_term, schedhost_node_selector_term)
SCHEDHOST_PROBE(preferred_term, schedhost_preferred_term)
SCHEDHOST_PROBE(pod_affinity_term, schedhost_pod_affinity_term)
SCHEDHOST_PROBE(pod_affinity_terms, schedhost_pod_affinity_terms)
SCHEDHOST_PROBE(affinity, schedhost_affinity)
SCHEDHOST_PROBE(taint, schedhost_taint)
SCHEDHOST_PROBE(toleration, schedhost_toleration)
SCHEDHOST_PROBE(spread_constraint, schedhost_spread_constraint)
SCHEDHOST_PROBE(host_port, schedhost_host_port)
SCHEDHOST_PROBE(owner_ref, schedhost_owner_ref)
SCHEDHOST_PROBE(pod_view, schedhost_pod_view)
SCHEDHOST_PROBE(node_image, schedhost_node_image)
SCHEDHOST_PROBE(node_view, schedhost_node_view)
SCHEDHOST_PROBE(used_port, schedhost_used_port)
SCHEDHOST_PROBE(image_state, schedhost_image_state)
SCHEDHOST_PROBE(node_summary, schedhost_node_summary)
SCHEDHOST_PROBE(node_info_view, schedhost_node_info_view)
SCHEDHOST_PROBE(cluster_event, schedhost_cluster_event)
SCHEDHOST_PROBE(event_object, schedhost_event_object)
SCHEDHOST_PROBE(event_registration, schedhost_event_registration)
SCHEDHOST_PROBE(node_score, schedhost_node_score)
SCHEDHOST_PROBE(queued_pod, schedhost_queued_pod)
SCHEDHOST_PROBE(candidate, schedhost_candidate)
SCHEDHOST_PROBE(preemption_callbacks, schedhost_preemption_callbacks)
SCHEDHOST_PROBE(pdb_view, schedhost_pdb_view)
SCHEDHOST_PROBE(priority_class_view, schedhost_priority_class_view)
SCHEDHOST_PROBE(host_api, schedhost_host_api)
SCHEDHOST_PROBE(plugin_descriptor, schedhost_plugin_descriptor)
SCHEDHOST_PROBE(library_negotiation, schedhost_library_negotiation)
SCHEDHOST_PROBE(kind_decl, schedhost_kind_decl)

/* Enumerations (fields carry them as int32_t; the probe makes their enumerators visible). */
SCHEDHOST_PROBE(enum_code, enum schedhost_code)
SCHEDHOST_PROBE(enum_result, enum schedhost_result)
SCHEDHOST_PROBE(enum_selector_op, enum schedhost_selector_op)
SCHEDHOST_PROBE(enum_taint_effect, enum schedhost_taint_effect)
SCHEDHOST_PROBE(enum_toleration_op, enum schedhost_toleration_op)
SCHEDHOST_PROBE(enum_unsatisfiable_action, enum schedhost_unsatisfiable_action)
SCHEDHOST_PROBE(enum_inclusion_policy, enum schedhost_inclusion_policy)
SCHEDHOST_PROBE(enum_preemption_policy, enum schedhost_preemption_policy)
SCHEDHOST_PROBE(enum_event_resource, enum schedhost_event_resource)
SCHEDHOST_PROBE(enum_event_action, enum schedhost_event_action)
SCHEDHOST_PROBE(enum_queueing_hint, enum schedhost_queueing_hint)
SCHEDHOST_PROBE(enum_config_kind, enum schedhost_config_kind)
SCHEDHOST_PROBE(enum_log_level, enum schedhost_log_level)
SCHEDHOST_PROBE(enum_node_summary_flag, enum schedhost_node_summary_flag)
SCHEDHOST_PROBE(enum_kind_scope, enum schedhost_kind_scope)
SCHEDHOST_PROBE(enum_write_op, enum schedhost_write_op)

/* Opaque handles. */
SCHEDHOST_PROBE(host, schedhost_host)
SCHEDHOST_PROBE(cycle_state, schedhost_cycle_state)
SCHEDHOST_PROBE(status, schedhost_status)
SCHEDHOST_PROBE(config, schedhost_config)
SCHEDHOST_PROBE(pre_filter_result, schedhost_pre_filter_result)
SCHEDHOST_PROBE(post_filter_result, schedhost_post_filter_result)
SCHEDHOST_PROBE(node_status_map, schedhost_node_status_map)
SCHEDHOST_PROBE(waiting_pod, schedhost_waiting_pod)
SCHEDHOST_PROBE(node_info_copy, schedhost_node_info_copy)

/* Function types and the interned id. */
SCHEDHOST_PROBE(queueing_hint_fn, schedhost_queueing_hint_fn)
SCHEDHOST_PROBE(state_destroy_fn, schedhost_state_destroy_fn)
SCHEDHOST_PROBE(state_clone_fn, schedhost_state_clone_fn)
SCHEDHOST_PROBE(plugin_library_fn, schedhost_plugin_library_fn)
SCHEDHOST_PROBE(id, schedhost_id)
SCHEDHOST_PROBE(object_fn, schedhost_object_fn)
