#include "tests/integration/scheduler_fixture.h"

#include <stdexcept>

#include "host/config/host_config.h"
#include "host/framework/testing/harness.h"
#include "host/model/decode.h"
#include "host/scheduler/profile_set.h"

namespace schedhost::integration {

std::string NodeYaml(const std::string& name, const std::string& cpu, const std::string& memory,
                     const std::string& zone, const std::string& extra) {
  std::string y = "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
                  "\n  labels:\n    kubernetes.io/hostname: " + name + "\n";
  if (!zone.empty()) y += "    topology.kubernetes.io/zone: " + zone + "\n";
  y += extra;
  y += "status:\n  allocatable: {cpu: \"" + cpu + "\", memory: " + memory + ", pods: \"110\"}\n";
  return y;
}

std::string PodYaml(const std::string& name, const std::string& cpu, const std::string& spec_extra,
                    const std::string& meta_extra) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n" + meta_extra +
         "spec:\n" + spec_extra +
         "  containers:\n  - name: c\n    image: busybox\n    resources:\n      requests: {cpu: "
         "\"" +
         cpu + "\"}\n";
}

SchedulerTest::~SchedulerTest() {
  if (sched_) {
    sched_->Stop();
    EXPECT_EQ(sched_->CheckInvariants(), "") << "after stopping";
  }
}

void SchedulerTest::Build(const std::string& toml,
                          const std::vector<const schedhost_plugin_descriptor*>& in_process,
                          uint64_t seed) {
  config::HostConfig cfg = config::ParseConfig("[host]\nparallelism = 2\n" + toml, "test.toml", {});
  auto set = scheduler::ProfileSet::Build(cfg, framework::testing::PluginDir(), in_process);
  clock_ = std::make_shared<scheduler::VirtualClock>();
  scheduler::SchedulerOptions options;
  options.clock = clock_;
  options.seed = seed;
  options.pod_initial_backoff = cfg.pod_initial_backoff;
  options.pod_max_backoff = cfg.pod_max_backoff;
  options.max_explanations = max_explanations_;
  options.max_explanation_bytes = max_explanation_bytes_;
  sched_ = std::make_unique<scheduler::Scheduler>(store_, std::move(set), options);
}

void SchedulerTest::Apply(std::string_view yaml) {
  std::vector<model::GenericObject> generic;
  const std::vector<model::Object> typed = model::DecodeManifests(yaml, "test.yaml", {}, &generic);
  for (const model::GenericObject& object : generic) {
    if (!store_.objects().ApplyDocument(
            object, store::ObjectWrite{.stamp = true, .keep_creation_timestamp = true})) {
      throw std::runtime_error("Apply: no loaded plugin declares " + object.Describe());
    }
  }
  for (const model::Object& obj : typed) store_.CreateObject(obj);
}

scheduler::RunResult SchedulerTest::Run() {
  scheduler::RunLimits limits;
  limits.after_step = [this] { ASSERT_EQ(sched_->CheckInvariants(), ""); };
  scheduler::RunResult r = sched_->RunUntilIdle(limits);
  EXPECT_TRUE(r.idle) << r.stopped_by;
  EXPECT_EQ(sched_->CheckInvariants(), "");
  return r;
}

bool SchedulerTest::Step() {
  bool ran = sched_->ScheduleOne();
  sched_->DrainBindings();
  EXPECT_EQ(sched_->CheckInvariants(), "");
  return ran;
}

std::shared_ptr<const model::Pod> SchedulerTest::Pod(const std::string& name) const {
  return store_.Get<model::Pod>("default", name);
}

std::string SchedulerTest::NodeOf(const std::string& name) const {
  auto pod = Pod(name);
  return pod ? std::string(pod->node_name()) : "<deleted>";
}

std::string SchedulerTest::MessageOf(const std::string& name) const {
  auto pod = Pod(name);
  if (!pod) return "<deleted>";
  auto d = sched_->Diagnostics(pod->uid());
  return d ? d->message : "<no diagnostics>";
}

queue::PodLocation SchedulerTest::Where(const std::string& name) const {
  auto pod = Pod(name);
  return pod ? sched_->queue().Where(pod->uid()) : queue::PodLocation::kNone;
}

}  // namespace schedhost::integration
