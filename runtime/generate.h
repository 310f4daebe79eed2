// One sequence alone, the CLI's case (`edgellm run`, `chat`): a thin adapter
// from the CLI's settings onto the generation engine (runtime/generation.h,
// runtime/scheduler.h), which runs the loop. Prefill the prompt in batches
// of n_batch tokens, then sample one token at a time until an
// end-of-generation token, n_predict tokens, or a full context. Each
// generated id goes to on_token as soon as it is sampled.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/context_policy.h"
#include "runtime/sampler.h"
#include "runtime/session.h"

namespace edgellm {

struct GenerateParams {
  int64_t n_predict = -1;              // -1: until end of generation or a full context
  std::vector<int32_t> stop_ids;       // end-of-generation ids (the vocab's eog set)
  ContextPolicy policy;                // what to do when the context fills
  // Told, as it happens, what the policy did (one line; may be null).
  std::function<void(const std::string&)> on_event;
  // Called once the prompt was accepted (it fits, or the policy made room),
  // before prefill: where a CLI says "ready" (may be null).
  std::function<void()> on_ready;
  // The reply as text, piece by piece, from the engine's detokenizer (which
  // saw the context): false stops. May be null (ids only, on_token).
  std::function<bool(const std::string&)> on_text;
};

struct GenerateStats {
  int64_t n_prompt = 0, n_generated = 0;
  double prompt_ms = 0, generate_ms = 0;
  bool stopped_by_eog = false, context_full = false;
  int64_t n_dropped = 0;    // positions the policy dropped (shift, window)
  int n_overflows = 0;      // times it did
  std::string stop_reason;  // set when the context stopped generation
};

// on_token (may be null when on_text is set) returns false to stop early. The prompt is evaluated starting at
// session.n_past(), so a chat can append turns to a live session. The
// sampler goes on from its state (a chat's turns share its RNG stream).
// The session must not be a sequence of a shared scheduler's executor.
GenerateStats generate(Session& session, Sampler& sampler, const std::vector<int32_t>& prompt,
                       const GenerateParams& params, const std::function<bool(int32_t)>& on_token);

}  // namespace edgellm
