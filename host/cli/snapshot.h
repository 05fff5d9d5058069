// `schedctl snapshot`: a live cluster's scheduling state written as one manifest that
// `schedctl simulate -f` takes as is. It lists, through Kubernetes mode's client and pager, the
// kinds the scheduler mirrors (Nodes, Pods that have not terminated, Namespaces,
// PriorityClasses but the two built-in system ones, PodDisruptionBudgets) and the API kinds the
// config's plugins declare, and keeps of each object only what the model's decoders and the
// plugins read (see TrimObject).
//
//   SnapshotOptions o{.kubeconfig = "admin.conf", .output = "cluster.yaml"};
//   return RunSnapshot(o, std::cout, std::cerr);  // then: schedctl simulate -f cluster.yaml
#pragma once

#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "host/kube/reflector.h"

namespace schedhost::cli {

/// SnapshotOptions are the command's flags.
struct SnapshotOptions {
  std::string kubeconfig;   // --kubeconfig; "" = $KUBECONFIG, else ~/.kube/config
  std::string context;      // --context; "" = the current context
  std::string output;       // -o: the file written
  std::string config_path;  // --config: whose plugins' declared kinds are read; "" = defaults
  std::filesystem::path plugin_dir;  // builtin plugins (beside the binary)
};

/// TrimObject returns `object`, listed by `spec`, as the snapshot keeps it: with its apiVersion
/// and kind (list items come without them) and without what no decoder or plugin reads. Every
/// kind loses metadata.managedFields, resourceVersion, generation, selfLink and the
/// kubectl.kubernetes.io/last-applied-configuration annotation. The typed kinds keep of
/// metadata only name, namespace, uid, labels, annotations, creationTimestamp and
/// deletionTimestamp (a Pod also its ownerReferences, which plugins read); a Pod's containers
/// and init containers keep name, image, ports, resources, restartPolicy, restartPolicyRules and
/// volumeMounts (no env, command or probes), it loses its ephemeral containers and its status
/// but nominatedNodeName (and, while it is being deleted, its DisruptionTarget condition); a
/// Node keeps spec.taints and spec.unschedulable and of its status capacity, allocatable,
/// images and the type and status of each condition; a PodDisruptionBudget its spec and
/// status.disruptionsAllowed; a PriorityClass value, globalDefault, preemptionPolicy and
/// description; a Namespace its metadata. A declared kind keeps everything else: plugins may
/// read any field of it.
nlohmann::json TrimObject(nlohmann::json object, const kube::Reflector::Spec& spec);

/// RunSnapshot is the command: lists the cluster, writes the manifest to options.output
/// through a temporary file in the same directory renamed into place, and prints what it wrote
/// to `out`. Returns 0, or 1 with a message on `err` for a bad kubeconfig or config, an API
/// server that cannot be reached or refuses a list, or a file that cannot be written; the
/// output file is then left as it was.
int RunSnapshot(const SnapshotOptions& options, std::ostream& out, std::ostream& err);

}  // namespace schedhost::cli
