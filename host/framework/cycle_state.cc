#include "host/framework/cycle_state.h"

namespace schedhost::framework {

CycleState::~CycleState() {
  for (auto& e : entries_) {
    if (e.destroy != nullptr) e.destroy(e.data);
  }
}

void CycleState::Write(schedhost_id key, void* data, schedhost_state_destroy_fn destroy,
                       schedhost_state_clone_fn clone) {
  for (auto& e : entries_) {
    if (e.key == key) {
      if (e.destroy != nullptr && e.data != data) e.destroy(e.data);
      e = Entry{key, data, destroy, clone};
      return;
    }
  }
  entries_.push_back(Entry{key, data, destroy, clone});
}

bool CycleState::Read(schedhost_id key, void** out) const {
  for (const auto& e : entries_) {
    if (e.key == key) {
      *out = e.data;
      return true;
    }
  }
  *out = nullptr;
  return false;
}

void CycleState::Delete(schedhost_id key) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].key == key) {
      if (entries_[i].destroy != nullptr) entries_[i].destroy(entries_[i].data);
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

std::unique_ptr<CycleState> CycleState::Clone() const {
  auto out = std::make_unique<CycleState>();
  for (const auto& e : entries_) {
    if (e.clone == nullptr) continue;
    void* copy = e.clone(e.data);
    if (copy == nullptr && e.data != nullptr) continue;  // the plugin could not copy it
    out->entries_.push_back(Entry{e.key, copy, e.destroy, e.clone});
  }
  out->skip_filter_plugins = skip_filter_plugins;
  out->active_filters = active_filters;
  out->filters_resolved = filters_resolved;
  out->skip_score_plugins = skip_score_plugins;
  out->run_all_filters = run_all_filters;
  if (objects_view_.load(std::memory_order_acquire) != nullptr) {
    out->objects_ = objects_;
    out->objects_view_.store(out->objects_.get(), std::memory_order_release);
  }
  return out;
}

const store::ObjectSnapshot* CycleState::Objects(const store::ObjectStore& source) const {
  if (const store::ObjectSnapshot* taken = objects_view_.load(std::memory_order_acquire)) {
    return taken;
  }
  std::lock_guard lock(objects_mu_);
  if (objects_ == nullptr) {
    objects_ = source.Snapshot();
    objects_view_.store(objects_.get(), std::memory_order_release);
  }
  return objects_.get();
}

}  // namespace schedhost::framework
