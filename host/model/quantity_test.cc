#include "host/model/quantity.h"

#include <gtest/gtest.h>

#include <string>

namespace schedhost::model {
namespace {

struct ValidCase {
  std::string_view text;
  int64_t milli;
  int64_t value;
  std::string_view canonical;
};

TEST(QuantityTest, ParsesLikeUpstream) {
  const ValidCase cases[] = {
      {"0", 0, 0, "0"},
      {"-0", 0, 0, "0"},
      {"000", 0, 0, "0"},
      {"0.0", 0, 0, "0"},
      {"1", 1000, 1, "1"},
      {"+5", 5000, 5, "5"},
      {"-3", -3000, -3, "-3"},
      {"100m", 100, 1, "100m"},
      {"1500m", 1500, 2, "1500m"},
      {"1.5", 1500, 2, "1500m"},
      {".5", 500, 1, "500m"},
      {"5.", 5000, 5, "5"},
      {"0.1", 100, 1, "100m"},
      {"-1.5", -1500, -2, "-1500m"},
      {"250u", 1, 1, "250u"},
      {"1n", 1, 1, "1n"},
      {"0.1n", 1, 1, "1n"},  // Sub-nano precision rounds up to 1n.
      {"1e-10", 1, 1, "1e-9"},
      {"1k", 1000000, 1000, "1k"},
      {"2000", 2000000, 2000, "2k"},
      {"1M", 1000000000, 1000000, "1M"},
      {"3G", 3000000000000, 3000000000, "3G"},
      {"1T", 1000000000000000, 1000000000000, "1T"},
      {"1P", 1000000000000000000, 1000000000000000, "1P"},
      {"1E", INT64_MAX, 1000000000000000000, "1E"},  // MilliValue saturates.
      {"1Ki", 1024000, 1024, "1Ki"},
      {"128Mi", 134217728000, 134217728, "128Mi"},
      {"1.5Gi", 1610612736000, 1610612736, "1536Mi"},
      {"0.1Ki", 102400, 103, "102400m"},
      {"1Ti", 1099511627776000, 1099511627776, "1Ti"},
      {"1Pi", 1125899906842624000, 1125899906842624, "1Pi"},
      {"1Ei", INT64_MAX, 1152921504606846976, "1Ei"},
      {"7Ei", INT64_MAX, 8070450532247928832, "7Ei"},
      {"512", 512000, 512, "512"},
      {"1e3", 1000000, 1000, "1e3"},
      {"1E3", 1000000, 1000, "1e3"},
      {"1e+3", 1000000, 1000, "1e3"},
      {"1E-3", 1, 1, "1e-3"},
      {"1.5e3", 1500000, 1500, "1500"},
      {"2e0", 2000, 2, "2"},
      {"0.30000000000000004", 301, 1, "300000001n"},
      {"9223372036854775807", INT64_MAX, INT64_MAX, "9223372036854775807"},
      {"-9223372036854775807", INT64_MIN, -INT64_MAX, "-9223372036854775807"},
      {"0000000000000000000000000000001", 1000, 1, "1"},
      {"1e-2147483648", 1, 1, "1e-9"},
  };
  for (const ValidCase& c : cases) {
    std::string error;
    std::optional<Quantity> q = Quantity::Parse(c.text, &error);
    ASSERT_TRUE(q.has_value()) << c.text << ": " << error;
    EXPECT_EQ(q->MilliValue(), c.milli) << c.text;
    EXPECT_EQ(q->Value(), c.value) << c.text;
    EXPECT_EQ(q->ToString(), c.canonical) << c.text;
  }
}

TEST(QuantityTest, RejectsMalformedText) {
  struct Case {
    std::string_view text;
    std::string_view error;
  };
  const Case cases[] = {
      {"", "empty quantity"},
      {"1.2.3", "unexpected character '.' at offset 3"},
      {"5 Gi", "unexpected character ' ' at offset 1"},
      {" 1", "unexpected character ' ' at offset 0"},
      {"1 ", "unexpected character ' ' at offset 1"},
      {"Gi", "no digits before the suffix"},
      {"-", "no digits before the suffix"},
      {".", "no digits before the suffix"},
      {"1e", "unknown suffix \"e\""},
      {"abc", "unexpected character 'a' at offset 0"},
      {"1ki", "unknown suffix \"ki\""},
      {"1K", "unknown suffix \"K\""},
      {"1mi", "unknown suffix \"mi\""},
      {"1i", "unknown suffix \"i\""},
      {".5i", "unknown suffix \"i\""},
      {"1+1.0M", "unexpected character '.' at offset 3"},
      {"1.1.M", "unexpected character '.' at offset 3"},
      {"-3.01e-", "unknown suffix \"e-\""},
      {"1ee3", "unknown suffix \"ee3\""},
      {"1Mi3", "unknown suffix \"Mi3\""},
      {"1e3.5", "unexpected character '.' at offset 3"},
      {"1\x01", "unexpected character 0x01 at offset 1"},
      {"1e2147483648", "exponent \"e2147483648\" is out of range"},
      {"1e99999999999999999999", "exponent \"e99999999999999999999\" is out of range"},
      {"9223372036854775808", "value out of range (magnitude above 9223372036854775807 units)"},
      {"-9223372036854775808", "value out of range (magnitude above 9223372036854775807 units)"},
      {"9223372036854775807.000000001",
       "value out of range (magnitude above 9223372036854775807 units)"},
      {"8Ei", "value out of range (magnitude above 9223372036854775807 units)"},
      {"1e19", "value out of range (magnitude above 9223372036854775807 units)"},
      {"10E", "value out of range (magnitude above 9223372036854775807 units)"},
      {"1e1000", "value out of range (magnitude above 9223372036854775807 units)"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(Quantity::Parse(c.text, &error).has_value()) << c.text;
    EXPECT_EQ(error, c.error) << c.text;
  }
  EXPECT_FALSE(Quantity::Parse(std::string(Quantity::kMaxTextLength + 1, '1')).has_value());
  EXPECT_FALSE(Quantity::Parse("x").has_value());  // A null error pointer is fine.
}

TEST(QuantityTest, ArithmeticIsExact) {
  // Two half-millicores add up to exactly one millicore (rounding happens only at the end).
  Quantity half = *Quantity::Parse("500u");
  EXPECT_EQ(half.MilliValue(), 1);
  EXPECT_EQ((half + half).MilliValue(), 1);
  EXPECT_EQ(Quantity::FromMilli(1500), *Quantity::Parse("1.5"));
  EXPECT_EQ(Quantity::FromUnits(1024), *Quantity::Parse("1Ki"));
  EXPECT_LT(*Quantity::Parse("999m"), *Quantity::Parse("1"));
  EXPECT_GT(*Quantity::Parse("1Ki"), *Quantity::Parse("1k"));
  EXPECT_EQ(Quantity().Sign(), 0);
  EXPECT_TRUE(Quantity().IsZero());
  EXPECT_EQ(Quantity::Parse("-1m")->Sign(), -1);
}

TEST(QuantityTest, ResourceValueUsesMillicoresForCpuOnly) {
  Quantity q = *Quantity::Parse("1.5");
  EXPECT_EQ(ResourceValue("cpu", q), 1500);
  EXPECT_EQ(ResourceValue("memory", q), 2);
  EXPECT_EQ(ResourceValue("nvidia.com/gpu", *Quantity::Parse("2")), 2);
}

}  // namespace
}  // namespace schedhost::model
