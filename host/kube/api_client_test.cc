// JsonStream splits a watch body into its JSON values however the bytes are cut; RateLimiter
// hands out its burst at once and then qps tokens a second.
#include "host/kube/api_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>
#include <algorithm>
#include <string>
#include <vector>

namespace schedhost::kube {
namespace {

std::vector<nlohmann::json> Split(const std::string& body, const std::vector<size_t>& cuts) {
  JsonStream stream;
  std::vector<nlohmann::json> out;
  size_t at = 0;
  auto drain = [&] {
    nlohmann::json value;
    while (stream.Next(&value)) out.push_back(value);
  };
  for (size_t cut : cuts) {
    stream.Feed(std::string_view(body).substr(at, cut - at));
    at = cut;
    drain();
  }
  stream.Feed(std::string_view(body).substr(at));
  drain();
  EXPECT_EQ(stream.pending(), 0u);
  return out;
}

const std::string kBody =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\\n}\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"b\"},\"x\":[1,2,{\"y\":\"}\"}]}}\n"
    // Not one value per line: pretty-printed, and two values on one line.
    "{\n  \"type\": \"BOOKMARK\",\n  \"object\": {}\n}{\"type\":\"DELETED\",\"object\":{}}";

TEST(JsonStreamTest, ValuesComeOutWholeWhateverTheChunking) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<size_t> cuts;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) cuts.push_back(rng() % kBody.size());
    std::sort(cuts.begin(), cuts.end());
    const auto values = Split(kBody, cuts);
    ASSERT_EQ(values.size(), 4u) << "round " << round;
    EXPECT_EQ(values[0]["object"]["metadata"]["name"], "a\n}");
    EXPECT_EQ(values[1]["object"]["x"][2]["y"], "}");
    EXPECT_EQ(values[2]["type"], "BOOKMARK");
    EXPECT_EQ(values[3]["type"], "DELETED");
  }
}

TEST(JsonStreamTest, OneByteAtATime) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < kBody.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(Split(kBody, cuts).size(), 4u);
}

TEST(JsonStreamTest, BadBytesAreAnErrorNotAWait) {
  JsonStream stream;
  stream.Feed("{\"type\": nope}\n{\"type\":\"ADDED\"}\n");
  nlohmann::json value;
  EXPECT_THROW(stream.Next(&value), nlohmann::json::parse_error);
}

TEST(JsonStreamTest, AnUnfinishedValueWaits) {
  JsonStream stream;
  stream.Feed("{\"type\":\"ADDED\",\"object\":{\"a\":");
  nlohmann::json value;
  EXPECT_FALSE(stream.Next(&value));
  EXPECT_GT(stream.pending(), 0u);
  stream.Feed("1}}");
  ASSERT_TRUE(stream.Next(&value));
  EXPECT_EQ(value["object"]["a"], 1);
}

TEST(RateLimiterTest, BurstThenQps) {
  RateLimiter limiter(100, 5);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(limiter.Acquire());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(60));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(limiter.Acquire());
  // Ten more tokens at 100 a second take about 100 ms.
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(80));
}

TEST(RateLimiterTest, CancelEndsAWait) {
  RateLimiter limiter(0.001, 1);
  ASSERT_TRUE(limiter.Acquire());
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    limiter.Cancel();
  });
  EXPECT_FALSE(limiter.Acquire());
  canceller.join();
}

TEST(ApiClientTest, RetriesOnlyAnswersThatSayWhenToComeBack) {
  auto wait = [](int status, std::string retry_after) {
    return ApiClient::RetryAfter({.status = status, .body = "", .retry_after = retry_after});
  };
  EXPECT_EQ(wait(429, "1"), std::chrono::seconds(1));
  EXPECT_EQ(wait(503, "3"), std::chrono::seconds(3));
  EXPECT_EQ(wait(500, "0"), std::chrono::seconds(0));
  EXPECT_EQ(wait(429, ""), std::nullopt);  // no Retry-After: the caller decides
  EXPECT_EQ(wait(409, "1"), std::nullopt);  // a conflict is an answer, not a "come back"
  EXPECT_EQ(wait(201, "1"), std::nullopt);
  EXPECT_EQ(wait(429, "Wed, 21 Oct 2026 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(wait(429, "-1"), std::nullopt);
  EXPECT_EQ(wait(429, "99999999"), std::nullopt);
}

TEST(UrlEscapeTest, EscapesQueryValues) {
  EXPECT_EQ(UrlEscape("status.phase!=Succeeded,x=y"), "status.phase%21%3DSucceeded%2Cx%3Dy");
  EXPECT_EQ(UrlEscape("a-b_c.d~"), "a-b_c.d~");
}

}  // namespace
}  // namespace schedhost::kube
