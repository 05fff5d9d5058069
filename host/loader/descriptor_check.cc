// Descriptor checks shared by libraries and in-process registrations, and ImplementedPoints.
#include <algorithm>

#include "host/loader/loader.h"

namespace schedhost::loader {
namespace {

// kMaxNameLength bounds plugin names: they are config keys and log tags, never long.
constexpr size_t kMaxNameLength = 128;

}  // namespace

uint32_t ImplementedPoints(const schedhost_plugin_descriptor& d) noexcept {
  // Read a slot only after struct_size proves the plugin's descriptor has it (docs/abi.md rule 4).
#define SCHEDHOST_POINT_(field, bit)                                                   \
  ((d.struct_size >= offsetof(schedhost_plugin_descriptor, field) + sizeof(d.field) && \
    d.field != nullptr)                                                                \
       ? static_cast<uint32_t>(bit)                                                    \
       : 0u)
  uint32_t mask = 0;
  mask |= SCHEDHOST_POINT_(pre_enqueue, kPreEnqueueBit);
  mask |= SCHEDHOST_POINT_(queue_sort_less, kQueueSortBit);
  mask |= SCHEDHOST_POINT_(pre_filter, kPreFilterBit);
  mask |= SCHEDHOST_POINT_(filter, kFilterBit);
  mask |= SCHEDHOST_POINT_(post_filter, kPostFilterBit);
  mask |= SCHEDHOST_POINT_(pre_score, kPreScoreBit);
  mask |= SCHEDHOST_POINT_(score, kScoreBit);
  mask |= SCHEDHOST_POINT_(reserve, kReserveBit);
  mask |= SCHEDHOST_POINT_(permit, kPermitBit);
  mask |= SCHEDHOST_POINT_(pre_bind, kPreBindBit);
  mask |= SCHEDHOST_POINT_(bind, kBindBit);
  mask |= SCHEDHOST_POINT_(post_bind, kPostBindBit);
#undef SCHEDHOST_POINT_
  return mask;
}

std::string CheckDescriptor(const schedhost_plugin_descriptor* d, size_t index,
                            std::string_view provider) {
  const std::string where = std::string(provider) + ": plugin #" + std::to_string(index);
  if (d == nullptr) throw LoadError(where + " has a NULL descriptor");
  if (d->struct_size < kDescriptorSizeV1_0) {
    throw LoadError(where + " has a descriptor of struct_size " + std::to_string(d->struct_size) +
                    ", smaller than the ABI 1.0 descriptor (" +
                    std::to_string(kDescriptorSizeV1_0) +
                    " bytes) — rebuild it against schedhost-sdk 1.x");
  }
  if (d->name.len == 0 || d->name.data == nullptr) throw LoadError(where + " has an empty name");
  if (d->name.len > kMaxNameLength) {
    throw LoadError(where + " has a name of " + std::to_string(d->name.len) + " bytes (at most " +
                    std::to_string(kMaxNameLength) + ")");
  }
  std::string name(d->name.data, d->name.len);
  const bool clean = std::all_of(name.begin(), name.end(), [](char c) {
    return c > 0x20 && c != 0x7f;  // config keys and manifest fields: no spaces or controls
  });
  if (!clean) {
    throw LoadError(where + " has a name with spaces or control characters: '" + name + "'");
  }
  // A batched entry stands in for its single-node one, which the host still needs (timed
  // cycles, nominated pods, run-all-filters): one without the other is a broken descriptor.
  if (SCHEDHOST_HAS_FIELD(d, schedhost_plugin_descriptor, filter_batch) &&
      d->filter_batch != nullptr && d->filter == nullptr) {
    throw LoadError(where + " (" + name + ") sets filter_batch but not filter");
  }
  if (SCHEDHOST_HAS_FIELD(d, schedhost_plugin_descriptor, score_batch) &&
      d->score_batch != nullptr && d->score == nullptr) {
    throw LoadError(where + " (" + name + ") sets score_batch but not score");
  }
  return name;
}

}  // namespace schedhost::loader
