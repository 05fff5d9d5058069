// PromoteShadowText: a config file's text with a shadow profile made live. The live profile's
// [[profile]] block is replaced by the shadow's, as written (comments and layout kept), with
// the live name and without shadow_of; the shadow's own block is gone. Admin.PromoteShadow
// writes the result over the config file and reloads it.
//
//   std::string next = PromoteShadowText(text, "/etc/schedhost/config.toml", "default-next");
#pragma once

#include <string>
#include <string_view>

namespace schedhost::config {

/// PromoteShadowText returns `text` (the config file named `source`) with shadow profile
/// `shadow` promoted over the profile it shadows. Throws ConfigError when the text does not
/// parse, has no shadow profile of that name, or writes its profiles in a form this edit does
/// not rewrite (a profile as an inline table, or `name` / `shadow_of` sharing a line with
/// another key): edit the file by hand then.
std::string PromoteShadowText(std::string_view text, std::string_view source,
                              std::string_view shadow);

}  // namespace schedhost::config
