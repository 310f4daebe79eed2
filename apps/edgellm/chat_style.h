// Colours for `edgellm chat`: a coloured prompt and dim timings, only when
// the output is a terminal and NO_COLOR (https://no-color.org) is not set,
// so pipes and logs always get plain text.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace edgellm::cli {

struct ChatStyle {
  bool out = false;  // colour what goes to stdout (the prompt)
  bool err = false;  // colour what goes to stderr (timings, notes)

  // terminal: the chat reads from a terminal and writes to one.
  static ChatStyle detect(bool terminal) {
    const char* term = std::getenv("TERM");
    const bool ok = terminal && std::getenv("NO_COLOR") == nullptr && !(term && std::strcmp(term, "dumb") == 0);
    return ChatStyle{ok, ok && isatty(STDERR_FILENO) != 0};
  }

  // A stderr line (timings, notes) dimmed, or as it is.
  std::string dim(const std::string& s) const { return err ? "\033[2m" + s + "\033[0m" : s; }
};

}  // namespace edgellm::cli
