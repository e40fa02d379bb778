// Input echoed back in an error message, cut to a readable length: a bad 2 MB token must not
// become a 2 MB message.
#pragma once

#include <string>
#include <string_view>

namespace nbox {

// `text` itself up to `limit` characters, else its first `limit` characters followed by
// "... (N bytes)".
inline std::string Shortened(std::string_view text, size_t limit = 40) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace nbox
