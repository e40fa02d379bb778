// What a JSON reader's error says, for a user: nlohmann's exception text without its internal
// tag ("[json.exception.parse_error.101] parse error at line 1, column 3: ..." becomes
// "parse error at line 1, column 3: ..."), cut to a readable length.
#pragma once

#include <string>
#include <string_view>

#include "common/shortened.h"

namespace nbox {

inline std::string JsonErrorText(std::string_view what) {
  if (what.rfind("[json.exception.", 0) == 0) {
    const size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return Shortened(what, 200);
}

}  // namespace nbox
