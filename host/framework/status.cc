#include "host/framework/status.h"

#include <array>
#include <cstring>
#include <mutex>
#include <ostream>
#include <shared_mutex>
#include <unordered_set>

namespace schedhost::framework {
namespace {

// TextPool holds the interned texts for the process's life. It stops taking new texts at
// kMaxTexts or kMaxBytes: a plugin wording every rejection differently gets owned copies then,
// and the texts already pooled (the usual reasons, seen first) stay shared.
class TextPool {
 public:
  static constexpr size_t kMaxTexts = 4096;
  static constexpr size_t kMaxBytes = size_t{1} << 20;

  static TextPool& Get() {
    static auto* pool = new TextPool();  // never destroyed: texts may outlive static destructors
    return *pool;
  }

  // Find returns the pooled string equal to `s`, adding it if there is room; null when full.
  const std::string* Find(std::string_view s) {
    {
      std::shared_lock lock(mu_);
      if (auto it = texts_.find(s); it != texts_.end()) return &*it;
    }
    std::unique_lock lock(mu_);
    if (auto it = texts_.find(s); it != texts_.end()) return &*it;
    if (texts_.size() >= kMaxTexts || bytes_ + s.size() > kMaxBytes) return nullptr;
    bytes_ += s.size();
    return &*texts_.emplace(s).first;  // nodes never move: the address is stable
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::shared_mutex mu_;
  std::unordered_set<std::string, Hash, std::equal_to<>> texts_;
  size_t bytes_ = 0;
};

// Recent is a thread's last few interned texts, so the same reason over and over (one per
// rejected node) is found without the pool's lock.
struct Recent {
  std::array<const std::string*, 8> slots{};
  size_t next = 0;

  const std::string* Find(std::string_view s) const noexcept {
    for (const std::string* t : slots) {
      // Intern never looks up "": s.data() is not null here.
      if (t != nullptr && t->size() == s.size() && std::memcmp(t->data(), s.data(), s.size()) == 0) {
        return t;
      }
    }
    return nullptr;
  }
  void Add(const std::string* t) noexcept { slots[next++ % slots.size()] = t; }
};

}  // namespace

const std::string& Text::Empty() noexcept {
  static const std::string empty;  // holds no memory, so it is safe to use during exit too
  return empty;
}

Text::Text(std::string s) : p_(std::make_shared<const std::string>(std::move(s))) {}

Text Text::Intern(std::string_view s) {
  if (s.empty()) return Text();
  thread_local Recent recent;
  const std::string* t = recent.Find(s);
  if (t == nullptr) {
    t = TextPool::Get().Find(s);
    if (t == nullptr) return Text(std::string(s));
    recent.Add(t);
  }
  return Text(std::shared_ptr<const std::string>(std::shared_ptr<const std::string>(), t));
}

std::string operator+(const std::string& a, const Text& b) { return a + b.str(); }
std::string operator+(const char* a, const Text& b) { return a + b.str(); }
std::string operator+(const Text& a, const char* b) { return a.str() + b; }
std::ostream& operator<<(std::ostream& os, const Text& t) { return os << t.str(); }

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kSuccess: return "Success";
    case Code::kError: return "Error";
    case Code::kUnschedulable: return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable: return "UnschedulableAndUnresolvable";
    case Code::kWait: return "Wait";
    case Code::kSkip: return "Skip";
    case Code::kPending: return "Pending";
  }
  return "Error";
}

Code CodeFromAbi(int32_t value) {
  if (value < SCHEDHOST_SUCCESS || value > SCHEDHOST_PENDING) return Code::kError;
  return static_cast<Code>(value);
}

std::string Status::Message() const {
  std::string out;
  for (const auto& r : reasons) {
    if (!out.empty()) out += ", ";
    out += r.str();
  }
  return out;
}

Status ToStatus(int32_t raw, StatusSink& sink, const Text& plugin) {
  Status s;
  s.code = CodeFromAbi(raw);
  s.reasons = std::move(sink.reasons);
  sink.reasons.clear();
  if (raw < SCHEDHOST_SUCCESS || raw > SCHEDHOST_PENDING) {
    s.reasons.insert(s.reasons.begin(),
                     Text("plugin returned unknown status code " + std::to_string(raw)));
  }
  if (s.code != Code::kSuccess) {
    s.plugin = plugin;
    if (s.reasons.empty() && s.code != Code::kSkip && s.code != Code::kWait) {
      s.reasons.push_back(
          Text::Intern("plugin " + plugin.str() + " returned " + std::string(CodeName(s.code))));
    }
  }
  return s;
}

}  // namespace schedhost::framework
