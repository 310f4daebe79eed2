// One /v1/chat/completions or /v1/completions request, read from its JSON
// body and checked field by field before anything runs: a wrong type, NaN,
// a negative or absurd number is a 400 naming the field (ApiError); unknown
// fields are ignored, as OpenAI's API does; null means "not given".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/sampler.h"
#include "template/json.h"

namespace edgellm::server {

struct RequestLimits {
  int32_t n_vocab = 0;
  int64_t max_tokens_cap = 0;  // --max-tokens-cap; 0: none beyond the context
  size_t max_messages = 100000;
  size_t max_stop = 16, max_stop_bytes = 1024;
};

struct CompletionRequest {
  bool chat = false;
  std::string model;  // as sent ("" when absent)

  // chat: the messages (text parts of array contents joined), for the template
  tmpl::Json messages;
  tmpl::Json template_extra = tmpl::Json::object();  // chat_template_kwargs, tools
  // completions: the prompt as text, or as token ids
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;
  bool echo = false;

  std::optional<int64_t> max_tokens;  // max_tokens / max_completion_tokens
  SamplerParams sampling;
  bool seeded = false;  // "seed" given: same seed, same text
  std::vector<std::string> stop;
  bool stream = false, include_usage = false;
  bool logprobs = false;
  int top_logprobs = 0;  // 0..20
};

// Throws ApiError(400, ...) naming the first bad field.
CompletionRequest parse_completion_request(const nlohmann::json& body, bool chat, const RequestLimits& lim);

// The body as JSON: a 400 for invalid JSON (with where), invalid UTF-8, or a
// nesting deeper than max_depth; an object is required.
nlohmann::json parse_body(const std::string& body, int max_depth = 64);

}  // namespace edgellm::server
