// SchedulerTest: an embedded host for end-to-end tests — a Store, the builtin plugin libraries
// loaded from the build tree (plus in-process test plugins through the same C ABI), profiles
// built from TOML, and a Scheduler on a VirtualClock that runs until idle while the invariants
// (every pending pod in exactly one place, cache agreeing with the store) are checked after
// every step.
//
//   Build();                      // default profile
//   Apply(R"(apiVersion: v1 ...)");
//   Run();
//   EXPECT_EQ(NodeOf("web"), "n1");
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "host/framework/testing/fake_plugin.h"
#include "host/scheduler/scheduler.h"
#include "host/store/store.h"

namespace schedhost::integration {

/// NodeYaml returns a Node manifest with the given allocatable cpu, memory and extra YAML lines
/// (indented under the node, e.g. "spec:\n  unschedulable: true\n").
std::string NodeYaml(const std::string& name, const std::string& cpu = "4",
                     const std::string& memory = "8Gi", const std::string& zone = "",
                     const std::string& extra = "");
/// PodYaml returns a pending Pod manifest requesting `cpu` (and extra YAML under spec:).
std::string PodYaml(const std::string& name, const std::string& cpu = "1",
                    const std::string& spec_extra = "", const std::string& meta_extra = "");

class SchedulerTest : public ::testing::Test {
 protected:
  ~SchedulerTest() override;

  /// Build makes the scheduler: `toml` is appended to a config with parallelism 2 (profiles,
  /// plugin_config, ...); `in_process` plugins are registered before the profiles are built.
  void Build(const std::string& toml = "",
             const std::vector<const schedhost_plugin_descriptor*>& in_process = {},
             uint64_t seed = 1);
  /// Apply decodes manifests and creates every object in the store: first the documents of
  /// kinds a loaded plugin declares (after Build), into the store's objects, then the others,
  /// each in input order.
  void Apply(std::string_view yaml);
  /// Run runs until idle, asserting the invariants after every step and that it ended idle.
  scheduler::RunResult Run();
  /// Step pops and schedules one pod and runs its binding cycle if it can; false when none.
  bool Step();

  /// Pod returns the stored pod `name` (namespace default).
  std::shared_ptr<const model::Pod> Pod(const std::string& name) const;
  /// NodeOf returns the node pod `name` is bound to ("" when pending).
  std::string NodeOf(const std::string& name) const;
  /// MessageOf returns the scheduler's last message for pod `name`.
  std::string MessageOf(const std::string& name) const;
  /// Where returns where pod `name` is in the queue.
  queue::PodLocation Where(const std::string& name) const;

  // Declared first so it outlives the scheduler: plugin instances made from its descriptors are
  // destroyed with the scheduler's profiles.
  framework::testing::FakePlugins fakes_;
  store::Store store_;
  std::shared_ptr<scheduler::VirtualClock> clock_;
  std::unique_ptr<scheduler::Scheduler> sched_;
  /// max_explanations_ is passed to SchedulerOptions by Build.
  size_t max_explanations_ = scheduler::SchedulerOptions{}.max_explanations;
  /// max_explanation_bytes_ is passed to SchedulerOptions by Build.
  size_t max_explanation_bytes_ = scheduler::SchedulerOptions{}.max_explanation_bytes;
};

}  // namespace schedhost::integration
