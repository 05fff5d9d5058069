#include "host/config/config_error.h"

namespace schedhost::config {

std::string SourceLocation::ToString() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

ConfigError::ConfigError(const SourceLocation& where, const std::string& message)
    : std::runtime_error(where.ToString().empty() ? message : where.ToString() + ": " + message),
      file(where.file),
      line(where.line),
      column(where.column),
      message(message) {}

}  // namespace schedhost::config
