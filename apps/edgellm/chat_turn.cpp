#include "apps/edgellm/chat_turn.h"

#include <algorithm>
#include <cstdio>

#include "apps/edgellm/chat_input.h"
#include "apps/edgellm/common.h"
#include "base/error.h"
#include "runtime/session_file.h"

namespace edgellm::cli {

namespace {

// Room a turn wants for its reply before it starts: -n, at most a quarter of
// the context. When the conversation leaves less, the oldest turns go.
size_t reply_room(int64_t n_predict, size_t n_ctx) {
  const size_t quarter = std::max<size_t>(n_ctx / 4, 1);
  return n_predict > 0 ? std::min(size_t(n_predict), quarter) : quarter;
}

// Turns are dropped down to half the context, not just below the limit:
// every drop changes the conversation right after the system prompt, so all
// that follows is prefilled again; dropping more at once makes that rare.
size_t drop_target(size_t n_ctx) { return n_ctx / 2; }

void print_turn_line(const ChatRun& r, int64_t n_prompt, size_t reused, double prompt_ms, size_t n_generated,
                     double generate_ms, const std::string& events) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "timings: turn %d | prefill %lld new tokens (%zu reused from cache), %.1f ms, %.1f tok/s | "
                "generated %zu tokens, %.1f ms, %.1f tok/s | context %lld/%lld | ",
                r.turn, (long long)n_prompt, reused, prompt_ms, double(n_prompt) * 1000.0 / std::max(prompt_ms, 1e-9),
                n_generated, generate_ms, double(n_generated) * 1000.0 / std::max(generate_ms, 1e-9),
                (long long)r.session.n_past(), (long long)r.session.n_ctx());
  const std::string line = buf + memory_summary() + (events.empty() ? "" : " | ") + events;
  std::fprintf(stderr, "%s\n", r.style.dim(line).c_str());
}

}  // namespace

void run_turn(ChatRun& r, const std::string& text) {
  Session& s = r.session;
  ChatConversation& c = r.conv;
  const size_t n_ctx = size_t(s.n_ctx());
  std::vector<std::string> events;  // what the turn line says the policy did
  auto note = [&](const std::string& e) { events.push_back(e); };

  // The prompt: the whole conversation, oldest turns dropped if it must.
  const std::vector<tmpl::Json> before = c.messages;
  c.messages.push_back(chat_message("user", text));
  ChatPrompt prompt;
  try {
    prompt = c.render();
    if (prompt.tokens.size() >= n_ctx) {
      const ChatPrompt alone = c.render_last_alone();
      if (alone.tokens.size() >= n_ctx)
        fail("message of ", c.tok.encode(text, false, c.opt.parse_special_in_messages).size(),
             " tokens does not fit the ", n_ctx, "-token context (", alone.tokens.size(),
             " tokens with the system prompt and the template); it was not sent: shorten it, or use a larger -c");
    }
    if (r.drop_turns && prompt.tokens.size() + reply_room(r.gp.n_predict, n_ctx) > n_ctx) {
      const DroppedTurns d = drop_turns_to_fit(c, &prompt, 0, drop_target(n_ctx));
      if (d.turns > 0) note(d.say());
    }
  } catch (const Error& e) {
    c.messages = before;
    std::fprintf(stderr, "error: %s\n", e.what());
    return;
  }

  // The cache keeps what it shares with the prompt; the rest is fed.
  PrefillPlan plan = plan_prefill(s.tokens(), prompt.tokens, c.logical);
  const size_t reused = size_t(s.keep_prefix(int64_t(plan.keep), plan.feed));
  c.logical.assign(prompt.tokens.begin(), prompt.tokens.begin() + long(plan.covered));
  std::string reply, output_error;
  std::vector<int32_t> reply_ids;
  bool stopped = false;
  auto on_token = [&](int32_t id) {
    if (r.interruptible && reply_interrupted()) {  // Ctrl-C: this id is neither shown nor kept
      stopped = true;
      return false;
    }
    reply_ids.push_back(id);
    return true;
  };
  // The reply's text comes from the engine's detokenizer, which saw the
  // cache's ids and the feed (the context the pieces are spaced for).
  auto on_text = [&](const std::string& piece) {
    reply += piece;
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    try {
      flush_stdout_or_fail();
    } catch (const Error& e) {  // ends the chat below, after generate() has returned
      output_error = e.what();
      return false;
    }
    return true;
  };

  GenerateParams gp = r.gp;
  gp.on_text = on_text;
  r.turn_events.clear();
  if (r.interruptible) clear_reply_interrupt();
  int64_t n_prompt = 0;
  double prompt_ms = 0, generate_ms = 0;
  GenerateStats st;
  std::vector<int32_t> feed = std::move(plan.feed);
  for (;;) {
    try {
      st = generate(s, r.sampler, feed, gp, on_token);
    } catch (const Error& e) {
      if (!reply_ids.empty()) throw;
      // The turn does not fit (stop; or shift/window could not make room):
      // say so and keep the conversation as it was.
      c.messages = before;
      std::fprintf(stderr, "error: %s (the message was not sent; /reset starts over)\n", e.what());
      return;
    }
    n_prompt += st.n_prompt;
    prompt_ms += st.prompt_ms;
    generate_ms += st.generate_ms;
    if (!output_error.empty()) throw Error(output_error);
    if (!st.context_full || !r.drop_turns || stopped) break;
    if (r.gp.n_predict > 0 && int64_t(reply_ids.size()) >= r.gp.n_predict) break;

    // The context filled mid-reply: drop the oldest turns, render the rest
    // again, and go on after it and the partial reply (its own ids, as the
    // model made them). A reply that fills the context alone ends here.
    ChatPrompt next;
    try {
      if (c.render_last_alone().tokens.size() + reply_ids.size() >= n_ctx) {
        note("reply ended: it fills the " + std::to_string(n_ctx) + "-token context even without the earlier turns");
        break;
      }
      next = c.render();
      const DroppedTurns d = drop_turns_to_fit(c, &next, reply_ids.size(), drop_target(n_ctx));
      if (next.tokens.size() + reply_ids.size() >= n_ctx) {
        note("reply ended: the context (" + std::to_string(n_ctx) + " tokens) is full");
        break;
      }
      note(d.say() + " mid-reply");
    } catch (const Error& e) {
      note(std::string("reply ended: ") + e.what());
      break;
    }
    std::vector<int32_t> ids = next.tokens;
    ids.insert(ids.end(), reply_ids.begin(), reply_ids.end());
    PrefillPlan p = plan_prefill(s.tokens(), ids);
    s.keep_prefix(int64_t(p.keep), p.feed);
    feed = std::move(p.feed);
    prompt = std::move(next);
    if (r.gp.n_predict > 0) gp.n_predict = r.gp.n_predict - int64_t(reply_ids.size());
  }
  std::fputc('\n', stdout);
  flush_stdout_or_fail();

  // The cache now holds the prompt and every reply id that was decoded (not
  // the end-of-turn id that stopped generation), less what a token-level
  // policy dropped.
  c.logical = prompt.tokens;
  c.logical.insert(c.logical.end(), reply_ids.begin(), reply_ids.end());
  if (!r.session_file.empty()) save_session(s, r.session_file);
  // A reply stopped by Ctrl-C stays in the conversation as far as it got:
  // it was shown, and the cache holds it already.
  c.messages.push_back(chat_message("assistant", reply));
  ++r.turn;
  if (stopped) note("reply stopped (Ctrl-C)");
  std::string all = r.turn_events;
  for (const std::string& e : events) all += (all.empty() ? "" : "; ") + e;
  print_turn_line(r, n_prompt, reused, prompt_ms, reply_ids.size(), generate_ms, all);
  if (st.context_full && !r.drop_turns) std::fprintf(stderr, "(%s; /reset to start over)\n", st.stop_reason.c_str());
  if (r.dump_kv) {
    // The conversation the prompt was rendered from (this reply not yet in
    // it), then the cache's ids: that prompt's, then the reply's.
    std::string ids;
    for (int32_t id : s.tokens()) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    std::fprintf(stderr, "kv-messages: %s\nkv-tokens: %lld (prompt %zu, reply %zu): %s\n",
                 tmpl::Json::array(std::vector<tmpl::Json>(c.messages.begin(), c.messages.end() - 1)).dump().c_str(),
                 (long long)s.n_past(), prompt.tokens.size(), reply_ids.size(), ids.c_str());
  }
}

}  // namespace edgellm::cli
