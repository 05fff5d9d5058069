// The protobuf codec on its own: objects written and read back, the JSON mapping's special
// types, and bytes that are not an object. tests/kube/kube_mode_test.cc compares what it reads
// with the JSON a real kube-apiserver sends for the same objects.
#include "host/kube/proto_codec.h"

#include <gtest/gtest.h>

#include <string>

namespace schedhost::kube::proto {
namespace {

using Json = nlohmann::json;

Json Pod() {
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u-1", "resourceVersion": "42",
                 "creationTimestamp": "2026-12-05T10:00:00Z",
                 "labels": {"app": "web", "tier": "front"}},
    "spec": {
      "schedulerName": "default-scheduler", "priority": -5,
      "containers": [{"name": "c", "image": "x",
                      "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}},
                      "ports": [{"containerPort": 80, "protocol": "TCP"}],
                      "readinessProbe": {"httpGet": {"path": "/", "port": "http"},
                                         "periodSeconds": 5}}],
      "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c1"}},
                  {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}],
      "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                       "tolerationSeconds": 300}],
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
          {"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}}
    },
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
               "lastTransitionTime": "2026-12-05T10:00:01Z"}]}
  })");
}

TEST(ProtoCodecTest, AnObjectWrittenReadsBackAsTheSameJson) {
  const Json pod = Pod();
  const std::string bytes = EncodeObject(pod);
  ASSERT_EQ(bytes.substr(0, 4), std::string("k8s\0", 4));
  EXPECT_EQ(DecodeObject(bytes), pod);
}

TEST(ProtoCodecTest, InlineStructsAreFlattenedAsJsonHasThem) {
  // VolumeSource is a field of its own in protobuf: the volume's source must come back beside
  // its name, not under "volumeSource"; the probe's handler likewise.
  const Json back = DecodeObject(EncodeObject(Pod()));
  const Json& volume = back["spec"]["volumes"][0];
  EXPECT_EQ(volume["persistentVolumeClaim"]["claimName"], "c1");
  EXPECT_FALSE(volume.contains("volumeSource"));
  EXPECT_EQ(back["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"], "http");
}

TEST(ProtoCodecTest, MappedTypesKeepTheirJsonForms) {
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", "l"}, {"namespace", "kube-system"}}},
                {"spec",
                 {{"holderIdentity", "a"},
                  {"leaseDurationSeconds", 15},
                  {"renewTime", "2026-12-05T10:00:00.123456Z"}}}};
  EXPECT_EQ(DecodeObject(EncodeObject(lease)), lease);
  Json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "b"}, {"namespace", "ns"}}},
              {"spec", {{"maxUnavailable", 1}, {"minAvailable", "50%"}}}};
  EXPECT_EQ(DecodeObject(EncodeObject(pdb)), pdb);
}

TEST(ProtoCodecTest, OnlyTheApisOwnGroupsHaveMessages) {
  EXPECT_TRUE(Supports("v1", "Pod"));
  EXPECT_TRUE(Supports("storage.k8s.io/v1", "CSINode"));
  EXPECT_TRUE(Supports("events.k8s.io/v1", "Event"));
  EXPECT_TRUE(Supports("policy/v1", "PodDisruptionBudget"));
  EXPECT_TRUE(Supports("v1", "Status"));
  EXPECT_FALSE(Supports("scheduling.x-k8s.io/v1alpha1", "PodGroup"));
  EXPECT_FALSE(Supports("example.com/v1", "Pod"));
  EXPECT_FALSE(Supports("v1", "NoSuchKind"));
}

TEST(ProtoCodecTest, BadBytesAreASpecificError) {
  EXPECT_THROW(DecodeObject("{\"kind\":\"Pod\"}"), ProtoError);
  const std::string bytes = EncodeObject(Pod());
  for (size_t cut : {size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(DecodeObject(bytes.substr(0, cut)), ProtoError) << cut;
  }
  try {
    Json bad = Pod();
    bad["spec"]["noSuchField"] = 1;
    EncodeObject(bad);
    FAIL() << "an unknown field was dropped silently";
  } catch (const ProtoError& e) {
    EXPECT_NE(std::string(e.what()).find("noSuchField"), std::string::npos) << e.what();
  }
  EXPECT_THROW(EncodeObject(Json{{"apiVersion", "example.com/v1"}, {"kind", "Thing"}}),
               ProtoError);
}

TEST(ProtoCodecTest, AWatchStreamYieldsWholeEventsWhateverThePieces) {
  // A frame is its length (4 bytes, big-endian) and a WatchEvent {type = 1, object = 2 {raw = 1}}.
  auto field = [](int number, const std::string& bytes) {
    std::string out(1, static_cast<char>((number << 3) | 2));
    size_t n = bytes.size();
    do {
      out.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
      n >>= 7;
    } while (n > 0);
    return out + bytes;
  };
  const std::string object = EncodeObject(Pod());
  const std::string event = field(1, "ADDED") + field(2, field(1, object));
  std::string frame(4, '\0');
  frame[2] = static_cast<char>(event.size() >> 8);
  frame[3] = static_cast<char>(event.size() & 0xff);
  frame += event;
  const std::string stream = frame + frame;
  WatchStream w;
  Json out;
  int events = 0;
  for (char c : stream) {  // one byte at a time
    w.Feed(std::string_view(&c, 1));
    while (w.Next(&out)) {
      ++events;
      EXPECT_EQ(out["type"], "ADDED");
      EXPECT_EQ(out["object"], Pod());
    }
  }
  EXPECT_EQ(events, 2);
}

}  // namespace
}  // namespace schedhost::kube::proto
