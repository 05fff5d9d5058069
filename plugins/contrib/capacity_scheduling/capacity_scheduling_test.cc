// CapacityScheduling alone: quantities in messages, the quota checks (max, min, the cluster's total
// min), the reserved-pod ledger, and argument validation through a profile built by the host.
// ElasticQuota objects are decoded in the end-to-end tests.
// Scheduling end to end is in tests/integration/capacity_scheduling_test.cc.
#include "capacity_scheduling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "host/framework/testing/harness.h"
#include "quota.h"

namespace schedhost::contrib::capacity {
namespace {

using ::testing::HasSubstr;

TEST(QuantityTest, FormatsForMessages) {
  EXPECT_EQ(FormatQuantity("cpu", 6000), "6");
  EXPECT_EQ(FormatQuantity("cpu", 1500), "1500m");
  EXPECT_EQ(FormatQuantity("memory", int64_t{12} << 30), "12Gi");
  EXPECT_EQ(FormatQuantity("memory", 1000), "1000");
}

// Two quotas on cpu (millicores) and memory; team-b limits nothing in memory.
class QuotaTableTest : public ::testing::Test {
 protected:
  static schedhost_id Intern(std::string_view s) {
    if (s == "cpu") return 1;
    if (s == "memory") return 2;
    if (s == "team-a") return 10;
    if (s == "team-b") return 11;
    return 99;
  }
  QuotaTableTest()
      : table_({QuotaSpec{"team-a", {{"cpu", 2000}, {"memory", 4 << 20}}, {{"cpu", 6000}}},
                QuotaSpec{"team-b", {{"cpu", 4000}}, {{"cpu", 8000}}}},
               &QuotaTableTest::Intern) {}
  // Cpu returns amounts in the table's resource order (cpu, memory).
  static Amounts Cpu(int64_t milli, int64_t memory = 0) { return {milli, memory}; }

  QuotaTable table_;
};

TEST_F(QuotaTableTest, ResolvesNamespacesAndResources) {
  EXPECT_EQ(table_.size(), 2u);
  EXPECT_EQ(table_.resources(), 2u);
  EXPECT_EQ(table_.IndexOf(10), 0u);
  EXPECT_EQ(table_.IndexOf(11), 1u);
  EXPECT_EQ(table_.IndexOf(12), std::nullopt);
}

TEST_F(QuotaTableTest, OverMaxIsRefusedNamingResourceAndAmounts) {
  Usage used = table_.EmptyUsage();
  used[0] = Cpu(5000);
  EXPECT_EQ(table_.Check(0, used, Cpu(1000)), std::nullopt) << "exactly max is allowed";
  EXPECT_EQ(table_.Check(0, used, Cpu(2000)),
            "exceeded quota: namespace team-a would use cpu 7, more than its max 6");
  // No max on memory: any amount is fine as far as max goes.
  EXPECT_EQ(table_.ExceedsMax(0, used, Cpu(0, int64_t{100} << 30)), std::nullopt);
}

TEST_F(QuotaTableTest, BorrowingIsAllowedWhileOthersLeaveTheirMinUnused) {
  Usage used = table_.EmptyUsage();
  used[0] = Cpu(5000);  // team-a borrows 3 of team-b's idle 4
  EXPECT_TRUE(table_.OverMinWith(0, used, Cpu(1000)));
  EXPECT_EQ(table_.Check(0, used, Cpu(1000)), std::nullopt);
  EXPECT_TRUE(table_.Borrowing(0, used));
  EXPECT_FALSE(table_.Borrowing(1, used));
}

TEST_F(QuotaTableTest, BorrowingStopsWhenTheTotalMinIsUsedUp) {
  Usage used = table_.EmptyUsage();
  used[0] = Cpu(3000);
  used[1] = Cpu(3000);  // 6 of the total min 6
  EXPECT_EQ(table_.Check(0, used, Cpu(1000)),
            "exceeded quota: namespace team-a would borrow beyond its min, but no guarantee is "
            "left to borrow: all quotas would use cpu 7, more than their total min 6");
  // team-b is still within its own min (4): its guarantee holds whatever others borrowed.
  EXPECT_FALSE(table_.OverMinWith(1, used, Cpu(1000)));
  EXPECT_EQ(table_.Check(1, used, Cpu(1000)), std::nullopt);
}

TEST_F(QuotaTableTest, OnlyRequestedResourcesCount) {
  Usage used = table_.EmptyUsage();
  used[0] = Cpu(6000, int64_t{8} << 20);  // at max cpu, over min memory
  // A pod asking for nothing of cpu cannot go over the cpu max.
  EXPECT_EQ(table_.ExceedsMax(0, used, Cpu(0, 1)), std::nullopt);
  EXPECT_FALSE(table_.OverMinWith(0, used, Cpu(0, 0)));
}

TEST_F(QuotaTableTest, ProjectKeepsTrackedResources) {
  const schedhost_resource items[] = {{1, 0, 1500}, {2, 0, 1024}, {7, 0, 3}};
  const Amounts a = table_.Project(Resources(schedhost_resources{items, 3}));
  EXPECT_EQ(a, Cpu(1500, 1024));
}

// Requests holds a request list for ReservedPods::Add (which copies it).
struct Requests {
  std::vector<schedhost_resource> items;
  Resources view() const { return Resources(schedhost_resources{items.data(), items.size()}); }
};
Requests CpuRequest(int64_t milli) { return Requests{{{1, 0, milli}}}; }

schedhost_id InternTeams(std::string_view s) {
  if (s == "cpu") return 1;
  if (s == "team-a") return 10;
  if (s == "team-b") return 11;
  if (s == "team-c") return 12;
  return 99;
}

QuotaSpec CpuQuota(const std::string& ns) { return QuotaSpec{ns, {}, {{"cpu", 8000}}}; }

TEST(ReservedPodsTest, CountsReservedPodsUntilUnreservedOrSeen) {
  const QuotaTable table({CpuQuota("team-a"), CpuQuota("team-b")}, &InternTeams);
  ReservedPods r;
  Usage used = table.EmptyUsage();
  r.Add("u1", 10, CpuRequest(1000).view());
  r.Add("u2", 11, CpuRequest(500).view());
  r.AddTo(table, used, [](std::string_view uid) { return uid == "u2"; });  // u2 is in the snapshot
  EXPECT_EQ(used[0][0], 1000);
  EXPECT_EQ(used[1][0], 0) << "a pod the snapshot holds is not counted twice";
  EXPECT_TRUE(r.Remove("u1"));  // Unreserve: a later failure releases its usage
  EXPECT_FALSE(r.Remove("u1"));
  Usage again = table.EmptyUsage();
  r.AddTo(table, again, [](std::string_view) { return false; });
  EXPECT_EQ(again[0][0], 0);
  EXPECT_EQ(again[1][0], 500);
  EXPECT_EQ(r.size(), 1u);
  EXPECT_TRUE(r.Contains("u2"));
  r.Add("n1", 10, CpuRequest(300).view(), 5);  // a nomination of priority 5
  Usage by_priority = table.EmptyUsage();
  r.AddTo(
      table, by_priority, [](std::string_view) { return false; }, 10);
  EXPECT_EQ(by_priority[0][0], 0) << "a lower-priority nomination does not hold a pod back";
  r.AddTo(
      table, by_priority, [](std::string_view) { return false; }, 5);
  EXPECT_EQ(by_priority[0][0], 300);
  EXPECT_TRUE(r.Remove("n1"));
  r.PruneOlderThan(std::chrono::hours(1));
  EXPECT_TRUE(r.Contains("u2")) << "young entries stay";
  r.PruneOlderThan(std::chrono::seconds(0));
  EXPECT_EQ(r.size(), 0u) << "old entries (a nominated pod that never came back) go";
}

TEST(ReservedPodsTest, EntriesFollowTheNamespaceWhenTheTableIsReplaced) {
  // A changed ElasticQuota may reorder quotas and give a namespace its first quota while pods
  // are reserved: entries are counted under the table in force, by namespace.
  const QuotaTable before({CpuQuota("team-a"), CpuQuota("team-b")}, &InternTeams);
  const QuotaTable after({CpuQuota("team-c"), CpuQuota("team-b"), CpuQuota("team-a")},
                         &InternTeams);
  ReservedPods r;
  r.Add("a", 10, CpuRequest(1000).view());
  r.Add("c", 12, CpuRequest(700).view());
  Usage old_usage = before.EmptyUsage();
  r.AddTo(before, old_usage, [](std::string_view) { return false; });
  EXPECT_EQ(old_usage[0][0], 1000);
  EXPECT_EQ(old_usage[1][0], 0) << "team-c has no quota yet";
  Usage new_usage = after.EmptyUsage();
  r.AddTo(after, new_usage, [](std::string_view) { return false; });
  EXPECT_EQ(new_usage[0][0], 700) << "team-c's reserved pod counts once it has a quota";
  EXPECT_EQ(new_usage[1][0], 0);
  EXPECT_EQ(new_usage[2][0], 1000) << "team-a moved to index 2";
}

// Argument validation: the profile is built by the host with the plugin loaded by name.
std::string Args(const std::string& body) {
  return "[profile.plugin_config.CapacityScheduling]\n" + body + "\n";
}

TEST(CapacitySchedulingArgsTest, TakesNoArguments) {
  framework::testing::Harness h;
  h.OnlyPlugins({"CapacityScheduling"}, Args(""));
  EXPECT_NO_THROW(h.framework());
}

TEST(CapacitySchedulingArgsTest, RefusesTheQuotasOfEarlierReleasesSayingWhereQuotasComeFrom) {
  constexpr char kP[] = "plugin_config.CapacityScheduling.";
  for (const auto& [body, want] : std::vector<std::pair<std::string, std::string>>{
           {"quotas = []", std::string(kP) + "quotas: CapacityScheduling reads its quotas from "
                                             "ElasticQuota objects"},
           {"quota_file = \"q.toml\"", std::string(kP) + "quota_file: CapacityScheduling reads"},
           {"quota = 1", std::string(kP) + "quota: unknown key; CapacityScheduling takes no "
                                           "arguments"},
       }) {
    framework::testing::Harness h;
    h.OnlyPlugins({"CapacityScheduling"}, Args(body));
    try {
      h.framework();
      ADD_FAILURE() << "accepted: " << body;
    } catch (const std::exception& e) {
      EXPECT_THAT(e.what(), HasSubstr(want)) << body;
      EXPECT_THAT(e.what(), HasSubstr("test.toml:")) << body;
    }
  }
}

}  // namespace
}  // namespace schedhost::contrib::capacity
