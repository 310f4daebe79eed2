// One turn of `edgellm chat`: the user's message in, the reply streamed out,
// and the turn line (timings, what the context policy did) on stderr.
//
// The KV cache lives across turns: each turn renders the whole conversation
// and feeds only what the cache lacks (runtime/chat_prompt.h). When the
// context is full the chat never ends and never loses the conversation:
//   turns (default)  the oldest whole turns after the system prompt are
//                    dropped and the rest rendered again, before the turn or
//                    in the middle of the reply (which then goes on after
//                    the re-rendered conversation and the partial reply);
//                    a reply that fills the context on its own ends there;
//   stop             the message that does not fit is refused;
//   shift, window    the cache drops tokens itself (runtime/context_policy.h).
// A message too long for the context on its own is refused, with its size,
// whatever the policy.
#pragma once
#include <cstdint>
#include <string>

#include "apps/edgellm/chat_conversation.h"
#include "apps/edgellm/chat_style.h"
#include "runtime/generate.h"
#include "runtime/sampler.h"
#include "runtime/session.h"

namespace edgellm::cli {

struct ChatRun {
  Session& session;
  Sampler& sampler;
  ChatConversation& conv;
  GenerateParams gp;             // n_predict, stop ids, the token-level policy, on_event
  bool drop_turns = true;        // --ctx-overflow turns
  bool interruptible = false;    // a terminal: Ctrl-C stops the reply
  bool dump_kv = false;          // --dump-kv-tokens
  std::string session_file;      // --session: saved after each turn
  ChatStyle style;
  std::string turn_events;       // filled by gp.on_event during a turn
  int turn = 0;
};

// Runs one turn for the user's text. Problems with this message (too long,
// the template refused it) are one line on stderr and leave the conversation
// as it was; only a dead stdout ends the chat (edgellm::Error).
void run_turn(ChatRun& r, const std::string& text);

}  // namespace edgellm::cli
