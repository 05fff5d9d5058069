// store::WriteObject: the writes a plugin makes to objects of declared kinds in embedded mode,
// with the API server's answers — create refuses an existing object, a stale resourceVersion is
// a conflict, the status ops touch the status only, merge patches merge, delete deletes — and
// the identity the host owns.
#include "host/store/object_write.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "host/model/decode.h"

namespace schedhost::store {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

const KindInfo kGroup{"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", true};

Json Stored(ObjectStore& objects, const std::string& name) {
  const StoredObject* o = objects.Snapshot()->Find(kGroup.Key())->Get("team-a", name);
  return o == nullptr ? Json() : Json::parse(model::ValueTreeToJson(*o->tree));
}

ErrorCode CodeOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const StoreError& e) {
    return e.code();
  }
  ADD_FAILURE() << "no StoreError";
  return ErrorCode::kUnavailable;
}

TEST(ObjectWriteTest, WritesAsTheApiServerTakesThem) {
  ObjectStore objects;
  objects.Declare(kGroup);
  auto write = [&](ObjectWriteOp op, const std::string& name, const std::string& body) {
    return WriteObject(objects, kGroup, op, "team-a", name, body);
  };
  write(ObjectWriteOp::kCreate, "g", R"({"spec":{"minMember":3},"status":{"phase":"Pending"}})");
  Json g = Stored(objects, "g");
  EXPECT_EQ(g["apiVersion"], "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(g["kind"], "PodGroup");
  EXPECT_EQ(g["metadata"]["namespace"], "team-a");
  EXPECT_EQ(g["metadata"]["uid"].get<std::string>().size(), 36u);
  const std::string rv = g["metadata"]["resourceVersion"];
  EXPECT_EQ(CodeOf([&] { write(ObjectWriteOp::kCreate, "g", "{}"); }), ErrorCode::kAlreadyExists);

  // The status ops change the status and nothing else.
  write(ObjectWriteOp::kMergePatchStatus, "g",
        R"({"spec":{"minMember":9},"status":{"scheduled":2}})");
  g = Stored(objects, "g");
  EXPECT_EQ(g["spec"]["minMember"], 3);
  EXPECT_EQ(g["status"], (Json{{"phase", "Pending"}, {"scheduled", 2}}));
  write(ObjectWriteOp::kUpdateStatus, "g", R"({"status":{"phase":"Running"}})");
  EXPECT_EQ(Stored(objects, "g")["status"], (Json{{"phase", "Running"}}));
  EXPECT_EQ(Stored(objects, "g")["metadata"]["uid"], g["metadata"]["uid"]) << "kept by updates";

  // A merge patch merges (null removes); the uid stays.
  write(ObjectWriteOp::kMergePatch, "g", R"({"spec":{"minResources":{"cpu":"2"}},"status":null})");
  g = Stored(objects, "g");
  EXPECT_EQ(g["spec"], (Json{{"minMember", 3}, {"minResources", {{"cpu", "2"}}}}));
  EXPECT_FALSE(g.contains("status"));

  // An update with the version read earlier is a conflict; with the current one it goes in.
  EXPECT_EQ(CodeOf([&] {
              write(ObjectWriteOp::kUpdate, "g",
                    R"({"metadata":{"resourceVersion":")" + rv + R"("},"spec":{}})");
            }),
            ErrorCode::kConflict);
  const std::string current = g["metadata"]["resourceVersion"];
  write(ObjectWriteOp::kUpdate, "g",
        R"({"metadata":{"resourceVersion":")" + current + R"("},"spec":{"minMember":1}})");
  EXPECT_EQ(Stored(objects, "g")["spec"], (Json{{"minMember", 1}}));
  EXPECT_EQ(Stored(objects, "g")["metadata"]["uid"], g["metadata"]["uid"]);

  // Refusals change nothing.
  EXPECT_EQ(CodeOf([&] { write(ObjectWriteOp::kUpdate, "missing", "{}"); }), ErrorCode::kNotFound);
  EXPECT_EQ(CodeOf([&] { write(ObjectWriteOp::kMergePatch, "g", "[1]"); }), ErrorCode::kInvalid);
  EXPECT_EQ(CodeOf([&] { write(ObjectWriteOp::kUpdate, "g", "{not json"); }), ErrorCode::kInvalid);
  EXPECT_THAT([&] { write(ObjectWriteOp::kUpdate, "g", R"({"metadata":{"name":"other"}})"); },
              ::testing::ThrowsMessage<StoreError>(HasSubstr("metadata.name is \"other\"")));
  EXPECT_EQ(Stored(objects, "g")["spec"], (Json{{"minMember", 1}}));

  write(ObjectWriteOp::kDelete, "g", "");
  EXPECT_TRUE(Stored(objects, "g").is_null());
  EXPECT_EQ(CodeOf([&] { write(ObjectWriteOp::kDelete, "g", ""); }), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace schedhost::store
