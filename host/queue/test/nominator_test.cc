// Nominator behaviour, case by case as reference/000 describes add, delete, UpdateNominatedPod
// and the scheduler's assume.
#include "host/queue/nominator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "host/queue/test/queue_test_util.h"

namespace schedhost::queue {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakePod;
using testing::TestPod;

std::vector<std::string> Names(const std::vector<std::shared_ptr<const model::Pod>>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.emplace_back(p->name());
  return out;
}

TEST(NominatorTest, AddIndexesByNodeInInsertionOrderAndByUid) {
  Nominator n;
  n.Add(MakePod("b"), "node-1");
  n.Add(MakePod("a"), "node-1");
  n.Add(MakePod("c"), "node-2");
  EXPECT_THAT(Names(n.NominatedPodsForNode("node-1")), ElementsAre("b", "a"));
  EXPECT_THAT(Names(n.NominatedPodsForNode("node-2")), ElementsAre("c"));
  EXPECT_THAT(n.NominatedPodsForNode("node-3"), IsEmpty());
  EXPECT_EQ(n.NominatedNodeFor("uid-a"), "node-1");
  EXPECT_EQ(n.Size(), 3u);
  EXPECT_EQ(n.CheckInvariants(), "");
}

struct AddCase {
  std::string name;
  std::string status_node;   // The pod's status.nominatedNodeName.
  std::string earlier_node;  // A nomination made before ("" none).
  std::string node_arg;      // Add's node argument.
  std::string want;          // Nominated node afterwards ("" none).
};

class NominatorAddTest : public ::testing::TestWithParam<AddCase> {};

TEST_P(NominatorAddTest, Add) {
  const AddCase& c = GetParam();
  Nominator n;
  auto pod = MakePod(TestPod{.name = "p", .nominated_node = c.status_node});
  if (!c.earlier_node.empty()) n.Add(MakePod("p"), c.earlier_node);
  n.Add(pod, c.node_arg);
  EXPECT_EQ(n.NominatedNodeFor(pod->uid()), c.want);
  EXPECT_EQ(n.Size(), c.want.empty() ? 0u : 1u);
  if (!c.want.empty()) {
    auto pods = n.NominatedPodsForNode(c.want);
    ASSERT_EQ(pods.size(), 1u);
    EXPECT_EQ(pods[0], pod) << "the index must hold the newest object";
  }
  if (!c.earlier_node.empty() && c.earlier_node != c.want) {
    EXPECT_THAT(n.NominatedPodsForNode(c.earlier_node), IsEmpty());
  }
  EXPECT_EQ(n.CheckInvariants(), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NominatorAddTest,
    ::testing::Values(
        AddCase{"ExplicitNode", "", "", "n1", "n1"},
        AddCase{"FallsBackToStatus", "n2", "", "", "n2"},
        AddCase{"ArgumentWinsOverStatus", "n2", "", "n1", "n1"},
        AddCase{"BothEmptyAddsNothing", "", "", "", ""},
        AddCase{"ReAddMovesWithoutDuplicate", "", "n1", "n2", "n2"},
        AddCase{"ReAddSameNode", "", "n1", "n1", "n1"},
        // add() deletes first, so an empty add of a nominated pod leaves it un-nominated.
        AddCase{"EmptyReAddDropsNomination", "", "n1", "", ""}),
    [](const auto& info) { return info.param.name; });

TEST(NominatorTest, DeleteRemovesFromBothIndexesAndIsIdempotent) {
  Nominator n;
  auto a = MakePod("a");
  auto b = MakePod("b");
  n.Add(a, "n1");
  n.Add(b, "n1");
  n.Delete(*a);
  EXPECT_THAT(Names(n.NominatedPodsForNode("n1")), ElementsAre("b"));
  EXPECT_EQ(n.NominatedNodeFor(a->uid()), "");
  n.Delete(*a);  // Unknown now: nothing happens.
  n.Delete(*b);
  EXPECT_THAT(n.NominatedPodsForNode("n1"), IsEmpty());
  EXPECT_EQ(n.Size(), 0u);
  EXPECT_EQ(n.CheckInvariants(), "");
}

TEST(NominatorTest, AssumeClearsTheNomination) {
  // The scheduler nominates after preemption, later assumes the pod on a node and deletes the
  // nomination: the pod no longer reserves room on the nominated node.
  Nominator n;
  auto p = MakePod("preemptor", 100);
  n.Add(p, "n1");
  ASSERT_EQ(n.NominatedNodeFor(p->uid()), "n1");
  n.Delete(*p);  // assume()
  EXPECT_THAT(n.NominatedPodsForNode("n1"), IsEmpty());
  EXPECT_EQ(n.Size(), 0u);
}

struct UpdateCase {
  std::string name;
  std::string old_status;  // old pod's status.nominatedNodeName
  std::string new_status;  // new pod's status.nominatedNodeName
  std::string in_map;      // What the nominator held for the pod before ("" none).
  std::string want;
};

class NominatorUpdateTest : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(NominatorUpdateTest, Update) {
  const UpdateCase& c = GetParam();
  Nominator n;
  auto old_pod = MakePod(TestPod{.name = "p", .nominated_node = c.old_status});
  auto new_pod =
      MakePod(TestPod{.name = "p", .nominated_node = c.new_status, .labels = {{"changed", "yes"}}});
  if (!c.in_map.empty()) n.Add(old_pod, c.in_map);
  n.Update(*old_pod, new_pod);
  EXPECT_EQ(n.NominatedNodeFor("uid-p"), c.want);
  if (!c.want.empty()) {
    auto pods = n.NominatedPodsForNode(c.want);
    ASSERT_EQ(pods.size(), 1u);
    EXPECT_EQ(pods[0], new_pod) << "Update must swap in the new object";
  }
  if (!c.in_map.empty() && c.in_map != c.want) {
    EXPECT_THAT(n.NominatedPodsForNode(c.in_map), IsEmpty());
  }
  EXPECT_EQ(n.CheckInvariants(), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NominatorUpdateTest,
    ::testing::Values(
        // The only case that keeps the nomination: the update neither sets, changes nor
        // clears the field, but the scheduler had nominated the pod already.
        UpdateCase{"KeepsSchedulerNomination", "", "", "n1", "n1"},
        UpdateCase{"NothingToKeep", "", "", "", ""}, UpdateCase{"SetByUpdate", "", "n2", "", "n2"},
        UpdateCase{"SetByUpdateOverridesMap", "", "n2", "n1", "n2"},
        UpdateCase{"ChangedByUpdate", "n1", "n2", "n1", "n2"},
        UpdateCase{"ClearedByUpdate", "n1", "", "n1", ""},
        UpdateCase{"ClearedEvenIfMapDiffers", "n1", "", "n3", ""},
        UpdateCase{"UnchangedField", "n1", "n1", "n1", "n1"},
        UpdateCase{"UnchangedFieldNotInMap", "n1", "n1", "", "n1"}),
    [](const auto& info) { return info.param.name; });

TEST(NominatorTest, ReturnedPodsStayValidAfterChanges) {
  Nominator n;
  n.Add(MakePod("a"), "n1");
  auto pods = n.NominatedPodsForNode("n1");
  n.Delete(*pods[0]);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]->name(), "a");  // The copy owns the pod.
}

TEST(NominatorTest, ConcurrentReadersAndWriters) {
  Nominator n;
  std::vector<std::shared_ptr<const model::Pod>> pods;
  for (int i = 0; i < 64; ++i) pods.push_back(MakePod("p" + std::to_string(i)));
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop) {
      for (const auto& p : n.NominatedPodsForNode("n1")) ASSERT_FALSE(p->name().empty());
      (void)n.NominatedNodeFor("uid-p1");
    }
  });
  for (int round = 0; round < 200; ++round) {
    for (size_t i = 0; i < pods.size(); ++i) {
      if ((i + round) % 3 == 0) {
        n.Delete(*pods[i]);
      } else {
        n.Add(pods[i], (i + round) % 2 ? "n1" : "n2");
      }
    }
  }
  stop = true;
  reader.join();
  EXPECT_EQ(n.CheckInvariants(), "");
}

}  // namespace
}  // namespace schedhost::queue
