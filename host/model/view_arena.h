// Internal helpers the made objects (Pod, Node, ...) use to build their ABI views: a
// monotonic arena for the view's arrays, and a holder that places the view first in a
// standard-layout struct next to its owner, which is how FromView() finds the object again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <type_traits>

#include "schedhost/plugin.h"

namespace schedhost::model::internal {

// ViewArena hands out zeroed, never-moving arrays of trivially copyable view structs. The first
// kInlineBytes live inside the arena itself (so in the object that owns it): a node with a few
// labels or a pod with a few containers takes no allocation of its own. Bigger views spill into
// heap blocks that grow geometrically. An arena never moves (nor does its owner).
class ViewArena {
 public:
  static constexpr size_t kInlineBytes = 128;

  ViewArena() : resource_(inline_, sizeof(inline_)) {}
  ViewArena(const ViewArena&) = delete;
  ViewArena& operator=(const ViewArena&) = delete;

  // Array returns `n` value-initialized T living as long as the arena; nullptr when n is 0.
  template <class T>
  T* Array(size_t n) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    if (n == 0) return nullptr;
    T* out = static_cast<T*>(resource_.allocate(n * sizeof(T), alignof(T)));
    std::uninitialized_value_construct_n(out, n);
    return out;
  }
  // One returns a single value-initialized T.
  template <class T>
  T* One() {
    return Array<T>(1);
  }

 private:
  alignas(std::max_align_t) std::byte inline_[kInlineBytes];
  std::pmr::monotonic_buffer_resource resource_;  // after inline_, which it starts with
};

// ViewHolder keeps a view at offset 0 so a view pointer converts back to its owner.
template <class View, class Owner>
struct ViewHolder {
  View view;
  uint64_t magic;
  const Owner* owner;
};

// ToStr views a string owned by the object (never a temporary).
inline schedhost_str ToStr(std::string_view s) { return schedhost_str{s.data(), s.size()}; }

// OwnerFromView returns the owner of a view built by ViewHolder, or nullptr when `v` is null
// or the holder's magic does not match.
template <class Owner, class View>
const Owner* OwnerFromView(const View* v, uint64_t magic) {
  static_assert(std::is_standard_layout_v<ViewHolder<View, Owner>>);
  if (v == nullptr) return nullptr;
  const auto* holder = reinterpret_cast<const ViewHolder<View, Owner>*>(v);
  return holder->magic == magic ? holder->owner : nullptr;
}

}  // namespace schedhost::model::internal
