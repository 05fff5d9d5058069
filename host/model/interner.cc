#include "host/model/interner.h"

#include <bit>
#include <cstring>
#include <stdexcept>

namespace schedhost::model {
namespace {

constexpr size_t kBlockSize = size_t{64} * 1024;

// Texts of the ABI's well-known ids, in id order starting at 1.
constexpr std::string_view kWellKnown[] = {
    "cpu",
    "memory",
    "ephemeral-storage",
    "pods",
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "metadata.name",
    "default",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "TCP",
    "UDP",
    "SCTP",
    "hugepages-",
};
static_assert(std::size(kWellKnown) + 1 == SCHEDHOST_ID_WELL_KNOWN_COUNT);

}  // namespace

Interner::Interner() {
  std::unique_lock lock(mu_);
  auto* first = new std::string_view[size_t{1} << kFirstChunkBits];
  chunks_[0].store(first, std::memory_order_release);
  first[0] = std::string_view();
  uint32_t next = 1;
  for (std::string_view s : kWellKnown) {
    std::string_view copy = CopyText(s);
    first[next] = copy;
    ids_.emplace(copy, next);
    ++next;
  }
  count_.store(next, std::memory_order_release);
}

Interner::~Interner() {
  for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
}

Interner& Interner::Global() {
  // Never destroyed: views and other statics may still read ids during process exit.
  static Interner* global = new Interner();
  return *global;
}

Interner::Slot Interner::SlotOf(schedhost_id id) {
  uint64_t shifted = uint64_t{id} + (uint64_t{1} << kFirstChunkBits);
  uint32_t chunk = static_cast<uint32_t>(std::bit_width(shifted)) - 1 - kFirstChunkBits;
  uint64_t start = uint64_t{1} << (chunk + kFirstChunkBits);
  return Slot{chunk, static_cast<uint32_t>(shifted - start)};
}

std::string_view Interner::CopyText(std::string_view s) {
  if (s.empty()) return std::string_view();
  if (s.size() > kBlockSize / 4) {
    // Large strings get their own block so they do not waste the shared one.
    auto block = std::make_unique<char[]>(s.size());
    std::memcpy(block.get(), s.data(), s.size());
    std::string_view copy(block.get(), s.size());
    // Keep the current shared block last so later small strings still fill it.
    blocks_.insert(blocks_.empty() ? blocks_.end() : blocks_.end() - 1, std::move(block));
    return copy;
  }
  if (blocks_.empty() || block_used_ + s.size() > block_size_) {
    blocks_.push_back(std::make_unique<char[]>(kBlockSize));
    block_used_ = 0;
    block_size_ = kBlockSize;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(dst, s.size());
}

schedhost_id Interner::Intern(std::string_view s) {
  if (s.empty()) return SCHEDHOST_ID_EMPTY;
  {
    std::shared_lock lock(mu_);
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
  }
  std::unique_lock lock(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  uint32_t id = count_.load(std::memory_order_relaxed);
  if (id == UINT32_MAX) throw std::length_error("Interner: out of ids");
  Slot slot = SlotOf(id);
  std::string_view* chunk = chunks_[slot.chunk].load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    chunk = new std::string_view[size_t{1} << (slot.chunk + kFirstChunkBits)];
    chunks_[slot.chunk].store(chunk, std::memory_order_release);
  }
  std::string_view copy = CopyText(s);
  chunk[slot.offset] = copy;
  ids_.emplace(copy, id);
  // Publishes the slot (and its chunk pointer) to lock-free readers of Str().
  count_.store(id + 1, std::memory_order_release);
  return id;
}

schedhost_id Interner::Lookup(std::string_view s) const {
  if (s.empty()) return SCHEDHOST_ID_EMPTY;
  std::shared_lock lock(mu_);
  auto it = ids_.find(s);
  return it == ids_.end() ? SCHEDHOST_ID_EMPTY : it->second;
}

std::string_view Interner::Str(schedhost_id id) const {
  if (id >= count_.load(std::memory_order_acquire)) return std::string_view();
  Slot slot = SlotOf(id);
  return chunks_[slot.chunk].load(std::memory_order_acquire)[slot.offset];
}

}  // namespace schedhost::model
