// main() of every schedhost GoogleTest binary: points SCHEDHOST_PLUGIN_DIR and
// SCHEDHOST_SOURCE_DIR at this build's plugins and source tree unless the environment already
// does, so a test binary behaves the same under ctest and when run by hand.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("SCHEDHOST_PLUGIN_DIR", SCHEDHOST_TEST_PLUGIN_DIR, /*overwrite=*/0);
  setenv("SCHEDHOST_SOURCE_DIR", SCHEDHOST_TEST_SOURCE_DIR, /*overwrite=*/0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
