// ParseQuantity and ParseDuration (sdk/include/schedhost/units.hpp): upstream's syntax, rounding
// and limits, checked against the host's own exact Quantity where both read the same text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <schedhost/units.hpp>
#include <string>
#include <vector>

#include "host/model/quantity.h"

namespace schedhost {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

TEST(ParseQuantityTest, ReadsUpstreamsSyntaxInUnitsAndMillis) {
  struct Case {
    std::string text;
    int64_t units;
    int64_t milli;
  };
  const std::vector<Case> cases = {
      {"2", 2, 2000},
      {"500m", 1, 500},  // units round up, as upstream's Value()
      {"1.5", 2, 1500},
      {"0.0001", 1, 1},  // rounded up to a millicore
      {"4Gi", int64_t{4} << 30, (int64_t{4} << 30) * 1000},
      {"1.5Mi", 1536 * 1024, 1536 * 1024 * 1000},
      {"1k", 1000, 1'000'000},
      {"1e3", 1000, 1'000'000},
      {"1E3", 1000, 1'000'000},
      {"1e-3", 1, 1},
      {"25e-1", 3, 2500},
      {"+3", 3, 3000},
      {"-1.5", -2, -1500},  // away from zero
      {".5", 1, 500},
      {"5.", 5, 5000},
      {"100n", 1, 1},
      {"100u", 1, 1},
      {"1M", 1'000'000, 1'000'000'000},
      {"1E", 1'000'000'000'000'000'000, 0},  // exa; its milli does not fit (checked below)
      {"0", 0, 0},
      {"000.000Ki", 0, 0},
      {"9223372036854775807", std::numeric_limits<int64_t>::max(), 0},
      {"7Ei", 7 * (int64_t{1} << 60), 0},
  };
  for (const Case& c : cases) {
    std::string why;
    EXPECT_EQ(ParseQuantity(c.text, QuantityUnit::kUnits, &why), c.units) << c.text << ": " << why;
    if (c.milli != 0 || c.units == 0) {
      EXPECT_EQ(ParseQuantity(c.text, QuantityUnit::kMilli, &why), c.milli)
          << c.text << ": " << why;
    }
  }
  EXPECT_EQ(ParseQuantity("1E", QuantityUnit::kMilli), std::nullopt);
}

TEST(ParseQuantityTest, AgreesWithTheHostsExactQuantity) {
  for (const std::string text :
       {"1", "0.5", "1.001", "999m", "1001m", "123456789", "2.5Gi", "0.3Ki", "1e9", "12e-2", "33n",
        "-7.5", "-0.25Mi", "1.000000001", "18446744073m", "3.14159265358979323846", "7Ei"}) {
    const std::optional<model::Quantity> want = model::Quantity::Parse(text);
    ASSERT_TRUE(want.has_value()) << text;
    EXPECT_EQ(ParseQuantity(text, QuantityUnit::kUnits), want->Value()) << text;
    if (text != "7Ei") {  // 7Ei in millis does not fit in int64
      EXPECT_EQ(ParseQuantity(text, QuantityUnit::kMilli), want->MilliValue()) << text;
    }
  }
}

TEST(ParseQuantityTest, RefusesMalformedQuantitiesSayingWhy) {
  struct Case {
    std::string text;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", "\"\" is not a quantity (want e.g. 2, 500m, 1.5, 4Gi)"},
      {"two", "is not a quantity"},
      {".", "is not a quantity"},
      {"+-1", "is not a quantity"},
      {"4GB", "\"4GB\" is not a quantity: unknown suffix \"GB\""},
      {"1K", "unknown suffix \"K\""},
      {"1ki", "unknown suffix \"ki\""},
      {"1 ", "unknown suffix \" \""},
      {"1_", "unknown suffix \"_\""},
      {"1e", "unknown suffix \"e\""},
      {"1e+", "unknown suffix \"e+\""},
      {"1e3Ki", "unknown suffix \"e3Ki\""},
      {"1.5.5", "unknown suffix \".5\""},
      {"8Ei", "\"8Ei\" is too large"},
      {"99999999999Ei", "is too large"},
      {"9223372036854775808", "is too large"},
      {"1e19", "is too large"},
      {"1e999999999999", "is too large"},
  };
  for (const Case& c : cases) {
    std::string why;
    EXPECT_EQ(ParseQuantity(c.text, QuantityUnit::kUnits, &why), std::nullopt) << c.text;
    EXPECT_THAT(why, HasSubstr(c.why)) << c.text;
  }
  EXPECT_EQ(ParseQuantity("1e-999999999999"), 1) << "a tiny positive amount rounds up to one";
}

TEST(ParseDurationTest, ReadsGoDurationsAndPrintsThemBack) {
  EXPECT_EQ(ParseDuration("1m30s"), 90s);
  EXPECT_EQ(ParseDuration("250ms"), 250ms);
  EXPECT_EQ(ParseDuration("-1.5h"), -90min);
  EXPECT_EQ(ParseDuration("0"), 0s);
  std::string why;
  EXPECT_EQ(ParseDuration("30", &why), std::nullopt);
  EXPECT_THAT(why, HasSubstr("missing unit"));
  EXPECT_EQ(FormatDuration(90s), "1m30s");
  EXPECT_EQ(FormatDuration(1h), "1h0m0s");
  EXPECT_EQ(FormatDuration(1500us), "1.5ms");
}

}  // namespace
}  // namespace schedhost
