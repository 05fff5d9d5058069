// Objects of declared kinds (abi 1.5) as a plugin reads them: object_get through the host
// table on the cycle's snapshot, then spec.minMember through the config_* accessors — what a
// plugin pays per pod to read one object. The table holds 10,000 PodGroups in 100 namespaces.
// BM_ObjectSnapshotFirstRead is the once-per-cycle part: a new cycle's first read, right after
// a write (the snapshot is rebuilt, one table pointer per declared kind).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "host/store/object_store.h"
#include "tests/bench/micro/micro_fixtures.h"

namespace schedhost::bench::micro {
namespace {

constexpr int kNamespaces = 100;
constexpr int kPerNamespace = 100;
const store::KindInfo kPodGroup{"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", true};

std::shared_ptr<const model::ValueNode> PodGroupTree(int64_t min_member) {
  auto root = std::make_shared<model::ValueNode>();
  root->kind = SCHEDHOST_CONFIG_TABLE;
  model::ValueNode spec;
  spec.kind = SCHEDHOST_CONFIG_TABLE;
  spec.key = "spec";
  model::ValueNode min;
  min.kind = SCHEDHOST_CONFIG_INT;
  min.key = "minMember";
  min.int_value = min_member;
  spec.children.push_back(min);
  root->children.push_back(spec);
  return root;
}

// ObjectFixture is a framework wired to an ObjectStore of PodGroups and a plugin instance that
// declares the kind, as the scheduler wires them.
class ObjectFixture {
 public:
  ObjectFixture() : harness_(false) {
    harness_.registry().LoadDirectory(BuiltinPluginDir(), framework::HostApi());
    objects_.Declare(kPodGroup);
    for (int n = 0; n < kNamespaces; ++n) {
      for (int i = 0; i < kPerNamespace; ++i) {
        objects_.Apply(kPodGroup.Key(), "ns-" + std::to_string(n), "gang-" + std::to_string(i),
                       PodGroupTree(i + 1));
      }
    }
    harness_.framework().SetObjects(&objects_);
    plugin_.name = "Reader";
    plugin_.kinds = {kPodGroup};
    plugin_.kind_keys = {kPodGroup.Key()};
    plugin_.handle.framework = &harness_.framework();
    plugin_.handle.plugin = &plugin_;
  }

  schedhost_host* host() { return &plugin_.handle; }
  store::ObjectStore& objects() { return objects_; }

 private:
  framework::testing::Harness harness_;
  store::ObjectStore objects_;
  framework::PluginInstance plugin_;
};

ObjectFixture& Fixture() {
  static auto* fixture = new ObjectFixture();
  return *fixture;
}

// ReadMinMember is a plugin's read: ns-42/gang-17 through object_get (in `state`'s cycle, or
// outside one for a null state), then its spec.minMember; false when object_get failed.
bool ReadMinMember(ObjectFixture& f, const schedhost_cycle_state* state) {
  const schedhost_host_api* api = framework::HostApi();
  static const std::string ns = "ns-42";
  static const std::string name = "gang-17";
  const schedhost_config* object = nullptr;
  if (api->object_get(f.host(), state, 0, {ns.data(), ns.size()}, {name.data(), name.size()},
                      &object) != SCHEDHOST_OK) {
    return false;
  }
  int64_t min_member = 0;
  api->config_int(api->config_get(api->config_get(object, {"spec", 4}), {"minMember", 9}),
                  &min_member);
  benchmark::DoNotOptimize(min_member);
  return true;
}

void BM_ObjectGetAndRead(benchmark::State& st) {
  ObjectFixture& f = Fixture();
  framework::CycleState state;
  for (auto _ : st) {
    if (!ReadMinMember(f, state.abi())) {
      st.SkipWithError("object_get failed");
      return;
    }
  }
}
BENCHMARK(BM_ObjectGetAndRead);

void BM_ObjectSnapshotFirstRead(benchmark::State& st) {
  ObjectFixture& f = Fixture();
  const schedhost_host_api* api = framework::HostApi();
  const std::string ns = "ns-42";
  const std::string name = "gang-17";
  int64_t version = 0;
  for (auto _ : st) {
    st.PauseTiming();
    f.objects().Apply(kPodGroup.Key(), "ns-0", "gang-0", PodGroupTree(++version));
    framework::CycleState state;
    st.ResumeTiming();
    const schedhost_config* object = nullptr;
    benchmark::DoNotOptimize(api->object_get(f.host(), state.abi(), 0, {ns.data(), ns.size()},
                                             {name.data(), name.size()}, &object));
  }
}
BENCHMARK(BM_ObjectSnapshotFirstRead);

// BM_ObjectGetOutsideCycle is a read where there is no cycle (abi 1.7: PreEnqueue, QueueSort, a
// hint): the host's call opens an OutOfCycleReads, the read pins the store's latest snapshot,
// and the call's end lets it go — what a PreEnqueue that reads one object pays per pod.
void BM_ObjectGetOutsideCycle(benchmark::State& st) {
  ObjectFixture& f = Fixture();
  for (auto _ : st) {
    const framework::OutOfCycleReads reads;
    if (!ReadMinMember(f, nullptr)) {
      st.SkipWithError("object_get failed");
      return;
    }
  }
}
BENCHMARK(BM_ObjectGetOutsideCycle);

// BM_OutOfCycleScopeAlone is what a QueueSort comparison pays for the scope when its plugin reads
// nothing.
void BM_OutOfCycleScopeAlone(benchmark::State& st) {
  for (auto _ : st) {
    const framework::OutOfCycleReads reads;
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_OutOfCycleScopeAlone);

}  // namespace
}  // namespace schedhost::bench::micro
