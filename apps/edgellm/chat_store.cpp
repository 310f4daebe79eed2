#include "apps/edgellm/chat_store.h"

#include <sys/stat.h>

#include <cmath>

#include "base/error.h"
#include "base/file_util.h"
#include "base/input_file.h"
#include "runtime/session_file.h"
#include "template/chat.h"

namespace edgellm::cli {

namespace {

constexpr double kVersion = 1;

// Whether anything is at p (never opening it: a FIFO must not block);
// load_session then refuses what is not a session file.
bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// kv_tokens as ids, or empty when it is missing or not a list of valid ids
// (it only makes the cache reusable; the messages are what counts).
std::vector<int32_t> kv_tokens(const tmpl::Json& extra, int64_t n_vocab) {
  const tmpl::Json* meta = extra.find("edgellm_chat");
  const tmpl::Json* ids = meta && meta->is_object() ? meta->find("kv_tokens") : nullptr;
  std::vector<int32_t> out;
  if (!ids || !ids->is_array()) return out;
  for (const tmpl::Json& x : ids->items()) {
    const double v = x.is_number() ? x.as_number() : -1;
    if (v < 0 || v >= double(n_vocab) || v != std::floor(v)) return {};
    out.push_back(int32_t(v));
  }
  return out;
}

}  // namespace

std::string save_chat(const std::string& path, Session& s, const ChatConversation& c, bool with_kv) {
  if (path.empty()) fail("/save: give a file name (/save FILE)");
  if (with_kv) save_session(s, path + ".kv");
  std::vector<tmpl::Json> ids;
  ids.reserve(c.logical.size());
  for (int32_t id : c.logical) ids.push_back(tmpl::Json::number(id));
  const tmpl::Json meta = tmpl::Json::object(
      {{"version", tmpl::Json::number(kVersion)}, {"kv_tokens", tmpl::Json::array(std::move(ids))}});
  const std::string text =
      tmpl::Json::object({{"messages", tmpl::Json::array(c.messages)}, {"edgellm_chat", meta}}).dump() + "\n";
  write_file_atomic(path, text.data(), text.size());
  return "(saved " + std::to_string(c.messages.size()) + " messages to " + path +
         (with_kv ? " and the KV cache (" + std::to_string(s.n_past()) + " tokens) to " + path + ".kv"
                  : " (--session-private: the KV cache stays in memory)") +
         ")";
}

std::string load_chat(const std::string& path, Session& s, ChatConversation& c) {
  if (path.empty()) fail("/load: give a file name (/load FILE)");
  // Everything about FILE is checked before anything changes.
  const tmpl::Conversation conv = tmpl::parse_conversation(read_input_file(path, "/load", false), path);
  std::vector<int32_t> logical = kv_tokens(conv.extra, s.model().hparams().n_vocab);

  c.messages = conv.messages.items();
  std::string kv_note;
  const std::string kv = path + ".kv";
  if (!exists(kv)) {
    s.truncate(0);
    kv_note = "no KV cache file " + kv + ": the next turn prefills the conversation";
  } else {
    try {
      load_session(s, kv);
      kv_note = "KV cache of " + std::to_string(s.n_past()) + " tokens restored from " + kv;
    } catch (const Error& e) {  // the cache is empty now; the conversation is what matters
      kv_note = std::string("KV cache not restored (") + e.what() + "): the next turn prefills the conversation";
    }
  }
  // kv_tokens only stand for the cache if the cache is them with at most one
  // run dropped (shift, window); else the cache's own ids are all we know.
  if (logical.empty() || !find_dropped_run(s.tokens(), logical)) logical = s.tokens();
  c.logical = std::move(logical);
  return "(loaded " + std::to_string(c.messages.size()) + " messages from " + path + "; " + kv_note + ")";
}

}  // namespace edgellm::cli
