#include "host/queue/pod_heap.h"

#include <utility>

namespace schedhost::queue::internal {

void PodHeap::SetLess(Less less) {
  less_ = std::move(less);
  // Floyd's bottom-up heapify: O(n).
  for (size_t i = items_.size() / 2; i-- > 0;) SiftDown(i);
}

void PodHeap::Push(std::unique_ptr<Entry> entry) {
  index_.insert(entry.get());
  items_.push_back(std::move(entry));
  Place(items_.size() - 1);
  SiftUp(items_.size() - 1);
}

std::unique_ptr<Entry> PodHeap::Pop() {
  if (items_.empty()) return nullptr;
  return Remove(items_.front()->uid());
}

std::unique_ptr<Entry> PodHeap::Remove(std::string_view uid) {
  auto it = index_.find(uid);
  if (it == index_.end()) return nullptr;
  const size_t i = (*it)->heap_index;
  index_.erase(it);
  std::unique_ptr<Entry> out = std::move(items_[i]);
  const size_t last = items_.size() - 1;
  if (i != last) {
    items_[i] = std::move(items_[last]);
    items_.pop_back();
    Place(i);
    RestoreAt(i);
  } else {
    items_.pop_back();
  }
  // A burst of pods (20,000 created at once) leaves the array and the index's buckets at their
  // peak after the heap drains: give most of it back once a quarter is in use (amortized O(1),
  // and never below kRetained slots).
  if (items_.capacity() > kRetained && items_.size() < items_.capacity() / 4) {
    items_.shrink_to_fit();
    index_.rehash(0);
  }
  return out;
}

Entry* PodHeap::Get(std::string_view uid) const {
  auto it = index_.find(uid);
  return it == index_.end() ? nullptr : *it;
}

void PodHeap::Fix(std::string_view uid) {
  auto it = index_.find(uid);
  if (it != index_.end()) RestoreAt((*it)->heap_index);
}

std::vector<Entry*> PodHeap::CollectWhile(const std::function<bool(const Entry&)>& pred) const {
  std::vector<Entry*> out;
  std::vector<size_t> stack;
  if (!items_.empty()) stack.push_back(0);
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    if (!pred(*items_[i])) continue;  // Its whole subtree comes later, so fails too.
    out.push_back(items_[i].get());
    for (size_t c = 2 * i + 1; c <= 2 * i + 2 && c < items_.size(); ++c) stack.push_back(c);
  }
  return out;
}

std::string PodHeap::Check(std::string_view name) const {
  const std::string prefix(name);
  if (index_.size() != items_.size()) {
    return prefix + ": index has " + std::to_string(index_.size()) + " uids but the heap " +
           std::to_string(items_.size()) + " entries";
  }
  for (size_t i = 0; i < items_.size(); ++i) {
    const Entry& e = *items_[i];
    auto it = index_.find(e.uid());
    if (it == index_.end() || *it != &e || e.heap_index != i) {
      return prefix + ": pod " + std::string(e.uid()) + " at position " + std::to_string(i) +
             " is indexed elsewhere or not at all";
    }
    if (i > 0 && less_(e, *items_[(i - 1) / 2])) {
      return prefix + ": pod " + std::string(e.uid()) + " orders before its parent " +
             std::string(items_[(i - 1) / 2]->uid());
    }
  }
  return "";
}

void PodHeap::SiftUp(size_t i) {
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!less_(*items_[i], *items_[parent])) break;
    std::swap(items_[i], items_[parent]);
    Place(i);
    Place(parent);
    i = parent;
  }
}

void PodHeap::SiftDown(size_t i) {
  const size_t n = items_.size();
  for (;;) {
    size_t best = i;
    const size_t l = 2 * i + 1;
    const size_t r = l + 1;
    if (l < n && less_(*items_[l], *items_[best])) best = l;
    if (r < n && less_(*items_[r], *items_[best])) best = r;
    if (best == i) return;
    std::swap(items_[i], items_[best]);
    Place(i);
    Place(best);
    i = best;
  }
}

void PodHeap::RestoreAt(size_t i) {
  if (i > 0 && less_(*items_[i], *items_[(i - 1) / 2])) {
    SiftUp(i);
  } else {
    SiftDown(i);
  }
}

}  // namespace schedhost::queue::internal
