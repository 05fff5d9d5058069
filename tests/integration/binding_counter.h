// BindingCounter: the "every pod bound exactly once" check of the hot-swap tests, counted from
// the store's own watch (each transition of a pod from unbound to bound), so it sees what the
// store recorded and not what the scheduler believes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

#include "host/model/pod.h"
#include "host/store/store.h"

namespace schedhost::integration {

class BindingCounter {
 public:
  explicit BindingCounter(store::Store& store)
      : store_(store), watch_(store.Watch(0, [this](const store::Event& e) { OnEvent(e); })) {}
  ~BindingCounter() { Stop(); }
  BindingCounter(const BindingCounter&) = delete;
  BindingCounter& operator=(const BindingCounter&) = delete;

  /// Stop ends the watch (idempotent); the counts stay.
  void Stop() {
    if (watching_) store_.Unwatch(watch_);
    watching_ = false;
  }

  /// ExpectEachBoundOnce checks that `total` pods were bound, none more than once.
  void ExpectEachBoundOnce(size_t total) const {
    std::lock_guard lock(mu_);
    EXPECT_EQ(bindings_.size(), total) << "every pod bound";
    for (const auto& [uid, n] : bindings_) {
      EXPECT_EQ(n, 1) << "pod " << uid << " bound " << n << "x";
    }
  }

 private:
  void OnEvent(const store::Event& e) {
    if (e.kind != store::Kind::kPod || e.type != store::EventType::kModified) return;
    const auto pod = std::get<std::shared_ptr<const model::Pod>>(e.object);
    const auto old = std::get<std::shared_ptr<const model::Pod>>(*e.old_object);
    if (!pod->node_name().empty() && old->node_name().empty()) {
      std::lock_guard lock(mu_);
      ++bindings_[std::string(pod->uid())];
    }
  }

  store::Store& store_;
  mutable std::mutex mu_;
  std::map<std::string, int, std::less<>>
      bindings_;  // guarded by mu_: uid -> unbound-to-bound transitions
  bool watching_ = true;
  uint64_t watch_;  // last: the watch may deliver before the constructor returns
};

}  // namespace schedhost::integration
