// ImageLocality through the real framework over a real snapshot. Behaviour follows upstream's
// imagelocality plugin (v1.28): every container image of the pod, init containers included,
// that the node holds (matched by upstream's normalizedImageName: ":latest" appended when the
// name has no tag or digest, nothing else) adds size * (nodes holding it / all nodes); the sum
// is clamped to [23 MiB, 1000 MiB * containers] and mapped linearly onto [0, 100], truncated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "host/framework/testing/harness.h"

namespace schedhost::plugins {
namespace {

using framework::testing::Harness;
using ::testing::HasSubstr;

constexpr char kName[] = "ImageLocality";
constexpr int64_t kMiB = int64_t{1024} * 1024;

struct Image {
  std::vector<std::string> names;
  int64_t mib;
};

// NodeYaml renders a node holding `images`.
std::string NodeYaml(const std::string& name, const std::vector<Image>& images) {
  std::string y = "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
                  "}\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n";
  if (!images.empty()) y += "  images:\n";
  for (const auto& img : images) {
    y += "  - names: [";
    for (size_t i = 0; i < img.names.size(); ++i) y += (i ? ", \"" : "\"") + img.names[i] + "\"";
    y += "]\n    sizeBytes: " + std::to_string(img.mib * kMiB) + "\n";
  }
  return y + "---\n";
}

// PodYaml renders a pending pod with one container per entry of `images` and one init
// container per entry of `init_images`.
std::string PodYaml(const std::vector<std::string>& images,
                    const std::vector<std::string>& init_images = {}) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: p}\nspec:\n";
  if (!init_images.empty()) y += "  initContainers:\n";
  for (size_t i = 0; i < init_images.size(); ++i) {
    y += "  - {name: init" + std::to_string(i) + ", image: \"" + init_images[i] + "\"}\n";
  }
  y += "  containers:\n";
  for (size_t i = 0; i < images.size(); ++i) {
    y += "  - {name: c" + std::to_string(i) + ", image: \"" + images[i] + "\"}\n";
  }
  return y + "---\n";
}

std::map<std::string, int64_t> Scores(const std::string& cluster, const std::string& pod) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(cluster);
  std::map<std::string, int64_t> out;
  for (const auto& [node, total] : h.RunScore(*h.MakePod(pod))) out[node] = total;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Score: thresholds, spread, containers
// ---------------------------------------------------------------------------------------------

struct ScoreCase {
  std::string name;
  std::string cluster;
  std::string pod;
  std::map<std::string, int64_t> want;

  friend void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }
};

class ImageLocalityScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(ImageLocalityScoreTest, ScoresExactly) {
  const ScoreCase& c = GetParam();
  EXPECT_EQ(Scores(c.cluster, c.pod), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ImageLocalityScoreTest,
    ::testing::Values(
        ScoreCase{"NodeWithoutImagesScoresZero",
                  NodeYaml("n1", {}) + NodeYaml("n2", {{{"app:1"}, 500}}), PodYaml({"app:1"}),
                  // n2: 500 MiB * 1/2 = 250 MiB -> 100 * 227 / 977 = 23.
                  {{"n1", 0}, {"n2", 23}}},
        // On every node the spread is 1: 100 * (500 - 23) / (1000 - 23) = 48.
        ScoreCase{"ImageOnEveryNodeCountsWhole",
                  NodeYaml("n1", {{{"app:1"}, 500}}) + NodeYaml("n2", {{{"app:1"}, 500}}),
                  PodYaml({"app:1"}), {{"n1", 48}, {"n2", 48}}},
        // upstream: the size is scaled by how many nodes hold the image: 800 MiB * 1/4 = 200.
        ScoreCase{"SpreadScalesTheSize",
                  NodeYaml("n1", {{{"app:1"}, 800}}) + NodeYaml("n2", {}) + NodeYaml("n3", {}) +
                      NodeYaml("n4", {}),
                  PodYaml({"app:1"}), {{"n1", 18}, {"n2", 0}, {"n3", 0}, {"n4", 0}}},
        // int64(700 MiB * (2/3)) = 489335466 bytes -> 45.
        ScoreCase{"SpreadTruncatesLikeUpstream",
                  NodeYaml("n1", {{{"app:1"}, 700}}) + NodeYaml("n2", {{{"app:1"}, 700}}) +
                      NodeYaml("n3", {}),
                  PodYaml({"app:1"}), {{"n1", 45}, {"n2", 45}, {"n3", 0}}},
        ScoreCase{"BelowMinThresholdScoresZero", NodeYaml("n1", {{{"tiny:1"}, 20}}),
                  PodYaml({"tiny:1"}), {{"n1", 0}}},
        ScoreCase{"AtMinThresholdScoresZero", NodeYaml("n1", {{{"small:1"}, 23}}),
                  PodYaml({"small:1"}), {{"n1", 0}}},
        ScoreCase{"AboveMaxThresholdIsClamped", NodeYaml("n1", {{{"huge:1"}, 2000}}),
                  PodYaml({"huge:1"}), {{"n1", 100}}},
        // Two containers: max is 2000 MiB; 600 + 400 -> 100 * 977 / 1977 = 49.
        ScoreCase{"SeveralContainersRaiseTheMax",
                  NodeYaml("n1", {{{"a:1"}, 600}, {{"b:1"}, 400}}), PodYaml({"a:1", "b:1"}),
                  {{"n1", 49}}},
        // The same image twice counts twice: 2 * 300 of max 2000 -> 29.
        ScoreCase{"RepeatedImageCountsPerContainer", NodeYaml("n1", {{{"a:1"}, 300}}),
                  PodYaml({"a:1", "a:1"}), {{"n1", 29}}},
        // v1.28: init containers add their image and raise the max. n1 holds both (600 of
        // 2000 -> 29), n2 only the init container's (300 -> 14).
        ScoreCase{"InitContainersCount",
                  NodeYaml("n1", {{{"init:1"}, 300}, {{"main:1"}, 300}}) +
                      NodeYaml("n2", {{{"init:1"}, 300}}) +
                      NodeYaml("n3", {{{"main:1"}, 300}}),
                  PodYaml({"main:1"}, {"init:1"}),
                  // spread: init on 2 of 3, main on 2 of 3 -> 200 MiB each.
                  // n1: 400 -> 100 * 377 / 1977 = 19; n2, n3: 200 -> 8.
                  {{"n1", 19}, {"n2", 8}, {"n3", 8}}},
        // One node image may carry several names (tag and digest, registry aliases).
        ScoreCase{"AnyNameOfTheNodeImageMatches",
                  NodeYaml("n1", {{{"docker.io/library/nginx:1.25", "nginx:1.25"}, 1000}}),
                  PodYaml({"nginx:1.25"}), {{"n1", 100}}}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Normalised image names
// ---------------------------------------------------------------------------------------------

struct NameCase {
  std::string name;
  std::string pod_image;
  std::string node_image;
  bool match;

  friend void PrintTo(const NameCase& c, std::ostream* os) { *os << c.name; }
};

class ImageLocalityNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(ImageLocalityNameTest, MatchesNormalisedNames) {
  const NameCase& c = GetParam();
  // One node holding a 1000 MiB image: 100 when the names match, 0 otherwise.
  EXPECT_EQ(Scores(NodeYaml("n1", {{{c.node_image}, 1000}}), PodYaml({c.pod_image})),
            (std::map<std::string, int64_t>{{"n1", c.match ? 100 : 0}}));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ImageLocalityNameTest,
    ::testing::Values(
        NameCase{"UntaggedMeansLatest", "nginx", "nginx:latest", true},
        NameCase{"ExplicitTag", "busybox:1.36", "busybox:1.36", true},
        NameCase{"OtherTagDoesNotMatch", "nginx:1.25", "nginx:latest", false},
        // A ':' before the last '/' is a registry port, not a tag.
        NameCase{"RegistryPortIsNotATag", "registry:5000/app", "registry:5000/app:latest", true},
        NameCase{"RegistryPortAndTag", "registry:5000/app:2", "registry:5000/app:2", true},
        NameCase{"DigestIsKept", "nginx@sha256:0123abcd", "nginx@sha256:0123abcd", true},
        // upstream adds no registry: docker.io/library/ is not implied (its TODO).
        NameCase{"NoImplicitRegistry", "nginx", "docker.io/library/nginx:latest", false},
        NameCase{"NoImplicitRegistryTagged", "docker.io/library/nginx:1.25", "nginx:1.25", false},
        // Prefixes are not matches, either way round.
        NameCase{"TagPrefixDoesNotMatch", "nginx:1", "nginx:1.25", false},
        NameCase{"LongerTagDoesNotMatch", "nginx:1.25", "nginx:1", false},
        NameCase{"LatestPrefixDoesNotMatch", "nginx", "nginx:latest-alpine", false},
        NameCase{"RepositoryPrefixDoesNotMatch", "ngin", "nginx:latest", false}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Scheduling and arguments
// ---------------------------------------------------------------------------------------------

TEST(ImageLocality, SchedulePicksTheNodeWithTheImage) {
  Harness h;
  h.OnlyPlugins({kName});
  h.AddObjects(NodeYaml("cold", {}) + NodeYaml("warm", {{{"ml/model:3"}, 900}}) +
               NodeYaml("other", {{{"busybox:latest"}, 5}}));
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml({"ml/model:3"}))), "warm");
}

TEST(ImageLocality, TakesNoArguments) {
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugin_config.ImageLocality]\nmin_threshold = 1\n");
  try {
    h.framework();
    FAIL() << "profile was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("plugin_config.ImageLocality.min_threshold: ImageLocality takes no "
                          "arguments"));
    EXPECT_THAT(e.what(), HasSubstr("test.toml:"));
  }
}

TEST(ImageLocality, EmptyArgumentTableIsFine) {
  Harness h;
  h.OnlyPlugins({kName}, "[profile.plugin_config.ImageLocality]\n");
  h.AddObjects(NodeYaml("n1", {{{"app:1"}, 1000}}));
  EXPECT_EQ(h.Schedule(*h.MakePod(PodYaml({"app:1"}))), "n1");
}

}  // namespace
}  // namespace schedhost::plugins
