// Where a config value came from, and the error thrown when a config is wrong.
//
// Every problem found while reading or expanding a config is reported as one ConfigError whose
// what() reads "file:line:col: message", so an operator can jump straight to the offending
// entry. A location whose line is 0 is not known more precisely than its file.
#pragma once

#include <stdexcept>
#include <string>

namespace schedhost::config {

// SourceLocation is a position in a config file; line and column are 1-based, 0 when unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  // ToString returns "file:line:col", or just "file" when the line is not known.
  std::string ToString() const;

  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

// ConfigError is a config that cannot be used; what() is "file:line:col: message".
class ConfigError : public std::runtime_error {
 public:
  // ConfigError builds the error for `message` at `where`.
  ConfigError(const SourceLocation& where, const std::string& message);

  // file is the config file (as named by the caller) the error is in.
  std::string file;
  // line is the 1-based line of the offending entry, 0 when unknown.
  int line = 0;
  // column is the 1-based column of the offending entry, 0 when unknown.
  int column = 0;
  // message says what is wrong and how to fix it, without the location prefix.
  std::string message;
};

}  // namespace schedhost::config
