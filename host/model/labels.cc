#include "host/model/labels.h"

#include <algorithm>

namespace schedhost::model {

void NormalizeLabels(Labels& labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Keep the last pair of each run of equal keys.
  Labels out;
  out.reserve(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i + 1 < labels.size() && labels[i + 1].first == labels[i].first) continue;
    out.push_back(std::move(labels[i]));
  }
  labels = std::move(out);
}

const std::string* FindLabel(const Labels& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& pair, std::string_view k) { return pair.first < k; });
  if (it == labels.end() || it->first != key) return nullptr;
  return &it->second;
}

}  // namespace schedhost::model
