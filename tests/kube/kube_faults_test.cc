// Kubernetes mode against an API server that misbehaves the ways real ones do: it throttles
// (429 with Retry-After, from kube-apiserver's own max-in-flight limit), it cannot reach its
// storage (etcd frozen: the binding times out with 504), and the network between is slow (a
// TCP proxy adds latency). Each fault comes from the real control plane; every pod still ends up
// bound exactly once, and what the API server itself counted shows the fault happened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <thread>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/kube/kube_fixture.h"

namespace schedhost::kube {
namespace {

using kubetest::BoundPods;
using kubetest::ControlPlane;
using kubetest::Json;
using kubetest::KubeModeTest;
using kubetest::TcpProxy;
using kubetest::WaitFor;
using Clock = std::chrono::steady_clock;

// ApiServerCount sums the API server's counters `metric` (apiserver_request_total,
// apiserver_request_terminations_total) over the series whose code starts with `code_prefix`
// and whose subresource is `subresource`, from its /metrics as the admin reads it.
double ApiServerCount(const ControlPlane& cp, const std::string& metric,
                      const std::string& code_prefix, const std::string& subresource) {
  const ControlPlane::Result r = cp.Kubectl({"get", "--raw", "/metrics"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  double sum = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(metric + "{", 0) != 0) continue;
    if (line.find("code=\"" + code_prefix) == std::string::npos) continue;
    if (line.find("subresource=\"" + subresource + "\"") == std::string::npos) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// The host reaches the API server through a TCP proxy that can slow it down.
class SlowNetworkTest : public KubeModeTest {
 protected:
  // BindingBurst makes `count` pods named `prefix`N wait as unschedulable (no node they may use
  // is open), runs `before_open`, opens `node` (uncordon), and returns how long the host took
  // from its first binding of the burst to its last, polling the writer's count every 2 ms.
  double BindingBurst(const std::string& prefix, int count, const std::string& node,
                      const std::function<void()>& before_open) {
    Kubectl({"create", "-f", "-"}, PodList(prefix, count, Pod("x", "100m")).dump());
    EXPECT_TRUE(WaitFor([&] {
      return host_->scheduler()->queue().Counts().unschedulable == static_cast<size_t>(count);
    })) << prefix << ": the pods were not all found unschedulable";
    const uint64_t base = kube_->kube_writer()->stats().bindings;
    before_open();
    Kubectl({"uncordon", node});
    Clock::time_point first{};
    Clock::time_point last{};
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    for (uint64_t seen = base; seen < base + count && Clock::now() < deadline;) {
      const uint64_t now = kube_->kube_writer()->stats().bindings;
      if (now != seen) {
        if (seen == base) first = Clock::now();
        last = Clock::now();
        seen = now;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(kube_->kube_writer()->stats().bindings, base + count) << prefix;
    return std::chrono::duration<double>(last - first).count();
  }
};

// Over a slow network (50 ms each way for every piece of data) bindings are not sent one after
// another: up to the binding threads' number are in flight at once, and no more. The throughput
// figures with and without the latency go to stdout.
TEST_F(SlowNetworkTest, BindingsArePipelinedAndBounded) {
  constexpr int kPods = 60;
  // Node a takes exactly the first burst (60 × 100m); b takes the second. Both start cordoned.
  AddNode(ns_ + "-a", "6", "256Gi", Json::object(), {{"unschedulable", true}});
  AddNode(ns_ + "-b", "64", "256Gi", Json::object(), {{"unschedulable", true}});
  TcpProxy proxy(ApiServerPort());
  const std::filesystem::path proxied = ProxiedKubeconfig(proxy, dir_.path());
  StartHost(ConfigIn(dir_.path(), proxied.string(),
                     "[kubernetes.leader_election]\nenabled = false\n"));
  const double fast = BindingBurst("fast-", kPods, ns_ + "-a", [] {});
  int before = 0;
  const double slow = BindingBurst("slow-", kPods, ns_ + "-b", [&] {
    proxy.SetLatency(std::chrono::milliseconds(50));
    proxy.ResetPeak();
    before = proxy.requests_in_flight();
  });
  const int peak = proxy.peak_requests_in_flight();
  std::cout << "a burst of " << kPods << " bindings, first to last: " << (kPods - 1) / fast
            << " pods/s direct, " << (kPods - 1) / slow
            << " pods/s with 50 ms latency each way; at most " << peak
            << " requests in flight at once (" << before << " before the burst)\n";
  // Pipelined: more than a few bindings were in flight at once ...
  EXPECT_GE(peak, 4);
  // ... and bounded: the binding threads (16), the writer's status and event lanes, and each
  // reflector's request at worst; never one request per pod.
  EXPECT_LE(peak, 16 + 2 + static_cast<int>(kube_->reflectors().size()));
  const WriterStats stats = kube_->kube_writer()->stats();
  EXPECT_EQ(stats.bindings, static_cast<uint64_t>(2 * kPods));
  EXPECT_EQ(stats.binding_conflicts, 0u);
  EXPECT_EQ(stats.binding_errors, 0u);
  const auto bound = BoundPods(*cp_, ns_);
  EXPECT_EQ(bound.size(), static_cast<size_t>(2 * kPods));
  for (const auto& [pod, node] : bound) {
    EXPECT_EQ(node, ns_ + (pod.rfind("fast-", 0) == 0 ? "-a" : "-b")) << pod;
  }
  // The mirror lists what the API server lists.
  WaitFor([&] { return MirroredPods() == BoundPods(*cp_, ns_); });
  EXPECT_EQ(MirroredPods(), BoundPods(*cp_, ns_));
  host_->Stop();  // before the proxy goes: the writer's lanes may still be sending
}

// kube-apiserver with one mutating request at a time and no priority and fairness: the burst of
// bindings draws 429s with Retry-After: 1, which the client waits and retries, as client-go does.
class ThrottledApiServerTest : public KubeModeTest {
 protected:
  static void SetUpTestSuite() {
    if (!ControlPlane::Unavailable().empty()) return;  // SetUp skips or fails, saying why
    ControlPlane::Options options;
    options.apiserver_args = {"--enable-priority-and-fairness=false",
                              "--max-mutating-requests-inflight=1"};
    cp_ = ControlPlane::Start(options);
  }
};

TEST_F(ThrottledApiServerTest, A429IsRetriedAfterItsRetryAfterAndEveryPodIsBoundOnce) {
  AddNode(ns_ + "-a", "64", "256Gi");
  AddNode(ns_ + "-b", "64", "256Gi");
  StartHost(Config("[kubernetes.leader_election]\nenabled = false\n"));
  constexpr int kPods = 40;
  Kubectl({"create", "-f", "-"}, PodList("p-", kPods, Pod("x", "100m")).dump());
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == kPods; },
                      std::chrono::seconds(120)))
      << BoundPods(*cp_, ns_).size() << " of " << kPods << " bound";
  // The API server turned bindings away, and the client retried them.
  EXPECT_GT(ApiServerCount(*cp_, "apiserver_request_total", "429", "binding"), 0);
  EXPECT_GT(kube_->client().retried(), 0u);
  // Each pod bound once: the API server accepted one binding per pod and none conflicted.
  const WriterStats stats = kube_->kube_writer()->stats();
  EXPECT_EQ(stats.bindings, static_cast<uint64_t>(kPods));
  EXPECT_EQ(stats.binding_conflicts, 0u);
  for (const auto& [pod, count] : ScheduledEvents()) EXPECT_EQ(count, 1) << pod;
  // The mirror lists what the API server lists.
  WaitFor([&] { return MirroredPods() == BoundPods(*cp_, ns_); });
  EXPECT_EQ(MirroredPods(), BoundPods(*cp_, ns_));
}

// kube-apiserver that gives up on a request after 4 s: with etcd frozen, a binding hangs until
// then and is answered 504 (no Retry-After, so not retried by the client: the binding cycle
// fails and the pod goes back to the queue).
class SlowStorageTest : public KubeModeTest {
 protected:
  static void SetUpTestSuite() {
    if (!ControlPlane::Unavailable().empty()) return;
    ControlPlane::Options options;
    options.apiserver_args = {"--request-timeout=4s"};
    cp_ = ControlPlane::Start(options);
  }
};

TEST_F(SlowStorageTest, BindingsThatTimeOutWhileEtcdIsFrozenAreRetriedAndBoundOnce) {
  AddNode(ns_ + "-a", "64", "256Gi");
  AddNode(ns_ + "-b", "64", "256Gi");
  // A PreBind plugin holds every binding cycle until etcd is frozen. Shared with the plugin,
  // which may still run after a failed assertion ends the test body.
  auto held = std::make_shared<std::atomic<int>>(0);
  auto release = std::make_shared<std::atomic<bool>>(false);
  plugin_.name = "HoldBinding";
  plugin_.pre_bind = [held, release](std::string_view, framework::testing::Reasons&) {
    ++*held;
    WaitFor([&] { return release->load(); }, std::chrono::seconds(120));
    return SCHEDHOST_SUCCESS;
  };
  StartHost(Config("[kubernetes.leader_election]\nenabled = false\n",
                   "[[profile]]\nname = \"schedhost\"\n[profile.plugins.pre_bind]\n"
                   "enabled = [{ name = \"HoldBinding\" }]\n"),
            {plugin_.descriptor()});
  constexpr int kPods = 4;
  Kubectl({"create", "-f", "-"}, PodList("p-", kPods, Pod("x", "100m")).dump());
  ASSERT_TRUE(WaitFor([&] { return held->load() >= kPods; }));

  const pid_t etcd = cp_->etcd_pid();
  ASSERT_GT(etcd, 0);
  ASSERT_EQ(::kill(etcd, SIGSTOP), 0);
  struct Thaw {
    pid_t pid;
    ~Thaw() { ::kill(pid, SIGCONT); }
  } thaw{etcd};
  release->store(true);
  // Every binding sent meanwhile fails: the API server answers 504 after its request timeout.
  ASSERT_TRUE(WaitFor([&] { return kube_->kube_writer()->stats().binding_errors >= kPods; },
                      std::chrono::seconds(60)))
      << kube_->kube_writer()->stats().binding_errors << " bindings failed";
  ::kill(etcd, SIGCONT);

  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == kPods; },
                      std::chrono::seconds(90)))
      << BoundPods(*cp_, ns_).size() << " of " << kPods << " bound";
  const double timeouts =
      ApiServerCount(*cp_, "apiserver_request_terminations_total", "5", "binding") +
      ApiServerCount(*cp_, "apiserver_request_total", "5", "binding");
  EXPECT_GT(timeouts, 0);
  // A binding the API server timed out may still have been stored once etcd thawed: the watch
  // then shows the pod bound and it leaves the queue, or a retry already sent conflicts (409).
  // Either way no pod was bound by more than one accepted binding.
  const WriterStats stats = kube_->kube_writer()->stats();
  EXPECT_LE(stats.bindings + stats.binding_conflicts, static_cast<uint64_t>(kPods))
      << stats.bindings << " bound, " << stats.binding_conflicts << " conflicts";
  for (const auto& [pod, count] : ScheduledEvents()) EXPECT_LE(count, 1) << pod;
  std::string why;
  EXPECT_TRUE(kube_->Healthy(&why)) << why;
  // The mirror lists what the API server lists.
  WaitFor([&] { return MirroredPods() == BoundPods(*cp_, ns_); });
  EXPECT_EQ(MirroredPods(), BoundPods(*cp_, ns_));
}

}  // namespace
}  // namespace schedhost::kube
