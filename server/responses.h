// OpenAI's response shapes: chat.completion and its chunks, text_completion
// and its chunks, usage, and both log-probability layouts (chat's
// {"content": [{token, logprob, bytes, top_logprobs}]} and the legacy
// completions' {tokens, token_logprobs, top_logprobs, text_offset}).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "server/completion.h"

namespace edgellm::server {

struct ResponseIds {
  std::string id;     // chatcmpl-... / cmpl-...
  int64_t created = 0;
  std::string model;
  std::string fingerprint;  // system_fingerprint: the build
};

nlohmann::json usage_json(const CompletionResult& r);
nlohmann::json chat_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprob> lps);
nlohmann::json completion_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprob> lps, size_t text_offset);

nlohmann::json chat_response(const ResponseIds& ids, const CompletionResult& r, const Tokenizer& tok, bool logprobs);
nlohmann::json text_response(const ResponseIds& ids, const CompletionResult& r, const Tokenizer& tok, bool logprobs,
                             const std::vector<int32_t>& prompt, size_t text_offset, bool with_prompt);

// One streamed chunk: a delta of text (role on the first), or the final one
// with finish_reason; usage null unless include_usage asked for the last.
nlohmann::json chat_chunk(const ResponseIds& ids, const nlohmann::json& delta, const nlohmann::json& logprobs,
                          const nlohmann::json& finish_reason, bool include_usage);
nlohmann::json text_chunk(const ResponseIds& ids, const std::string& text, const nlohmann::json& logprobs,
                          const nlohmann::json& finish_reason, bool include_usage);
nlohmann::json usage_chunk(const ResponseIds& ids, bool chat, const CompletionResult& r);

// JSON text for the wire: invalid UTF-8 (a byte token's piece) replaced by
// U+FFFD instead of throwing.
std::string dump(const nlohmann::json& j);

}  // namespace edgellm::server
