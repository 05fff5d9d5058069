// Process-wide string interning for label keys and values, namespaces, resource names, topology
// keys and node names. Ids are dense uint32_t values that never change for the life of the
// process; id 0 is the empty string and ids 1..16 are the well-known ids fixed by plugin.h.
// Intern() serializes on a mutex; Str() is lock-free and safe concurrently with Intern().
//
//   schedhost_id zone = Interner::Global().Intern("topology.kubernetes.io/zone");  // == 6
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "schedhost/plugin.h"

namespace schedhost::model {

// Interner maps strings to stable ids and back; strings are kept until the interner dies.
class Interner {
 public:
  // Interner creates an interner holding "" (id 0) and the well-known ids of plugin.h.
  Interner();
  ~Interner();
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;

  // Global returns the process-wide interner that every view's ids refer to.
  static Interner& Global();

  // Intern returns the id of `s`, assigning the next free id the first time `s` is seen.
  schedhost_id Intern(std::string_view s);
  // Lookup returns the id of `s` without interning it; 0 when unknown and for "".
  schedhost_id Lookup(std::string_view s) const;
  // Str returns the text of `id` (valid for the interner's life); "" for ids never handed out.
  std::string_view Str(schedhost_id id) const;
  // Size returns the number of ids handed out so far, including 0 and the well-known ids.
  size_t Size() const { return count_.load(std::memory_order_acquire); }

 private:
  // Chunk c holds kFirstChunkSize << c entries, so ids never move once published.
  static constexpr uint32_t kFirstChunkBits = 10;
  static constexpr size_t kMaxChunks = 32 - kFirstChunkBits + 1;

  struct Slot {
    uint32_t chunk;
    uint32_t offset;
  };
  static Slot SlotOf(schedhost_id id);
  std::string_view CopyText(std::string_view s);  // Requires mu_ held exclusively.

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string_view, schedhost_id> ids_;  // Keys point into blocks_.
  std::vector<std::unique_ptr<char[]>> blocks_;             // Stable copies of the text.
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  std::atomic<std::string_view*> chunks_[kMaxChunks] = {};
  std::atomic<uint32_t> count_{0};
};

}  // namespace schedhost::model
