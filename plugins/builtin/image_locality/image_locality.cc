// ImageLocality's Score: find each of the pod's images among the node's image states (sorted by
// normalised name), add its size scaled by how widely it has spread, and map the sum to 0..100.
#include "image_locality.h"

#include <algorithm>
#include <span>

namespace schedhost::plugins {
namespace {

constexpr std::string_view kLatestSuffix = ":latest";

// NeedsLatest tells whether upstream's normalizedImageName appends ":latest" to `image`: when
// there is no ':' after the last '/' (no tag; a digest "@sha256:..." has one).
bool NeedsLatest(std::string_view image) {
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  if (colon == std::string_view::npos) return true;
  return slash != std::string_view::npos && colon < slash;
}

// CompareJoined compares `a` with the concatenation `b1 + b2` like std::string_view::compare,
// so a normalised name is looked up without building it (no allocation per node).
int CompareJoined(std::string_view a, std::string_view b1, std::string_view b2) {
  const size_t n = std::min(a.size(), b1.size());
  if (const int c = a.substr(0, n).compare(b1.substr(0, n)); c != 0) return c;
  if (a.size() < b1.size()) return -1;
  return a.substr(b1.size()).compare(b2);
}

// FindImage returns the node's state of `image` (normalised), or nullptr.
const schedhost_image_state* FindImage(std::span<const schedhost_image_state> states,
                                       std::string_view image) {
  const std::string_view suffix = NeedsLatest(image) ? kLatestSuffix : std::string_view{};
  auto it = std::lower_bound(states.begin(), states.end(), 0,
                             [&](const schedhost_image_state& s, int /*unused*/) {
                               return CompareJoined(ToView(s.name), image, suffix) < 0;
                             });
  if (it == states.end() || CompareJoined(ToView(it->name), image, suffix) != 0) return nullptr;
  return &*it;
}

// ScaledImageScore is the image's size times the fraction of nodes that hold it, truncated as
// upstream's float arithmetic does.
int64_t ScaledImageScore(const schedhost_image_state& state, size_t total_nodes) {
  const double spread = static_cast<double>(state.num_nodes) / static_cast<double>(total_nodes);
  return static_cast<int64_t>(static_cast<double>(state.size_bytes) * spread);
}

}  // namespace

ImageLocality::ImageLocality(const Host& host, const Args& args) : Plugin(host) {
  args.ExpectNone(kName);
}

int64_t ImageLocality::CalculatePriority(int64_t sum, size_t containers) noexcept {
  const int64_t max_threshold = kMaxContainerThreshold * static_cast<int64_t>(containers);
  if (max_threshold <= kMinThreshold) return 0;  // a pod without containers: nothing to favour
  sum = std::clamp(sum, kMinThreshold, max_threshold);
  return SCHEDHOST_MAX_NODE_SCORE * (sum - kMinThreshold) / (max_threshold - kMinThreshold);
}

Status ImageLocality::Score(const CycleState& /*state*/, const Pod& pod, const NodeInfo& ni,
                            int64_t& score) {
  if (const schedhost_node_summary* s = ni.summary(); s != nullptr && s->image_states_len == 0) {
    score = CalculatePriority(0, pod.images().size());  // as below for a node without images
    return {};
  }
  const auto states = ni.image_states();
  int64_t sum = 0;
  // The pod view lists init containers first, then containers: both count (v1.28). A node
  // without images scores 0 without asking the host for the node count.
  const size_t total_nodes = states.empty() ? 0 : host().NodeCount();
  if (total_nodes > 0) {
    for (const schedhost_str& image : pod.images()) {
      if (const auto* st = FindImage(states, ToView(image))) sum += ScaledImageScore(*st, total_nodes);
    }
  }
  score = CalculatePriority(sum, pod.images().size());
  return {};
}

}  // namespace schedhost::plugins

SCHEDHOST_PLUGIN_LIBRARY(schedhost::plugins::ImageLocality)
