#include "host/framework/cycle_state.h"

#include <gtest/gtest.h>

namespace schedhost::framework {
namespace {

int g_destroyed = 0;
void DestroyInt(void* p) noexcept {
  ++g_destroyed;
  delete static_cast<int*>(p);
}
void* CloneInt(const void* p) noexcept { return new int(*static_cast<const int*>(p)); }

TEST(CycleStateTest, WriteReadReplaceDelete) {
  g_destroyed = 0;
  {
    CycleState s;
    void* out = nullptr;
    EXPECT_FALSE(s.Read(7, &out));
    s.Write(7, new int(1), &DestroyInt, &CloneInt);
    ASSERT_TRUE(s.Read(7, &out));
    EXPECT_EQ(*static_cast<int*>(out), 1);
    s.Write(7, new int(2), &DestroyInt, &CloneInt);  // replacing destroys the old value
    EXPECT_EQ(g_destroyed, 1);
    ASSERT_TRUE(s.Read(7, &out));
    EXPECT_EQ(*static_cast<int*>(out), 2);
    s.Delete(7);
    EXPECT_EQ(g_destroyed, 2);
    EXPECT_FALSE(s.Read(7, &out));
    s.Write(8, new int(3), &DestroyInt, nullptr);
  }
  EXPECT_EQ(g_destroyed, 3);  // the state destroys what it still holds
}

TEST(CycleStateTest, CloneCopiesClonableValuesAndSkipSets) {
  g_destroyed = 0;
  CycleState s;
  s.Write(1, new int(10), &DestroyInt, &CloneInt);
  s.Write(2, new int(20), &DestroyInt, nullptr);  // not clonable: left out of clones
  s.skip_filter_plugins.insert("NodePorts");
  auto c = s.Clone();
  void* out = nullptr;
  ASSERT_TRUE(c->Read(1, &out));
  EXPECT_EQ(*static_cast<int*>(out), 10);
  *static_cast<int*>(out) = 11;  // the clone is deep
  void* orig = nullptr;
  ASSERT_TRUE(s.Read(1, &orig));
  EXPECT_EQ(*static_cast<int*>(orig), 10);
  EXPECT_FALSE(c->Read(2, &out));
  EXPECT_TRUE(c->skip_filter_plugins.count("NodePorts"));
}

}  // namespace
}  // namespace schedhost::framework
