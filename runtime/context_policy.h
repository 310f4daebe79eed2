// What happens when a sequence's context fills:
//   stop    generation ends, with the reason (never silent truncation);
//   shift   keep the first `keep` tokens, drop the oldest half of the rest,
//           move the later rows down and re-rotate their keys with RoPE in
//           place (no re-prefill; llama.cpp's context shift);
//   window  attention sinks (the first `sinks` tokens) + the most recent
//           `window` tokens (StreamingLLM): when full, everything between
//           is dropped the same way.
// Both dropping policies keep the cache's cells contiguous (KvCache), so
// positions never run past n_ctx.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/session.h"

namespace edgellm {

enum class CtxOverflow { Stop, Shift, Window };
CtxOverflow parse_ctx_overflow(const std::string& s);  // throws with the choices
const char* ctx_overflow_name(CtxOverflow p);

struct ContextPolicy {
  CtxOverflow mode = CtxOverflow::Stop;
  int64_t keep = 0;    // shift: tokens at the start that are never dropped
  int64_t sinks = 4;   // window: attention-sink tokens at the start
  int64_t window = 0;  // window: recent tokens kept (0: 3/4 of the context)
};

// Makes room for `need` more positions in s, if the policy allows. Returns
// the number of positions dropped (0 when there was room already) and, in
// *what, one line saying what was done; -1 when the policy is stop or it
// cannot make that much room (what says why).
int64_t make_room(Session& s, const ContextPolicy& p, int64_t need, std::string* what);

}  // namespace edgellm
