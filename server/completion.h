// One completion on a slot, as a request to the generation engine (the
// slot pool's Scheduler, batched with every other busy slot): the engine
// prefills what the slot's cache does not already hold and samples, stops
// and detokenizes; this maps the API's request onto it and its stream back.
// The HTTP layer (http_server.cpp) owns the request's lifetime.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/logprobs.h"
#include "server/metrics.h"
#include "server/request.h"
#include "server/slots.h"
#include "tokenizer/tokenizer.h"

namespace edgellm::server {

using Clock = std::chrono::steady_clock;

// What the server serves: the model, its tokenizer and chat template.
struct ServedModel {
  const Model* model = nullptr;
  const Tokenizer* tok = nullptr;
  std::string template_text;  // the chat template (the model's, or --chat-template)
  std::string id;             // the name /v1/models lists
  int64_t max_tokens_cap = 0; // --max-tokens-cap (0: the context is the cap)
};


// Why a request stops before its end.
enum class Interrupt { None, ClientGone, TimedOut, ShuttingDown };

struct CompletionResult {
  int64_t n_prompt = 0, n_cached = 0, n_generated = 0;
  std::string text;  // everything sent (after stop strings)
  std::string finish_reason = "length";  // "stop" | "length"
  std::vector<TokenLogprob> logprobs;         // generated tokens whose text was sent
  std::vector<TokenLogprob> prompt_logprobs;  // echo + logprobs: one per prompt token (the first has none)
  bool client_gone = false;
};

struct CompletionHooks {
  // A piece of text to send and the log-probabilities of the tokens it
  // completes; false: the client is gone.
  std::function<bool(const std::string& text, std::span<const TokenLogprob> logprobs)> emit;
  // Polled before every forward pass.
  std::function<Interrupt()> interrupted;
};

// The prompt's ids: the rendered chat template (message texts never parsed
// as control tokens) or the completions prompt (text parsed as llama.cpp's
// server does, or ids as given).
std::vector<int32_t> prompt_ids(const ServedModel& m, const CompletionRequest& r);

// Runs r on `slot` (acquired from pool). Throws ApiError: 400 for a prompt
// that does not fit the context; 503 when timed out or shutting down.
CompletionResult run_completion(SlotPool& pool, Slot& slot, const ServedModel& m, const CompletionRequest& r,
                                const std::vector<int32_t>& prompt, Clock::time_point arrival,
                                const CompletionHooks& hooks, Metrics& metrics);

}  // namespace edgellm::server
