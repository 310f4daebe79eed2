#include "server/responses.h"

namespace edgellm::server {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json usage_json(const CompletionResult& r) {
  return {{"prompt_tokens", r.n_prompt},
          {"completion_tokens", r.n_generated},
          {"total_tokens", r.n_prompt + r.n_generated},
          {"prompt_tokens_details", {{"cached_tokens", r.n_cached}}}};
}

namespace {
json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(int(c));
  return b;
}
}  // namespace

json chat_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprob> lps) {
  json content = json::array();
  for (const TokenLogprob& lp : lps) {
    const std::string piece = tok.token_to_piece(lp.id);
    json top = json::array();
    for (const auto& [id, v] : lp.top) {
      const std::string p = tok.token_to_piece(id);
      top.push_back({{"token", p}, {"logprob", v}, {"bytes", bytes_of(p)}});
    }
    content.push_back({{"token", piece}, {"logprob", lp.logprob}, {"bytes", bytes_of(piece)}, {"top_logprobs", top}});
  }
  return {{"content", content}, {"refusal", nullptr}};
}

json completion_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprob> lps, size_t offset) {
  json tokens = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprob& lp : lps) {
    const std::string piece = tok.token_to_piece(lp.id);
    tokens.push_back(piece);
    values.push_back(lp.logprob);
    json top = json::object();
    for (const auto& [id, v] : lp.top) top[tok.token_to_piece(id)] = v;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += piece.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

namespace {
// The fields every response and chunk starts with.
json envelope(const ResponseIds& ids, const char* object, json choices) {
  return {{"id", ids.id},
          {"object", object},
          {"created", ids.created},
          {"model", ids.model},
          {"system_fingerprint", ids.fingerprint},
          {"choices", std::move(choices)}};
}
}  // namespace

json chat_response(const ResponseIds& ids, const CompletionResult& r, const Tokenizer& tok, bool logprobs) {
  json choice = {{"index", 0},
                 {"message", {{"role", "assistant"}, {"content", r.text}, {"refusal", nullptr}}},
                 {"logprobs", logprobs ? chat_logprobs_json(tok, r.logprobs) : json(nullptr)},
                 {"finish_reason", r.finish_reason}};
  json out = envelope(ids, "chat.completion", json::array({choice}));
  out["usage"] = usage_json(r);
  return out;
}

json text_response(const ResponseIds& ids, const CompletionResult& r, const Tokenizer& tok, bool logprobs,
                   const std::vector<int32_t>& prompt, size_t text_offset, bool with_prompt) {
  json lp = nullptr;
  if (logprobs) {
    // Echo: the prompt's tokens first, the first without a value (nothing
    // precedes it), then the generated ones, as the legacy API lays them out.
    std::vector<TokenLogprob> all;
    size_t offset = text_offset;
    std::string first;
    if (with_prompt && !prompt.empty()) {
      first = tok.token_to_piece(prompt[0]);
      offset += first.size();
      all = r.prompt_logprobs;
    }
    all.insert(all.end(), r.logprobs.begin(), r.logprobs.end());
    lp = completion_logprobs_json(tok, all, offset);
    if (with_prompt && !prompt.empty()) {
      lp["tokens"].insert(lp["tokens"].begin(), first);
      lp["token_logprobs"].insert(lp["token_logprobs"].begin(), nullptr);
      lp["top_logprobs"].insert(lp["top_logprobs"].begin(), nullptr);
      lp["text_offset"].insert(lp["text_offset"].begin(), text_offset);
    }
  }
  json choice = {{"index", 0}, {"text", r.text}, {"logprobs", lp}, {"finish_reason", r.finish_reason}};
  json out = envelope(ids, "text_completion", json::array({choice}));
  out["usage"] = usage_json(r);
  return out;
}

json chat_chunk(const ResponseIds& ids, const json& delta, const json& logprobs, const json& finish_reason,
                bool include_usage) {
  json choice = {{"index", 0}, {"delta", delta}, {"logprobs", logprobs}, {"finish_reason", finish_reason}};
  json c = envelope(ids, "chat.completion.chunk", json::array({choice}));
  if (include_usage) c["usage"] = nullptr;
  return c;
}

json text_chunk(const ResponseIds& ids, const std::string& text, const json& logprobs, const json& finish_reason,
                bool include_usage) {
  json choice = {{"index", 0}, {"text", text}, {"logprobs", logprobs}, {"finish_reason", finish_reason}};
  json c = envelope(ids, "text_completion", json::array({choice}));
  if (include_usage) c["usage"] = nullptr;
  return c;
}

json usage_chunk(const ResponseIds& ids, bool chat, const CompletionResult& r) {
  json c = envelope(ids, chat ? "chat.completion.chunk" : "text_completion", json::array());
  c["usage"] = usage_json(r);
  return c;
}

}  // namespace edgellm::server
