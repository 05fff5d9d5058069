// Reads a v1 Pod's scheduling-relevant fields from the YAML tree.
#include <algorithm>
#include <utility>

#include "host/model/decode_util.h"

namespace schedhost::model::internal {
namespace {

constexpr std::string_view kEffects = "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"";

Container ReadContainer(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  Container c;
  c.name = ReadString(m.Get("name"), m.Path("name"));
  c.image = ReadString(m.Get("image"), m.Path("image"));
  c.restart_policy = ReadString(m.Get("restartPolicy"), m.Path("restartPolicy"));
  MapReader resources(m.Get("resources"), m.Path("resources"));
  c.resources.requests = ReadResourceList(resources.Get("requests"), resources.Path("requests"));
  c.resources.limits = ReadResourceList(resources.Get("limits"), resources.Path("limits"));
  ReadList(m.Get("ports"), m.Path("ports"), [&](const YamlNode* item, const std::string& p) {
    MapReader port(item, p);
    ContainerPort out;
    out.name = ReadString(port.Get("name"), port.Path("name"));
    out.container_port =
        ReadInt32(port.Get("containerPort"), port.Path("containerPort")).value_or(0);
    out.host_port = ReadInt32(port.Get("hostPort"), port.Path("hostPort")).value_or(0);
    out.protocol = ReadEnum<Protocol>(port.Get("protocol"), port.Path("protocol"), ParseProtocol,
                                      "\"TCP\", \"UDP\", \"SCTP\"")
                       .value_or(Protocol::kTCP);
    out.host_ip = ReadString(port.Get("hostIP"), port.Path("hostIP"));
    c.ports.push_back(std::move(out));
  });
  return c;
}

Toleration ReadToleration(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  Toleration t;
  t.key = ReadString(m.Get("key"), m.Path("key"));
  t.op = ReadEnum<TolerationOperator>(m.Get("operator"), m.Path("operator"),
                                      ParseTolerationOperator, "\"Equal\", \"Exists\"")
             .value_or(TolerationOperator::kEqual);
  t.value = ReadString(m.Get("value"), m.Path("value"));
  t.effect = ReadEnum<TaintEffect>(m.Get("effect"), m.Path("effect"), ParseTaintEffect, kEffects)
                 .value_or(TaintEffect::kNone);
  t.toleration_seconds =
      ReadInt(m.Get("tolerationSeconds"), m.Path("tolerationSeconds"), INT64_MIN, INT64_MAX);
  return t;
}

TopologySpreadConstraint ReadSpreadConstraint(const YamlNode* node, const std::string& path) {
  MapReader m(node, path);
  TopologySpreadConstraint c;
  c.max_skew = ReadInt32(m.Get("maxSkew"), m.Path("maxSkew")).value_or(0);
  c.topology_key = ReadString(m.Get("topologyKey"), m.Path("topologyKey"));
  if (IsAbsent(m.Get("whenUnsatisfiable"))) Fail(m.Path("whenUnsatisfiable"), "required");
  c.when_unsatisfiable =
      *ReadEnum<WhenUnsatisfiable>(m.Get("whenUnsatisfiable"), m.Path("whenUnsatisfiable"),
                                   ParseWhenUnsatisfiable, "\"DoNotSchedule\", \"ScheduleAnyway\"");
  c.label_selector = ReadLabelSelector(m.Get("labelSelector"), m.Path("labelSelector"));
  c.min_domains = ReadInt32(m.Get("minDomains"), m.Path("minDomains"));
  for (auto [field, out] : {std::pair{"nodeAffinityPolicy", &c.node_affinity_policy},
                            std::pair{"nodeTaintsPolicy", &c.node_taints_policy}}) {
    *out = ReadEnum<NodeInclusionPolicy>(m.Get(field), m.Path(field), ParseNodeInclusionPolicy,
                                         "\"Honor\", \"Ignore\"");
  }
  c.match_label_keys = ReadStringList(m.Get("matchLabelKeys"), m.Path("matchLabelKeys"));
  return c;
}

// ReadRequiredNodeFeatures adds a need for each node feature the pod requires, as upstream's
// nodedeclaredfeatures infers them for scheduling (v1.37: a RestartAllContainers restart rule,
// host network with a user namespace, bind mount options), once per feature, at its first use.
void ReadRequiredNodeFeatures(const MapReader& spec, std::vector<PodNeed>& needs) {
  std::vector<std::string> seen;
  // `source` is what requires the feature, as JSON (a restart rule, a volume mount, host
  // network with host users off), so that the pod's JSON carries it back.
  auto require = [&](const char* feature, const std::string& path, std::string source) {
    if (std::find(seen.begin(), seen.end(), feature) != seen.end()) return;
    seen.emplace_back(feature);
    needs.push_back({"nodeDeclaredFeatures", path,
                     std::string("node declared feature ") + feature, std::move(source)});
  };
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    const bool rules = std::string_view(list) != "ephemeralContainers";
    ReadList(spec.Get(list), spec.Path(list), [&](const YamlNode* item, const std::string& p) {
      MapReader c(item, p);
      if (rules) {
        ReadList(c.Get("restartPolicyRules"), c.Path("restartPolicyRules"),
                 [&](const YamlNode* rule, const std::string& rp) {
                   MapReader r(rule, rp);
                   if (ReadString(r.Get("action"), r.Path("action")) == "RestartAllContainers") {
                     require("RestartAllContainersOnContainerExits", r.Path("action"),
                             ValueJson(rule, rp));
                   }
                 });
      }
      ReadList(c.Get("volumeMounts"), c.Path("volumeMounts"),
               [&](const YamlNode* mount, const std::string& mp) {
                 MapReader m(mount, mp);
                 if (!ReadStringList(m.Get("bindMountOptions"), m.Path("bindMountOptions"))
                          .empty()) {
                   require("VolumeBindMountOptions", m.Path("bindMountOptions"),
                           ValueJson(mount, mp));
                 }
               });
    });
  }
  if (ReadBool(spec.Get("hostNetwork"), spec.Path("hostNetwork")).value_or(false) &&
      !ReadBool(spec.Get("hostUsers"), spec.Path("hostUsers")).value_or(true)) {
    require("UserNamespacesHostNetworkSupport", spec.Path("hostUsers"),
            R"({"hostNetwork":true,"hostUsers":false})");
  }
}

}  // namespace

PodData DecodePod(const MapReader& object) {
  PodData pod;
  pod.metadata = ReadMeta(object.Get("metadata"), object.Path("metadata"));
  MapReader spec(object.Get("spec"), object.Path("spec"));
  PodSpec& s = pod.spec;
  s.scheduler_name = ReadString(spec.Get("schedulerName"), spec.Path("schedulerName"));
  s.node_name = ReadString(spec.Get("nodeName"), spec.Path("nodeName"));
  s.priority = ReadInt32(spec.Get("priority"), spec.Path("priority"));
  s.priority_class_name = ReadString(spec.Get("priorityClassName"), spec.Path("priorityClassName"));
  s.preemption_policy =
      ReadEnum<PreemptionPolicy>(spec.Get("preemptionPolicy"), spec.Path("preemptionPolicy"),
                                 ParsePreemptionPolicy, "\"PreemptLowerPriority\", \"Never\"");
  s.node_selector = ReadStringMap(spec.Get("nodeSelector"), spec.Path("nodeSelector"));
  s.affinity = ReadAffinity(spec.Get("affinity"), spec.Path("affinity"));
  ReadList(spec.Get("tolerations"), spec.Path("tolerations"),
           [&](const YamlNode* item, const std::string& p) {
             s.tolerations.push_back(ReadToleration(item, p));
           });
  ReadList(spec.Get("topologySpreadConstraints"), spec.Path("topologySpreadConstraints"),
           [&](const YamlNode* item, const std::string& p) {
             s.topology_spread_constraints.push_back(ReadSpreadConstraint(item, p));
           });
  ReadList(spec.Get("containers"), spec.Path("containers"),
           [&](const YamlNode* item, const std::string& p) {
             s.containers.push_back(ReadContainer(item, p));
           });
  ReadList(spec.Get("initContainers"), spec.Path("initContainers"),
           [&](const YamlNode* item, const std::string& p) {
             s.init_containers.push_back(ReadContainer(item, p));
           });
  s.overhead = ReadResourceList(spec.Get("overhead"), spec.Path("overhead"));
  ReadList(spec.Get("schedulingGates"), spec.Path("schedulingGates"),
           [&](const YamlNode* item, const std::string& p) {
             MapReader gate(item, p);
             s.scheduling_gates.push_back(ReadString(gate.Get("name"), gate.Path("name")));
           });
  ReadList(spec.Get("volumes"), spec.Path("volumes"),
           [&](const YamlNode* item, const std::string& p) {
             MapReader volume(item, p);
             const std::string name = ReadString(volume.Get("name"), volume.Path("name"));
             bool first = true;
             for (const auto& [key, value] : volume.entries()) {
               if (key == "name" || !VolumeSourceNeedsAPlugin(key)) continue;
               PodNeed need{"spec.volumes." + std::string(key), volume.Path(key),
                            "volume \"" + name + "\""};
               if (key == "persistentVolumeClaim") {
                 MapReader claim(value, volume.Path(key));
                 need.what += " (claim \"" +
                              ReadString(claim.Get("claimName"), claim.Path("claimName")) + "\")";
               }
               if (std::exchange(first, false)) need.source = ValueJson(item, p);
               s.needs.push_back(std::move(need));
             }
           });
  ReadRequiredNodeFeatures(spec, s.needs);
  ReadList(spec.Get("resourceClaims"), spec.Path("resourceClaims"),
           [&](const YamlNode* item, const std::string& p) {
             MapReader claim(item, p);
             s.needs.push_back({"spec.resourceClaims", p,
                                "resource claim \"" +
                                    ReadString(claim.Get("name"), claim.Path("name")) + "\"",
                                ValueJson(item, p)});
           });
  MapReader status(object.Get("status"), object.Path("status"));
  pod.status.nominated_node_name =
      ReadString(status.Get("nominatedNodeName"), status.Path("nominatedNodeName"));
  // A preemption victim still terminating: being deleted, marked by the scheduler that
  // preempted it (upstream's podTerminatingByPreemption).
  const bool deleting = !IsAbsent(MapReader(object.Get("metadata"), object.Path("metadata"))
                                      .Get("deletionTimestamp"));
  if (deleting) {
    ReadList(status.Get("conditions"), status.Path("conditions"),
             [&](const YamlNode* item, const std::string& p) {
               MapReader c(item, p);
               if (ReadString(c.Get("type"), c.Path("type")) == "DisruptionTarget" &&
                   ReadString(c.Get("status"), c.Path("status")) == "True" &&
                   ReadString(c.Get("reason"), c.Path("reason")) == "PreemptionByScheduler") {
                 pod.status.terminating_by_preemption = true;
               }
             });
  }
  return pod;
}

}  // namespace schedhost::model::internal
