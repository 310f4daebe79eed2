#include "apps/edgellm/chat_commands.h"

#include <cstdio>

#include "apps/edgellm/chat_store.h"
#include "base/error.h"

namespace edgellm::cli {

namespace {

const char* kHelp =
    "commands:\n"
    "  /help          this list\n"
    "  /reset         start the conversation over (from the --system prompt)\n"
    "  /save FILE     write the conversation to FILE (JSON) and its KV cache to FILE.kv\n"
    "  /load FILE     continue a conversation written by /save\n"
    "  /multi         the lines up to /end are one message (or end a line with \\ to go on)\n"
    "  /exit          quit (also end of input: Ctrl-D, or Ctrl-C twice at an empty prompt)\n"
    "  //text         send a message that starts with /\n"
    "Ctrl-C during a reply stops it; what was shown stays in the conversation.\n";

void say(const ChatRun& r, const std::string& s) { std::fprintf(stderr, "%s\n", r.style.dim(s).c_str()); }

}  // namespace

ChatCommand run_chat_command(ChatRun& r, const std::string& line, bool kv_private, std::string* message) {
  // A message: not starting with one `/`, or of several lines (/multi, `\`).
  if (line.empty() || line[0] != '/' || line.rfind("//", 0) == 0 || line.find('\n') != std::string::npos) {
    *message = line.rfind("//", 0) == 0 ? line.substr(1) : line;
    return ChatCommand::None;
  }
  // "/save my chat.json": the name is the rest of the line, spaces and all.
  const size_t sp = line.find(' ');
  const std::string name = line.substr(0, sp);
  std::string arg;
  if (sp != std::string::npos && line.find_first_not_of(' ', sp) != std::string::npos)
    arg = line.substr(line.find_first_not_of(' ', sp));
  while (!arg.empty() && (arg.back() == ' ' || arg.back() == '\r')) arg.pop_back();

  if (name == "/exit" || name == "/quit") return ChatCommand::Exit;
  if (name == "/help" || name == "/?") {
    std::fputs(kHelp, stderr);
  } else if (name == "/reset") {
    r.conv.reset();
    r.session.truncate(0);
    say(r, "(conversation reset)");
  } else if (name == "/save" || name == "/load") {
    try {
      say(r, name == "/save" ? save_chat(arg, r.session, r.conv, !kv_private) : load_chat(arg, r.session, r.conv));
    } catch (const Error& e) {  // a bad file or name: one line, the chat goes on as it was
      std::fprintf(stderr, "error: %s\n", e.what());
    }
  } else {
    std::fprintf(stderr, "unknown command %s (not sent to the model); /help lists the commands, //text sends \"/text\"\n",
                 name.c_str());
  }
  return ChatCommand::Done;
}

}  // namespace edgellm::cli
