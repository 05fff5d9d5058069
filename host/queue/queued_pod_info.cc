#include "host/queue/queued_pod_info.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

namespace schedhost::queue {

static_assert(std::is_trivially_copyable_v<PluginName>);
static_assert(sizeof(PluginSet) == 16);

PluginSet::PluginSet(std::initializer_list<PluginName> names) {
  for (PluginName name : names) insert(name);
}

PluginSet::PluginSet(const PluginSet& other) { *this = other; }

PluginSet::PluginSet(PluginSet&& other) noexcept { swap(other); }

PluginSet& PluginSet::operator=(const PluginSet& other) {
  if (this == &other) return *this;
  clear();
  if (other.size_ > kInPlace) {
    items_.heap = static_cast<PluginName*>(::operator new(other.size_ * sizeof(PluginName)));
    capacity_ = other.size_;
  }
  std::memcpy(static_cast<void*>(data()), other.data(), other.size_ * sizeof(PluginName));
  size_ = other.size_;
  return *this;
}

PluginSet& PluginSet::operator=(PluginSet&& other) noexcept {
  if (this != &other) {
    clear();
    swap(other);
  }
  return *this;
}

bool PluginSet::contains(PluginName name) const noexcept {
  return std::find(begin(), end(), name) != end();  // names are interned: equal ids
}

bool PluginSet::insert(PluginName name) {
  if (contains(name)) return false;
  const PluginName* at = std::upper_bound(begin(), end(), name);
  const auto pos = static_cast<size_t>(at - begin());
  if (size_ == capacity_) {
    const uint32_t capacity = capacity_ * 2;
    auto* grown = static_cast<PluginName*>(::operator new(capacity * sizeof(PluginName)));
    std::memcpy(static_cast<void*>(grown), data(), size_ * sizeof(PluginName));
    Release();
    items_.heap = grown;
    capacity_ = capacity;
  }
  PluginName* items = data();
  std::memmove(static_cast<void*>(items + pos + 1), items + pos,
               (size_ - pos) * sizeof(PluginName));
  std::memcpy(static_cast<void*>(items + pos), &name, sizeof(PluginName));
  ++size_;
  return true;
}

void PluginSet::clear() noexcept {
  Release();
  items_.heap = nullptr;
  size_ = 0;
  capacity_ = kInPlace;
}

void PluginSet::swap(PluginSet& other) noexcept {
  std::swap(size_, other.size_);
  std::swap(capacity_, other.capacity_);
  std::swap(items_, other.items_);
}

void PluginSet::Release() noexcept {
  if (capacity_ > kInPlace) ::operator delete(items_.heap);
}

std::string_view LocationName(PodLocation where) {
  switch (where) {
    case PodLocation::kNone:
      return "none";
    case PodLocation::kActive:
      return "active";
    case PodLocation::kBackoff:
      return "backoff";
    case PodLocation::kUnschedulable:
      return "unschedulable";
    case PodLocation::kGated:
      return "gated";
    case PodLocation::kInFlight:
      return "in_flight";
  }
  return "unknown";
}

std::chrono::nanoseconds BackoffDuration(const QueueOptions& options, int attempts) {
  // A pod that was never attempted has nothing to back off from.
  if (attempts <= 0) return std::chrono::nanoseconds(0);
  const std::chrono::nanoseconds max = options.pod_max_backoff;
  std::chrono::nanoseconds d = options.pod_initial_backoff;
  for (int i = 1; i < attempts; ++i) {
    if (d > max - d) return max;  // Doubling would pass the cap (or overflow).
    d += d;
  }
  return std::min(d, max);
}

}  // namespace schedhost::queue
