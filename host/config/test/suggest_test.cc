#include "host/config/suggest.h"

#include <gtest/gtest.h>

namespace schedhost::config {
namespace {

TEST(SuggestTest, EditDistance) {
  struct Case {
    std::string a, b;
    size_t distance;
  };
  const std::vector<Case> cases = {
      {"", "", 0},
      {"abc", "", 3},
      {"host", "host", 0},
      {"Host", "host", 0},
      {"hots", "host", 1},
      {"paralelism", "parallelism", 1},
      {"kitten", "sitting", 3},
      {"ab", "ba", 1},
      {"abc", "ca", 3},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EditDistance(c.a, c.b), c.distance) << c.a << " / " << c.b;
    EXPECT_EQ(EditDistance(c.b, c.a), c.distance) << c.b << " / " << c.a;
  }
}

TEST(SuggestTest, ClosestMatchOnlyForLikelyTypos) {
  const std::vector<std::string> keys = {"parallelism", "pod_max_backoff", "sha256",
                                         "score",       "pre_score",       "NodeName"};
  struct Case {
    std::string word;
    std::optional<std::string> match;
  };
  const std::vector<Case> cases = {
      {"paralelism", "parallelism"}, {"scroe", "score"},        {"sha", "sha256"},
      {"nodename", "NodeName"},      {"prescore", "pre_score"}, {"foo", std::nullopt},
      {"x", std::nullopt},           {"score", std::nullopt},  // exact matches are not typos
  };
  for (const Case& c : cases) EXPECT_EQ(ClosestMatch(c.word, keys), c.match) << c.word;
  EXPECT_EQ(DidYouMean("scroe", keys), "; did you mean \"score\"?");
  EXPECT_EQ(DidYouMean("zzz", keys), "");
  EXPECT_EQ(JoinNames({"a", "b"}), "a, b");
  EXPECT_EQ(JoinNames({}), "(none)");
}

}  // namespace
}  // namespace schedhost::config
