#include "runtime/context_policy.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"

namespace edgellm {

CtxOverflow parse_ctx_overflow(const std::string& s) {
  if (s == "stop") return CtxOverflow::Stop;
  if (s == "shift") return CtxOverflow::Shift;
  if (s == "window") return CtxOverflow::Window;
  fail("--ctx-overflow ", s, ": use stop, shift or window");
}

const char* ctx_overflow_name(CtxOverflow p) {
  switch (p) {
    case CtxOverflow::Stop: return "stop";
    case CtxOverflow::Shift: return "shift";
    case CtxOverflow::Window: return "window";
  }
  return "?";
}

namespace {
// Drops positions [first, first + count) and re-rotates the rows that moved.
// A sliding-window ring keeps only the positions that moved: when the kept
// ones (before `first`) reach into the window the next token sees, the
// cache is computed again from its ids. Returns a note saying so, or "".
std::string drop(Session& s, int64_t first, int64_t count) {
  KvCache& kv = s.kv();
  kv.erase(first, count);
  s.executor().rotate_keys(kv, first, kv.size(), -count);
  const int64_t n = kv.size();
  if (kv.reusable(n) == n) return "";
  std::vector<int32_t> feed;
  s.keep_prefix(n, feed);
  for (size_t i = 0; i < feed.size(); i += size_t(s.n_batch()))
    s.decode(feed.data() + i, std::min<int64_t>(s.n_batch(), int64_t(feed.size() - i)));
  return "; " + std::to_string(feed.size()) + " tokens recomputed (the kept ones reach into the sliding window)";
}
}  // namespace

int64_t make_room(Session& s, const ContextPolicy& p, int64_t need, std::string* what) {
  const int64_t n_ctx = s.n_ctx(), n = s.n_past();
  if (n + need <= n_ctx) return 0;
  auto say = [&](const std::string& m) {
    if (what) *what = m;
  };
  if (p.mode == CtxOverflow::Stop) {
    say("the context is full (" + std::to_string(n) + " of " + std::to_string(n_ctx) +
        " tokens); use a larger -c, or --ctx-overflow shift|window");
    return -1;
  }
  if (p.mode == CtxOverflow::Shift) {
    const int64_t keep = std::min(p.keep, n);
    int64_t discard = (n - keep) / 2;
    // One halving is normally enough; a long new chunk may need more.
    discard = std::max(discard, n + need - n_ctx);
    if (keep + need > n_ctx || discard > n - keep) {
      say("cannot shift: " + std::to_string(need) + " new tokens and the " + std::to_string(keep) +
          " kept ones exceed the context of " + std::to_string(n_ctx));
      return -1;
    }
    const std::string recomputed = drop(s, keep, discard);
    say("context shift: dropped " + std::to_string(discard) + " tokens after the first " + std::to_string(keep) +
        ", " + std::to_string(s.n_past()) + " kept (keys re-rotated in place)" + recomputed);
    return discard;
  }
  const int64_t sinks = std::min(p.sinks, n);
  int64_t window = p.window > 0 ? p.window : n_ctx * 3 / 4;
  window = std::min(window, n_ctx - sinks - need);
  if (window < 0) {
    say("cannot window: " + std::to_string(need) + " new tokens and " + std::to_string(sinks) +
        " sink tokens exceed the context of " + std::to_string(n_ctx));
    return -1;
  }
  const int64_t discard = n - sinks - window;
  const std::string recomputed = drop(s, sinks, discard);
  say("context window: kept " + std::to_string(sinks) + " sink tokens + the last " + std::to_string(window) +
      ", dropped " + std::to_string(discard) + recomputed);
  return discard;
}

}  // namespace edgellm
