// What the user types into `edgellm chat`, one message or command at a time.
//
// On a terminal (stdin and stdout both terminals, and built with libedit):
// line editing and history (Up/Down recall earlier lines), Ctrl-C clears the
// line (twice at an empty prompt: quit), Ctrl-D at an empty prompt quits.
// Anywhere else (a pipe, a file): plain lines from stdin, as before.
//
// Both read the same multi-line forms: a line ending in `\` continues on the
// next line, and the lines between `/multi` and `/end` are taken as they are
// (a trailing `\` there stays). The lines of one message are joined with
// '\n'. End of input inside either form sends what was typed.
#pragma once
#include <memory>
#include <optional>
#include <string>

namespace edgellm::cli {

class ChatInput {
 public:
  // terminal: edit lines with libedit (when built with it); color: colour the prompt.
  ChatInput(bool terminal, bool color);
  ~ChatInput();
  ChatInput(const ChatInput&) = delete;
  ChatInput& operator=(const ChatInput&) = delete;

  // The next message or command, its lines joined with '\n' ("" for an empty
  // line); nullopt when the user is done (end of input, Ctrl-D at an empty
  // prompt, Ctrl-C twice at an empty prompt).
  std::optional<std::string> next();

  // Whether lines come through libedit (a terminal, and built with it).
  bool editing() const;

  struct Source;  // one line at a time (libedit, or plain stdin)

 private:
  std::unique_ptr<Source> src_;
};

// Whether this build has libedit (line editing on a terminal).
bool chat_line_editing_built();

// Ctrl-C while a reply streams (terminal only): SIGINT just sets a flag that
// the token loop reads, so the reply stops at the next token and the chat
// returns to the prompt. While a line is edited, Ctrl-C is a key instead
// (libedit; see chat_input.cpp), so it never reaches this.
void catch_reply_interrupts();
void clear_reply_interrupt();
bool reply_interrupted();

}  // namespace edgellm::cli
