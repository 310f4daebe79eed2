// The server's pure parts: stop-string hold-back, request checking, the
// slot queue and the log-probabilities. (The HTTP side is tested end to end
// by tests/server/*.test.mjs through the official OpenAI client.)
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "server/api_error.h"
#include "server/completion.h"
#include "server/request.h"
#include "server/slots.h"
#include "runtime/stop_text.h"

namespace edgellm::server {
namespace {

// Feeds text in the given pieces; returns everything released.
std::string stream(StopText& st, const std::vector<std::string>& pieces) {
  std::string out;
  for (const auto& p : pieces) out += st.push(p);
  if (!st.stopped()) out += st.flush();
  return out;
}

TEST(ServerStopText, StopSpanningPiecesIsNeverSent) {
  StopText st({"\n\nUser"});
  std::string sent;
  for (const char* p : {"Hello", "\n", "\nUs", "er", ": more"}) {
    const std::string out = st.push(p);
    EXPECT_EQ(out.find('\n'), std::string::npos) << "a partial stop string was sent: " << out;
    sent += out;
  }
  EXPECT_TRUE(st.stopped());
  EXPECT_EQ(sent, "Hello");
  EXPECT_EQ(st.matched(), "\n\nUser");
}

TEST(ServerStopText, HeldTextIsReleasedWhenItIsNotAStop) {
  StopText st({"abc"});
  EXPECT_EQ(st.push("xa"), "x");
  EXPECT_EQ(st.push("b"), "");
  EXPECT_EQ(st.push("d"), "abd");
  EXPECT_EQ(st.push("ab"), "");
  EXPECT_EQ(st.flush(), "ab");
  EXPECT_FALSE(st.stopped());
}

TEST(ServerStopText, EarliestOfSeveralStopsWins) {
  StopText st({"world", "lo w"});
  EXPECT_EQ(stream(st, {"hel", "lo wor", "ld"}), "hel");
  EXPECT_EQ(st.matched(), "lo w");
}

// Random texts cut at random places (a token's piece each), random stops
// taken from inside them. Generation stops at the first piece after which a
// stop string is in the text; the text before the earliest stop then in it
// is what the client gets, and no push ever releases a byte past that.
TEST(ServerStopText, RandomSplitsMatchTheTextSoFarRule) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int n = 1 + int(rng() % 40);
    for (int i = 0; i < n; ++i) text += char('a' + rng() % 3);
    std::vector<std::string> stops;
    const int n_stops = 1 + int(rng() % 3);
    for (int k = 0; k < n_stops; ++k) {
      const size_t at = rng() % text.size(), len = 1 + rng() % 4;
      stops.push_back(rng() % 4 == 0 ? std::string("zz") : text.substr(at, len));
    }
    std::vector<std::string> pieces;
    for (size_t i = 0; i < text.size();) {
      const size_t len = 1 + rng() % 5;
      pieces.push_back(text.substr(i, len));
      i += len;
    }
    std::string expected, so_far;
    bool stops_early = false;
    for (const auto& p : pieces) {
      so_far += p;
      size_t first = std::string::npos;
      for (const auto& s : stops) first = std::min(first, so_far.find(s));
      if (first != std::string::npos) {
        expected = so_far.substr(0, first);
        stops_early = true;
        break;
      }
    }
    if (!stops_early) expected = text;
    StopText st(stops);
    std::string sent;
    for (const auto& p : pieces) {
      sent += st.push(p);
      ASSERT_EQ(expected.compare(0, sent.size(), sent), 0) << "sent past the stop: '" << sent << "' of '" << text << "'";
      if (st.stopped()) break;
    }
    if (!st.stopped()) sent += st.flush();
    EXPECT_EQ(sent, expected) << text;
    EXPECT_EQ(st.stopped(), stops_early);
  }
}

CompletionRequest parse(const std::string& body, bool chat = true) {
  RequestLimits lim;
  lim.n_vocab = 100;
  return parse_completion_request(parse_body(body), chat, lim);
}

std::string bad_param(const std::string& body, bool chat = true) {
  try {
    parse(body, chat);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400) << body;
    return e.param;
  }
  ADD_FAILURE() << "accepted: " << body;
  return "";
}

TEST(ServerRequest, ReadsOpenAIFields) {
  const CompletionRequest r = parse(R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
    "temperature":0,"top_p":0.5,"max_completion_tokens":7,"stop":"x","seed":-3,"logprobs":true,"top_logprobs":2,
    "logit_bias":{"5":-100},"stream":true,"stream_options":{"include_usage":true},"unknown_field":{"x":1},"user":null})");
  EXPECT_EQ(r.messages.items()[0].find("content")->as_string(), "ab");
  EXPECT_EQ(r.sampling.temp, 0.0f);
  EXPECT_EQ(r.sampling.top_p, 0.5f);
  EXPECT_EQ(*r.max_tokens, 7);
  EXPECT_EQ(r.stop, std::vector<std::string>{"x"});
  EXPECT_TRUE(r.seeded);
  EXPECT_EQ(r.sampling.seed, uint64_t(-3));
  EXPECT_TRUE(r.logprobs && r.stream && r.include_usage);
  EXPECT_EQ(r.top_logprobs, 2);
  ASSERT_EQ(r.sampling.logit_bias.size(), 1u);
  EXPECT_EQ(r.sampling.logit_bias[0].first, 5);
  const CompletionRequest c = parse(R"({"prompt":[1,2,3],"echo":true,"logprobs":0,"max_tokens":0})", false);
  EXPECT_EQ(c.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(c.echo && c.logprobs);
  EXPECT_EQ(*c.max_tokens, 0);
  EXPECT_EQ(*parse(R"({"prompt":["only one"]})", false).prompt_text, "only one");
}

TEST(ServerRequest, BadFieldsAreNamed) {
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})"), "temperature");
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user","content":"x"}],"temperature":2.5})"), "temperature");
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1e12})"), "max_tokens");
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":-1})"), "max_tokens");
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user","content":"x"}],"n":3})"), "n");
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user","content":"x"}],"logit_bias":{"100":1}})"), "logit_bias.100");
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":3})"), "top_logprobs");
  EXPECT_EQ(bad_param(R"({"messages":[{"role":"user"}, 5]})"), "messages[1]");
  EXPECT_EQ(bad_param(R"({"prompt":[0, 100]})", false), "prompt[1]");
  EXPECT_EQ(bad_param(R"({"prompt":["a","b"]})", false), "prompt");
  EXPECT_EQ(bad_param(R"({})", false), "prompt");
}

TEST(ServerRequest, BodyErrorsAre400) {
  for (const std::string& b : std::vector<std::string>{"", "[1]", "{\"a\":", "{\"a\":1e400}", std::string(100, '[') + std::string(100, ']')}) {
    try {
      parse_body(b);
      ADD_FAILURE() << "accepted: " << b;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_FALSE(std::string(e.what()).empty());
    }
  }
}

TEST(ServerLogprobs, LogSoftmaxAndTopK) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, -1.0f, 3.0f};
  const TokenLogprob lp = logprob_of(logits.data(), 5, 2, 3);
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l));
  EXPECT_NEAR(lp.logprob, 2.0 - std::log(sum), 1e-6);
  ASSERT_EQ(lp.top.size(), 3u);
  EXPECT_EQ(lp.top[0].first, 1);  // ties: the lower id first
  EXPECT_EQ(lp.top[1].first, 4);
  EXPECT_EQ(lp.top[2].first, 2);
  EXPECT_NEAR(lp.top[2].second, lp.logprob, 1e-7);
}

}  // namespace
}  // namespace edgellm::server
