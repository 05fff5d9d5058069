// RecordedCycle's rejected-node encoding: every node comes back once with its own status,
// whatever the mix of reasons and ids, and a cluster failing for one reason takes a few bytes.
#include "host/scheduler/explain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "host/model/interner.h"

namespace schedhost::scheduler {
namespace {

using framework::Code;
using framework::Status;

std::map<schedhost_id, std::string> Decode(const RecordedCycle& r) {
  std::map<schedhost_id, std::string> out;
  r.ForEachRejected([&](schedhost_id id, const Status& s) {
    EXPECT_TRUE(out.emplace(id, s.plugin + ":" + s.Message()).second) << "id twice: " << id;
  });
  return out;
}

TEST(RecordedCycleTest, VarintsRoundTripAcrossByteBoundaries) {
  std::vector<uint8_t> buf;
  const std::vector<uint64_t> values = {
      0, 1, 127, 128, 300, 16383, 16384, 0xffffffffu, uint64_t{1} << 40};
  for (uint64_t v : values) internal::PutVarint(buf, v);
  EXPECT_EQ(buf.size(), 1 + 1 + 1 + 2 + 2 + 2 + 3 + 5 + 6u);
  size_t at = 0;
  for (uint64_t v : values) EXPECT_EQ(internal::GetVarint(buf, &at), v);
  EXPECT_EQ(at, buf.size());
}

TEST(RecordedCycleTest, EveryRejectedNodeComesBackOnceWithItsStatus) {
  // Random ids (with repeats: a node rejected twice, as a nominated node can be) and three
  // reasons, against a plain map.
  std::mt19937 rng(7);
  const Status reasons[] = {Status::Make(Code::kUnschedulable, "Insufficient cpu", "Fit"),
                            Status::Make(Code::kUnschedulable, "node(s) had taints", "Taint"),
                            Status::Make(Code::kUnschedulableAndUnresolvable, "gone", "")};
  RecordedCycle r;
  std::map<schedhost_id, std::string> want;
  for (int i = 0; i < 3000; ++i) {
    // Mostly runs of neighbours, sometimes far away (multi-byte gaps).
    const schedhost_id id = rng() % 4 == 0 ? rng() : 1000 + rng() % 2000;
    const Status& s = reasons[rng() % 3];
    if (want.count(id)) continue;
    want[id] = s.plugin + ":" + s.Message();
    r.AddRejected(id, s);
  }
  // The same node twice with the same status (a nominated node's own pass, then the full one)
  // is listed once.
  const auto [first_id, first_reason] = *want.begin();
  for (const Status& s : reasons) {
    if (s.plugin + ":" + s.Message() == first_reason) r.AddRejected(first_id, s);
  }
  r.Seal();
  EXPECT_EQ(r.num_rejected, want.size());
  EXPECT_EQ(Decode(r), want);
  ASSERT_NE(r.statuses, nullptr);
  EXPECT_EQ(r.statuses->size(), 3u);
}

TEST(RecordedCycleTest, AClusterFailingForOneReasonTakesAFewBytes) {
  RecordedCycle r;
  // 5,000 nodes with consecutive ids, added in a rotated order as the Filter loop visits them.
  for (schedhost_id i = 0; i < 5000; ++i) {
    r.AddRejected(100000 + (i + 1234) % 5000,
                  Status::Make(Code::kUnschedulable, "Insufficient cpu", "NodeResourcesFit"));
  }
  r.Seal();
  EXPECT_EQ(r.num_rejected, 5000u);
  EXPECT_LE(r.rejected.size(), 8u);
  EXPECT_LT(r.Bytes(), 1024u);
  const auto got = Decode(r);
  ASSERT_EQ(got.size(), 5000u);
  EXPECT_EQ(got.begin()->first, 100000u);
  EXPECT_EQ(got.rbegin()->first, 104999u);
}

TEST(RecordedCycleTest, RecordsWithTheSameStatusesShareThem) {
  std::shared_ptr<const std::vector<Status>> last;
  auto record = [&](const std::string& message) {
    RecordedCycle r;
    r.AddRejected(1, Status::Make(Code::kUnschedulable, message, "Fit"));
    r.AddRejected(2, Status::Make(Code::kUnschedulable, message, "Fit"));
    r.Seal(&last);
    return r;
  };
  const RecordedCycle a = record("Insufficient cpu");
  const RecordedCycle b = record("Insufficient cpu");
  EXPECT_EQ(a.statuses.get(), b.statuses.get());
  const RecordedCycle c = record("Insufficient memory");
  EXPECT_NE(c.statuses.get(), a.statuses.get());
  EXPECT_EQ(last.get(), c.statuses.get());
  EXPECT_EQ(Decode(a), (std::map<schedhost_id, std::string>{{1, "Fit:Insufficient cpu"},
                                                            {2, "Fit:Insufficient cpu"}}));
  EXPECT_EQ(Decode(c).at(2), "Fit:Insufficient memory");
  // No rejection: nothing to share, and *last is left as it was.
  RecordedCycle none;
  none.Seal(&last);
  EXPECT_EQ(none.statuses, nullptr);
  EXPECT_EQ(last.get(), c.statuses.get());
}

TEST(RecordedCycleTest, SameAsHoldsOnlyForRecordsThatExpandAlike) {
  std::shared_ptr<const std::vector<Status>> last;
  auto record = [&](const std::string& message, schedhost_id rejected, size_t all) {
    RecordedCycle r;
    r.num_all_nodes = all;
    r.feasible = {7, 8};
    r.AddRejected(1, Status::Make(Code::kUnschedulable, message, "Fit"));
    r.AddRejected(rejected, Status::Make(Code::kUnschedulable, message, "Fit"));
    r.Seal(&last);
    return r;
  };
  const RecordedCycle a = record("Insufficient cpu", 2, 4);
  EXPECT_TRUE(a.SameAs(record("Insufficient cpu", 2, 4)));
  EXPECT_FALSE(a.SameAs(record("Insufficient memory", 2, 4)));  // another status
  record("Insufficient cpu", 2, 4);
  EXPECT_FALSE(a.SameAs(record("Insufficient cpu", 3, 4)));  // another node rejected
  EXPECT_FALSE(a.SameAs(record("Insufficient cpu", 2, 5)));  // another cluster size
  RecordedCycle b = record("Insufficient cpu", 2, 4);
  b.feasible = {8, 7};  // the same nodes in another order
  EXPECT_FALSE(a.SameAs(b));
  RecordedCycle c = record("Insufficient cpu", 2, 4);
  c.scored = true;
  c.normalized = {100, 0};
  EXPECT_FALSE(a.SameAs(c));
  RecordedCycle d = record("Insufficient cpu", 2, 4);
  d.skipped_filter_plugins = {"NodePorts"};
  EXPECT_FALSE(a.SameAs(d));
  // A record still collecting (not sealed) is never the same as one.
  RecordedCycle open;
  open.AddRejected(1, Status::Make(Code::kUnschedulable, "Insufficient cpu", "Fit"));
  EXPECT_FALSE(open.SameAs(open));
}

TEST(RecordedCycleTest, ExpandNamesNodesAndListsTheRejectedByName) {
  model::Interner& names = model::Interner::Global();
  RecordedCycle r;
  r.num_all_nodes = 4;
  r.feasible = {names.Intern("explain-zeta"), names.Intern("explain-alpha")};
  r.AddRejected(names.Intern("explain-gamma"),
                Status::Make(Code::kUnschedulable, "too small", "Fit"));
  r.AddRejected(names.Intern("explain-beta"),
                Status::Make(Code::kUnschedulableAndUnresolvable, "left out", ""));
  r.Seal();
  auto e = r.Expand();
  ASSERT_EQ(e->nodes.size(), 4u);
  EXPECT_EQ(e->nodes[0].node, "explain-zeta");  // feasible: evaluation order
  EXPECT_EQ(e->nodes[1].node, "explain-alpha");
  EXPECT_EQ(e->nodes[0].outcome, NodeOutcome::kFeasible);
  EXPECT_EQ(e->nodes[2].node, "explain-beta");  // rejected: by name
  EXPECT_EQ(e->nodes[2].outcome, NodeOutcome::kExcluded);
  EXPECT_EQ(e->nodes[2].status.Message(), "left out");
  EXPECT_EQ(e->nodes[3].node, "explain-gamma");
  EXPECT_EQ(e->nodes[3].outcome, NodeOutcome::kFiltered);
  EXPECT_EQ(e->nodes[3].status.plugin, "Fit");
}

}  // namespace
}  // namespace schedhost::scheduler
