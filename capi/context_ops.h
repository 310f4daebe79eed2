// The steps a context's calls share: bringing its memory back after
// pressure, taking up a new thermal state, evaluating a pending token,
// starting over. Each runs inside a call's lease (capi/handles.h).
#pragma once
#include <cstdint>
#include <vector>

#include "capi/handles.h"

namespace edgellm::capi {

// A new session (and its spill valve and detokenizer) for c->model with
// plan p, on n threads; the old one, if any, is gone first.
void build_session(edgellm_context& c, const MemoryPlan& p, int n_threads);

// EDGELLM_MEMORY_PRESSURE_*: frees the buffers (moderate) or spills the KV
// cache too (critical). Logs what it freed.
void apply_pressure(edgellm_context& c, int level);
// Brings back what pressure freed (the KV cache from its spill file).
void make_resident(edgellm_context& c);
// Runs the context on the thread count its thermal state asks for: the KV
// cache moves to a new executor through an unlinked temporary file.
void apply_thermal(edgellm_context& c);
int threads_for(int thermal_state, int configured);
const char* thermal_name(int state);

// Evaluates the pending token, if any, so that c.logits follow the last
// token the context holds. False (with *stop = EDGELLM_STOP_CONTEXT_FULL)
// when the context is full and the policy cannot make room.
bool ensure_logits(edgellm_context& c, int32_t* stop);
// Makes room for `need` more positions under the overflow policy; false
// when it cannot (then *why says so).
bool make_room_for(edgellm_context& c, int64_t need, std::string* why);

// Forgets every token (a fresh conversation).
void reset(edgellm_context& c);

}  // namespace edgellm::capi
