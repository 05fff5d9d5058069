// The Rust SDK's per-call cost: the same plugin in Rust (sdk/rust) and in C++ (its twin in
// rust_twins_plugin.cc), each called through its descriptor as the scheduler calls it per node.
//  - BM_RustScore/{Cpp,Rust}: TargetLoadPacking's Score (a CycleState read, a label lookup and
//    its text, the curve) on one node.
//  - BM_RustFilter/{Cpp,Rust}: Panicky's Filter (a pod name and a node label) on one node.
// Skipped with a message when the Rust plugins are not built (no cargo).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "host/framework/framework.h"
#include "host/framework/plugin_instance.h"
#include "host/framework/testing/harness.h"
#include "tests/bench/micro/micro_fixtures.h"

namespace schedhost::bench::micro {
namespace {

namespace fs = std::filesystem;

// TwinFixture: one labelled node (4 CPUs at 15 %), a profile of the four plugins, and a cycle
// state PreScore has filled for a pod of 100m.
class TwinFixture {
 public:
  TwinFixture() : harness_(false) {
    harness_.registry().LoadDirectory(BuiltinPluginDir(), framework::HostApi());
    harness_.registry().LoadLibrary(SCHEDHOST_MICRO_TWINS_PLUGIN, framework::HostApi());
    harness_.registry().LoadLibrary(SCHEDHOST_MICRO_PANICKY_PLUGIN, framework::HostApi());
    harness_.OnlyPlugins({"TargetLoadPacking", "TargetLoadPackingCpp", "Panicky", "PanickyCpp"});
    harness_.AddObjects(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-0\n  labels: "
        "{kubernetes.io/hostname: node-0, schedhost.io/cpu-utilization: \"15\"}\nstatus:\n  "
        "capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n  allocatable: {cpu: \"4\", memory: "
        "32Gi, pods: \"110\"}\n");
    fw_ = &harness_.framework();
    ni_ = harness_.snapshot().views().at(0);
    pod_ = MakePod("incoming", "");
    auto [subset, status] = fw_->RunPreFilterPlugins(state_, pod_->view());
    if (!status.ok()) throw std::runtime_error("PreFilter: " + status.Message());
    const framework::Status pre_score = fw_->RunPreScorePlugins(state_, pod_->view(), {ni_});
    if (!pre_score.ok()) throw std::runtime_error("PreScore: " + pre_score.Message());
  }
  const framework::PluginInstance* Plugin(const std::string& name) const {
    return fw_->FindPlugin(name);
  }
  const framework::CycleState& state() const { return state_; }
  const schedhost_pod_view* pod() const { return pod_->view(); }
  const schedhost_node_info_view* ni() const { return ni_; }

 private:
  framework::testing::Harness harness_;
  framework::Framework* fw_ = nullptr;
  const schedhost_node_info_view* ni_ = nullptr;
  std::shared_ptr<const model::Pod> pod_;
  framework::CycleState state_;
};

TwinFixture* Fixture(benchmark::State& st) {
  if (!fs::exists(SCHEDHOST_MICRO_PANICKY_PLUGIN)) {
    st.SkipWithError("the Rust plugins are not built (no cargo at configure time)");
    return nullptr;
  }
  static auto* fixture = new TwinFixture();  // never destroyed: no unload at exit
  return fixture;
}

void BM_RustScore(benchmark::State& st, const char* plugin) {
  TwinFixture* f = Fixture(st);
  if (f == nullptr) return;
  const framework::PluginInstance* p = f->Plugin(plugin);
  if (p == nullptr || p->desc->score == nullptr) {
    st.SkipWithError("no Score plugin of that name");
    return;
  }
  int64_t score = -1;
  for (auto _ : st) {
    framework::StatusSink sink;
    benchmark::DoNotOptimize(
        p->desc->score(p->instance, f->state().abi(), f->pod(), f->ni(), &score, sink.abi()));
  }
  // 15 % of 4 CPUs plus the pod's 100m predicts 17.5 %: 60 * 17.5 / 40 + 40 = 66.25.
  if (score != 66) st.SkipWithError("the node did not score 66 (17.5 % predicted, target 40 %)");
}
BENCHMARK_CAPTURE(BM_RustScore, Cpp, "TargetLoadPackingCpp");
BENCHMARK_CAPTURE(BM_RustScore, Rust, "TargetLoadPacking");

void BM_RustFilter(benchmark::State& st, const char* plugin) {
  TwinFixture* f = Fixture(st);
  if (f == nullptr) return;
  const framework::PluginInstance* p = f->Plugin(plugin);
  if (p == nullptr || p->desc->filter == nullptr) {
    st.SkipWithError("no Filter plugin of that name");
    return;
  }
  int32_t code = -1;
  for (auto _ : st) {
    framework::StatusSink sink;
    code = p->desc->filter(p->instance, f->state().abi(), f->pod(), f->ni(), sink.abi());
    benchmark::DoNotOptimize(code);
  }
  if (code != SCHEDHOST_SUCCESS) st.SkipWithError("the node did not pass");
}
BENCHMARK_CAPTURE(BM_RustFilter, Cpp, "PanickyCpp");
BENCHMARK_CAPTURE(BM_RustFilter, Rust, "Panicky");

}  // namespace
}  // namespace schedhost::bench::micro
