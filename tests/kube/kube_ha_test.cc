// Kubernetes mode with several replicas: leader election on a Lease, failover when the leader
// stops, dies, freezes or is cut off (a TCP proxy the test controls), and the soak that does all
// of it in turn while pods arrive. Every pod is bound, once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/kube/kube_fixture.h"

namespace schedhost::kube {
namespace {

using kubetest::BoundPods;
using kubetest::ControlPlane;
using kubetest::ExitStatus;
using kubetest::HttpGet;
using kubetest::Json;
using kubetest::KubeModeTest;
using kubetest::ListedPods;
using kubetest::SpawnSchedhostd;
using kubetest::TcpProxy;
using kubetest::WaitFor;
using ::testing::HasSubstr;

TEST_F(KubeModeTest, OneReplicaLeadsAndTheStandbyTakesOverWhenItStops) {
  AddNode(ns_ + "-a", "8", "16Gi");
  auto a = StartReplica("replica-a");
  ASSERT_TRUE(WaitFor([&] { return a->leading(); }, std::chrono::seconds(10)));
  auto b = StartReplica("replica-b");
  ASSERT_TRUE(WaitFor([&] { return b->host->leadership().holder == "replica-a"; }));
  EXPECT_FALSE(b->leading());
  // Both are ready (a standby's mirror is warm); /readyz says which one leads.
  const auto [a_status, a_body] = HttpGet(a->host->metrics_port(), "/readyz");
  EXPECT_EQ(a_status, 200);
  EXPECT_THAT(a_body, HasSubstr("ok: leading (lease kube-system/schedhost, identity replica-a)"));
  const auto [b_status, b_body] = HttpGet(b->host->metrics_port(), "/readyz");
  EXPECT_EQ(b_status, 200);
  EXPECT_THAT(b_body, HasSubstr("ok: standby (lease kube-system/schedhost held by replica-a"));
  Json lease = Lease();
  EXPECT_EQ(lease.value("holderIdentity", ""), "replica-a");
  EXPECT_EQ(lease.value("leaseDurationSeconds", 0), 5);
  EXPECT_EQ(lease.value("leaseTransitions", -1), 0);

  for (int i = 0; i < 5; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 5; }));
  EXPECT_EQ(a->writes().bindings, 5u);
  EXPECT_EQ(b->writes().bindings, 0u);
  // The standby saw every pod and its binding through its own watch.
  auto mirrored_bound = [&](Replica& r, const std::string& prefix, int n) {
    for (int i = 0; i < n; ++i) {
      auto pod = r.host->store().Get<model::Pod>(ns_, prefix + std::to_string(i));
      if (pod == nullptr || pod->node_name().empty()) return false;
    }
    return true;
  };
  ASSERT_TRUE(WaitFor([&] { return mirrored_bound(*b, "p", 5); }));
  EXPECT_EQ(b->host->scheduler()->Stats().queue.active, 0u);

  // The leader stops as on SIGTERM: the lease is released, and the standby takes over at its
  // next retry instead of waiting for the lease to run out.
  const auto stopped = std::chrono::steady_clock::now();
  a->host->Stop();
  // Released: no holder and a one-second lease, unless the standby's retry (every 500 ms) has
  // taken it already by the time kubectl reads it.
  lease = Lease();
  if (lease.value("holderIdentity", "") != "replica-b") {
    EXPECT_EQ(lease.value("holderIdentity", ""), "");
    EXPECT_EQ(lease.value("leaseDurationSeconds", 0), 1);
  }
  ASSERT_TRUE(WaitFor([&] { return b->leading(); }, std::chrono::seconds(10)));
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, kLeaseDuration);
  EXPECT_EQ(a->lost_at.load(), 0) << "a replica that stops has not lost its lease";
  lease = Lease();
  EXPECT_EQ(lease.value("holderIdentity", ""), "replica-b");
  EXPECT_EQ(lease.value("leaseTransitions", -1), 1);

  for (int i = 0; i < 5; ++i) Create(Pod("q" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 10; }));
  EXPECT_EQ(b->writes().bindings, 5u);
  ASSERT_TRUE(WaitFor([&] { return mirrored_bound(*b, "q", 5); }));

  // schedctl stats reads the same through Admin.Stats.
  auto admin = v1::Admin::NewStub(grpc::CreateChannel(
      "unix://" + (b->dir.path() / "s.sock").string(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::StatsResponse stats;
  ASSERT_TRUE(admin->Stats(&context, v1::StatsRequest(), &stats).ok());
  ASSERT_TRUE(stats.has_leader_election());
  EXPECT_TRUE(stats.leader_election().leading());
  EXPECT_EQ(stats.leader_election().identity(), "replica-b");
  EXPECT_EQ(stats.leader_election().holder(), "replica-b");
  EXPECT_EQ(stats.leader_election().lease(), "kube-system/schedhost");
  EXPECT_EQ(stats.leader_election().transitions(), 1);
}

// delay_cache_until_active: the standby reads nothing but the Lease, is not ready, and lists the
// cluster once it leads.
TEST_F(KubeModeTest, AStandbyThatDelaysItsMirrorListsTheClusterOnlyOnceElected) {
  AddNode(ns_ + "-a", "8", "16Gi");
  auto a = StartReplica("replica-a");
  ASSERT_TRUE(WaitFor([&] { return a->leading(); }, std::chrono::seconds(10)));
  auto b = StartReplica("replica-b", "", "delay_cache_until_active = true\n");
  for (int i = 0; i < 3; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 3; }));
  ASSERT_TRUE(WaitFor([&] { return b->host->leadership().holder == "replica-a"; }));
  EXPECT_EQ(b->host->store().Get<model::Node>("", ns_ + "-a"), nullptr);
  EXPECT_EQ(b->host->store().Get<model::Pod>(ns_, "p0"), nullptr);
  const auto [status, body] = HttpGet(b->host->metrics_port(), "/readyz");
  EXPECT_EQ(status, 503);
  EXPECT_THAT(body, HasSubstr("delay_cache_until_active"));

  a->host->Stop();
  ASSERT_TRUE(WaitFor([&] { return b->leading(); }, std::chrono::seconds(10)));
  ASSERT_TRUE(WaitFor([&] {
    auto pod = b->host->store().Get<model::Pod>(ns_, "p2");
    return pod != nullptr && pod->node_name() == ns_ + "-a";
  }));
  Create(Pod("q0", "100m"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("q0") == ns_ + "-a"; }));
  EXPECT_EQ(b->writes().bindings, 1u);
  EXPECT_EQ(HttpGet(b->host->metrics_port(), "/readyz").first, 200);
}

// The leader reaches the API server through a proxy the test cuts: it stops writing before the
// standby may take the lease, and writes nothing when the network comes back.
TEST_F(KubeModeTest, ALeaderCutOffStopsWritingBeforeTheStandbyTakesOver) {
  AddNode(ns_ + "-a", "8", "16Gi");
  TcpProxy proxy(ApiServerPort());
  const std::filesystem::path proxied_file = ProxiedKubeconfig(proxy, dir_.path());

  auto a = StartReplica("replica-a", proxied_file.string());
  ASSERT_TRUE(WaitFor([&] { return a->leading(); }, std::chrono::seconds(10)));
  auto b = StartReplica("replica-b");
  ASSERT_TRUE(WaitFor([&] { return b->host->leadership().holder == "replica-a"; }));
  for (int i = 0; i < 3; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 3; }));
  ASSERT_EQ(a->writes().bindings, 3u);

  proxy.Cut();
  // The leader's renewals go unanswered: at the renew deadline its writes stop and it says so.
  ASSERT_TRUE(WaitFor([&] { return a->lost_at.load() != 0; }, std::chrono::seconds(10)));
  EXPECT_FALSE(a->leading());
  ASSERT_TRUE(WaitFor([&] { return b->leading(); }, std::chrono::seconds(15)));
  // The standby took the lease only after the old leader's writes had stopped (both clocks are
  // this machine's): the new acquireTime is later than the end of the old term, by the lease
  // duration less the renew deadline at least.
  const Json lease = Lease();
  EXPECT_EQ(lease.value("holderIdentity", ""), "replica-b");
  const std::optional<int64_t> acquired = model::ParseRfc3339(lease.value("acquireTime", ""));
  ASSERT_TRUE(acquired.has_value()) << lease.dump();
  const int64_t term_end = a->host->leadership().term_end_unix_ns;
  ASSERT_GT(term_end, 0);
  EXPECT_GE(*acquired - term_end, std::chrono::nanoseconds(std::chrono::seconds(1)).count())
      << "the standby acquired " << (*acquired - term_end) / 1'000'000
      << " ms after the old leader's term ended";
  for (int i = 0; i < 3; ++i) Create(Pod("q" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 6; }));

  // The network comes back while nobody leads: the old leader's mirror catches up and its loop
  // still runs, but its fence holds. Pods stay pending; it sends no binding, status or event.
  proxy.Heal();
  b->host->Stop();
  for (int i = 0; i < 3; ++i) Create(Pod("r" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor(
      [&] {
        return a->host->store().Get<model::Pod>(ns_, "r2") != nullptr &&
               a->writes().not_leading > 0;
      },
      std::chrono::seconds(30)))
      << "the old leader's mirror never saw the new pods, or it never tried them";
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(BoundPods(*cp_, ns_).size(), 6u);
  EXPECT_EQ(a->writes().bindings, 3u);
  EXPECT_EQ(b->writes().bindings, 3u);
  EXPECT_EQ(Events("r0", "FailedScheduling").size(), 0u);
  EXPECT_FALSE(a->leading());
}


// Replicas as processes: the leader is killed with SIGKILL while pods arrive, and a standby
// binds them; then a leader frozen past its lease (SIGSTOP) is replaced, and when it thaws it
// finds its lease lost and exits 1 without writing. Every pod is bound once.
TEST_F(KubeModeTest, KilledOrFrozenLeaderIsReplacedAndNoPodIsBoundTwice) {
  if (!std::filesystem::exists(framework::testing::BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedhostd is not built in " << framework::testing::BinDir();
  }
  AddNode(ns_ + "-a", "64", "128Gi");
  auto spawn = [&](const std::string& identity) { return SpawnReplica(identity); };
  auto holder = [&] {
    const Json lease = Lease();
    return lease.is_null() ? std::string() : lease.value("holderIdentity", "");
  };
  const pid_t a = spawn("proc-a");
  ASSERT_TRUE(WaitFor([&] { return holder() == "proc-a"; }, std::chrono::seconds(60)));
  const pid_t b = spawn("proc-b");
  for (int i = 0; i < 5; ++i) Create(Pod("p" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 5; }));

  // kill -9 of the leader while pods arrive.
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(a, SIGKILL), 0);
  EXPECT_EQ(ExitStatus(a, std::chrono::seconds(10)), -1);
  for (int i = 0; i < 5; ++i) Create(Pod("q" + std::to_string(i), "100m"));
  std::chrono::steady_clock::duration first_binding{};
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto bound = BoundPods(*cp_, ns_);
        if (first_binding == decltype(first_binding){} && bound.contains("q0")) {
          first_binding = std::chrono::steady_clock::now() - killed;
        }
        return bound.size() == 10;
      },
      std::chrono::seconds(30)));
  EXPECT_EQ(holder(), "proc-b");
  // The lease runs out 5 s after the last renewal the standby saw; it retries every 0.5-1.1 s.
  EXPECT_LT(first_binding, std::chrono::seconds(15));
  std::cout << "failover after kill -9: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(first_binding).count()
            << " ms from the kill to the new leader's first binding\n";

  // A new standby, then the leader frozen for longer than its lease.
  const pid_t c = spawn("proc-c");
  // Once it campaigns, its mirror is synced (the log says so).
  ASSERT_TRUE(WaitFor([&] {
    std::ifstream log(ReplicaDir() / "schedhostd.log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    return text.find("campaigns for lease") != std::string::npos;
  }));
  ASSERT_EQ(::kill(b, SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return holder() == "proc-c"; }, std::chrono::seconds(30)));
  for (int i = 0; i < 5; ++i) Create(Pod("r" + std::to_string(i), "100m"));
  ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() == 15; }, std::chrono::seconds(30)));
  ASSERT_EQ(::kill(b, SIGCONT), 0);
  // It thaws, finds its renew deadline long past, stops and exits 1, as kube-scheduler does.
  EXPECT_EQ(ExitStatus(b, std::chrono::seconds(30)), 1);
  EXPECT_EQ(holder(), "proc-c");

  // Every pod bound once: one Scheduled event each, none from a replica that had lost the lease.
  for (const auto& [pod, node] : BoundPods(*cp_, ns_)) {
    EXPECT_EQ(node, ns_ + "-a");
    EXPECT_EQ(Events(pod, "Scheduled").size(), 1u) << pod;
  }
  ::kill(c, SIGTERM);
  EXPECT_EQ(ExitStatus(c, std::chrono::seconds(30)), 0);
  EXPECT_EQ(holder(), "") << "SIGTERM releases the lease";
}

// The soak: three replicas as processes, each reaching the API server through a proxy of its
// own, while pods arrive without pause; each round takes down whoever leads with one fault, in
// turn: kill -9, SIGSTOP past the lease, a network cut past the lease, SIGTERM, and a
// kube-apiserver restart. The fallen replica is started again as a standby. At the end every pod
// is bound, once (one Scheduled event each, and no replica that lost its lease wrote after it),
// and the last leader's mirror lists what the API server lists. SCHEDHOST_SOAK_ROUNDS sets the
// rounds (5 here; scripts/soak.sh runs more); figures go to stdout.
TEST_F(KubeModeTest, SoakFailoversUnderFaultsLoseAndDoubleBindNothing) {
  if (!std::filesystem::exists(framework::testing::BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedhostd is not built in " << framework::testing::BinDir();
  }
  const char* rounds_env = std::getenv("SCHEDHOST_SOAK_ROUNDS");
  const int rounds = rounds_env != nullptr ? std::max(1, std::atoi(rounds_env)) : 5;
  // About 12 pods a second arrive; a round lasts about 10 s.
  const int nodes = 2 + rounds * 130 / 100;
  for (int i = 0; i < nodes; ++i) AddNode(ns_ + "-n" + std::to_string(i), "64", "256Gi");

  struct Slot {
    std::unique_ptr<framework::testing::TempDir> dir;
    std::unique_ptr<TcpProxy> proxy;
    pid_t pid = -1;
    std::string identity;
    int generation = 0;
  };
  std::vector<Slot> slots(3);
  auto start = [&](size_t i) {
    Slot& slot = slots[i];
    if (!slot.dir) {
      slot.dir = std::make_unique<framework::testing::TempDir>();
      slot.proxy = std::make_unique<TcpProxy>(ApiServerPort());
      ProxiedKubeconfig(*slot.proxy, slot.dir->path());
    }
    slot.identity = "r" + std::to_string(i) + "-g" + std::to_string(++slot.generation);
    const std::filesystem::path dir = slot.dir->path();
    std::ofstream(dir / "schedhost.toml")
        << ConfigIn(dir, (dir / "proxied.kubeconfig").string(), Election(slot.identity));
    slot.pid = SpawnSchedhostd(dir / "schedhost.toml", dir / "schedhostd.log");
  };
  auto holder = [&] {
    const Json lease = Lease();
    return lease.is_null() ? std::string() : lease.value("holderIdentity", "");
  };
  auto leader_slot = [&]() -> int {
    const std::string h = holder();
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!h.empty() && slots[i].identity == h) return static_cast<int>(i);
    }
    return -1;
  };
  for (size_t i = 0; i < slots.size(); ++i) start(i);
  // On failure, the end of every replica's log says what it was doing; whatever happened, no
  // replica outlives the test.
  struct DumpLogs {
    std::vector<Slot>& slots;
    ~DumpLogs() {
      if (::testing::Test::HasFailure()) Dump();
      for (const Slot& slot : slots) {
        if (slot.pid > 0 && ::waitpid(slot.pid, nullptr, WNOHANG) == 0) {
          ::kill(slot.pid, SIGCONT);
          ::kill(slot.pid, SIGKILL);
          ::waitpid(slot.pid, nullptr, 0);
        }
      }
    }
    void Dump() const {
      for (const Slot& slot : slots) {
        if (!slot.dir) continue;
        std::ifstream log(slot.dir->path() / "schedhostd.log");
        std::vector<std::string> lines;
        for (std::string line; std::getline(log, line);) lines.push_back(line);
        const framework::testing::CommandResult stats = framework::testing::RunCommand(
            (framework::testing::BinDir() / "schedctl").string() + " --server unix://" +
            (slot.dir->path() / "s.sock").string() + " stats 2>&1");
        std::cout << "--- " << slot.identity << " (pid " << slot.pid << "): schedctl stats:\n"
                  << stats.output << "last lines of its log:\n";
        for (size_t i = lines.size() > 40 ? lines.size() - 40 : 0; i < lines.size(); ++i) {
          std::cout << lines[i] << "\n";
        }
      }
    }
  } dump_logs{slots};

  // Pods arrive in batches of six every half second, from a thread of their own. `created`
  // counts the pods of batches kubectl reported created; a batch that failed (the API server
  // restarting) may still have created some of its pods, so the end counts what the API server
  // lists, not these.
  std::atomic<bool> arriving{true};
  std::atomic<int> created{0};
  std::atomic<int> create_failures{0};
  std::thread creator([&] {
    for (int batch = 0; arriving.load(); ++batch) {
      const Json list = PodList("p" + std::to_string(batch) + "-", 6, Pod("x", "10m"));
      if (cp_->Kubectl({"create", "-f", "-"}, list.dump()).exit_code == 0) {
        created += 6;
      } else {
        ++create_failures;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  struct Stop {
    std::atomic<bool>& flag;
    std::thread& t;
    ~Stop() {
      flag = false;
      if (t.joinable()) t.join();
    }
  } stop_creator{arriving, creator};

  const char* kFaults[] = {"kill -9", "SIGSTOP past the lease", "network cut past the lease",
                           "SIGTERM", "kube-apiserver restart"};
  std::vector<int64_t> takeover_ms;
  int failovers = 0;
  for (int round = 0; round < rounds; ++round) {
    int leader = -1;
    ASSERT_TRUE(WaitFor([&] { return (leader = leader_slot()) >= 0; }, std::chrono::seconds(60)))
        << "round " << round << ": nobody leads";
    std::this_thread::sleep_for(std::chrono::seconds(2));  // it binds for a while
    Slot& slot = slots[static_cast<size_t>(leader)];
    const std::string fallen = slot.identity;
    const int fault = round % 5;
    const auto injected = std::chrono::steady_clock::now();
    int expected_exit = 1;
    switch (fault) {
      case 0:
        ::kill(slot.pid, SIGKILL);
        expected_exit = -1;
        break;
      case 1:
        ::kill(slot.pid, SIGSTOP);
        break;
      case 2:
        slot.proxy->Cut();
        break;
      case 3:
        ::kill(slot.pid, SIGTERM);
        expected_exit = 0;
        break;
      case 4:
        cp_->RestartApiServer();
        break;
    }
    if (fault == 4) {
      // A restart longer than the renew deadline ends the leader's term (it exits 1 and is
      // started again); a shorter one does not. Either way pods are bound again after it.
      const size_t bound_before = BoundPods(*cp_, ns_).size();
      ASSERT_TRUE(WaitFor([&] { return BoundPods(*cp_, ns_).size() > bound_before; },
                          std::chrono::seconds(60)))
          << "round " << round << ": nothing bound after the kube-apiserver restart; "
          << created.load() << " pods created (" << create_failures.load()
          << " batches failed), " << BoundPods(*cp_, ns_).size() << " bound, lease holder \""
          << holder() << "\"";
      int status = 0;
      const bool exited = ::waitpid(slot.pid, &status, WNOHANG) == slot.pid;
      if (exited) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "status " << status;
        start(static_cast<size_t>(leader));
        ++failovers;
      }
      std::cout << "round " << round << ": " << kFaults[fault] << ", the leader "
                << (exited ? "lost its lease and exited 1" : "kept its lease") << "\n";
      continue;
    }
    // Somebody else leads and binds; the time is from the fault to the first pod bound after.
    const size_t bound_before = BoundPods(*cp_, ns_).size();
    ASSERT_TRUE(WaitFor(
        [&] {
          const std::string h = holder();
          return !h.empty() && h != fallen && BoundPods(*cp_, ns_).size() > bound_before;
        },
        std::chrono::seconds(30)))
        << "round " << round << " (" << kFaults[fault] << "): no new leader bound anything";
    takeover_ms.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - injected)
                              .count());
    if (fault == 1) ::kill(slot.pid, SIGCONT);
    if (fault == 2) slot.proxy->Heal();
    EXPECT_EQ(ExitStatus(slot.pid, std::chrono::seconds(30)), expected_exit)
        << "round " << round << ": " << kFaults[fault] << " of " << fallen;
    ++failovers;
    std::cout << "round " << round << ": " << kFaults[fault] << " of " << fallen << ", "
              << takeover_ms.back() << " ms to the next leader's first binding\n";
    start(static_cast<size_t>(leader));
  }
  arriving = false;
  creator.join();

  // Every pod the API server lists is bound, once; kubectl's answers only bound it from below.
  // The wait is generous: under asan beside other suites, a lease can still be lost after the
  // last fault (a TLS handshake that times out), and the next leader then needs a lease
  // duration and a relist before it binds what waited.
  std::map<std::string, std::string> listed;
  size_t unbound = 0;
  const bool settled = WaitFor(
      [&] {
        std::optional<std::map<std::string, std::string>> now = ListedPods(*cp_, ns_);
        if (!now) return false;
        listed = std::move(*now);
        unbound = static_cast<size_t>(std::count_if(
            listed.begin(), listed.end(), [](const auto& p) { return p.second.empty(); }));
        return unbound == 0;
      },
      std::chrono::seconds(180));
  ASSERT_TRUE(settled) << unbound << " of " << listed.size() << " listed pods unbound ("
                       << created.load() << " reported created, " << create_failures.load()
                       << " batches failed)";
  ASSERT_GE(listed.size(), static_cast<size_t>(created.load()))
      << "the API server lists fewer pods than kubectl reported created";
  const int half_created = static_cast<int>(listed.size()) - created.load();
  int doubles = 0;
  for (const auto& [pod, count] : ScheduledEvents()) doubles += count > 1 ? 1 : 0;
  EXPECT_EQ(doubles, 0);
  // The leader's mirror lists what the API server lists.
  const int leader = leader_slot();
  ASSERT_GE(leader, 0);
  const framework::testing::CommandResult mirror = framework::testing::RunCommand(
      (framework::testing::BinDir() / "schedctl").string() + " --server unix://" +
      (slots[static_cast<size_t>(leader)].dir->path() / "s.sock").string() +
      " get pods -n " + ns_ + " -o json");
  ASSERT_EQ(mirror.exit_code, 0) << mirror.output;
  std::map<std::string, std::string> mirrored;
  for (const Json& p : Json::parse(mirror.output).value("items", Json::array())) {
    mirrored[p["metadata"].value("name", "")] = p["spec"].value("nodeName", "");
  }
  EXPECT_EQ(mirrored, listed);

  std::sort(takeover_ms.begin(), takeover_ms.end());
  std::cout << "soak: " << rounds << " faults injected, " << failovers << " failovers survived, "
            << listed.size() << " pods created and bound (" << half_created
            << " of them from the " << create_failures.load()
            << " batches kubectl reported failed), " << doubles << " bound twice, " << unbound
            << " lost";
  if (!takeover_ms.empty()) {
    std::cout << "; takeover ms min/median/max " << takeover_ms.front() << "/"
              << takeover_ms[takeover_ms.size() / 2] << "/" << takeover_ms.back();
  }
  std::cout << "\n";
  for (Slot& slot : slots) {
    ::kill(slot.pid, SIGTERM);
    ExitStatus(slot.pid, std::chrono::seconds(30));
  }
}

// A watch whose connection goes silent without closing (the proxy stalls it) is taken for dead
// after watch_idle_timeout and replaced: the mirror catches up.
TEST_F(KubeModeTest, AWatchThatHangsWithoutClosingIsReplaced) {
  AddNode(ns_ + "-a", "8", "16Gi");
  TcpProxy proxy(ApiServerPort());
  const std::filesystem::path proxied_file = ProxiedKubeconfig(proxy, dir_.path());
  StartHost(ConfigIn(dir_.path(), proxied_file.string(),
                     "watch_idle_timeout = \"3s\"\n"
                     "[kubernetes.leader_election]\nenabled = false\n"));
  Create(Pod("before", "100m"));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("before") == ns_ + "-a"; }));
  const uint64_t watches = kube_->reflectors().back()->stats().watches;  // pods
  proxy.Stall();  // every open connection goes silent; new ones pass
  Create(Pod("after", "100m"));
  // Pooled connections were stalled too: a request that takes one waits for its 30 s timeout
  // and is then sent again on a new connection.
  ASSERT_TRUE(WaitFor([&] { return host_->store().Get<model::Pod>(ns_, "after") != nullptr; },
                      std::chrono::seconds(60)))
      << "the mirror never saw the pod created after the stall";
  // The pod came with the list; the new watch starts after it.
  EXPECT_TRUE(WaitFor([&] { return kube_->reflectors().back()->stats().watches > watches; }));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("after") == ns_ + "-a"; }, std::chrono::seconds(90)));
}

}  // namespace
}  // namespace schedhost::kube
