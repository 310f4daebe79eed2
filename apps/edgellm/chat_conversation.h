// The conversation `edgellm chat` keeps: its messages, how they render to
// token ids, and what the KV cache stands for. When the context fills, the
// default overflow policy (--ctx-overflow turns) drops the oldest whole turns
// (a user message and the reply to it) after the system prompt and renders
// the rest again, so the model always sees a well-formed conversation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/chat_prompt.h"
#include "template/json.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::cli {

tmpl::Json chat_message(const std::string& role, const std::string& content);

struct ChatConversation {
  const Tokenizer& tok;
  std::string template_text;
  ChatPromptOptions opt;
  std::string system;  // --system ("": none); what /reset starts from

  std::vector<tmpl::Json> messages;  // the system prompt (if any) first, then the turns
  // The conversation's ids that the cache's positions stand for: the last
  // prompt and its reply. Equal to the cache's ids unless a token-level
  // policy (shift, window) dropped some; then the cache is this with one
  // run removed, and the next turn is matched against this (plan_prefill).
  std::vector<int32_t> logical;

  // Back to the system prompt alone (the caller empties the cache).
  void reset();
  // The whole conversation with the assistant's header after it (throws
  // edgellm::Error for template and tokenizer errors).
  ChatPrompt render() const;
  // The system prompt and the last message alone: whether that message can
  // fit the context at all.
  ChatPrompt render_last_alone() const;
  // Removes the oldest turn after the system prompt: its user message and
  // everything up to the next user message. False when only the last turn
  // is left (it is never dropped).
  bool drop_oldest_turn();
};

// What dropping turns did, for the turn line.
struct DroppedTurns {
  int turns = 0;
  int64_t tokens = 0;
  std::string say() const;  // "dropped 2 oldest turns: 180 tokens"
};

// Drops the oldest turns of c until *prompt (re-rendered after each drop)
// plus `tail` more ids is at most `limit` ids, or only the last turn is left.
DroppedTurns drop_turns_to_fit(ChatConversation& c, ChatPrompt* prompt, size_t tail, size_t limit);

}  // namespace edgellm::cli
