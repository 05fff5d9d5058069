#include "host/model/view_arena.h"

#include <new>

namespace schedhost::model::internal {

ExactViewBlocks::~ExactViewBlocks() {
  while (head_ != nullptr) {
    Block* next = head_->next;
    ::operator delete(head_);
    head_ = next;
  }
}

std::byte* ExactViewArena::NewBlock(size_t bytes, size_t align) {
  // The header is one pointer; what follows it is aligned to 8 (operator new's blocks are
  // aligned to 16), and a stricter alignment takes a little more room.
  using Block = ExactViewBlocks::Block;
  const size_t extra = align > alignof(Block) ? align - alignof(Block) : 0;
  auto* block = static_cast<Block*>(::operator new(sizeof(Block) + extra + bytes));
  Block*& head = blocks_.head_;
  block->next = head == nullptr ? nullptr : head->next;  // after the first, which stays first
  (head == nullptr ? head : head->next) = block;
  auto* out = reinterpret_cast<std::byte*>(block + 1);
  out += (align - reinterpret_cast<uintptr_t>(out) % align) % align;
  return out;
}

void ExactViewArena::Reserve(size_t bytes) {
  if (bytes == 0) return;
  free_ = NewBlock(bytes, alignof(ExactViewBlocks::Block));
  free_bytes_ = bytes;
}

void* ExactViewArena::Allocate(size_t bytes, size_t align) {
  const size_t pad = (align - reinterpret_cast<uintptr_t>(free_) % align) % align;
  if (free_ != nullptr && pad + bytes <= free_bytes_) {
    std::byte* out = free_ + pad;
    free_ = out + bytes;
    free_bytes_ -= pad + bytes;
    return out;
  }
  return NewBlock(bytes, align);
}

}  // namespace schedhost::model::internal
