#include "host/model/interner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace schedhost::model {
namespace {

TEST(InternerTest, WellKnownIdsArePreRegistered) {
  struct Case {
    schedhost_id id;
    std::string_view text;
  };
  const Case cases[] = {
      {SCHEDHOST_ID_EMPTY, ""},
      {SCHEDHOST_ID_CPU, "cpu"},
      {SCHEDHOST_ID_MEMORY, "memory"},
      {SCHEDHOST_ID_EPHEMERAL_STORAGE, "ephemeral-storage"},
      {SCHEDHOST_ID_PODS, "pods"},
      {SCHEDHOST_ID_LABEL_HOSTNAME, "kubernetes.io/hostname"},
      {SCHEDHOST_ID_LABEL_ZONE, "topology.kubernetes.io/zone"},
      {SCHEDHOST_ID_LABEL_REGION, "topology.kubernetes.io/region"},
      {SCHEDHOST_ID_FIELD_METADATA_NAME, "metadata.name"},
      {SCHEDHOST_ID_NAMESPACE_DEFAULT, "default"},
      {SCHEDHOST_ID_TAINT_UNSCHEDULABLE, "node.kubernetes.io/unschedulable"},
      {SCHEDHOST_ID_TAINT_NOT_READY, "node.kubernetes.io/not-ready"},
      {SCHEDHOST_ID_TAINT_UNREACHABLE, "node.kubernetes.io/unreachable"},
      {SCHEDHOST_ID_PROTOCOL_TCP, "TCP"},
      {SCHEDHOST_ID_PROTOCOL_UDP, "UDP"},
      {SCHEDHOST_ID_PROTOCOL_SCTP, "SCTP"},
      {SCHEDHOST_ID_HUGEPAGES_PREFIX, "hugepages-"},
  };
  for (Interner* interner : {&Interner::Global(), new Interner()}) {
    for (const Case& c : cases) {
      EXPECT_EQ(interner->Str(c.id), c.text) << c.id;
      EXPECT_EQ(interner->Lookup(c.text), c.id) << c.text;
      EXPECT_EQ(interner->Intern(c.text), c.id) << c.text;
    }
    if (interner != &Interner::Global()) delete interner;
  }
}

TEST(InternerTest, InternAssignsDenseStableIds) {
  Interner interner;
  EXPECT_EQ(interner.Size(), SCHEDHOST_ID_WELL_KNOWN_COUNT);
  schedhost_id a = interner.Intern("app");
  schedhost_id b = interner.Intern("web");
  EXPECT_EQ(a, SCHEDHOST_ID_WELL_KNOWN_COUNT);
  EXPECT_EQ(b, a + 1);
  EXPECT_EQ(interner.Intern(std::string("app")), a);
  EXPECT_EQ(interner.Str(a), "app");
  EXPECT_EQ(interner.Lookup("web"), b);
}

TEST(InternerTest, UnknownStringsAndIds) {
  Interner interner;
  EXPECT_EQ(interner.Lookup("never-interned"), 0u);
  EXPECT_EQ(interner.Lookup(""), 0u);
  EXPECT_EQ(interner.Intern(""), 0u);
  EXPECT_EQ(interner.Str(interner.Size()), "");
  EXPECT_EQ(interner.Str(0xffffffffu), "");
}

TEST(InternerTest, KeepsTextAcrossChunksAndLargeStrings) {
  Interner interner;
  std::string big(100000, 'x');
  schedhost_id big_id = interner.Intern(big);
  std::vector<schedhost_id> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(interner.Intern("key-" + std::to_string(i)));
  std::string_view first = interner.Str(ids[0]);
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(interner.Str(ids[i]), "key-" + std::to_string(i));
  }
  // Views handed out earlier stay valid while the interner grows.
  EXPECT_EQ(first, "key-0");
  EXPECT_EQ(interner.Str(big_id), big);
}

TEST(InternerTest, ConcurrentInternAndStr) {
  Interner interner;
  constexpr int kThreads = 4;
  constexpr int kStrings = 3000;
  // Each multiplier is coprime with kStrings, so every writer visits every string once.
  constexpr int kMultipliers[kThreads] = {1, 7, 11, 7919};
  std::atomic<bool> stop{false};
  std::atomic<int> bad_reads{0};
  // A reader hammers Str() on every published id without any lock while writers grow the table.
  std::thread reader([&] {
    while (!stop.load()) {
      size_t n = interner.Size();
      for (size_t id = SCHEDHOST_ID_WELL_KNOWN_COUNT; id < n; ++id) {
        std::string_view s = interner.Str(static_cast<schedhost_id>(id));
        if (s.substr(0, 2) != "s-") bad_reads.fetch_add(1);
      }
    }
  });
  std::vector<std::vector<schedhost_id>> results(kThreads);
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      // Every writer interns the same strings in a different order.
      for (int i = 0; i < kStrings; ++i) {
        int k = (i * kMultipliers[t]) % kStrings;
        results[t].push_back(interner.Intern("s-" + std::to_string(k)));
      }
    });
  }
  for (auto& w : writers) w.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_EQ(interner.Size(), SCHEDHOST_ID_WELL_KNOWN_COUNT + kStrings);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kStrings; ++i) {
      int k = (i * kMultipliers[t]) % kStrings;
      EXPECT_EQ(interner.Str(results[t][i]), "s-" + std::to_string(k));
      EXPECT_EQ(results[t][i], interner.Lookup("s-" + std::to_string(k)));
    }
  }
}

}  // namespace
}  // namespace schedhost::model
