/*
 * schedhost plugin ABI, version 1.
 *
 * The one contract between the schedhost host and every plugin library, builtin or third-party.
 * A library exports exactly one symbol, schedhost_plugin_library_v1(), which negotiates the ABI
 * version with the host and hands back a table of plugin descriptors. The host calls plugins
 * through those descriptors; plugins call the host through the schedhost_host_api table.
 *
 * Rules (docs/abi.md says where each comes from):
 *  - Every struct and function table starts with `struct_size` and only grows at the end. Before
 *    reading a field, check that its offset is below struct_size (SCHEDHOST_HAS_FIELD); before
 *    calling a table entry, also check that it is non-NULL. A NULL extension point means "this
 *    plugin does not implement it".
 *  - Only C types cross: fixed-width integers, {data,len} strings, opaque handles and read-only
 *    views. Enums travel as int32_t. Nothing here throws; every function is noexcept in C++.
 *  - OWNERSHIP: a view or string handed to a callback is owned by the host and valid only until
 *    that callback returns, unless its documentation says otherwise (views of pods and node
 *    infos live for the whole scheduling cycle they were handed out in). Memory a plugin
 *    allocates is freed by the plugin; memory the host allocates is freed by the host.
 *  - Threading: lifecycle calls (negotiation, create, destroy) run on one control thread. Filter,
 *    Score and the PreFilter AddPod/RemovePod extensions may run concurrently for one pod across
 *    nodes: instance state they touch must be read-only or synchronized by the plugin. CycleState
 *    is written in PreFilter / PreScore / Reserve and read concurrently afterwards. The host holds
 *    none of its own locks while inside plugin code, and every host function is re-entrant —
 *    with one exception: QueueSort's less runs under the scheduling queue's lock (the heap is
 *    shared), so it must be a pure comparison and must not call host functions.
 *
 * Version 1.0 is the first ABI. Additions bump the minor and are marked "since: abi 1.N".
 */
#ifndef SCHEDHOST_PLUGIN_H_
#define SCHEDHOST_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define SCHEDHOST_NOEXCEPT noexcept
extern "C" {
#else
#define SCHEDHOST_NOEXCEPT
#endif

/* ------------------------------------------------------------------------------------------ */
/* Versions and helpers                                                                        */
/* ------------------------------------------------------------------------------------------ */

/** Major version of this ABI; a host loads only libraries with the same major. since: abi 1.0 */
#define SCHEDHOST_ABI_MAJOR 1
/** Minor version of this header; grows with every append. since: abi 1.0 */
#define SCHEDHOST_ABI_MINOR 8
/** Version of the SDK this header ships in (independent of host releases). since: abi 1.0 */
#define SCHEDHOST_SDK_VERSION "1.8.0"

/** Name of the single symbol a plugin library exports. since: abi 1.0 */
#define SCHEDHOST_ENTRY_SYMBOL "schedhost_plugin_library_v1"
/** Name of the ELF section that holds the library's manifest text. since: abi 1.0 */
#define SCHEDHOST_MANIFEST_SECTION "schedhost_manifest"

/** True when a struct whose first field is struct_size holds `field`. since: abi 1.0 */
#define SCHEDHOST_HAS_FIELD(ptr, type, field) \
  ((ptr) != NULL && (ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/** Highest score a Score plugin may return after NormalizeScore. since: abi 1.0 */
#define SCHEDHOST_MAX_NODE_SCORE 100
/** Lowest score a Score plugin may return after NormalizeScore. since: abi 1.0 */
#define SCHEDHOST_MIN_NODE_SCORE 0
/** Longest time Permit may ask a pod to wait: 15 minutes, in nanoseconds. since: abi 1.0 */
#define SCHEDHOST_MAX_PERMIT_TIMEOUT_NS (15LL * 60 * 1000 * 1000 * 1000)

/** A UTF-8 string view; not NUL-terminated. OWNERSHIP: see the function using it. since: abi 1.0 */
typedef struct schedhost_str {
  const char* data;
  size_t len;
} schedhost_str;

/**
 * An interned string. The host maps every label key and value, namespace, resource name,
 * topology key and node name to a 32-bit id that is stable for the life of the host process.
 * Id 0 is the empty string. The well-known ids below are fixed by the ABI. since: abi 1.0
 */
typedef uint32_t schedhost_id;

/* Well-known interned ids, fixed for ABI major 1. since: abi 1.0 */
#define SCHEDHOST_ID_EMPTY 0u
#define SCHEDHOST_ID_CPU 1u                      /* "cpu", value in millicores */
#define SCHEDHOST_ID_MEMORY 2u                   /* "memory", bytes */
#define SCHEDHOST_ID_EPHEMERAL_STORAGE 3u        /* "ephemeral-storage", bytes */
#define SCHEDHOST_ID_PODS 4u                     /* "pods", count */
#define SCHEDHOST_ID_LABEL_HOSTNAME 5u           /* "kubernetes.io/hostname" */
#define SCHEDHOST_ID_LABEL_ZONE 6u               /* "topology.kubernetes.io/zone" */
#define SCHEDHOST_ID_LABEL_REGION 7u             /* "topology.kubernetes.io/region" */
#define SCHEDHOST_ID_FIELD_METADATA_NAME 8u      /* "metadata.name" (node selector fields) */
#define SCHEDHOST_ID_NAMESPACE_DEFAULT 9u        /* "default" */
#define SCHEDHOST_ID_TAINT_UNSCHEDULABLE 10u     /* "node.kubernetes.io/unschedulable" */
#define SCHEDHOST_ID_TAINT_NOT_READY 11u         /* "node.kubernetes.io/not-ready" */
#define SCHEDHOST_ID_TAINT_UNREACHABLE 12u       /* "node.kubernetes.io/unreachable" */
#define SCHEDHOST_ID_PROTOCOL_TCP 13u            /* "TCP" */
#define SCHEDHOST_ID_PROTOCOL_UDP 14u            /* "UDP" */
#define SCHEDHOST_ID_PROTOCOL_SCTP 15u           /* "SCTP" */
#define SCHEDHOST_ID_HUGEPAGES_PREFIX 16u        /* "hugepages-" (the prefix itself) */
#define SCHEDHOST_ID_WELL_KNOWN_COUNT 17u        /* first id the host hands out dynamically */

/* ------------------------------------------------------------------------------------------ */
/* Status codes                                                                                */
/* ------------------------------------------------------------------------------------------ */

/**
 * The framework's status codes; every extension point returns one. A code the host does not
 * know is treated as SCHEDHOST_ERROR. since: abi 1.0
 */
enum schedhost_code {
  SCHEDHOST_SUCCESS = 0,
  SCHEDHOST_ERROR = 1,
  SCHEDHOST_UNSCHEDULABLE = 2,
  SCHEDHOST_UNSCHEDULABLE_AND_UNRESOLVABLE = 3,
  SCHEDHOST_WAIT = 4,
  SCHEDHOST_SKIP = 5,
  SCHEDHOST_PENDING = 6
};

/**
 * Results of host API calls (not extension-point statuses). since: abi 1.0
 */
enum schedhost_result {
  SCHEDHOST_OK = 0,
  /** The host function exists in the ABI but this host build does not provide it yet. */
  SCHEDHOST_E_NOT_AVAILABLE = -1,
  SCHEDHOST_E_INVALID_ARGUMENT = -2,
  SCHEDHOST_E_NOT_FOUND = -3,
  SCHEDHOST_E_WRONG_TYPE = -4,
  SCHEDHOST_E_OUT_OF_RANGE = -5,
  SCHEDHOST_E_INTERNAL = -6,
  /** A write's resourceVersion precondition failed: read again and retry. since: abi 1.6 */
  SCHEDHOST_E_CONFLICT = -7,
  /** A create of an object that exists. since: abi 1.6 */
  SCHEDHOST_E_ALREADY_EXISTS = -8,
  /** The cluster refused the host's credentials for the request (RBAC). since: abi 1.6 */
  SCHEDHOST_E_FORBIDDEN = -9,
  /** The cluster did not answer or failed; worth a later retry. since: abi 1.6 */
  SCHEDHOST_E_UNAVAILABLE = -10
};

/* ------------------------------------------------------------------------------------------ */
/* Opaque handles                                                                              */
/* ------------------------------------------------------------------------------------------ */

/** The host side of one plugin instance (the framework handle). since: abi 1.0 */
typedef struct schedhost_host schedhost_host;
/** Per-cycle key/value storage shared by the plugins of a profile. since: abi 1.0 */
typedef struct schedhost_cycle_state schedhost_cycle_state;
/** Where a plugin reports the reasons behind a non-success code. since: abi 1.0 */
typedef struct schedhost_status schedhost_status;
/** A node of the plugin's configuration tree (plugin_config.<Name> in TOML). since: abi 1.0 */
typedef struct schedhost_config schedhost_config;
/** Collects the node subset a PreFilter plugin returns. since: abi 1.0 */
typedef struct schedhost_pre_filter_result schedhost_pre_filter_result;
/** Collects the nominated node a PostFilter plugin returns. since: abi 1.0 */
typedef struct schedhost_post_filter_result schedhost_post_filter_result;
/** Per-node Filter statuses handed to PostFilter. since: abi 1.0 */
typedef struct schedhost_node_status_map schedhost_node_status_map;
/** A pod waiting at Permit. since: abi 1.0 */
typedef struct schedhost_waiting_pod schedhost_waiting_pod;
/** A mutable copy of a node info the host made for a plugin (preemption, simulation). since: abi 1.0 */
typedef struct schedhost_node_info_copy schedhost_node_info_copy;

/* ------------------------------------------------------------------------------------------ */
/* Object views (read-only, host-owned)                                                        */
/* ------------------------------------------------------------------------------------------ */

/** A label or node-selector pair of interned ids. since: abi 1.0 */
typedef struct schedhost_label {
  schedhost_id key;
  schedhost_id value;
} schedhost_label;

/** A label set: pairs sorted by key id, keys unique. since: abi 1.0 */
typedef struct schedhost_labels {
  const schedhost_label* items;
  size_t len;
} schedhost_labels;

/** An annotation (not interned: annotations rarely repeat). since: abi 1.0 */
typedef struct schedhost_annotation {
  schedhost_str key;
  schedhost_str value;
} schedhost_annotation;

/** A resource quantity; cpu in millicores, memory and storage in bytes. since: abi 1.0 */
typedef struct schedhost_resource {
  schedhost_id name;
  int32_t reserved0;
  int64_t value;
} schedhost_resource;

/** A resource list: entries sorted by name id, names unique. since: abi 1.0 */
typedef struct schedhost_resources {
  const schedhost_resource* items;
  size_t len;
} schedhost_resources;

/** Selector operators (label selectors and node selectors). since: abi 1.0 */
enum schedhost_selector_op {
  SCHEDHOST_OP_IN = 0,
  SCHEDHOST_OP_NOT_IN = 1,
  SCHEDHOST_OP_EXISTS = 2,
  SCHEDHOST_OP_DOES_NOT_EXIST = 3,
  SCHEDHOST_OP_GT = 4, /* node selectors only; values[0] parses as an integer */
  SCHEDHOST_OP_LT = 5  /* node selectors only */
};

/** One selector requirement. For Gt/Lt the single value's text is read with id_string(). since: abi 1.0 */
typedef struct schedhost_requirement {
  schedhost_id key;
  int32_t op; /* enum schedhost_selector_op */
  const schedhost_id* values;
  size_t values_len;
} schedhost_requirement;

/**
 * A label selector: matchLabels turned into In requirements, plus matchExpressions, all ANDed.
 * An empty selector (no requirements) matches everything; a NULL selector pointer matches
 * nothing (Kubernetes' "nil selector"). since: abi 1.0
 */
typedef struct schedhost_label_selector {
  const schedhost_requirement* requirements;
  size_t len;
} schedhost_label_selector;

/** A node selector term: label requirements and field requirements, ANDed. since: abi 1.0 */
typedef struct schedhost_node_selector_term {
  const schedhost_requirement* match_expressions;
  size_t match_expressions_len;
  /* Field requirements; the only supported key is SCHEDHOST_ID_FIELD_METADATA_NAME. */
  const schedhost_requirement* match_fields;
  size_t match_fields_len;
} schedhost_node_selector_term;

/** A preferred node selector term with its weight (1..100). since: abi 1.0 */
typedef struct schedhost_preferred_term {
  int32_t weight;
  int32_t reserved0;
  schedhost_node_selector_term term;
} schedhost_preferred_term;

/** A pod (anti-)affinity term. since: abi 1.0 */
typedef struct schedhost_pod_affinity_term {
  const schedhost_label_selector* label_selector;     /* NULL when absent: matches nothing */
  const schedhost_id* namespaces;                     /* empty with no namespace_selector: the pod's own */
  size_t namespaces_len;
  const schedhost_label_selector* namespace_selector; /* NULL when absent */
  schedhost_id topology_key;
  int32_t weight;                                     /* preferred terms: 1..100; required: 0 */
  const schedhost_id* match_label_keys;
  size_t match_label_keys_len;
  const schedhost_id* mismatch_label_keys;
  size_t mismatch_label_keys_len;
} schedhost_pod_affinity_term;

/** Terms of one kind of pod affinity. since: abi 1.0 */
typedef struct schedhost_pod_affinity_terms {
  const schedhost_pod_affinity_term* required;
  size_t required_len;
  const schedhost_pod_affinity_term* preferred;
  size_t preferred_len;
} schedhost_pod_affinity_terms;

/** A pod's affinity block. since: abi 1.0 */
typedef struct schedhost_affinity {
  /* Node affinity: required terms are ORed; has_required_node_affinity tells absence apart
   * from an empty list (an empty required list matches no node, as upstream). */
  int32_t has_required_node_affinity;
  int32_t reserved0;
  const schedhost_node_selector_term* required_node_terms;
  size_t required_node_terms_len;
  const schedhost_preferred_term* preferred_node_terms;
  size_t preferred_node_terms_len;
  schedhost_pod_affinity_terms pod_affinity;
  schedhost_pod_affinity_terms pod_anti_affinity;
} schedhost_affinity;

/** Taint effects. since: abi 1.0 */
enum schedhost_taint_effect {
  SCHEDHOST_EFFECT_NONE = 0, /* tolerations only: empty effect matches every effect */
  SCHEDHOST_EFFECT_NO_SCHEDULE = 1,
  SCHEDHOST_EFFECT_PREFER_NO_SCHEDULE = 2,
  SCHEDHOST_EFFECT_NO_EXECUTE = 3
};

/** A node taint. since: abi 1.0 */
typedef struct schedhost_taint {
  schedhost_id key;
  schedhost_id value;
  int32_t effect; /* enum schedhost_taint_effect */
  int32_t reserved0;
} schedhost_taint;

/** Toleration operators. since: abi 1.0 */
enum schedhost_toleration_op { SCHEDHOST_TOLERATION_EQUAL = 0, SCHEDHOST_TOLERATION_EXISTS = 1 };

/** A pod toleration. key 0 with op Exists tolerates every taint. since: abi 1.0 */
typedef struct schedhost_toleration {
  schedhost_id key;
  schedhost_id value;
  int32_t op;     /* enum schedhost_toleration_op */
  int32_t effect; /* enum schedhost_taint_effect; NONE matches all effects */
  int64_t toleration_seconds; /* -1 when unset */
} schedhost_toleration;

/** whenUnsatisfiable of a topology spread constraint. since: abi 1.0 */
enum schedhost_unsatisfiable_action {
  SCHEDHOST_DO_NOT_SCHEDULE = 0,
  SCHEDHOST_SCHEDULE_ANYWAY = 1
};

/** nodeAffinityPolicy / nodeTaintsPolicy of a spread constraint. since: abi 1.0 */
enum schedhost_inclusion_policy {
  SCHEDHOST_POLICY_UNSET = 0, /* the field's upstream default applies */
  SCHEDHOST_POLICY_HONOR = 1,
  SCHEDHOST_POLICY_IGNORE = 2
};

/** A topology spread constraint. since: abi 1.0 */
typedef struct schedhost_spread_constraint {
  int32_t max_skew;
  int32_t when_unsatisfiable; /* enum schedhost_unsatisfiable_action */
  schedhost_id topology_key;
  int32_t min_domains;        /* 0 when unset */
  const schedhost_label_selector* label_selector; /* NULL when absent */
  int32_t node_affinity_policy; /* enum schedhost_inclusion_policy */
  int32_t node_taints_policy;   /* enum schedhost_inclusion_policy */
  const schedhost_id* match_label_keys;
  size_t match_label_keys_len;
} schedhost_spread_constraint;

/** A host port a container asks for. since: abi 1.0 */
typedef struct schedhost_host_port {
  schedhost_id protocol; /* SCHEDHOST_ID_PROTOCOL_* */
  int32_t port;          /* hostPort, 1..65535 */
  schedhost_str host_ip; /* "" means 0.0.0.0 */
} schedhost_host_port;

/** An owner reference. since: abi 1.0 */
typedef struct schedhost_owner_ref {
  schedhost_str kind;
  schedhost_str name;
  schedhost_str uid;
  int32_t controller;
  int32_t reserved0;
} schedhost_owner_ref;

/** preemptionPolicy. since: abi 1.0 */
enum schedhost_preemption_policy {
  SCHEDHOST_PREEMPT_LOWER_PRIORITY = 0,
  SCHEDHOST_PREEMPT_NEVER = 1
};

/**
 * A pod as plugins see it. OWNERSHIP: host-owned; a pod view handed to an extension point stays
 * valid until the scheduling or binding cycle that handed it out ends. The pointer also
 * identifies the pod to host functions: pass back only pointers the host gave you.
 * since: abi 1.0
 */
typedef struct schedhost_pod_view {
  size_t struct_size;
  schedhost_str name;
  schedhost_str namespace_name;
  schedhost_id namespace_id;
  int32_t priority;              /* resolved from priorityClassName; 0 when none */
  schedhost_str uid;
  schedhost_str scheduler_name;
  schedhost_str node_name;       /* spec.nodeName; empty when not bound */
  schedhost_str nominated_node_name;
  int64_t creation_timestamp_ns; /* Unix time; 0 when unknown */
  uint64_t resource_version;
  schedhost_labels labels;
  const schedhost_annotation* annotations;
  size_t annotations_len;
  const schedhost_owner_ref* owner_refs;
  size_t owner_refs_len;
  schedhost_labels node_selector;
  const schedhost_affinity* affinity; /* NULL when the pod has none */
  const schedhost_toleration* tolerations;
  size_t tolerations_len;
  const schedhost_spread_constraint* spread_constraints;
  size_t spread_constraints_len;
  /* Effective requests: max(init containers, sum of containers) + overhead, as upstream. */
  schedhost_resources requests;
  /* Requests with upstream's non-zero defaults for cpu (100m) and memory (200Mi) when unset. */
  int64_t non_zero_milli_cpu;
  int64_t non_zero_memory;
  const schedhost_host_port* host_ports;
  size_t host_ports_len;
  const schedhost_str* images; /* container images: init containers first, then containers */
  size_t images_len;
  const schedhost_str* scheduling_gates;
  size_t scheduling_gates_len;
  int32_t preemption_policy; /* enum schedhost_preemption_policy */
  int32_t reserved0;
  schedhost_str priority_class_name;
  /* --- Appended in abi 1.8: the volumes a plugin evaluates. --- */
  /**
   * The pod's volumes whose source has a meaning for scheduling (persistentVolumeClaim,
   * ephemeral, the in-tree disks and any source the host does not know; not emptyDir,
   * configMap, secret, projected, hostPath, csi and the like), in spec.volumes order: an ARRAY
   * of TABLEs, each entry as the API server serves it ({"name": ..., "persistentVolumeClaim":
   * {"claimName": ...}}), read with the config_* accessors like object_get's objects
   * (config_location names the pod). NULL when the pod has none, and from a host before 1.8
   * (its view is shorter: check struct_size, as the C++ SDK's Pod::volumes() does).
   * since: abi 1.8
   */
  const schedhost_config* volumes;
} schedhost_pod_view;

/** A container image present on a node. since: abi 1.0 */
typedef struct schedhost_node_image {
  const schedhost_str* names;
  size_t names_len;
  int64_t size_bytes;
} schedhost_node_image;

/**
 * A node as plugins see it. OWNERSHIP: host-owned, valid like the node info that holds it.
 * since: abi 1.0
 */
typedef struct schedhost_node_view {
  size_t struct_size;
  schedhost_str name;
  schedhost_id name_id;
  int32_t unschedulable;
  schedhost_labels labels;
  const schedhost_taint* taints;
  size_t taints_len;
  schedhost_resources allocatable;
  schedhost_resources capacity;
  const schedhost_node_image* images;
  size_t images_len;
  uint64_t resource_version;
} schedhost_node_view;

/** A host port in use on a node. since: abi 1.0 */
typedef struct schedhost_used_port {
  schedhost_id protocol;
  int32_t port;
  schedhost_str host_ip;
} schedhost_used_port;

/** An image's state summarised across the cluster (ImageLocality). since: abi 1.0 */
typedef struct schedhost_image_state {
  schedhost_str name; /* normalised image name */
  int64_t size_bytes;
  int32_t num_nodes;  /* nodes in the snapshot that hold the image */
  int32_t reserved0;
} schedhost_image_state;

/** Bits of schedhost_node_summary.flags. since: abi 1.3 */
enum schedhost_node_summary_flag {
  SCHEDHOST_NODE_SUMMARY_VALID = 1 << 0,        /* the host filled the summary */
  SCHEDHOST_NODE_SUMMARY_HAS_NODE = 1 << 1,     /* the view's node is not NULL */
  SCHEDHOST_NODE_SUMMARY_UNSCHEDULABLE = 1 << 2 /* node->unschedulable is non-zero */
};

/**
 * What Filter and Score read of nearly every node, in one place: copies of figures that are
 * also in the node info view, the node view and their resource arrays, so a loop over thousands
 * of nodes reads one or two cache lines per node instead of following pointers into seven or
 * eight. Valid only when `flags` has SCHEDHOST_NODE_SUMMARY_VALID and the host speaks abi 1.3 or
 * newer (an older host's view ends before it); otherwise read the view and its arrays (the C++
 * SDK's NodeInfo::summary() checks both). Resources absent from the node count 0. Counts
 * saturate at UINT32_MAX. since: abi 1.3
 */
typedef struct schedhost_node_summary {
  int64_t allocatable_milli_cpu;        /* node->allocatable, cpu */
  int64_t allocatable_memory;           /* node->allocatable, memory */
  int64_t allocatable_pods;             /* node->allocatable, pods */
  int64_t requested_milli_cpu;          /* requested, cpu */
  int64_t requested_memory;             /* requested, memory */
  int64_t non_zero_requested_milli_cpu; /* as the view's field of that name */
  int64_t non_zero_requested_memory;    /* as the view's field of that name */
  uint32_t pods_len;                    /* the view's pods_len */
  schedhost_id name_id;                 /* node->name_id; SCHEDHOST_ID_EMPTY without a node */
  uint32_t flags;                       /* enum schedhost_node_summary_flag bits */
  uint32_t taints_len;                  /* node->taints_len */
  uint32_t image_states_len;            /* the view's image_states_len */
  uint32_t reserved0;
} schedhost_node_summary;

/**
 * A node with the pods on it and what they use. OWNERSHIP: host-owned; valid until the cycle
 * that handed it out ends. since: abi 1.0
 */
typedef struct schedhost_node_info_view {
  size_t struct_size;
  const schedhost_node_view* node;
  const schedhost_pod_view* const* pods;
  size_t pods_len;
  const schedhost_pod_view* const* pods_with_affinity;
  size_t pods_with_affinity_len;
  const schedhost_pod_view* const* pods_with_required_anti_affinity;
  size_t pods_with_required_anti_affinity_len;
  schedhost_resources requested;
  int64_t non_zero_requested_milli_cpu;
  int64_t non_zero_requested_memory;
  const schedhost_used_port* used_ports;
  size_t used_ports_len;
  const schedhost_image_state* image_states; /* sorted by name */
  size_t image_states_len;
  uint64_t generation;
  /* --- abi 1.3 --- */
  schedhost_node_summary summary; /* see schedhost_node_summary for when it is valid */
} schedhost_node_info_view;

/* ------------------------------------------------------------------------------------------ */
/* Cluster events (EnqueueExtensions)                                                          */
/* ------------------------------------------------------------------------------------------ */

/**
 * Kinds of objects a cluster event is about. since: abi 1.0
 *
 * - SCHEDHOST_RESOURCE_POD: a registration for POD covers both ASSIGNED_POD and
 *   UNSCHEDULED_POD events (as upstream's Pod). The host never sends an event with POD itself.
 * - SCHEDHOST_RESOURCE_ASSIGNED_POD: a pod bound to a node was added (a binding or a pod
 *   created bound), updated or deleted. The event object is the bound pod; an update carries
 *   the old pod too. Register for it when another pod leaving or changing can make room
 *   (resources, ports, anti-affinity, spread).
 * - SCHEDHOST_RESOURCE_UNSCHEDULED_POD: a pending pod other than the rejected one changed
 *   (upstream uses it for gangs). The host sends none today; a registration for it never
 *   fires except through WILDCARD events.
 * - SCHEDHOST_RESOURCE_NODE: a node was added, deleted or updated. The update's action bits
 *   say what changed (allocatable, labels, taints, conditions, annotations), and the hint gets
 *   the old and the new node.
 * - SCHEDHOST_RESOURCE_PDB, SCHEDHOST_RESOURCE_PRIORITY_CLASS: accepted in registrations. The
 *   host sends no such events: neither kind changes whether a pod fits.
 * - SCHEDHOST_RESOURCE_WILDCARD: in a registration, any resource. The host sends a WILDCARD
 *   event when every parked pod must be retried whatever its plugins said (after a profile
 *   swap, or when a pod has stayed unschedulable for the maximum time). Such an event matches
 *   every registration and is never passed to a hint.
 * - SCHEDHOST_RESOURCE_DECLARED_KIND + i (SCHEDHOST_KIND_EVENT(i)): an object of the kind the
 *   plugin declares at index i of its descriptor's `kinds` was added, updated or deleted (an
 *   update carries every SCHEDHOST_ACTION_UPDATE bit). The hint gets the objects in the event
 *   objects' `object` field (old: NULL for an add; new: NULL for a delete), and the event's
 *   resource as SCHEDHOST_KIND_EVENT(i) with the plugin's own index of the kind (a wildcard
 *   registration's hint gets an event of a kind the plugin does not declare as WILDCARD, the
 *   object set). A registration of an index past kinds_len fails the profile's build with an
 *   error naming the plugin. since: abi 1.6
 */
enum schedhost_event_resource {
  SCHEDHOST_RESOURCE_POD = 0,
  SCHEDHOST_RESOURCE_ASSIGNED_POD = 1,
  SCHEDHOST_RESOURCE_UNSCHEDULED_POD = 2,
  SCHEDHOST_RESOURCE_NODE = 3,
  SCHEDHOST_RESOURCE_PDB = 4,
  SCHEDHOST_RESOURCE_PRIORITY_CLASS = 5,
  SCHEDHOST_RESOURCE_WILDCARD = 6,
  SCHEDHOST_RESOURCE_DECLARED_KIND = 0x10000 /* since: abi 1.6 */
};

/** The event resource of the plugin's declared kind at index i of `kinds`. since: abi 1.6 */
#define SCHEDHOST_KIND_EVENT(i) ((int32_t)SCHEDHOST_RESOURCE_DECLARED_KIND + (int32_t)(i))

/** Action bits of a cluster event; combine with |. since: abi 1.0 */
enum schedhost_event_action {
  SCHEDHOST_ACTION_ADD = 1 << 0,
  SCHEDHOST_ACTION_DELETE = 1 << 1,
  SCHEDHOST_ACTION_UPDATE_NODE_ALLOCATABLE = 1 << 2,
  SCHEDHOST_ACTION_UPDATE_NODE_LABEL = 1 << 3,
  SCHEDHOST_ACTION_UPDATE_NODE_TAINT = 1 << 4,
  SCHEDHOST_ACTION_UPDATE_NODE_CONDITION = 1 << 5,
  SCHEDHOST_ACTION_UPDATE_NODE_ANNOTATION = 1 << 6,
  SCHEDHOST_ACTION_UPDATE_POD_LABEL = 1 << 7,
  SCHEDHOST_ACTION_UPDATE_POD_SCALE_DOWN = 1 << 8,
  SCHEDHOST_ACTION_UPDATE_POD_TOLERATIONS = 1 << 9,
  SCHEDHOST_ACTION_UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10,
  SCHEDHOST_ACTION_UPDATE = 0x7fc, /* every update bit */
  SCHEDHOST_ACTION_ALL = 0x7ff
};

/** A cluster event a plugin registers for. since: abi 1.0 */
typedef struct schedhost_cluster_event {
  int32_t resource; /* enum schedhost_event_resource */
  int32_t actions;  /* enum schedhost_event_action bits */
} schedhost_cluster_event;

/** Answers of a queueing hint. since: abi 1.0 */
enum schedhost_queueing_hint { SCHEDHOST_QUEUE_SKIP = 0, SCHEDHOST_QUEUE = 1 };

/**
 * An object an event is about: exactly one of pod / node / object is set (PDB and PriorityClass
 * events carry none). Host-owned, valid during the hint. since: abi 1.0
 */
typedef struct schedhost_event_object {
  const schedhost_pod_view* pod;
  const schedhost_node_view* node;
  /* --- Appended in abi 1.6. --- */
  /**
   * An object of a declared kind (SCHEDHOST_KIND_EVENT events only; read it with the config_*
   * accessors, as object_get's). A host before 1.6 sends no such event, so a plugin reads this
   * field only for them. since: abi 1.6
   */
  const schedhost_config* object;
} schedhost_event_object;

/**
 * A queueing hint: decides whether `event` may make `pod` (rejected earlier by this plugin)
 * schedulable. Runs on the queue's thread, without the host's locks. Returns
 * SCHEDHOST_QUEUE or SCHEDHOST_QUEUE_SKIP; any other value is taken as SCHEDHOST_QUEUE.
 * since: abi 1.0
 */
typedef int32_t (*schedhost_queueing_hint_fn)(void* instance, const schedhost_pod_view* pod,
                                              const schedhost_cluster_event* event,
                                              const schedhost_event_object* old_obj,
                                              const schedhost_event_object* new_obj)
    SCHEDHOST_NOEXCEPT;

/** An event registration with its optional hint (NULL: always queue). since: abi 1.0 */
typedef struct schedhost_event_registration {
  schedhost_cluster_event event;
  schedhost_queueing_hint_fn hint;
} schedhost_event_registration;

/** A node and its score, as NormalizeScore sees them. since: abi 1.0 */
typedef struct schedhost_node_score {
  const schedhost_node_info_view* node_info;
  int64_t score;
} schedhost_node_score;

/** A pod in the queue, as QueueSort sees it. since: abi 1.0 */
typedef struct schedhost_queued_pod {
  size_t struct_size;
  const schedhost_pod_view* pod;
  int64_t timestamp_ns; /* when the pod was last added to the queue (monotonic) */
  int32_t attempts;
  int32_t reserved0;
} schedhost_queued_pod;

/* ------------------------------------------------------------------------------------------ */
/* Plugin configuration tree                                                                   */
/* ------------------------------------------------------------------------------------------ */

/** Kinds of configuration values. since: abi 1.0 */
enum schedhost_config_kind {
  SCHEDHOST_CONFIG_NONE = 0, /* absent */
  SCHEDHOST_CONFIG_TABLE = 1,
  SCHEDHOST_CONFIG_ARRAY = 2,
  SCHEDHOST_CONFIG_STRING = 3,
  SCHEDHOST_CONFIG_INT = 4,
  SCHEDHOST_CONFIG_FLOAT = 5,
  SCHEDHOST_CONFIG_BOOL = 6
};

/* ------------------------------------------------------------------------------------------ */
/* Declared API kinds (objects beyond pods and nodes)                                          */
/* ------------------------------------------------------------------------------------------ */

/** Scope of a declared kind. since: abi 1.5 */
enum schedhost_kind_scope { SCHEDHOST_KIND_CLUSTER = 0, SCHEDHOST_KIND_NAMESPACED = 1 };

/**
 * An API kind a plugin reads, e.g. {"scheduling.x-k8s.io", "v1alpha1", "podgroups",
 * "PodGroup", SCHEDHOST_KIND_NAMESPACED}. The host keeps one mirror per group and resource,
 * shared by every plugin that declares it, and fills it before the plugin's first cycle:
 * in Kubernetes mode from the API server, in embedded mode from the objects applied to the
 * host (schedctl apply, simulate -f), which accepts a document of the kind only while a loaded
 * plugin declares it. Two declarations of one group and resource must agree on version, kind
 * and scope. OWNERSHIP: plugin-owned, static (lives as long as the library). since: abi 1.5
 */
typedef struct schedhost_kind_decl {
  size_t struct_size;
  schedhost_str group;    /* API group; "" for the core group (apiVersion "v1") */
  schedhost_str version;  /* e.g. "v1alpha1" */
  schedhost_str resource; /* plural, lower case, e.g. "podgroups" */
  schedhost_str kind;     /* e.g. "PodGroup" */
  int32_t scope;          /* enum schedhost_kind_scope */
  int32_t reserved0;      /* zero */
  /** Mirror only the objects matching this label selector (kubectl syntax); "" mirrors all. A
   *  host that cannot honour a selector refuses the plugin rather than mirror more. */
  schedhost_str label_selector;
  /** Likewise for a field selector ("metadata.namespace=team-a"); "" mirrors all. */
  schedhost_str field_selector;
} schedhost_kind_decl;

/**
 * What object_write does with its body (JSON text). since: abi 1.6
 * - CREATE: the body is the whole object; SCHEDHOST_E_ALREADY_EXISTS when it exists.
 * - UPDATE: the body is the whole object; its metadata.resourceVersion, when set, must be the
 *   stored one (SCHEDHOST_E_CONFLICT otherwise).
 * - UPDATE_STATUS: the status subresource: only the body's status is stored.
 * - MERGE_PATCH: an RFC 7386 JSON merge patch of the object (kubectl patch --type merge).
 *   Strategic merge patches are not offered: the API server refuses them for custom resources.
 * - MERGE_PATCH_STATUS: a merge patch of the status subresource.
 * - DELETE: the body is ignored.
 * Whether UPDATE and MERGE_PATCH change the status too is the kind's choice in Kubernetes mode
 * (a CRD with subresources.status ignores it); the embedded store keeps whatever is written.
 * Write status with the _STATUS ops to be right in both.
 */
enum schedhost_write_op {
  SCHEDHOST_WRITE_CREATE = 0,
  SCHEDHOST_WRITE_UPDATE = 1,
  SCHEDHOST_WRITE_UPDATE_STATUS = 2,
  SCHEDHOST_WRITE_MERGE_PATCH = 3,
  SCHEDHOST_WRITE_MERGE_PATCH_STATUS = 4,
  SCHEDHOST_WRITE_DELETE = 5
};

/** Callback of object_list: non-zero stops the listing. since: abi 1.5 */
typedef int32_t (*schedhost_object_fn)(void* user, const schedhost_config* object)
    SCHEDHOST_NOEXCEPT;

/* ------------------------------------------------------------------------------------------ */
/* Preemption toolkit types                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** A preemption candidate: a node and the victims that would be evicted there. since: abi 1.0 */
typedef struct schedhost_candidate {
  size_t struct_size;
  schedhost_str node_name;
  const schedhost_pod_view* const* victims;
  size_t victims_len;
  int32_t num_pdb_violations;
  int32_t reserved0;
} schedhost_candidate;

/**
 * Callbacks a plugin may give the preemption toolkit to override victim selection; NULL
 * entries use the default (upstream DefaultPreemption) behaviour. since: abi 1.0
 */
typedef struct schedhost_preemption_callbacks {
  size_t struct_size;
  void* user;
  /** Whether `victim` may be evicted for `preemptor` at all (default: lower priority). */
  int32_t (*is_eligible_victim)(void* user, const schedhost_pod_view* preemptor,
                                const schedhost_pod_view* victim) SCHEDHOST_NOEXCEPT;
  /** Whether preemption makes sense for `pod` (default: preemptionPolicy and nomination checks). */
  int32_t (*pod_eligible)(void* user, const schedhost_pod_view* pod) SCHEDHOST_NOEXCEPT;
  /** Orders candidates; returns non-zero when `a` is better than `b` (default: upstream ties). */
  int32_t (*candidate_less)(void* user, const schedhost_candidate* a,
                            const schedhost_candidate* b) SCHEDHOST_NOEXCEPT;
  /** Bounds of the candidate search (upstream's minCandidateNodesPercentage, 0..100, and
   *  minCandidateNodesAbsolute, >= 0): the dry run stops after max(nodes * percentage / 100,
   *  absolute) candidates. Both 0 (or a struct too small to hold them): defaults 10 and 100.
   *  since: abi 1.1 */
  int32_t min_candidate_nodes_percentage;
  int32_t min_candidate_nodes_absolute;
} schedhost_preemption_callbacks;

/** A PodDisruptionBudget as plugins see it. since: abi 1.0 */
typedef struct schedhost_pdb_view {
  size_t struct_size;
  schedhost_str name;
  schedhost_id namespace_id;
  int32_t disruptions_allowed;
  const schedhost_label_selector* selector;
} schedhost_pdb_view;

/** A PriorityClass as plugins see it. since: abi 1.0 */
typedef struct schedhost_priority_class_view {
  size_t struct_size;
  schedhost_str name;
  int32_t value;
  int32_t global_default;
  int32_t preemption_policy; /* enum schedhost_preemption_policy */
  int32_t reserved0;
} schedhost_priority_class_view;

/* ------------------------------------------------------------------------------------------ */
/* The host API: what plugins may ask of the host                                              */
/* ------------------------------------------------------------------------------------------ */

/** Log levels. since: abi 1.0 */
enum schedhost_log_level {
  SCHEDHOST_LOG_TRACE = 0,
  SCHEDHOST_LOG_DEBUG = 1,
  SCHEDHOST_LOG_INFO = 2,
  SCHEDHOST_LOG_WARN = 3,
  SCHEDHOST_LOG_ERROR = 4
};

/** Destroys a cycle-state value (plugin-owned). since: abi 1.0 */
typedef void (*schedhost_state_destroy_fn)(void* data) SCHEDHOST_NOEXCEPT;
/** Deep-copies a cycle-state value; returns NULL on failure. since: abi 1.0 */
typedef void* (*schedhost_state_clone_fn)(const void* data) SCHEDHOST_NOEXCEPT;

/**
 * The host function table. Every entry may be called from any thread unless it says otherwise;
 * none blocks on the host's scheduling locks. Functions whose host side arrives in a later host
 * release return SCHEDHOST_E_NOT_AVAILABLE in this one; each says so below.
 * OWNERSHIP: the table itself is host-owned and outlives every plugin instance.
 * since: abi 1.0
 */
typedef struct schedhost_host_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;

  /* --- status, logging, memory ------------------------------------------------------------ */

  /** Adds a reason (copied) to a status: one reason per distinct cause, e.g. "Insufficient cpu".
   *  A NULL status is ignored. */
  void (*status_add_reason)(schedhost_status* status, schedhost_str reason) SCHEDHOST_NOEXCEPT;
  /** Logs through the host's logger, tagged with the plugin's name. */
  void (*log)(schedhost_host* host, int32_t level, schedhost_str message) SCHEDHOST_NOEXCEPT;
  /** Allocates host memory (malloc semantics, 16-byte aligned). */
  void* (*alloc)(size_t size) SCHEDHOST_NOEXCEPT;
  /** Frees memory from alloc(); NULL is a no-op. */
  void (*free)(void* ptr) SCHEDHOST_NOEXCEPT;

  /* --- interning ----------------------------------------------------------------------------- */

  /** Interns a string; returns its id (never fails; ids are stable for the process). */
  schedhost_id (*intern)(schedhost_host* host, schedhost_str s) SCHEDHOST_NOEXCEPT;
  /** Looks a string up without interning it; returns 0 when unknown (and for ""). */
  schedhost_id (*lookup_id)(schedhost_host* host, schedhost_str s) SCHEDHOST_NOEXCEPT;
  /** Text of an id; OWNERSHIP: host-owned and valid for the life of the process. */
  schedhost_str (*id_string)(schedhost_host* host, schedhost_id id) SCHEDHOST_NOEXCEPT;

  /* --- CycleState ---------------------------------------------------------------------------- */

  /**
   * Stores `data` under `key`, replacing (and destroying) any previous value. OWNERSHIP: the
   * host owns `data` from now on and calls `destroy` (may be NULL) when the cycle ends; `clone`
   * (may be NULL: the value is then not copied into cloned states) copies it for preemption
   * simulation. Writes happen in PreFilter, PreScore, Reserve and Permit, never concurrently.
   */
  int32_t (*cycle_state_write)(schedhost_cycle_state* state, schedhost_id key, void* data,
                               schedhost_state_destroy_fn destroy,
                               schedhost_state_clone_fn clone) SCHEDHOST_NOEXCEPT;
  /** Reads the value under `key` into *out; SCHEDHOST_E_NOT_FOUND when there is none. */
  int32_t (*cycle_state_read)(const schedhost_cycle_state* state, schedhost_id key,
                              void** out) SCHEDHOST_NOEXCEPT;
  /** Deletes (and destroys) the value under `key`; OK when there was none. */
  int32_t (*cycle_state_delete)(schedhost_cycle_state* state, schedhost_id key) SCHEDHOST_NOEXCEPT;

  /* --- configuration tree (plugin arguments) --------------------------------------------- */

  /** Kind of a config node; NULL is SCHEDHOST_CONFIG_NONE. */
  int32_t (*config_kind)(const schedhost_config* node) SCHEDHOST_NOEXCEPT;
  /** Child of a table by key; NULL when absent or `node` is not a table. */
  const schedhost_config* (*config_get)(const schedhost_config* node,
                                        schedhost_str key) SCHEDHOST_NOEXCEPT;
  /** Number of entries of a table or array; 0 for anything else. */
  size_t (*config_len)(const schedhost_config* node) SCHEDHOST_NOEXCEPT;
  /** Entry `index` of an array or table (in file order), its key into *key for tables. */
  const schedhost_config* (*config_at)(const schedhost_config* node, size_t index,
                                       schedhost_str* key) SCHEDHOST_NOEXCEPT;
  /** Reads a string; SCHEDHOST_E_WRONG_TYPE otherwise. OWNERSHIP: valid while the config lives
   *  (until the plugin instance is destroyed). */
  int32_t (*config_string)(const schedhost_config* node, schedhost_str* out) SCHEDHOST_NOEXCEPT;
  /** Reads an integer; SCHEDHOST_E_WRONG_TYPE otherwise. */
  int32_t (*config_int)(const schedhost_config* node, int64_t* out) SCHEDHOST_NOEXCEPT;
  /** Reads a float (integers convert); SCHEDHOST_E_WRONG_TYPE otherwise. */
  int32_t (*config_float)(const schedhost_config* node, double* out) SCHEDHOST_NOEXCEPT;
  /** Reads a boolean; SCHEDHOST_E_WRONG_TYPE otherwise. */
  int32_t (*config_bool)(const schedhost_config* node, int32_t* out) SCHEDHOST_NOEXCEPT;
  /** "file:line:col" of a config node, for error messages; "" when unknown. */
  schedhost_str (*config_location)(const schedhost_config* node) SCHEDHOST_NOEXCEPT;

  /* --- snapshot (the cycle's view of the cluster) ------------------------------------------ */

  /** Number of nodes in the snapshot of the current cycle. */
  size_t (*snapshot_node_count)(schedhost_host* host) SCHEDHOST_NOEXCEPT;
  /** Node info `index` of the snapshot, NULL when out of range. Valid for the cycle. */
  const schedhost_node_info_view* (*snapshot_node_at)(schedhost_host* host,
                                                      size_t index) SCHEDHOST_NOEXCEPT;
  /** Node info by node name; NULL when the snapshot has no such node. Valid for the cycle. */
  const schedhost_node_info_view* (*snapshot_get)(schedhost_host* host,
                                                  schedhost_str node_name) SCHEDHOST_NOEXCEPT;
  /** Node infos holding at least one pod with (anti-)affinity: *out host-owned, for the cycle. */
  int32_t (*snapshot_have_pods_with_affinity)(schedhost_host* host,
                                              const schedhost_node_info_view* const** out,
                                              size_t* out_len) SCHEDHOST_NOEXCEPT;
  /** Node infos holding a pod with required anti-affinity: *out host-owned, for the cycle. */
  int32_t (*snapshot_have_pods_with_required_anti_affinity)(
      schedhost_host* host, const schedhost_node_info_view* const** out,
      size_t* out_len) SCHEDHOST_NOEXCEPT;

  /* --- extension-point results -------------------------------------------------------------- */

  /** PreFilter: restricts the nodes to consider to `names` (copied); may be called once. */
  int32_t (*pre_filter_result_set_nodes)(schedhost_pre_filter_result* result,
                                         const schedhost_str* names,
                                         size_t len) SCHEDHOST_NOEXCEPT;
  /** PostFilter: the node the pod is nominated to (copied). */
  int32_t (*post_filter_result_set_nominated_node)(schedhost_post_filter_result* result,
                                                   schedhost_str node_name) SCHEDHOST_NOEXCEPT;
  /** PostFilter: number of nodes in the Filter status map. */
  size_t (*node_status_count)(const schedhost_node_status_map* map) SCHEDHOST_NOEXCEPT;
  /** PostFilter: node `index` of the status map, its code, and its joined reasons (host-owned). */
  int32_t (*node_status_at)(const schedhost_node_status_map* map, size_t index,
                            schedhost_str* node_name, int32_t* code,
                            schedhost_str* message) SCHEDHOST_NOEXCEPT;

  /* --- node-label and selector helpers ------------------------------------------------------ */

  /** Non-zero when `labels` satisfy `selector` (NULL selector: no match). */
  int32_t (*label_selector_matches)(schedhost_host* host, const schedhost_label_selector* selector,
                                    schedhost_labels labels) SCHEDHOST_NOEXCEPT;
  /** Non-zero when `node` satisfies `term` (labels and metadata.name fields). */
  int32_t (*node_selector_term_matches)(schedhost_host* host,
                                        const schedhost_node_selector_term* term,
                                        const schedhost_node_view* node) SCHEDHOST_NOEXCEPT;

  /* --- nominator ------------------------------------------------------------------------------ */

  /** Pods nominated to `node_name`: *out host-owned, valid for the cycle. */
  int32_t (*nominated_pods_for_node)(schedhost_host* host, schedhost_str node_name,
                                     const schedhost_pod_view* const** out,
                                     size_t* out_len) SCHEDHOST_NOEXCEPT;

  /* --- waiting pods --------------------------------------------------------------------------- */

  /** Calls `fn` for each pod waiting at Permit in this profile; stops when fn returns non-zero. */
  int32_t (*waiting_pods_iterate)(schedhost_host* host,
                                  int32_t (*fn)(void* user, schedhost_waiting_pod* wp),
                                  void* user) SCHEDHOST_NOEXCEPT;
  /** The waiting pod with `uid`, or NULL. */
  schedhost_waiting_pod* (*waiting_pod_get)(schedhost_host* host,
                                            schedhost_str uid) SCHEDHOST_NOEXCEPT;
  /** The pod of a waiting pod (host-owned, valid while it waits). */
  const schedhost_pod_view* (*waiting_pod_pod)(schedhost_waiting_pod* wp) SCHEDHOST_NOEXCEPT;
  /** Allows the waiting pod on behalf of `plugin_name`; it binds once every plugin allowed. */
  int32_t (*waiting_pod_allow)(schedhost_waiting_pod* wp,
                               schedhost_str plugin_name) SCHEDHOST_NOEXCEPT;
  /** Rejects the waiting pod with `message`; it goes back to the queue. */
  int32_t (*waiting_pod_reject)(schedhost_waiting_pod* wp, schedhost_str plugin_name,
                                schedhost_str message) SCHEDHOST_NOEXCEPT;

  /* --- simulation on node-info copies --------------------------------------------------------- */

  /** Copies a node info for simulation; destroy with node_info_copy_destroy. */
  schedhost_node_info_copy* (*node_info_copy)(schedhost_host* host,
                                              const schedhost_node_info_view* ni) SCHEDHOST_NOEXCEPT;
  /** The view of a copy (host-owned, valid until the copy changes or dies). */
  const schedhost_node_info_view* (*node_info_copy_view)(schedhost_node_info_copy* copy)
      SCHEDHOST_NOEXCEPT;
  /** Adds a pod to a copy. */
  int32_t (*node_info_copy_add_pod)(schedhost_node_info_copy* copy,
                                    const schedhost_pod_view* pod) SCHEDHOST_NOEXCEPT;
  /** Removes a pod (by uid) from a copy. */
  int32_t (*node_info_copy_remove_pod)(schedhost_node_info_copy* copy,
                                       const schedhost_pod_view* pod) SCHEDHOST_NOEXCEPT;
  /** Destroys a copy. */
  void (*node_info_copy_destroy)(schedhost_node_info_copy* copy) SCHEDHOST_NOEXCEPT;
  /** Runs the profile's Filter plugins for `pod` on `ni` with nominated pods counted (two
   *  passes); the first failing plugin's code is returned and its reasons go to `status`. */
  int32_t (*run_filter_plugins_with_nominated_pods)(schedhost_host* host,
                                                    schedhost_cycle_state* state,
                                                    const schedhost_pod_view* pod,
                                                    const schedhost_node_info_view* ni,
                                                    schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** Clones a cycle state (values with a clone callback); destroy with cycle_state_destroy. */
  schedhost_cycle_state* (*cycle_state_clone)(const schedhost_cycle_state* state) SCHEDHOST_NOEXCEPT;
  /** Destroys a cycle state made by cycle_state_clone. */
  void (*cycle_state_destroy)(schedhost_cycle_state* state) SCHEDHOST_NOEXCEPT;

  /* --- cluster objects (SCHEDHOST_E_NOT_AVAILABLE without cluster state) ---------------------- */

  /** All PDBs: *out host-owned, valid for the cycle. */
  int32_t (*list_pdbs)(schedhost_host* host, const schedhost_pdb_view* const** out,
                       size_t* out_len) SCHEDHOST_NOEXCEPT;
  /** A PriorityClass by name into *out (host-owned, valid for the cycle). */
  int32_t (*get_priority_class)(schedhost_host* host, schedhost_str name,
                                const schedhost_priority_class_view** out) SCHEDHOST_NOEXCEPT;

  /* --- cluster actions (SCHEDHOST_E_NOT_AVAILABLE without cluster state) ---------------------- */

  /** Evicts (deletes) `victim` on behalf of `preemptor`, with `reason` recorded. */
  int32_t (*evict_pod)(schedhost_host* host, const schedhost_pod_view* victim,
                       const schedhost_pod_view* preemptor, schedhost_str reason) SCHEDHOST_NOEXCEPT;
  /** Sets `pod`'s nominated node; an empty name clears it. */
  int32_t (*set_nominated_node)(schedhost_host* host, const schedhost_pod_view* pod,
                                schedhost_str node_name) SCHEDHOST_NOEXCEPT;
  /** Binds `pod` to `node_name` in the cluster state (what a Bind plugin does). Fails when the
   *  pod is gone, already bound, or changed since the cycle read it; the reasons go to `status`
   *  (may be NULL: pass the status of the running Bind call to relay them). */
  int32_t (*bind_pod)(schedhost_host* host, const schedhost_pod_view* pod,
                      schedhost_str node_name, schedhost_status* status) SCHEDHOST_NOEXCEPT;

  /* --- preemption toolkit (SCHEDHOST_E_NOT_AVAILABLE without cluster state) ------------------- */

  /**
   * Runs upstream's preemption for `pod` after Filter failed: finds nodes where removing pods
   * might help, selects victims per node (callbacks may override the rules; NULL: defaults),
   * picks the best candidate, evicts its victims, clears lower nominations and nominates the
   * node into `result`. Returns the PostFilter code.
   */
  int32_t (*preempt)(schedhost_host* host, schedhost_cycle_state* state,
                     const schedhost_pod_view* pod, const schedhost_node_status_map* statuses,
                     const schedhost_preemption_callbacks* callbacks,
                     schedhost_post_filter_result* result,
                     schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /**
   * Finds preemption candidates without acting: calls `fn` for each candidate (host-owned for
   * the call); stops when fn returns non-zero.
   */
  int32_t (*find_candidates)(schedhost_host* host, schedhost_cycle_state* state,
                             const schedhost_pod_view* pod,
                             const schedhost_node_status_map* statuses,
                             const schedhost_preemption_callbacks* callbacks,
                             int32_t (*fn)(void* user, const schedhost_candidate* c),
                             void* user) SCHEDHOST_NOEXCEPT;

  /* --- cluster objects, continued -------------------------------------------------------- */

  /**
   * The labels of the Namespace object named by `namespace_id`, as of the current cycle's
   * snapshot (InterPodAffinity's namespaceSelector).
   * @param host the calling plugin instance.
   * @param namespace_id interned namespace name (a pod view's namespace_id).
   * @param out receives the labels; OWNERSHIP: host-owned, valid for the cycle. Set to an empty
   *        set on any failure.
   * @return SCHEDHOST_OK; SCHEDHOST_E_NOT_FOUND when there is no such Namespace object (callers
   *         treat it as a namespace without labels); SCHEDHOST_E_INVALID_ARGUMENT for NULL `out`.
   * since: abi 1.1
   */
  int32_t (*namespace_labels)(schedhost_host* host, schedhost_id namespace_id,
                              schedhost_labels* out) SCHEDHOST_NOEXCEPT;

  /* --- Appended in abi 1.4: where a configuration key is written. --- */

  /**
   * Where the key of a config node is written, so that an error about a plugin argument points
   * at its key rather than at its value (`label = 3` is reported at `label`). Older hosts lack
   * it: fall back to config_location (the C++ SDK's Args::key_location does).
   * @param node a table entry, an array element, or the plugin_config.<Name> table itself.
   * @return "file:line:col" of the node's key in its parent table (for the plugin_config.<Name>
   *         table: of <Name> in the profile); an array element has no key and returns its own
   *         location; "" when unknown or `node` is NULL. OWNERSHIP: host-owned, valid while the
   *         config lives (until the plugin instance is destroyed).
   * since: abi 1.4
   */
  schedhost_str (*config_key_location)(const schedhost_config* node) SCHEDHOST_NOEXCEPT;

  /* --- Appended in abi 1.5: objects of declared kinds. --- */

  /**
   * Reads one object of a kind the calling plugin declared. The object is a tree read with the
   * config_* accessors (the same family as plugin arguments): its root is a table holding
   * apiVersion, kind, metadata, spec and status as the API server serves them; JSON numbers
   * without a fraction are INT, others FLOAT; null values are absent. config_location of any
   * node names the object ("PodGroup team-a/gang"), for error messages that add the field.
   * In a cycle, objects are read from the cycle's object snapshot, taken when the cycle
   * started: every read in one cycle sees the same state, and nothing blocks a writer.
   * Outside a cycle (PreEnqueue, QueueSort's less, a queueing hint; since abi 1.7) pass a NULL
   * state: the objects are the latest the host has, the same for every read until the host's
   * call into the plugin returns. In the binding cycle (PreBind, Bind, PostBind; since abi 1.8)
   * a NULL state reads the latest objects at every call, so a plugin waiting for a controller
   * to act on what it wrote sees the controller's progress; every view stays valid until the
   * host's call into the plugin returns.
   * @param host the calling plugin instance.
   * @param state the running cycle's state (any extension point that has one), or NULL in
   *        PreEnqueue, QueueSort and queueing hints (abi 1.7) and in PreBind, Bind and PostBind
   *        (abi 1.8); an older host answers SCHEDHOST_E_INVALID_ARGUMENT.
   * @param kind index of the kind in the plugin descriptor's `kinds`.
   * @param namespace_name the object's namespace; ignored for cluster-scoped kinds.
   * @param name the object's name.
   * @param out receives the object's root; NULL on any failure. OWNERSHIP: host-owned, valid
   *        while `state` lives (until the cycle ends), or with a NULL state until the host's
   *        call into the plugin returns; copy what you keep.
   * @return SCHEDHOST_OK; SCHEDHOST_E_NOT_FOUND when there is no such object;
   *         SCHEDHOST_E_OUT_OF_RANGE when the plugin declared no kind `kind`;
   *         SCHEDHOST_E_NOT_AVAILABLE when the kind is not mirrored (see object_kind_status);
   *         SCHEDHOST_E_INVALID_ARGUMENT for a NULL host or out, and for a NULL state from
   *         anywhere but PreEnqueue, QueueSort, queueing hints, PreBind, Bind and PostBind.
   * since: abi 1.5 (a NULL state: abi 1.7; in the binding cycle: abi 1.8)
   */
  int32_t (*object_get)(schedhost_host* host, const schedhost_cycle_state* state, uint32_t kind,
                        schedhost_str namespace_name, schedhost_str name,
                        const schedhost_config** out) SCHEDHOST_NOEXCEPT;
  /**
   * Calls `fn` for every object of a declared kind in `namespace_name` ("" for every namespace,
   * and for cluster-scoped kinds), ordered by namespace and name, until fn returns non-zero.
   * Objects are as object_get reads them (host-owned, as long as object_get's; `state` may be
   * NULL where object_get's may).
   * @return SCHEDHOST_OK (also when fn stopped early); the errors of object_get.
   * since: abi 1.5 (a NULL state: abi 1.7)
   */
  int32_t (*object_list)(schedhost_host* host, const schedhost_cycle_state* state, uint32_t kind,
                         schedhost_str namespace_name, schedhost_object_fn fn,
                         void* user) SCHEDHOST_NOEXCEPT;
  /**
   * Whether a declared kind is mirrored, so that a plugin can tell "no such object" from "this
   * host cannot see objects of the kind" and answer UnschedulableAndUnresolvable saying why.
   * @param message receives why the kind is not available ("" when it is); OWNERSHIP:
   *        host-owned, valid for the life of the process. May be NULL.
   * @return SCHEDHOST_OK when the kind is mirrored and synced; SCHEDHOST_E_NOT_AVAILABLE when it
   *         is not (the API server does not serve it, RBAC forbids it, or the host keeps no
   *         cluster state); SCHEDHOST_E_OUT_OF_RANGE when the plugin declared no kind `kind`.
   * since: abi 1.5
   */
  int32_t (*object_kind_status)(schedhost_host* host, uint32_t kind,
                                schedhost_str* message) SCHEDHOST_NOEXCEPT;

  /* --- Appended in abi 1.6: writing objects of declared kinds. --- */

  /**
   * Writes an object of a kind the calling plugin declared: through the API server in
   * Kubernetes mode (behind the leader's fence; the mirror's watch brings the result back, so a
   * read in the same cycle still sees the cycle's snapshot), into the store in embedded mode
   * (the host owns uid, resourceVersion and creationTimestamp). Blocks for the round trip: call
   * it from PreBind, Bind, PostBind or Permit, never from Filter or Score.
   * @param kind index of the kind in the plugin descriptor's `kinds`.
   * @param op a schedhost_write_op.
   * @param namespace_name the object's namespace ("" reads as "default" for namespaced kinds;
   *        ignored for cluster-scoped ones).
   * @param body JSON text: the object (CREATE, UPDATE, UPDATE_STATUS) or a merge patch.
   * @param message receives why the write failed ("" on success); OWNERSHIP: host-owned, valid
   *        on this thread until its next object_write. May be NULL.
   * @return SCHEDHOST_OK; SCHEDHOST_E_NOT_FOUND; SCHEDHOST_E_ALREADY_EXISTS;
   *         SCHEDHOST_E_CONFLICT (stale resourceVersion); SCHEDHOST_E_FORBIDDEN (RBAC);
   *         SCHEDHOST_E_INVALID_ARGUMENT (an unknown op, a body that is not a JSON object or
   *         names another object, or the API server's validation); SCHEDHOST_E_OUT_OF_RANGE
   *         (no kind `kind`); SCHEDHOST_E_UNAVAILABLE (the cluster failed, or this replica does
   *         not lead); SCHEDHOST_E_NOT_AVAILABLE (no cluster to write to).
   * since: abi 1.6
   */
  int32_t (*object_write)(schedhost_host* host, uint32_t kind, int32_t op,
                          schedhost_str namespace_name, schedhost_str name, schedhost_str body,
                          schedhost_str* message) SCHEDHOST_NOEXCEPT;
} schedhost_host_api;

/* ------------------------------------------------------------------------------------------ */
/* The plugin side                                                                             */
/* ------------------------------------------------------------------------------------------ */

/**
 * One plugin: its name, version, lifecycle and extension points. Every extension point is
 * optional (NULL: not implemented). `instance` is what create() returned. Statuses: return a
 * schedhost_code and add reasons through host_api->status_add_reason(status, ...).
 * OWNERSHIP: the descriptor is plugin-owned and lives as long as the library is loaded.
 * since: abi 1.0
 */
typedef struct schedhost_plugin_descriptor {
  size_t struct_size;
  schedhost_str name;    /* unique across every library a host loads, e.g. "NodeResourcesFit" */
  schedhost_str version; /* the plugin's own semver */

  /**
   * Creates an instance for one profile. `args` is the plugin_config table (may be NULL).
   * `host` identifies the instance to host functions. Control thread. On failure returns
   * non-success with reasons in `status`; *instance is then ignored.
   */
  int32_t (*create)(const schedhost_host_api* api, schedhost_host* host,
                    const schedhost_config* args, void** instance,
                    schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** Destroys an instance; joins any thread it started. Control thread. May be NULL. */
  void (*destroy)(void* instance) SCHEDHOST_NOEXCEPT;

  /** PreEnqueue: Success admits the pod to activeQ; anything else keeps it gated. Queue thread. */
  int32_t (*pre_enqueue)(void* instance, const schedhost_pod_view* pod,
                         schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** QueueSort: non-zero when `a` should pop before `b`. Runs under the queue's lock: a pure
   *  comparison of the two views, no host calls. */
  int32_t (*queue_sort_less)(void* instance, const schedhost_queued_pod* a,
                             const schedhost_queued_pod* b) SCHEDHOST_NOEXCEPT;
  /**
   * EnqueueExtensions: the events that may make a pod this plugin rejected schedulable.
   * *out is plugin-owned and must stay valid while the instance lives. Control thread.
   */
  int32_t (*events_to_register)(void* instance, const schedhost_event_registration** out,
                                size_t* out_len) SCHEDHOST_NOEXCEPT;

  /** PreFilter: may restrict nodes through `result`; Skip skips this plugin's Filter. */
  int32_t (*pre_filter)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                        schedhost_pre_filter_result* result,
                        schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** PreFilter extension: `pod_to_add` is now considered on `ni` (concurrent across nodes). */
  int32_t (*pre_filter_add_pod)(void* instance, schedhost_cycle_state* state,
                                const schedhost_pod_view* pod, const schedhost_pod_view* pod_to_add,
                                const schedhost_node_info_view* ni,
                                schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** PreFilter extension: `pod_to_remove` is no longer considered on `ni`. */
  int32_t (*pre_filter_remove_pod)(void* instance, schedhost_cycle_state* state,
                                   const schedhost_pod_view* pod,
                                   const schedhost_pod_view* pod_to_remove,
                                   const schedhost_node_info_view* ni,
                                   schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** Filter: whether `pod` fits on `ni`. Runs concurrently across nodes. */
  int32_t (*filter)(void* instance, const schedhost_cycle_state* state,
                    const schedhost_pod_view* pod, const schedhost_node_info_view* ni,
                    schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** PostFilter: runs when no node fits; may nominate a node through `result`. */
  int32_t (*post_filter)(void* instance, schedhost_cycle_state* state,
                         const schedhost_pod_view* pod,
                         const schedhost_node_status_map* filtered_statuses,
                         schedhost_post_filter_result* result,
                         schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** PreScore: sees the feasible nodes; Skip skips this plugin's Score. */
  int32_t (*pre_score)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                       const schedhost_node_info_view* const* nodes, size_t nodes_len,
                       schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** Score: ranks `ni` into *score. Runs concurrently across nodes. */
  int32_t (*score)(void* instance, const schedhost_cycle_state* state,
                   const schedhost_pod_view* pod, const schedhost_node_info_view* ni,
                   int64_t* score, schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** NormalizeScore: rewrites this plugin's scores in place into [0, 100]. */
  int32_t (*normalize_score)(void* instance, const schedhost_cycle_state* state,
                             const schedhost_pod_view* pod, schedhost_node_score* scores,
                             size_t scores_len, schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** Reserve: the pod is assumed on `node_name`; failure unreserves every reserved plugin. */
  int32_t (*reserve)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                     schedhost_str node_name, schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** Unreserve: undoes Reserve; must be idempotent. Called in reverse order. */
  void (*unreserve)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                    schedhost_str node_name) SCHEDHOST_NOEXCEPT;
  /**
   * Permit: Success, Wait (with *timeout_ns, capped at 15 minutes) or a rejection. A waiting
   * pod binds when every waiting plugin allows it, and is rejected when any rejects or a timer
   * fires.
   */
  int32_t (*permit)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                    schedhost_str node_name, int64_t* timeout_ns,
                    schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** PreBind: runs before Bind on the binding cycle's thread. */
  int32_t (*pre_bind)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                      schedhost_str node_name, schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** Bind: binds the pod; Skip lets the next Bind plugin try. */
  int32_t (*bind)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                  schedhost_str node_name, schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /** PostBind: informational, after a successful bind. */
  void (*post_bind)(void* instance, schedhost_cycle_state* state, const schedhost_pod_view* pod,
                    schedhost_str node_name) SCHEDHOST_NOEXCEPT;

  /* --- Appended in abi 1.2: batched Filter and Score. --- */

  /**
   * FilterBatch: Filter on nodes[0], nodes[1], ... in order, as `filter` would answer for each,
   * stopping at the first node that does not pass. Sets *passed to the number of nodes that
   * passed before the stop and returns SCHEDHOST_SUCCESS when all `nodes_len` passed, or the
   * code of nodes[*passed] with its reasons in `status`. Must agree with `filter`, which the
   * host still calls when it wants one node (timed cycles, nominated pods, run-all-filters);
   * `filter` is required when this is set. Runs concurrently across batches. May be NULL.
   * since: abi 1.2
   */
  int32_t (*filter_batch)(void* instance, const schedhost_cycle_state* state,
                          const schedhost_pod_view* pod,
                          const schedhost_node_info_view* const* nodes, size_t nodes_len,
                          size_t* passed, schedhost_status* status) SCHEDHOST_NOEXCEPT;
  /**
   * ScoreBatch: Score on each of nodes[0..nodes_len) into scores[i], as `score` would. Anything
   * but SCHEDHOST_SUCCESS fails the whole batch (and the cycle), reasons in `status`. Must agree
   * with `score`, which is required when this is set. Runs concurrently across batches. May be
   * NULL. since: abi 1.2
   */
  int32_t (*score_batch)(void* instance, const schedhost_cycle_state* state,
                         const schedhost_pod_view* pod,
                         const schedhost_node_info_view* const* nodes, size_t nodes_len,
                         int64_t* scores, schedhost_status* status) SCHEDHOST_NOEXCEPT;

  /* --- Appended in abi 1.5: the API kinds the plugin reads. --- */

  /**
   * The API kinds this plugin reads through object_get and object_list, which name a kind by
   * its index here. The host refuses the plugin when a declaration is malformed or disagrees
   * with another plugin's declaration of the same group and resource. OWNERSHIP: plugin-owned,
   * static. NULL with kinds_len 0: none. since: abi 1.5
   */
  const schedhost_kind_decl* const* kinds;
  size_t kinds_len;

  /* --- Appended in abi 1.7: the parts of a pod this plugin evaluates. --- */

  /**
   * The parts of a pod's spec whose scheduling meaning this plugin evaluates, beyond what the
   * host reads into the pod view itself. A pod that uses such a part is scheduled only by a
   * profile in which some plugin lists it; otherwise the pod stays pending,
   * UnschedulableAndUnresolvable with the part named, never bound on a guess. The names:
   * "spec.resourceClaims" (DRA claims), "nodeDeclaredFeatures" (a node feature the pod
   * requires, as upstream's NodeDeclaredFeatures infers it), and "spec.volumes.<source>" for a
   * volume source, the key beside a volume's name ("spec.volumes.persistentVolumeClaim",
   * "spec.volumes.ephemeral", "spec.volumes.gcePersistentDisk", ...). Sources without a meaning
   * for scheduling (emptyDir, hostPath, configMap, secret, downwardAPI, projected, image, csi,
   * nfs and the like) need no plugin. OWNERSHIP: plugin-owned, static. NULL with evaluates_len
   * 0: none.
   * since: abi 1.7
   */
  const schedhost_str* evaluates;
  size_t evaluates_len;
} schedhost_plugin_descriptor;

/**
 * The in/out struct of the entry symbol. The host fills the "in" part (and zeroes the rest);
 * the library fills the "out" part. since: abi 1.0
 */
typedef struct schedhost_library_negotiation {
  size_t struct_size;
  /* in */
  uint32_t host_abi_major;
  uint32_t host_abi_minor;
  schedhost_str host_version;
  const schedhost_host_api* api; /* host-owned; outlives the library */
  /* out */
  uint32_t plugin_abi_major;     /* SCHEDHOST_ABI_MAJOR the library was built with */
  uint32_t plugin_abi_minor;     /* SCHEDHOST_ABI_MINOR the library was built with */
  uint32_t min_host_abi_minor;   /* the oldest host minor the library works with */
  uint32_t reserved0;
  schedhost_str sdk_version;
  const schedhost_plugin_descriptor* const* plugins; /* library-owned, static */
  size_t plugins_len;
  schedhost_str error; /* why the library refused the host, when it returns non-zero */
} schedhost_library_negotiation;

/**
 * Signature of the entry symbol. Returns 0 when the library accepts the host; non-zero with
 * `error` set otherwise. Must not run plugin code beyond filling `io`. since: abi 1.0
 */
typedef int32_t (*schedhost_plugin_library_fn)(schedhost_library_negotiation* io)
    SCHEDHOST_NOEXCEPT;

/* ------------------------------------------------------------------------------------------ */
/* The manifest                                                                                */
/* ------------------------------------------------------------------------------------------ */

/*
 * Every library carries a manifest in the ELF section SCHEDHOST_MANIFEST_SECTION, read by the
 * loader from the file before any of the library's code runs. It is NUL-terminated text, one
 * "key value" per line:
 *
 *   schedhost-manifest 1
 *   abi 1.0              (major.minor the library was built with)
 *   min-host-minor 0
 *   sdk 1.0.0
 *   compiler gcc 12.2.0 libstdc++
 *   plugin NodeName 1.0.0   (one line per plugin)
 *
 * C++ libraries get it from SCHEDHOST_PLUGIN_LIBRARY (plugin.hpp); C libraries from
 * SCHEDHOST_C_MANIFEST below.
 */

#define SCHEDHOST_STR_(x) #x
#define SCHEDHOST_STR(x) SCHEDHOST_STR_(x)

#if defined(__clang__)
#define SCHEDHOST_COMPILER_TAG "clang " __clang_version__
#elif defined(__GNUC__)
#define SCHEDHOST_COMPILER_TAG "gcc " __VERSION__
#else
#define SCHEDHOST_COMPILER_TAG "unknown"
#endif

#define SCHEDHOST_MANIFEST_HEADER(min_host_minor)                                            \
  "schedhost-manifest 1\nabi " SCHEDHOST_STR(SCHEDHOST_ABI_MAJOR) "." SCHEDHOST_STR(         \
      SCHEDHOST_ABI_MINOR) "\nmin-host-minor " SCHEDHOST_STR(min_host_minor) "\nsdk "      \
      SCHEDHOST_SDK_VERSION "\ncompiler " SCHEDHOST_COMPILER_TAG "\n"

/**
 * Declares the manifest of a C library. `plugin_lines` is a string literal of
 * "plugin <Name> <version>\n" lines, e.g. SCHEDHOST_C_MANIFEST(0, "plugin Hello 1.0.0\n").
 * since: abi 1.0
 */
#define SCHEDHOST_C_MANIFEST(min_host_minor, plugin_lines)                                      \
  __attribute__((section(SCHEDHOST_MANIFEST_SECTION), used)) static const char                \
      schedhost_manifest_[] = SCHEDHOST_MANIFEST_HEADER(min_host_minor) plugin_lines

/** Marks the entry symbol exported (everything else in a plugin stays hidden). since: abi 1.0 */
#define SCHEDHOST_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCHEDHOST_PLUGIN_H_ */
