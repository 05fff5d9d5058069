#include <gtest/gtest.h>

#include "host/framework/framework.h"

namespace schedhost::framework {
namespace {

TEST(NumFeasibleNodesToFindTest, FollowsUpstreamAdaptiveSampling) {
  // Adaptive: 50% minus 1% per 125 nodes, floored at 5%; never fewer than 100 nodes.
  struct Case {
    int32_t percentage, nodes, want;
  };
  for (const Case& c : {Case{0, 10, 10}, Case{0, 99, 99}, Case{0, 100, 100}, Case{0, 1000, 420},
                        Case{0, 5000, 500}, Case{0, 6000, 300}, Case{0, 10000, 500},
                        Case{30, 200, 100}, Case{30, 1000, 300}, Case{100, 5000, 5000}, Case{50, 5000, 2500}}) {
    EXPECT_EQ(NumFeasibleNodesToFind(c.percentage, c.nodes), c.want) << c.percentage << "% of " << c.nodes;
  }
}

TEST(FitErrorMessageTest, SortsTheReasonHistogramAsUpstream) {
  NodeStatuses statuses = {
      {"n1", Status::Make(Code::kUnschedulable, "Insufficient cpu")},
      {"n2",
       Status{
           Code::kUnschedulable, {"Insufficient cpu", "Insufficient memory"}, "NodeResourcesFit"}},
      {"n3", Status::Make(Code::kUnschedulableAndUnresolvable,
                          "node(s) had untolerated taint {dedicated: gpu}")},
  };
  EXPECT_EQ(FitErrorMessage(3, statuses),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {dedicated: gpu}, "
            "2 Insufficient cpu.");
  Status pre = Status::Make(Code::kUnschedulableAndUnresolvable, "node(s) didn't satisfy plugin NodeAffinity");
  EXPECT_EQ(FitErrorMessage(5, {}, &pre), "0/5 nodes are available: node(s) didn't satisfy plugin NodeAffinity.");
}

}  // namespace
}  // namespace schedhost::framework
