#include "host/framework/status.h"

namespace schedhost::framework {

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
    out += r;
  }
  return out;
}

Status ToStatus(int32_t raw, StatusSink& sink, std::string_view plugin) {
  Status s;
  s.code = CodeFromAbi(raw);
  s.reasons = std::move(sink.reasons);
  sink.reasons.clear();
  if (raw < SCHEDHOST_SUCCESS || raw > SCHEDHOST_PENDING) {
    s.reasons.insert(s.reasons.begin(), "plugin returned unknown status code " + std::to_string(raw));
  }
  if (s.code != Code::kSuccess) {
    s.plugin = std::string(plugin);
    if (s.reasons.empty() && s.code != Code::kSkip && s.code != Code::kWait) {
      s.reasons.push_back("plugin " + std::string(plugin) + " returned " + std::string(CodeName(s.code)));
    }
  }
  return s;
}

}  // namespace schedhost::framework
