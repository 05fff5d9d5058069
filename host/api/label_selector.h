// Label selectors in kubectl's string syntax ("app=web,tier!=db,env in (a,b),!legacy"), parsed
// into requirements and matched against label sets with the API server's semantics: every
// requirement must hold; != and notin also match objects without the key.
//
//   LabelSelector s = ParseLabelSelector("app=web,env in (prod,staging)");   // throws
//   if (s.Matches(pod.labels())) ...
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "host/model/labels.h"

namespace schedhost::api {

// SelectorError is selector text that does not parse; what() says where and why.
class SelectorError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// LabelSelector is a parsed selector; the empty selector matches everything.
class LabelSelector {
 public:
  // Matches tells whether `labels` (sorted by key) satisfy every requirement.
  bool Matches(const model::Labels& labels) const;
  // empty is true when the selector has no requirement.
  bool empty() const { return requirements_.empty(); }

 private:
  friend LabelSelector ParseLabelSelector(std::string_view text);
  std::vector<model::SelectorRequirement> requirements_;
};

// ParseLabelSelector parses kubectl's selector syntax: `k=v`, `k==v`, `k!=v`, `k in (v1,v2)`,
// `k notin (v1,v2)`, `k` (exists) and `!k` (does not exist), comma separated; keys and values
// must be valid label keys and values. Throws SelectorError.
LabelSelector ParseLabelSelector(std::string_view text);

}  // namespace schedhost::api
