// PrioritySort through the real framework: higher priority first, then earlier queue time
// (upstream pkg/scheduler/framework/plugins/queuesort behaviour).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::testing::Harness;

std::string PodYaml(const std::string& name, int priority) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "}\nspec:\n  priority: " + std::to_string(priority) +
         "\n  containers: [{name: c, image: busybox}]\n";
}

schedhost_queued_pod Queued(const schedhost_pod_view* pod, int64_t timestamp_ns) {
  schedhost_queued_pod q{};
  q.struct_size = sizeof(q);
  q.pod = pod;
  q.timestamp_ns = timestamp_ns;
  return q;
}

struct Case {
  std::string name;
  int priority_a;
  int64_t time_a;
  int priority_b;
  int64_t time_b;
  bool a_first;  // Less(a, b)
  bool b_first;  // Less(b, a)

  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

class PrioritySortTest : public ::testing::TestWithParam<Case> {};

TEST_P(PrioritySortTest, Less) {
  const Case& c = GetParam();
  Harness h;
  h.OnlyPlugins({});
  auto a = h.MakePod(PodYaml("a", c.priority_a));
  auto b = h.MakePod(PodYaml("b", c.priority_b));
  auto qa = Queued(a->view(), c.time_a);
  auto qb = Queued(b->view(), c.time_b);
  EXPECT_EQ(h.framework().QueueSortLess(qa, qb), c.a_first);
  EXPECT_EQ(h.framework().QueueSortLess(qb, qa), c.b_first);
}

INSTANTIATE_TEST_SUITE_P(Cases, PrioritySortTest,
                         ::testing::Values(
                             // Priority wins over queue time.
                             Case{"higher_priority_first", 100, 20, 50, 10, true, false},
                             Case{"lower_priority_later", 50, 10, 100, 20, false, true},
                             // Equal priority: the pod queued earlier goes first.
                             Case{"same_priority_earlier_first", 10, 5, 10, 6, true, false},
                             // Equal priority and time: neither is less (a strict weak order).
                             Case{"same_priority_same_time", 10, 5, 10, 5, false, false},
                             Case{"negative_priorities", -5, 1, -10, 0, true, false},
                             Case{"extreme_priorities", 2000001000, 9, -2147483647, 0, true,
                                  false}),
                         [](const auto& info) { return info.param.name; });

TEST(PrioritySortOrderTest, SortsAQueue) {
  Harness h;
  h.OnlyPlugins({});
  EXPECT_EQ(h.framework().QueueSortPluginName(), "PrioritySort");
  struct Entry {
    std::string name;
    int priority;
    int64_t time;
  };
  std::vector<Entry> entries = {{"low-early", 0, 1},  {"high-late", 1000, 9},
                                {"mid-late", 10, 8},  {"high-early", 1000, 2},
                                {"mid-early", 10, 3}, {"low-late", 0, 7}};
  std::vector<std::shared_ptr<const model::Pod>> pods;
  std::vector<schedhost_queued_pod> queue;
  for (const auto& e : entries) {
    pods.push_back(h.MakePod(PodYaml(e.name, e.priority)));
    queue.push_back(Queued(pods.back()->view(), e.time));
  }
  auto& fw = h.framework();
  std::sort(queue.begin(), queue.end(),
            [&](const auto& x, const auto& y) { return fw.QueueSortLess(x, y); });
  std::vector<std::string> order;
  for (const auto& q : queue) order.emplace_back(q.pod->name.data, q.pod->name.len);
  EXPECT_EQ(order, (std::vector<std::string>{"high-early", "high-late", "mid-early", "mid-late",
                                             "low-early", "low-late"}));
}

TEST(PrioritySortArgsTest, RejectsArguments) {
  Harness h;
  h.OnlyPlugins({}, "[profile.plugin_config.PrioritySort]\norder = \"fifo\"\n");
  try {
    h.framework();
    FAIL() << "a profile with PrioritySort arguments was accepted";
  } catch (const std::exception& e) {
    // The error names the TOML location, the key and why it is refused.
    EXPECT_THAT(e.what(), ::testing::ContainsRegex(
                              R"(test\.toml:[0-9]+:[0-9]+: plugin_config\.PrioritySort\.order: )"
                              R"(PrioritySort takes no arguments)"));
  }
}

}  // namespace
}  // namespace schedhost::plugins
