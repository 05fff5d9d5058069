#include "host/api/label_selector.h"

#include <gtest/gtest.h>

namespace schedhost::api {
namespace {

TEST(LabelSelectorTest, MatchesAsTheApiServer) {
  const model::Labels web = {{"app", "web"}, {"env", "prod"}, {"tier", "front"}};
  const model::Labels db = {{"app", "db"}};
  struct Case {
    std::string selector;
    bool web;
    bool db;
  };
  const std::vector<Case> cases = {
      {"", true, true},
      {"app=web", true, false},
      {"app==web", true, false},
      {"app!=web", false, true},
      {"env", true, false},
      {"!env", false, true},
      {"env in (prod, staging)", true, false},
      {"env notin (prod)", false, true},  // notin matches a missing key
      {"app=web,tier=front", true, false},
      {" app = web , !legacy ", true, false},
      {"example.com/role in (a)", false, false},
  };
  for (const Case& c : cases) {
    LabelSelector s = ParseLabelSelector(c.selector);
    EXPECT_EQ(s.Matches(web), c.web) << c.selector;
    EXPECT_EQ(s.Matches(db), c.db) << c.selector;
  }
}

TEST(LabelSelectorTest, RefusesMalformedSelectors) {
  for (const char* bad : {"=web", "app in ()", "app in (a", "app web", "app=we b",
                          "Bad Key=x", "app=toolong-" "0123456789012345678901234567890123456789"
                          "0123456789012345678901234567890123456789", "a,,b"}) {
    EXPECT_THROW(ParseLabelSelector(bad), SelectorError) << bad;
  }
}

}  // namespace
}  // namespace schedhost::api
