#include "host/model/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <unordered_map>

namespace schedhost::model::internal {
namespace {

using Kind = YamlNode::Kind;

int LineOf(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 0; }

// Builder turns parser events into a YamlDocument, counting nodes and scalar bytes as they
// would be after expanding aliases.
class Builder : public YAML::EventHandler {
 public:
  Builder(YamlDocument* doc, size_t max_nodes, size_t max_scalar_bytes)
      : doc_(doc), max_nodes_(max_nodes), max_scalar_bytes_(max_scalar_bytes) {}

  void OnDocumentStart(const YAML::Mark& mark) override { doc_->line = LineOf(mark); }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YamlNode* node = New(Kind::kNull, mark, 0);
    Remember(anchor, node, 1, 0);
    Attach(node);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw YamlError("alias to an unknown anchor", LineOf(mark));
    if (!it->second.complete) {
      throw YamlError("alias refers to an enclosing node (recursive alias)", LineOf(mark));
    }
    Count(it->second.nodes, it->second.bytes, mark);
    Attach(it->second.node);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YamlNode* node = New(Kind::kScalar, mark, value.size());
    node->scalar = value;
    node->quoted = tag == "!" || tag == "tag:yaml.org,2002:str";
    Remember(anchor, node, 1, value.size());
    Attach(node);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(New(Kind::kSequence, mark, 0), anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(New(Kind::kMap, mark, 0), anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    YamlNode* node;
    YAML::anchor_t anchor;
    size_t start_nodes;
    size_t start_bytes;
    const YamlNode* pending_key = nullptr;
  };
  struct Anchor {
    const YamlNode* node;
    size_t nodes;
    size_t bytes;
    bool complete;
  };

  void Count(size_t nodes, size_t bytes, const YAML::Mark& mark) {
    nodes_ += nodes;
    bytes_ += bytes;
    if (nodes_ > max_nodes_) {
      throw YamlError("document too large: more than " + std::to_string(max_nodes_) +
                          " YAML nodes (counting alias expansions)",
                      LineOf(mark));
    }
    if (bytes_ > max_scalar_bytes_) {
      throw YamlError("document too large: more than " + std::to_string(max_scalar_bytes_) +
                          " bytes of scalar text (counting alias expansions)",
                      LineOf(mark));
    }
  }

  YamlNode* New(Kind kind, const YAML::Mark& mark, size_t bytes) {
    Count(1, bytes, mark);
    YamlNode& node = doc_->nodes.emplace_back();
    node.kind = kind;
    node.line = LineOf(mark);
    return &node;
  }

  void Remember(YAML::anchor_t anchor, const YamlNode* node, size_t nodes, size_t bytes) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchor{node, nodes, bytes, true};
  }

  void Attach(const YamlNode* node) {
    if (stack_.empty()) {
      doc_->root = node;
      return;
    }
    Frame& top = stack_.back();
    if (top.node->kind == Kind::kSequence) {
      top.node->items.push_back(node);
    } else if (top.pending_key == nullptr) {
      top.pending_key = node;
    } else {
      top.node->entries.emplace_back(top.pending_key, node);
      top.pending_key = nullptr;
    }
  }

  void Open(YamlNode* node, YAML::anchor_t anchor) {
    Attach(node);
    // The node count includes the container itself.
    stack_.push_back(Frame{node, anchor, nodes_ - 1, bytes_});
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchor{node, 0, 0, false};
  }

  void Close() {
    if (stack_.empty()) return;
    Frame frame = stack_.back();
    stack_.pop_back();
    if (frame.anchor != YAML::NullAnchor) {
      anchors_[frame.anchor] =
          Anchor{frame.node, nodes_ - frame.start_nodes, bytes_ - frame.start_bytes, true};
    }
  }

  YamlDocument* doc_;
  size_t max_nodes_;
  size_t max_scalar_bytes_;
  size_t nodes_ = 0;
  size_t bytes_ = 0;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchor> anchors_;
};

}  // namespace

YamlStream::ViewBuffer::ViewBuffer(std::string_view text) {
  // The buffer is only ever read; streambuf's interface just lacks a const flavour.
  char* begin = const_cast<char*>(text.data());
  setg(begin, begin, begin + text.size());
}

YamlStream::YamlStream(std::string_view text, size_t max_nodes, size_t max_scalar_bytes)
    : buffer_(text),
      stream_(&buffer_),
      parser_(std::make_unique<YAML::Parser>(stream_)),
      max_nodes_(max_nodes),
      max_scalar_bytes_(max_scalar_bytes) {}

YamlStream::~YamlStream() = default;

bool YamlStream::Next(YamlDocument* doc) {
  doc->nodes.clear();
  doc->root = nullptr;
  doc->line = 0;
  Builder builder(doc, max_nodes_, max_scalar_bytes_);
  try {
    return parser_->HandleNextDocument(builder);
  } catch (const YAML::Exception& e) {
    throw YamlError("YAML syntax error: " + e.msg, LineOf(e.mark));
  }
}

}  // namespace schedhost::model::internal
