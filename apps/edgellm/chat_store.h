// /save FILE and /load FILE in `edgellm chat`: a conversation on disk.
//
//   FILE     the conversation, JSON: {"messages": [...], "edgellm_chat":
//            {"version": 1, "kv_tokens": [...]}}. The messages are what
//            /load continues from (the same file works as
//            `edgellm template --messages FILE`); kv_tokens are the
//            conversation's ids the cache stands for (ChatConversation::logical).
//   FILE.kv  the KV cache (runtime/session_file.h), so /load need not
//            prefill the conversation again. Optional: without it, or when it
//            is for another model or too big for this context, the next turn
//            prefills the conversation instead.
// Both are written crash-safe (a temporary renamed into place).
#pragma once
#include <string>

#include "apps/edgellm/chat_conversation.h"
#include "runtime/session.h"

namespace edgellm::cli {

// Writes FILE (and FILE.kv with with_kv); returns what to tell the user.
// Throws edgellm::Error when a file cannot be written.
std::string save_chat(const std::string& path, Session& s, const ChatConversation& c, bool with_kv);

// Replaces c's conversation with FILE's and s's cache with FILE.kv's; returns
// what to tell the user. Throws edgellm::Error, changing nothing, when FILE
// cannot be read as a conversation.
std::string load_chat(const std::string& path, Session& s, ChatConversation& c);

}  // namespace edgellm::cli
