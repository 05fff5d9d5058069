// PluginRegistry without dlopen: in-process registration and the descriptor checks shared with
// libraries. Loading real libraries is tested in tests/abi/loader_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "host/loader/loader.h"

namespace schedhost::loader {
namespace {

int32_t FakeFilter(void*, const schedhost_cycle_state*, const schedhost_pod_view*,
                   const schedhost_node_info_view*, schedhost_status*) noexcept {
  return SCHEDHOST_SUCCESS;
}
int32_t FakeScore(void*, const schedhost_cycle_state*, const schedhost_pod_view*,
                  const schedhost_node_info_view*, int64_t*, schedhost_status*) noexcept {
  return SCHEDHOST_SUCCESS;
}
int32_t FakeReserve(void*, schedhost_cycle_state*, const schedhost_pod_view*, schedhost_str,
                    schedhost_status*) noexcept {
  return SCHEDHOST_SUCCESS;
}
void FakePostBind(void*, schedhost_cycle_state*, const schedhost_pod_view*,
                  schedhost_str) noexcept {}
int32_t FakeFilterBatch(void*, const schedhost_cycle_state*, const schedhost_pod_view*,
                        const schedhost_node_info_view* const*, size_t n, size_t* passed,
                        schedhost_status*) noexcept {
  *passed = n;
  return SCHEDHOST_SUCCESS;
}
int32_t FakeScoreBatch(void*, const schedhost_cycle_state*, const schedhost_pod_view*,
                       const schedhost_node_info_view* const*, size_t, int64_t*,
                       schedhost_status*) noexcept {
  return SCHEDHOST_SUCCESS;
}

schedhost_plugin_descriptor Descriptor(const char* name) {
  schedhost_plugin_descriptor d{};
  d.struct_size = sizeof d;
  d.name = {name, std::char_traits<char>::length(name)};
  d.version = {"1.0.0", 5};
  return d;
}

std::string RegisterError(PluginRegistry& r, const schedhost_plugin_descriptor* d) {
  try {
    r.RegisterInProcess(d);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(RegistryTest, RegistersFindsAndListsInProcessPlugins) {
  PluginRegistry r;
  const auto b = Descriptor("Beta");
  const auto a = Descriptor("Alpha");
  r.RegisterInProcess(&b);
  r.RegisterInProcess(&a);
  EXPECT_EQ(r.Names(), (std::vector<std::string>{"Alpha", "Beta"}));
  const PluginEntry* e = r.Find("Beta");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->descriptor, &b);
  EXPECT_EQ(e->library, nullptr);
  EXPECT_EQ(r.Find("Gamma"), nullptr);
  EXPECT_TRUE(r.Libraries().empty());
}

TEST(RegistryTest, RefusesBadDescriptorsAndChangesNothing) {
  PluginRegistry r;
  const auto taken = Descriptor("Taken");
  r.RegisterInProcess(&taken);

  auto small = Descriptor("Small");
  small.struct_size = kDescriptorSizeV1_0 - 8;
  auto empty = Descriptor("");
  auto null_name = Descriptor("x");
  null_name.name.data = nullptr;
  auto spaced = Descriptor("Two Words");
  auto control = Descriptor("Tab\tName");
  const std::string long_name(200, 'n');
  auto too_long = Descriptor(long_name.c_str());
  const auto duplicate = Descriptor("Taken");
  auto batch_only = Descriptor("BatchOnly");  // filter_batch stands in for filter, never alone
  batch_only.filter_batch = &FakeFilterBatch;
  auto score_batch_only = Descriptor("ScoreBatchOnly");
  score_batch_only.score_batch = &FakeScoreBatch;

  const std::pair<const schedhost_plugin_descriptor*, std::string> cases[] = {
      {nullptr, "in-process registration: plugin #0 has a NULL descriptor"},
      {&small, "has a descriptor of struct_size " + std::to_string(kDescriptorSizeV1_0 - 8) +
                   ", smaller than the ABI 1.0 descriptor (" + std::to_string(kDescriptorSizeV1_0) +
                   " bytes)"},
      {&empty, "in-process registration: plugin #0 has an empty name"},
      {&null_name, "has an empty name"},
      {&spaced, "has a name with spaces or control characters: 'Two Words'"},
      {&control, "has a name with spaces or control characters"},
      {&too_long, "has a name of 200 bytes (at most 128)"},
      {&duplicate,
       "plugin Taken is provided by both an in-process registration and an in-process "
       "registration"},
      {&batch_only, "plugin #0 (BatchOnly) sets filter_batch but not filter"},
      {&score_batch_only, "plugin #0 (ScoreBatchOnly) sets score_batch but not score"},
  };
  for (const auto& [d, error] : cases) {
    const std::string got = RegisterError(r, d);
    EXPECT_NE(got.find(error), std::string::npos) << "got: " << got << "\nwanted: " << error;
    EXPECT_EQ(r.Names(), std::vector<std::string>{"Taken"});
  }
}

TEST(RegistryTest, TheAbi10DescriptorEndsWhereTheAbi12AppendsBegin) {
  EXPECT_EQ(kDescriptorSizeV1_0, offsetof(schedhost_plugin_descriptor, filter_batch));
  // abi 1.5 appended the declared kinds right after the batched entries.
  EXPECT_EQ(offsetof(schedhost_plugin_descriptor, kinds),
            offsetof(schedhost_plugin_descriptor, score_batch) + sizeof(void*));
  // abi 1.7 appended the parts of a pod the plugin evaluates right after them.
  EXPECT_EQ(offsetof(schedhost_plugin_descriptor, evaluates),
            offsetof(schedhost_plugin_descriptor, kinds_len) + sizeof(size_t));
  EXPECT_EQ(sizeof(schedhost_plugin_descriptor),
            offsetof(schedhost_plugin_descriptor, evaluates_len) + sizeof(size_t));
}

TEST(RegistryTest, AnAbi10DescriptorWithoutBatchedEntriesIsAccepted) {
  // A library built before abi 1.2: its struct_size stops before filter_batch, and whatever
  // lies past it is never read.
  PluginRegistry r;
  auto old = Descriptor("Old");
  old.struct_size = kDescriptorSizeV1_0;
  old.filter_batch = &FakeFilterBatch;  // beyond struct_size: not part of the descriptor
  EXPECT_EQ(RegisterError(r, &old), "(accepted)");
  EXPECT_EQ(r.Names(), std::vector<std::string>{"Old"});
}

TEST(ImplementedPointsTest, OneBitPerImplementedPoint) {
  auto d = Descriptor("P");
  EXPECT_EQ(ImplementedPoints(d), 0u);
  d.filter = &FakeFilter;
  d.score = &FakeScore;
  d.reserve = &FakeReserve;
  d.post_bind = &FakePostBind;
  EXPECT_EQ(ImplementedPoints(d), kFilterBit | kScoreBit | kReserveBit | kPostBindBit);
  EXPECT_EQ(static_cast<uint32_t>(kFilterBit), 1u << 3);
  EXPECT_EQ(static_cast<uint32_t>(kScoreBit), 1u << 6);
  EXPECT_EQ(static_cast<uint32_t>(kReserveBit), 1u << 7);
  EXPECT_EQ(static_cast<uint32_t>(kPostBindBit), 1u << 11);
}

TEST(ImplementedPointsTest, SlotsBeyondStructSizeAreNotRead) {
  auto d = Descriptor("P");
  d.filter = &FakeFilter;
  d.post_bind = &FakePostBind;
  // A descriptor that ends just before post_bind: that slot must not count even if the memory
  // behind it happens to be non-NULL.
  d.struct_size = offsetof(schedhost_plugin_descriptor, post_bind);
  EXPECT_EQ(ImplementedPoints(d), static_cast<uint32_t>(kFilterBit));
  d.struct_size = offsetof(schedhost_plugin_descriptor, filter) + 4;  // half a pointer
  EXPECT_EQ(ImplementedPoints(d), 0u);
}

TEST(RegistryTest, IsLoadedIsFalseForAFileNeverLoaded) {
  EXPECT_FALSE(PluginRegistry::IsLoaded("/nonexistent/libnothing.so"));
}

}  // namespace
}  // namespace schedhost::loader
