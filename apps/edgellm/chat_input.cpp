#include "apps/edgellm/chat_input.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <iostream>

#ifdef EDGELLM_HAVE_LIBEDIT
#include <histedit.h>
#endif

namespace edgellm::cli {

namespace {

std::atomic<bool> g_reply_interrupt{false};
void on_sigint(int) { g_reply_interrupt.store(true, std::memory_order_relaxed); }

// What reading one line gave.
struct Read {
  enum Kind { Line, End, Interrupt } kind = End;
  std::string text;  // Line: the line (no '\n'); Interrupt: what was typed before Ctrl-C
};

}  // namespace

struct ChatInput::Source {
  virtual ~Source() = default;
  // more: a continuation line (after `\`, or inside /multi).
  virtual Read read(bool more) = 0;
  virtual bool editing() const { return false; }
};

namespace {

// Plain lines from stdin: pipes, files, and a terminal when the output is
// redirected (a prompt then still goes to stdout, as it always did).
class PlainSource : public ChatInput::Source {
 public:
  Read read(bool more) override {
    if (prompt_) std::fputs(more ? ".. " : "> ", stdout), std::fflush(stdout);
    Read r;
    if (!std::getline(std::cin, r.text)) return Read{};
    r.kind = Read::Line;
    return r;
  }

 private:
  const bool prompt_ = isatty(STDIN_FILENO) != 0;
};

#ifdef EDGELLM_HAVE_LIBEDIT
// libedit (BSD-licensed): emacs key bindings, history for Up/Down, and the
// user's ~/.editrc. While a line is edited the terminal's ISIG is off, so
// Ctrl-C arrives as a key, bound to on_ctrl_c: it ends the read and next()
// decides (clear the line; quit when pressed twice at an empty prompt).
// Between reads the terminal is as it was, so Ctrl-C during a reply is
// SIGINT (catch_reply_interrupts).
class EditSource : public ChatInput::Source {
 public:
  EditSource(EditLine* el, bool color) : el_(el), color_(color) {
    HistEvent ev;
    hist_ = history_init();
    history(hist_, &ev, H_SETSIZE, 1000);
    history(hist_, &ev, H_SETUNIQUE, 1);
    el_set(el_, EL_CLIENTDATA, this);
    el_set(el_, EL_EDITOR, "emacs");
    el_set(el_, EL_SIGNAL, 1);  // put the terminal back on SIGTERM, SIGHUP, ...; follow SIGWINCH
    el_set(el_, EL_HIST, history, hist_);
    el_set(el_, EL_PROMPT_ESC, &EditSource::prompt, '\1');
    el_source(el_, nullptr);
    el_set(el_, EL_SETTY, "-d", "-isig", nullptr);
    // The wide form: the narrow el_set copies these two strings and never frees them.
    el_wset(el_, EL_ADDFN, L"edgellm-interrupt", L"clear the line; twice at an empty prompt: quit", &on_ctrl_c);
    el_set(el_, EL_BIND, "^C", "edgellm-interrupt", nullptr);
  }
  ~EditSource() override {
    el_end(el_);
    history_end(hist_);
  }
  bool editing() const override { return true; }

  Read read(bool more) override {
    const char* p = more ? ".." : ">";
    // The colour ends before the prompt's last space: libedit loses an
    // escape sequence that no visible character follows.
    prompt_ = color_ ? std::string("\1\033[1;32m\1") + p + "\1\033[0m\1 " : std::string(p) + " ";
    interrupted_ = false;
    int n = 0;
    const char* s = el_gets(el_, &n);
    Read r;
    if (interrupted_) {
      std::fputs("^C\n", stdout);
      std::fflush(stdout);
      r.kind = Read::Interrupt;
      r.text = typed_;
      return r;
    }
    if (!s || n <= 0) return Read{};  // Ctrl-D at an empty prompt, or the terminal went away
    r.kind = Read::Line;
    r.text.assign(s, size_t(n));
    if (!r.text.empty() && r.text.back() == '\n') r.text.pop_back();
    if (!r.text.empty()) {
      HistEvent ev;
      history(hist_, &ev, H_ENTER, r.text.c_str());
    }
    return r;
  }

 private:
  static EditSource* self(EditLine* el) {
    void* p = nullptr;
    el_get(el, EL_CLIENTDATA, &p);
    return static_cast<EditSource*>(p);
  }
  static char* prompt(EditLine* el) { return self(el)->prompt_.data(); }
  static unsigned char on_ctrl_c(EditLine* el, int) {
    EditSource* me = self(el);
    const LineInfo* li = el_line(el);
    me->interrupted_ = true;
    me->typed_.assign(li->buffer, size_t(li->lastchar - li->buffer));
    // Rewrite what follows the cursor so "^C" lands after the line, not over it.
    std::fwrite(li->cursor, 1, size_t(li->lastchar - li->cursor), stdout);
    return CC_NEWLINE;
  }

  EditLine* el_;
  History* hist_ = nullptr;
  bool color_;
  std::string prompt_, typed_;
  bool interrupted_ = false;
};
#endif

std::unique_ptr<ChatInput::Source> make_source(bool terminal, bool color) {
#ifdef EDGELLM_HAVE_LIBEDIT
  if (terminal) {
    // Model text is UTF-8: libedit needs a UTF-8 LC_CTYPE to edit it as
    // characters (under "C" it shows bytes as octal escapes).
    const char* loc = std::setlocale(LC_CTYPE, "");
    if (!loc || std::strcmp(loc, "C") == 0 || std::strcmp(loc, "POSIX") == 0) std::setlocale(LC_CTYPE, "C.UTF-8");
    if (EditLine* el = el_init("edgellm", stdin, stdout, stderr)) return std::make_unique<EditSource>(el, color);
  }
#else
  (void)terminal;
  (void)color;
#endif
  return std::make_unique<PlainSource>();
}

}  // namespace

ChatInput::ChatInput(bool terminal, bool color) : src_(make_source(terminal, color)) {}
ChatInput::~ChatInput() = default;
bool ChatInput::editing() const { return src_->editing(); }

std::optional<std::string> ChatInput::next() {
  std::string text;
  bool cont = false;   // the last line ended in `\`
  bool block = false;  // inside /multi ... /end
  bool block_started = false;
  int ctrl_c = 0;      // Ctrl-C presses at an empty prompt in a row
  for (;;) {
    const Read r = src_->read(cont || block);
    if (r.kind == Read::Interrupt) {
      if (cont || block || !r.text.empty()) {  // Ctrl-C drops what is being typed
        text.clear();
        cont = block = block_started = false;
        ctrl_c = 0;
        continue;
      }
      if (++ctrl_c >= 2) return std::nullopt;
      std::fputs("(Ctrl-C again to quit, or /exit)\n", stderr);
      continue;
    }
    if (r.kind == Read::End) {
      if ((cont || block) && !text.empty()) return text;
      return std::nullopt;
    }
    const std::string& line = r.text;
    if (block) {
      if (line == "/end") return text;
      if (block_started) text += '\n';
      text += line;
      block_started = true;
      continue;
    }
    if (!cont && line == "/multi") {
      block = true;
      continue;
    }
    if (!line.empty() && line.back() == '\\') {
      text.append(line, 0, line.size() - 1);
      text += '\n';
      cont = true;
      continue;
    }
    return text + line;
  }
}

bool chat_line_editing_built() {
#ifdef EDGELLM_HAVE_LIBEDIT
  return true;
#else
  return false;
#endif
}

void catch_reply_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a write to stdout interrupted by Ctrl-C goes on
  sigaction(SIGINT, &sa, nullptr);
}
void clear_reply_interrupt() { g_reply_interrupt.store(false, std::memory_order_relaxed); }
bool reply_interrupted() { return g_reply_interrupt.load(std::memory_order_relaxed); }

}  // namespace edgellm::cli
