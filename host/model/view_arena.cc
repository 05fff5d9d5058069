#include "host/model/view_arena.h"

#include <new>

namespace schedhost::model::internal {

ExactViewArena::~ExactViewArena() {
  while (blocks_ != nullptr) {
    Block* next = blocks_->next;
    ::operator delete(blocks_);
    blocks_ = next;
  }
}

std::byte* ExactViewArena::NewBlock(size_t bytes) {
  // The block header keeps max_align_t alignment for what follows it, as operator new's does.
  auto* block = static_cast<Block*>(::operator new(sizeof(Block) + bytes));
  block->next = blocks_;
  blocks_ = block;
  return reinterpret_cast<std::byte*>(block + 1);
}

void ExactViewArena::Reserve(size_t bytes) {
  if (bytes == 0) return;
  free_ = NewBlock(bytes);
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
  return NewBlock(bytes);
}

}  // namespace schedhost::model::internal
