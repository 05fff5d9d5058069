// Objects of a kind the host has never heard of, end to end: TicketGate (ticket_gate/), a plugin
// loaded from its .so, declares example.schedhost.io/v1 Ticket; the host in-process (what
// `schedctl simulate` runs, through the SDK's testing library, as an author's test would) takes
// Ticket documents only because it does, keeps them in the store, and the plugin reads them
// through the ABI (object_get) in PreFilter, per namespace, decoding them with ArgsReader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <schedhost/testing.hpp>
#include <sstream>
#include <string>


namespace {

using ::testing::HasSubstr;

std::string Scenario(const std::string& file) {
  const char* dir = std::getenv("SCHEDHOST_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/tests/integration/scenarios/declared_kinds/" + file;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DeclaredKindsTest, APluginReadsObjectsOfTheKindItDeclares) {
  const auto r = schedhost::testing::Simulate(Read(Scenario("config.toml")),
                                              Read(Scenario("cluster.yaml")),
                                              {.libraries = {TICKET_GATE_PLUGIN}});
  EXPECT_TRUE(r.idle);
  auto node_of = [&](std::string_view pod) {
    const auto* p = r.Find(pod);
    return p == nullptr ? std::string("<no such pod>") : p->node.value_or("<pending>");
  };
  auto message_of = [&](std::string_view pod) {
    const auto* p = r.Find(pod);
    return p == nullptr ? std::string() : p->message;
  };
  // The Ticket in the pod's own namespace decides: team-a's sends it to n2, team-b's to n3.
  EXPECT_EQ(node_of("team-a/ticketed"), "n2");
  EXPECT_EQ(node_of("team-b/same-name-other-namespace"), "n3");
  // No Ticket, an unapproved one, a malformed one: pending, saying why.
  EXPECT_EQ(node_of("team-a/missing-ticket"), "<pending>");
  EXPECT_THAT(message_of("team-a/missing-ticket"), HasSubstr("ticket \"nowhere\" not found"));
  EXPECT_EQ(node_of("team-a/unapproved"), "<pending>");
  EXPECT_THAT(message_of("team-a/unapproved"),
              HasSubstr("ticket \"pending-approval\" is not approved"));
  EXPECT_EQ(node_of("team-a/bad-ticket"), "<pending>");
  EXPECT_THAT(message_of("team-a/bad-ticket"),
              HasSubstr("Ticket team-a/malformed: spec.nodes[1]: expected a string"));
  // A pod without the label is not the plugin's business.
  EXPECT_NE(node_of("team-a/no-ticket"), "<pending>");
}

TEST(DeclaredKindsTest, ADocumentOfAKindNoLoadedPluginDeclaresIsRefused) {
  // The default profile: nobody declares Ticket (its VolumeBinding declares the storage kinds),
  // and nothing is scheduled.
  EXPECT_THAT([] { schedhost::testing::Simulate("", Read(Scenario("cluster.yaml"))); },
              ::testing::ThrowsMessage<std::exception>(::testing::AllOf(
                  HasSubstr("manifests.yaml: document 4 (Ticket team-a/only-n2): kind: "
                            "unsupported kind \"Ticket\" of apiVersion "
                            "\"example.schedhost.io/v1\""),
                  HasSubstr("the kinds the loaded plugins declare (storage.k8s.io/v1 "
                            "CSIDriver, "))));
}

TEST(DeclaredKindsTest, ExplainTakesObjectsOfDeclaredKinds) {
  const auto r =
      schedhost::testing::Explain(Read(Scenario("config.toml")), Read(Scenario("cluster.yaml")),
                                  {.libraries = {TICKET_GATE_PLUGIN}});
  const auto* ticketed = r.Find("team-a/ticketed");
  ASSERT_NE(ticketed, nullptr);
  EXPECT_EQ(ticketed->placed.value_or("<none>"), "n2");
  const auto* missing = r.Find("team-a/missing-ticket");
  ASSERT_NE(missing, nullptr);
  EXPECT_FALSE(missing->placed.has_value());
  ASSERT_TRUE(missing->pre_filter.has_value());
  EXPECT_THAT(missing->message, HasSubstr("ticket \"nowhere\" not found"));
}

}  // namespace
