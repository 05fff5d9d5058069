// `schedctl simulate --html`: the web UI's built pages turned into one file that carries its
// data, for a ticket or a review. The page is the same bundle schedhostd serves; it reads
// globalThis.SCHEDHOST_REPORT instead of the JSON API when that is set.
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include "host/cli/simulate.h"

namespace schedhost::cli {
namespace {

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path.string() +
                             ": the web UI's pages are not built or installed there (build the "
                             "ui target, install the schedhost package, or pass --ui-dir)");
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// ScriptSafe keeps `text` from ending the <script> or <style> element it is inlined in: inside
// JavaScript strings, regular expressions and JSON, "<\/" reads as "</".
std::string ScriptSafe(std::string text, std::string_view tag) {
  const std::string closing = "</" + std::string(tag);
  for (size_t at = text.find(closing); at != std::string::npos; at = text.find(closing, at + 2)) {
    text.insert(at + 1, "\\");
  }
  return text;
}

// Inline replaces the one tag of `html` that `pattern` matches with `replacement`; throws when
// there is not exactly one.
std::string Inline(const std::string& html, const std::regex& pattern,
                   const std::string& replacement, const std::string& what) {
  std::smatch match;
  if (!std::regex_search(html, match, pattern)) {
    throw std::runtime_error("the web UI's index.html has no " + what + " to inline");
  }
  return match.prefix().str() + replacement + match.suffix().str();
}

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

void WriteHtmlReport(const std::filesystem::path& ui_dir, const std::string& title,
                     nlohmann::json report, const std::filesystem::path& path) {
  std::string html = ReadAll(ui_dir / "index.html");
  const std::string css = ReadAll(ui_dir / "app.css");
  const std::string js = ReadAll(ui_dir / "app.js");
  report["title"] = title;
  report["generated_unix_seconds"] = std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count();
  const std::string data =
      report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  static const std::regex kTitle(R"(<title>[^<]*</title>)");
  static const std::regex kStyle(R"(<link[^>]*href="app\.css"[^>]*>)");
  static const std::regex kScript(R"(<script[^>]*src="app\.js"[^>]*>\s*</script>)");
  // The page is searched before the large script and data are in it (the styles are small).
  if (std::smatch m; std::regex_search(html, m, kTitle)) {
    html = m.prefix().str() + "<title>" + EscapeHtml(title) + "</title>" + m.suffix().str();
  }
  html = Inline(html, kStyle, "<style>" + ScriptSafe(css, "style") + "</style>",
                "<link href=\"app.css\">");
  html = Inline(html, kScript,
                "<script>globalThis.SCHEDHOST_REPORT = " + ScriptSafe(data, "script") +
                    ";</script>\n<script>" + ScriptSafe(js, "script") + "</script>",
                "<script src=\"app.js\">");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  out << html;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace schedhost::cli
