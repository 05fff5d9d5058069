// Internal helpers the made objects (Pod, Node, ...) use to build their ABI views: arenas for
// the view's arrays, and a holder that places the view first in a
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

// kEmptyText is the empty string a view holds: never a null pointer.
inline constexpr std::string_view kEmptyText = "";

// ViewArena hands out zeroed, never-moving arrays of trivially copyable view structs that live
// as long as the arena; the two kinds below differ in where the arrays go. An arena never moves
// (nor does its owner), and is filled once, by the owner's constructor.
class ViewArena {
 public:
  virtual ~ViewArena() = default;
  ViewArena(const ViewArena&) = delete;
  ViewArena& operator=(const ViewArena&) = delete;

  // Array returns `n` value-initialized T; nullptr when n is 0.
  template <class T>
  T* Array(size_t n) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    if (n == 0) return nullptr;
    T* out = static_cast<T*>(Allocate(n * sizeof(T), alignof(T)));
    std::uninitialized_value_construct_n(out, n);
    return out;
  }
  // One returns a single value-initialized T.
  template <class T>
  T* One() {
    return Array<T>(1);
  }
  // Copy keeps a copy of `s` in the arena and returns it ("" for an empty string).
  std::string_view Copy(std::string_view s) {
    if (s.empty()) return kEmptyText;
    char* out = Array<char>(s.size());
    std::char_traits<char>::copy(out, s.data(), s.size());
    return {out, s.size()};
  }

 protected:
  ViewArena() = default;
  virtual void* Allocate(size_t bytes, size_t align) = 0;
};

// InlineViewArena keeps the first kInlineBytes inside itself (so in the object that owns it): a
// node with a few labels and taints has its arrays beside its view, which the node loops read
// together. Bigger views spill into heap blocks that grow geometrically.
class InlineViewArena final : public ViewArena {
 public:
  static constexpr size_t kInlineBytes = 128;

  InlineViewArena() : resource_(inline_, sizeof(inline_)) {}
  ~InlineViewArena() override = default;

 private:
  void* Allocate(size_t bytes, size_t align) override { return resource_.allocate(bytes, align); }

  alignas(std::max_align_t) std::byte inline_[kInlineBytes];
  std::pmr::monotonic_buffer_resource resource_;  // after inline_, which it starts with
};

// ExactViewBlocks owns the heap blocks an ExactViewArena filled: one pointer in the object that
// keeps them, freed with it. The first block stays first, so what the arena put first in it
// (Reserve, then the first array) is found again from the blocks alone: first().
class ExactViewBlocks {
 public:
  ExactViewBlocks() = default;
  ~ExactViewBlocks();
  ExactViewBlocks(const ExactViewBlocks&) = delete;
  ExactViewBlocks& operator=(const ExactViewBlocks&) = delete;

  // first returns the start of the first block's room (nullptr when there is no block).
  const std::byte* first() const {
    return head_ == nullptr ? nullptr : reinterpret_cast<const std::byte*>(head_ + 1);
  }

 private:
  friend class ExactViewArena;
  struct Block {
    Block* next;
  };
  Block* head_ = nullptr;
};

// ExactViewArena allocates no more than it is asked for, in blocks `blocks` keeps: arrays go
// into the block Reserve made while they fit, each other one into a block of its own size. For
// objects kept by the thousand whose arrays are small and rarely read together (pending pods),
// where an inline buffer would mostly be empty. The arena itself lives only while the view is
// built (its fill state is of no use after), so the object pays one pointer for its blocks.
class ExactViewArena final : public ViewArena {
 public:
  explicit ExactViewArena(ExactViewBlocks& blocks) : blocks_(blocks) {}
  ~ExactViewArena() override = default;

  // Reserve starts a block of `bytes` for the arrays that follow (a hint: what does not fit
  // gets a block of its own). Call it once, before the first array.
  void Reserve(size_t bytes);

 private:
  void* Allocate(size_t bytes, size_t align) override;
  // NewBlock links a block with room for `bytes` aligned to `align` and returns that room.
  std::byte* NewBlock(size_t bytes, size_t align);

  ExactViewBlocks& blocks_;
  std::byte* free_ = nullptr;  // the unused tail of the reserved block
  size_t free_bytes_ = 0;
};

// ViewBase keeps a view at offset 0 of a standard-layout base class: an owner that derives from
// it (privately) converts back from its view pointer with a static_cast, with no pointer to
// itself kept beside the view (see BaseFromView).
template <class View>
struct ViewBase {
  View base_view;
  uint64_t base_magic;
};

// BaseFromView returns the ViewBase holding `v`, or nullptr when `v` is null or the magic
// stored beside it does not match.
template <class View>
const ViewBase<View>* BaseFromView(const View* v, uint64_t magic) {
  static_assert(std::is_standard_layout_v<ViewBase<View>>);
  if (v == nullptr) return nullptr;
  const auto* base = reinterpret_cast<const ViewBase<View>*>(v);
  return base->base_magic == magic ? base : nullptr;
}

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
