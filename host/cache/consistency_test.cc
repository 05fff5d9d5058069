// CompareWithStore: a cache fed from the store's watch agrees with it; each kind of
// difference is reported once it is introduced behind the watch's back.
#include "host/cache/consistency.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedhost::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

model::NodeData NodeData(const std::string& name) {
  model::NodeData d;
  d.metadata.name = name;
  return d;
}

model::PodData PodData(const std::string& name, const std::string& node = "") {
  model::PodData d;
  d.metadata.name = name;
  d.metadata.namespace_name = "default";
  d.metadata.uid = "uid-" + name;
  d.spec.node_name = node;
  model::Container c;
  c.name = "app";
  c.image = "nginx";
  d.spec.containers.push_back(c);
  return d;
}

// Feed mirrors the store into the cache through a watch, as the host's event router will.
void Feed(store::Store& store, Cache& cache) {
  store.Watch(0, [&cache](const store::Event& e) {
    if (auto* node = std::get_if<std::shared_ptr<const model::Node>>(&e.object)) {
      if (e.type == store::EventType::kDeleted) {
        cache.RemoveNode((*node)->name());
      } else {
        cache.UpdateNode(*node);
      }
      return;
    }
    auto* pod = std::get_if<std::shared_ptr<const model::Pod>>(&e.object);
    if (pod == nullptr) return;
    const bool cached = cache.GetPod((*pod)->uid()) != nullptr;
    if (e.type == store::EventType::kDeleted) {
      if (cached) cache.RemovePod((*pod)->uid());
    } else if (!(*pod)->node_name().empty()) {
      if (cached && !cache.IsAssumed((*pod)->uid())) {
        cache.UpdatePod(*pod);
      } else {
        cache.AddPod(*pod);
      }
    }
  });
}

TEST(ConsistencyTest, AgreesWhileFedByTheWatch) {
  store::Store store;
  Cache cache;
  Feed(store, cache);
  store.Create(NodeData("n1"));
  store.Create(NodeData("n2"));
  store.Create(PodData("bound", "n1"));
  auto pending = store.Create(PodData("pending"));
  EXPECT_THAT(CompareWithStore(cache, store), IsEmpty());

  // The scheduling cycle assumes, the binding cycle binds: consistent at every step.
  model::PodData chosen = pending->data();
  chosen.spec.node_name = "n2";
  cache.AssumePod(model::Pod::Make(chosen));
  EXPECT_THAT(CompareWithStore(cache, store), IsEmpty());
  store.Bind("default", "pending", pending->uid(), 0, "n2");
  EXPECT_FALSE(cache.IsAssumed(pending->uid()));
  store.Delete<model::Pod>("default", "bound");
  store.Delete<model::Node>("", "n1");
  EXPECT_THAT(CompareWithStore(cache, store), IsEmpty());
  EXPECT_EQ(store.failed_callbacks(), 0u);  // the cache accepted every event
}

TEST(ConsistencyTest, ReportsEachKindOfDifference) {
  store::Store store;
  Cache cache;
  store.Create(NodeData("n1"));
  store.Create(NodeData("only-in-store"));
  store.Create(PodData("missing", "n1"));
  auto moved = store.Create(PodData("moved", "n1"));
  auto stale = store.Create(PodData("stale", "n1"));
  auto unbound = store.Create(PodData("unbound"));
  auto assumed = store.Create(PodData("assumed"));
  store.Bind("default", "assumed", "", 0, "n1");

  cache.AddNode(store.Get<model::Node>("", "n1"));
  cache.AddNode(model::Node::Make(NodeData("only-in-cache")));
  model::PodData elsewhere = moved->data();
  elsewhere.spec.node_name = "only-in-cache";
  cache.AddPod(model::Pod::Make(elsewhere));
  model::PodData older = stale->data();
  older.metadata.resource_version = 1;
  cache.AddPod(model::Pod::Make(older));
  model::PodData ghost = PodData("ghost", "n1");
  cache.AddPod(model::Pod::Make(ghost));
  model::PodData placed = unbound->data();
  placed.spec.node_name = "n1";
  cache.AddPod(model::Pod::Make(placed));
  model::PodData assumed_elsewhere = assumed->data();
  assumed_elsewhere.spec.node_name = "only-in-cache";
  cache.AssumePod(model::Pod::Make(assumed_elsewhere));
  cache.AssumePod(model::Pod::Make(PodData("in-flight", "n1")));  // not in the store: fine

  const std::string stale_rv = std::to_string(stale->resource_version());
  EXPECT_THAT(
      CompareWithStore(cache, store),
      ElementsAre("node only-in-cache: in the cache, not in the store",
                  "node only-in-store: in the store, missing from the cache",
                  "pod default/assumed (uid uid-assumed): assumed on only-in-cache, bound to n1 "
                  "in the store",
                  "pod default/ghost (uid uid-ghost): in the cache on n1, not in the store",
                  "pod default/missing (uid uid-missing): bound to n1 in the store, missing from "
                  "the cache",
                  "pod default/moved (uid uid-moved): cached on only-in-cache, bound to n1 in the "
                  "store",
                  "pod default/stale (uid uid-stale): resource version 1 in the cache, " +
                      stale_rv + " in the store",
                  "pod default/unbound (uid uid-unbound): in the cache on n1, unbound in the "
                  "store"));
}

}  // namespace
}  // namespace schedhost::cache
