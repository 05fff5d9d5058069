// Internal: a small YAML document tree built from yaml-cpp's event parser one document at a
// time, so that size limits (nodes and scalar bytes, counting alias expansions) are enforced
// while parsing, map keys keep their order and duplicates, and quoted scalars stay strings.
#pragma once

#include <cstddef>
#include <deque>
#include <istream>
#include <memory>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace YAML {
class Parser;
}

namespace schedhost::model::internal {

// YamlNode is one node; aliases share the node they refer to.
struct YamlNode {
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  bool quoted = false;  // A quoted or !!str scalar: always a string, never a number or bool.
  int line = 0;         // 1-based.
  std::string scalar;
  std::vector<const YamlNode*> items;                                // kSequence
  std::vector<std::pair<const YamlNode*, const YamlNode*>> entries;  // kMap, in input order
};

// YamlDocument owns the nodes of one document.
struct YamlDocument {
  std::deque<YamlNode> nodes;
  const YamlNode* root = nullptr;
  int line = 0;  // 1-based line where the document starts.
};

// YamlError is a syntax error or an exceeded limit, with the 1-based line when known.
struct YamlError : std::runtime_error {
  YamlError(const std::string& what, int line) : std::runtime_error(what), line(line) {}
  int line;
};

// YamlStream parses documents from `text` (which must outlive it) one by one.
class YamlStream {
 public:
  YamlStream(std::string_view text, size_t max_nodes, size_t max_scalar_bytes);
  ~YamlStream();

  // Next parses the next document into *doc; false at the end; throws YamlError.
  bool Next(YamlDocument* doc);

 private:
  struct ViewBuffer : std::streambuf {
    explicit ViewBuffer(std::string_view text);
  };
  ViewBuffer buffer_;
  std::istream stream_;
  std::unique_ptr<YAML::Parser> parser_;
  size_t max_nodes_;
  size_t max_scalar_bytes_;
};

}  // namespace schedhost::model::internal
