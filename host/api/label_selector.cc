// ParseLabelSelector: a small hand-written scanner for kubectl's selector syntax, following
// apimachinery's labels.Parse (same operators, same validation of keys and values).
#include "host/api/label_selector.h"

#include <algorithm>
#include <cctype>

#include "host/model/validation.h"

namespace schedhost::api {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  bool Consume(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_).starts_with(token)) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  // Word reads a run of characters that may appear in label keys and values.
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == '/') {
        ++pos_;
      } else {
        break;
      }
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  // Keyword consumes `word` when it stands alone ("in", "notin").
  bool Keyword(std::string_view word) {
    SkipSpace();
    size_t save = pos_;
    if (Word() == word) return true;
    pos_ = save;
    return false;
  }
  [[noreturn]] void Fail(const std::string& why) const {
    throw SelectorError("label selector \"" + std::string(text_) + "\": at offset " +
                        std::to_string(pos_) + ": " + why);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

std::string Key(Scanner& s) {
  std::string key = s.Word();
  if (key.empty()) s.Fail("expected a label key");
  if (auto why = model::CheckQualifiedName(key)) s.Fail("invalid key \"" + key + "\": " + *why);
  return key;
}

std::string Value(Scanner& s) {
  std::string value = s.Word();
  if (auto why = model::CheckLabelValue(value)) {
    s.Fail("invalid value \"" + value + "\": " + *why);
  }
  return value;
}

std::vector<std::string> ValueSet(Scanner& s) {
  if (!s.Consume("(")) s.Fail("expected '(' to open a value set");
  std::vector<std::string> values;
  if (s.Consume(")")) s.Fail("a value set needs at least one value");
  do {
    values.push_back(Value(s));
  } while (s.Consume(","));
  if (!s.Consume(")")) s.Fail("expected ',' or ')' in a value set");
  return values;
}

}  // namespace

LabelSelector ParseLabelSelector(std::string_view text) {
  LabelSelector selector;
  Scanner s(text);
  if (s.AtEnd()) return selector;
  do {
    model::SelectorRequirement r;
    if (s.Consume("!")) {
      r.key = Key(s);
      r.op = model::SelectorOp::kDoesNotExist;
    } else {
      r.key = Key(s);
      if (s.Consume("!=")) {
        r.op = model::SelectorOp::kNotIn;
        r.values = {Value(s)};
      } else if (s.Consume("==") || s.Consume("=")) {
        r.op = model::SelectorOp::kIn;
        r.values = {Value(s)};
      } else if (s.Keyword("notin")) {
        r.op = model::SelectorOp::kNotIn;
        r.values = ValueSet(s);
      } else if (s.Keyword("in")) {
        r.op = model::SelectorOp::kIn;
        r.values = ValueSet(s);
      } else {
        r.op = model::SelectorOp::kExists;
      }
    }
    selector.requirements_.push_back(std::move(r));
    if (s.AtEnd()) break;
    if (!s.Consume(",")) s.Fail("expected ',' between requirements");
  } while (true);
  return selector;
}

bool LabelSelector::Matches(const model::Labels& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const model::SelectorRequirement& r) {
                       const std::string* value = model::FindLabel(labels, r.key);
                       bool in = value != nullptr &&
                                 std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
                       switch (r.op) {
                         case model::SelectorOp::kIn: return in;
                         case model::SelectorOp::kNotIn: return !in;
                         case model::SelectorOp::kExists: return value != nullptr;
                         case model::SelectorOp::kDoesNotExist: return value == nullptr;
                         default: return false;  // Gt / Lt are node-selector only
                       }
                     });
}

}  // namespace schedhost::api
