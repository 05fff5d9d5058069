// Size limits of the decoder and of validated objects, and the name syntax checks.
#include <gtest/gtest.h>

#include <string>

#include "host/model/decode.h"
#include "host/model/validation.h"

namespace schedhost::model {
namespace {

std::string ErrorOf(std::string_view text, const DecodeLimits& limits = {}) {
  try {
    DecodeManifests(text, "big.yaml", limits);
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string NodeWithLabels(size_t n) {
  std::string text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n";
  for (size_t i = 0; i < n; ++i) text += "    k" + std::to_string(i) + ": v\n";
  return text;
}

TEST(DecodeLimitsTest, InputSize) {
  DecodeLimits limits;
  limits.max_input_bytes = 10;
  EXPECT_EQ(ErrorOf("apiVersion: v1\n", limits), "big.yaml: input is 15 bytes; the limit is 10");
}

TEST(DecodeLimitsTest, DocumentCount) {
  DecodeLimits limits;
  limits.max_documents = 3;
  EXPECT_EQ(ErrorOf("---\n---\n---\n", limits), "<no error>");
  EXPECT_EQ(ErrorOf("---\n---\n---\n---\n", limits),
            "big.yaml: document 4: too many documents (the limit is 3)");
}

TEST(DecodeLimitsTest, DocumentNodesAndBytes) {
  DecodeLimits limits;
  limits.max_document_nodes = 20;
  std::string text = "a: [";
  for (int i = 0; i < 30; ++i) text += "1, ";
  text += "1]\n";
  EXPECT_EQ(ErrorOf(text, limits),
            "big.yaml: document 1: line 1: document too large: more than 20 YAML nodes "
            "(counting alias expansions)");
  limits = DecodeLimits();
  limits.max_document_scalar_bytes = 100;
  EXPECT_EQ(ErrorOf("a: " + std::string(200, 'x') + "\n", limits),
            "big.yaml: document 1: line 1: document too large: more than 100 bytes of scalar "
            "text (counting alias expansions)");
}

TEST(DecodeLimitsTest, AliasBombIsRefused) {
  // Each level doubles the expanded size: 2^40 nodes if aliases were expanded.
  std::string text = "a0: &a0 [x, x]\n";
  for (int i = 1; i <= 40; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + "]\n";
  }
  std::string error = ErrorOf(text);
  EXPECT_NE(error.find("document too large: more than 2000000 YAML nodes"), std::string::npos)
      << error;
}

TEST(DecodeLimitsTest, LabelsPerObject) {
  EXPECT_EQ(ErrorOf(NodeWithLabels(kMaxLabels)), "<no error>");
  EXPECT_EQ(ErrorOf(NodeWithLabels(kMaxLabels + 1)),
            "big.yaml: document 1 (Node n): metadata.labels: too many items: 65537 (the limit is "
            "65536)");
}

TEST(DecodeLimitsTest, AnnotationBytes) {
  std::string text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n    a: " +
                     std::string(kMaxAnnotationBytes, 'x') + "\n";
  EXPECT_EQ(ErrorOf(text),
            "big.yaml: document 1 (Node n): metadata.annotations: may not be more "
            "than 262144 bytes in total, got 262145");
}

TEST(DecodeLimitsTest, ContainersPerPod) {
  std::string text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n";
  for (size_t i = 0; i <= kMaxContainers; ++i) text += "  - name: c" + std::to_string(i) + "\n";
  EXPECT_EQ(ErrorOf(text),
            "big.yaml: document 1 (Pod default/p): spec.containers: too many "
            "items: 1025 (the limit is 1024)");
}

TEST(NameChecksTest, Table) {
  struct Case {
    std::string_view value;
    bool subdomain;
    bool label;
    bool qualified;
    bool label_value;
  };
  const std::string long64(64, 'a');
  const std::string long254(254, 'a');
  const Case cases[] = {
      {"web-1", true, true, true, true},
      {"a.b.c", true, false, true, true},
      {"Web", false, false, true, true},
      {"-a", false, false, false, false},
      {"a-", false, false, false, false},
      {"", false, false, false, true},
      {"a_b", false, false, true, true},
      {"example.com/name", false, false, true, false},
      {"example.com/", false, false, false, false},
      {"/name", false, false, false, false},
      {"a/b/c", false, false, false, false},
      {"Example.com/name", false, false, false, false},
      {long64, true, false, false, false},
      {long254, false, false, false, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(!CheckDnsSubdomain(c.value), c.subdomain) << c.value;
    EXPECT_EQ(!CheckDnsLabel(c.value), c.label) << c.value;
    EXPECT_EQ(!CheckQualifiedName(c.value), c.qualified) << c.value;
    EXPECT_EQ(!CheckLabelValue(c.value), c.label_value) << c.value;
  }
}

TEST(ValidationTest, ProgrammaticObjects) {
  PodData pod;
  pod.metadata.name = "p";
  pod.spec.containers.push_back(Container{"c", "", {}, {}, ""});
  ApplyPodDefaults(pod);
  EXPECT_FALSE(ValidatePod(pod).has_value());
  pod.spec.containers[0].ports.push_back(ContainerPort{"", 80, 0, Protocol::kTCP, "::1"});
  EXPECT_FALSE(ValidatePod(pod).has_value());
  pod.spec.containers[0].ports[0].container_port = 65536;
  auto error = ValidatePod(pod);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->path, "spec.containers[0].ports[0].containerPort");

  PriorityClassData system;
  system.metadata.name = "system-node-critical";
  system.value = kSystemNodeCriticalPriority;
  EXPECT_FALSE(ValidatePriorityClass(system).has_value());
  system.global_default = true;
  EXPECT_TRUE(ValidatePriorityClass(system).has_value());
}

}  // namespace
}  // namespace schedhost::model
