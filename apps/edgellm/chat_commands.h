// The slash commands of `edgellm chat` (on a terminal and over a pipe alike):
// /help, /reset, /save FILE, /load FILE, /exit. A line starting with one `/`
// is a command and never goes to the model; an unknown one is refused with a
// hint. `//text` sends "/text" as a message. (/multi ... /end is read by
// ChatInput: it makes one message of several lines.)
#pragma once
#include <string>

#include "apps/edgellm/chat_turn.h"

namespace edgellm::cli {

enum class ChatCommand {
  None,  // not a command: a message for the model (with `//` made `/`)
  Done,  // a command ran (or was refused); read the next line
  Exit,  // /exit
};

// Runs `line` if it is a command; otherwise returns None and sets *message
// to what to send to the model.
ChatCommand run_chat_command(ChatRun& r, const std::string& line, bool kv_private, std::string* message);

}  // namespace edgellm::cli
