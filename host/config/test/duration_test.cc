#include "host/config/duration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedhost::config {
namespace {

using std::chrono::nanoseconds;
using ::testing::HasSubstr;

TEST(ParseDurationTest, AcceptsGoSyntax) {
  struct Case {
    std::string text;
    int64_t nanos;
  };
  const std::vector<Case> cases = {
      {"0", 0},
      {"0s", 0},
      {"-0", 0},
      {"1ns", 1},
      {"1us", 1'000},
      {"1\xC2\xB5s", 1'000},
      {"1\xCE\xBCs", 1'000},
      {"500ms", 500'000'000},
      {"1s", 1'000'000'000},
      {"+1s", 1'000'000'000},
      {"-1.5h", -5'400'000'000'000},
      {"1m30s", 90'000'000'000},
      {"2h", 7'200'000'000'000},
      {"2h45m", 9'900'000'000'000},
      {"1.5s", 1'500'000'000},
      {".5s", 500'000'000},
      {"1.s", 1'000'000'000},
      {"1h1m1s1ms1us1ns", 3'661'001'001'001},
      {"10s10s", 20'000'000'000},
      {"9223372036854775807ns", 9'223'372'036'854'775'807},
      {"-9223372036854775808ns", std::numeric_limits<int64_t>::min()},
      {"2562047h", 2'562'047LL * 3'600'000'000'000},
  };
  for (const Case& c : cases) {
    std::string error;
    std::optional<nanoseconds> d = ParseDuration(c.text, &error);
    ASSERT_TRUE(d.has_value()) << c.text << ": " << error;
    EXPECT_EQ(d->count(), c.nanos) << c.text;
  }
}

TEST(ParseDurationTest, RejectsBadInputWithReason) {
  struct Case {
    std::string text;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"", "expected a number and a unit"},
      {"-", "expected a number and a unit"},
      {"1", "missing unit"},
      {"10", "missing unit"},
      {"1x", "unknown unit \"x\""},
      {"1 s", "unknown unit \" s\""},
      {"s", "expected a number at \"s\""},
      {"1s2", "missing unit"},
      {".s", "needs digits"},
      {"1.2.3s", "missing unit"},
      {"1sec", "unknown unit \"sec\""},
      {"9223372036854775808ns", "too large"},
      {"2562048h", "too large"},
      {"99999999999999999999s", "too large"},
      {"5000000h5000000h", "too large"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(ParseDuration(c.text, &error).has_value()) << c.text;
    EXPECT_THAT(error, HasSubstr(c.reason)) << c.text;
    EXPECT_THAT(error, HasSubstr("\"" + c.text + "\"")) << c.text;
  }
  EXPECT_FALSE(ParseDuration("1x").has_value());  // the error out-parameter is optional
}

TEST(FormatDurationTest, PrintsLikeGo) {
  struct Case {
    int64_t nanos;
    std::string text;
  };
  const std::vector<Case> cases = {
      {0, "0s"},
      {1, "1ns"},
      {1'500, "1.5\xC2\xB5s"},
      {500'000'000, "500ms"},
      {1'000'000'000, "1s"},
      {1'500'000'000, "1.5s"},
      {90'000'000'000, "1m30s"},
      {7'200'000'000'000, "2h0m0s"},
      {-5'400'000'000'000, "-1h30m0s"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatDuration(nanoseconds(c.nanos)), c.text) << c.nanos;
    if (c.nanos != 0) {
      std::optional<nanoseconds> back = ParseDuration(c.text);
      ASSERT_TRUE(back.has_value()) << c.text;
      EXPECT_EQ(back->count(), c.nanos) << c.text;
    }
  }
}

}  // namespace
}  // namespace schedhost::config
