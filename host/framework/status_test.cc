#include "host/framework/status.h"

#include <gtest/gtest.h>

#include <schedhost/plugin.hpp>
#include <string>
#include <thread>
#include <vector>

namespace schedhost::framework {
namespace {

// One test, in steps: the pool is process-wide, and the last step fills it.
TEST(TextTest, InternSharesOneCopyUntilThePoolIsFull) {
  const Text empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_TRUE(empty.interned());
  EXPECT_EQ(empty, Text::Intern(""));

  // The same text interned twice, on two threads, is one string: copies point at it.
  const Text a = Text::Intern("node(s) didn't match pod anti-affinity rules (text test)");
  Text b;
  std::thread([&b] {
    b = Text::Intern("node(s) didn't match pod anti-affinity rules (text test)");
  }).join();
  EXPECT_TRUE(a.interned());
  EXPECT_EQ(a.data(), b.data());
  const Text copy = a;  // NOLINT(performance-unnecessary-copy-initialization): the point
  EXPECT_EQ(copy.data(), a.data());
  EXPECT_EQ(a, b);

  // An owned text equals an interned one by content and counts its own memory.
  const Text owned(std::string("node(s) didn't match pod anti-affinity rules (text test)"));
  EXPECT_FALSE(owned.interned());
  EXPECT_NE(owned.data(), a.data());
  EXPECT_EQ(owned, a);
  EXPECT_EQ(a, std::string_view("node(s) didn't match pod anti-affinity rules (text test)"));
  EXPECT_FALSE(a == Text::Intern("something else"));
  EXPECT_EQ("why: " + a, "why: node(s) didn't match pod anti-affinity rules (text test)");

  // Past the cap a new text is an owned copy; the texts pooled before stay shared.
  std::vector<Text> many;
  for (int i = 0; i < 5000; ++i)
    many.push_back(Text::Intern("distinct reason " + std::to_string(i)));
  EXPECT_TRUE(many.front().interned());
  EXPECT_FALSE(many.back().interned());
  EXPECT_EQ(many.back(), std::string_view("distinct reason 4999"));
  const Text again = Text::Intern("node(s) didn't match pod anti-affinity rules (text test)");
  EXPECT_TRUE(again.interned());
  EXPECT_EQ(again.data(), a.data());
}

TEST(StatusTest, ToStatusCarriesTheInternedPluginName) {
  const Text name = Text::Intern("SomeFilterPlugin");
  StatusSink sink;
  sink.reasons.push_back(Text::Intern("Insufficient cpu"));
  const Status s = ToStatus(SCHEDHOST_UNSCHEDULABLE, sink, name);
  EXPECT_EQ(s.code, Code::kUnschedulable);
  EXPECT_EQ(s.plugin.data(), name.data());
  EXPECT_EQ(s.Message(), "Insufficient cpu");
  EXPECT_TRUE(sink.reasons.empty());

  // No reason given: a generic one naming the plugin, so no failure is silent.
  const Status bare = ToStatus(SCHEDHOST_UNSCHEDULABLE, sink, name);
  EXPECT_EQ(bare.Message(), "plugin SomeFilterPlugin returned Unschedulable");
  const Status unknown = ToStatus(42, sink, name);
  EXPECT_EQ(unknown.code, Code::kError);
  EXPECT_EQ(unknown.Message(), "plugin returned unknown status code 42");
}

// The SDK's Status::Static: a reason kept as a view until someone asks for the list.
TEST(SdkStatusTest, AStaticReasonIsAViewUntilTheListIsAskedFor) {
  static constexpr std::string_view kWhy = "node(s) were unschedulable";
  const schedhost::Status s =
      schedhost::Status::UnschedulableAndUnresolvable(schedhost::Status::Static{kWhy});
  EXPECT_EQ(s.code(), schedhost::Code::kUnschedulableAndUnresolvable);
  std::vector<std::string_view> seen;
  s.ForEachReason([&](std::string_view r) { seen.push_back(r); });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].data(), kWhy.data());  // the constant itself, not a copy
  EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string(kWhy)});
  seen.clear();
  s.ForEachReason([&](std::string_view r) { seen.push_back(r); });
  EXPECT_EQ(seen, std::vector<std::string_view>{kWhy});  // copied in once, not listed twice

  schedhost::Status more =
      schedhost::Status::Unschedulable(schedhost::Status::Static{"Insufficient cpu"});
  more.AddReason("Insufficient memory");
  EXPECT_EQ(more.reasons(), (std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
}

}  // namespace
}  // namespace schedhost::framework
