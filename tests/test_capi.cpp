// The C API (include/edgellm/edgellm.h) through its own functions only:
// the stories260K golden text, streams equal to `edgellm run`, cancel from
// a second thread, create/generate/free cycles that do not grow, memory
// pressure and thermal state, session files.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/mem_stats.h"
#include "edgellm/edgellm.h"
#include "run_cli.h"
#include "test_models.h"

namespace {

using edgellm::test::stories260k;

std::vector<int32_t> golden_ids() {
  std::ifstream f(edgellm::test::shared_dir() + "/testdata/models/PROVENANCE.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const size_t at = doc.find("The 256 greedy token ids after BOS are:");
  const size_t start = doc.find("```", at) + 3, end = doc.find("```", start);
  const std::string block = doc.substr(start, end - start);
  std::vector<int32_t> ids;
  std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(block.begin(), block.end(), num); it != std::sregex_iterator(); ++it)
    ids.push_back(std::stoi(it->str()));
  return ids;
}

// Owns a model and a context for one test.
struct Api {
  edgellm_model* model = nullptr;
  edgellm_context* ctx = nullptr;
  explicit Api(int threads = 1, int n_ctx = 512) {
    edgellm_model_options mo;
    edgellm_model_options_init(&mo);
    mo.n_threads = threads;
    EXPECT_EQ(edgellm_model_load(stories260k().c_str(), &mo, &model), EDGELLM_OK) << edgellm_last_error(nullptr);
    edgellm_context_options co;
    edgellm_context_options_init(&co);
    co.n_ctx = n_ctx;
    EXPECT_EQ(edgellm_context_create(model, &co, &ctx), EDGELLM_OK) << edgellm_last_error(model);
  }
  ~Api() {
    if (ctx) {
      EXPECT_EQ(edgellm_context_free(ctx), EDGELLM_OK);
    }
    if (model) {
      EXPECT_EQ(edgellm_model_free(model), EDGELLM_OK);
    }
  }
  std::vector<int32_t> tokenize(const std::string& text, bool bos = true) {
    int32_t n = 0;
    std::vector<int32_t> ids(text.size() + 8);
    EXPECT_EQ(edgellm_tokenize(model, text.c_str(), -1, bos, 1, ids.data(), int32_t(ids.size()), &n), EDGELLM_OK)
        << edgellm_last_error(model);
    ids.resize(size_t(n));
    return ids;
  }
};

struct Stream {
  std::vector<int32_t> ids;
  std::string text;
  static int32_t on_token(int32_t id, const char* piece, int32_t len, void* user) {
    auto* s = static_cast<Stream*>(user);
    s->ids.push_back(id);
    EXPECT_EQ(std::strlen(piece), size_t(len));
    s->text.append(piece, size_t(len));
    return 0;
  }
};

edgellm_sampling greedy(int n) {
  edgellm_sampling s;
  edgellm_sampling_init(&s);
  s.temperature = 0;
  s.n_predict = n;
  return s;
}

Stream generate(Api& a, const std::string& prompt, const edgellm_sampling& s) {
  const std::vector<int32_t> ids = a.tokenize(prompt);
  EXPECT_EQ(edgellm_prefill(a.ctx, ids.data(), int32_t(ids.size())), EDGELLM_OK) << edgellm_last_error(a.ctx);
  Stream out;
  EXPECT_EQ(edgellm_generate(a.ctx, &s, Stream::on_token, &out, nullptr), EDGELLM_OK) << edgellm_last_error(a.ctx);
  return out;
}

TEST(CApi, Stories260kGreedyMatchesGolden) {
  const std::vector<int32_t> golden = golden_ids();
  ASSERT_EQ(golden.size(), 256u);
  Api a;
  const Stream s = generate(a, "", greedy(256));
  ASSERT_EQ(s.ids.size(), 256u);
  size_t same = 0;
  while (same < s.ids.size() && s.ids[same] == golden[same]) ++same;
  EXPECT_GE(same, 200u) << "first divergence at step " << same;
  EXPECT_EQ(s.text.rfind("Once upon a time, there was a little girl named Lily. She loved to play outside in the park.", 0), 0u)
      << s.text;
}

// The stream equals `edgellm run`'s stdout (which ends with a newline) for
// the same prompt, seed and threads: greedy, and sampled with a penalty.
TEST(CApi, StreamEqualsCliRun) {
  struct Case {
    std::string prompt;
    float temp;
    uint64_t seed;
    float penalty;
  };
  for (const Case& k : {Case{"", 0.0f, 1, 1.0f}, Case{"Once upon a time", 0.8f, 42, 1.0f},
                        Case{"The little dog", 1.0f, 7, 1.1f}}) {
    const std::string temp = std::to_string(k.temp), seed = std::to_string(k.seed), pen = std::to_string(k.penalty);
    const auto r = edgellm::test::run_command({EDGELLM_CLI, "run", "-m", stories260k(), "-p", k.prompt, "-n", "200",
                                               "--temp", temp, "-s", seed, "--repeat-penalty", pen, "-t", "1"});
    ASSERT_TRUE(r.exited_with(0)) << r.describe();
    Api a;
    edgellm_sampling s = greedy(200);
    s.temperature = k.temp;
    s.seed = k.seed;
    s.repeat_penalty = k.penalty;
    const Stream got = generate(a, k.prompt, s);
    EXPECT_EQ(got.text + "\n", r.out) << "prompt '" << k.prompt << "' temp " << k.temp;
  }
}

TEST(CApi, CancelFromSecondThreadStopsWithinOneToken) {
  Api a;
  const std::vector<int32_t> bos = a.tokenize("");
  ASSERT_EQ(edgellm_prefill(a.ctx, bos.data(), int32_t(bos.size())), EDGELLM_OK);
  struct Shared {
    std::atomic<int> emitted{0};
    std::atomic<int> at_cancel{-1};
  } sh;
  auto cb = [](int32_t, const char*, int32_t, void* user) -> int32_t {
    auto* s = static_cast<Shared*>(user);
    s->emitted.fetch_add(1);
    // Slow enough that the other thread's cancel lands mid-stream.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return 0;
  };
  std::thread canceller([&] {
    while (sh.emitted.load() < 20) std::this_thread::yield();
    EXPECT_EQ(edgellm_cancel(a.ctx), EDGELLM_OK);
    // From here at most the token being made may still come (one flag check per token).
    sh.at_cancel.store(sh.emitted.load());
  });
  edgellm_sampling s = greedy(-1);
  edgellm_generate_result res;
  edgellm_generate_result_init(&res);
  ASSERT_EQ(edgellm_generate(a.ctx, &s, cb, &sh, &res), EDGELLM_OK) << edgellm_last_error(a.ctx);
  canceller.join();
  EXPECT_EQ(res.stop_reason, EDGELLM_STOP_CANCELLED);
  EXPECT_EQ(res.n_generated, sh.emitted.load());
  EXPECT_LE(sh.emitted.load() - sh.at_cancel.load(), 1) << "cancelled at " << sh.at_cancel.load();
  // A cancel sent while nothing runs does not stop the next call.
  ASSERT_EQ(edgellm_cancel(a.ctx), EDGELLM_OK);
  s.n_predict = 5;
  ASSERT_EQ(edgellm_generate(a.ctx, &s, nullptr, nullptr, &res), EDGELLM_OK);
  EXPECT_EQ(res.n_generated, 5);
  EXPECT_EQ(res.stop_reason, EDGELLM_STOP_N_PREDICT);
}

TEST(CApi, CallbackStopsAndGenerationContinuesExactly) {
  // 30 tokens at once == 10, stopped by the callback, then 20 more.
  Api whole, parts;
  const Stream all = generate(whole, "Once", greedy(30));
  const std::vector<int32_t> p = parts.tokenize("Once");
  ASSERT_EQ(edgellm_prefill(parts.ctx, p.data(), int32_t(p.size())), EDGELLM_OK);
  struct Stop {
    Stream s;
    int left = 10;
  } st;
  auto cb = [](int32_t id, const char* piece, int32_t len, void* user) -> int32_t {
    auto* x = static_cast<Stop*>(user);
    Stream::on_token(id, piece, len, &x->s);
    return --x->left == 0;
  };
  const edgellm_sampling g = greedy(-1);
  edgellm_generate_result res;
  edgellm_generate_result_init(&res);
  ASSERT_EQ(edgellm_generate(parts.ctx, &g, cb, &st, &res), EDGELLM_OK);
  EXPECT_EQ(res.stop_reason, EDGELLM_STOP_CALLBACK);
  EXPECT_EQ(res.n_generated, 10);
  const edgellm_sampling g20 = greedy(20);
  ASSERT_EQ(edgellm_generate(parts.ctx, &g20, Stream::on_token, &st.s, nullptr), EDGELLM_OK);
  EXPECT_EQ(st.s.ids, all.ids);
  EXPECT_EQ(st.s.text, all.text);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// 1,000 create/generate/free cycles on one model: RSS grows by less than
// 4 MiB (under ASan, whose quarantine holds freed memory on purpose, the
// leak checker at exit is the check instead).
TEST(CApi, CreateGenerateFreeCyclesDoNotGrow) {
  edgellm_model* m = nullptr;
  edgellm_model_options mo;
  edgellm_model_options_init(&mo);
  mo.n_threads = 1;
  ASSERT_EQ(edgellm_model_load(stories260k().c_str(), &mo, &m), EDGELLM_OK) << edgellm_last_error(nullptr);
  edgellm_context_options co;
  edgellm_context_options_init(&co);
  co.n_ctx = 64;
  co.n_batch = 32;
  const int32_t bos = 1;
  const edgellm_sampling s = greedy(8);
  auto cycle = [&] {
    edgellm_context* c = nullptr;
    ASSERT_EQ(edgellm_context_create(m, &co, &c), EDGELLM_OK) << edgellm_last_error(m);
    ASSERT_EQ(edgellm_prefill(c, &bos, 1), EDGELLM_OK);
    Stream out;
    ASSERT_EQ(edgellm_generate(c, &s, Stream::on_token, &out, nullptr), EDGELLM_OK);
    ASSERT_EQ(out.ids.size(), 8u);
    ASSERT_EQ(edgellm_context_free(c), EDGELLM_OK);
  };
  for (int i = 0; i < 20; ++i) cycle();  // allocator pools settle
  const uint64_t before = edgellm::mem_now().rss;
  for (int i = 0; i < 1000; ++i) {
    cycle();
    if (HasFatalFailure()) break;
  }
  const uint64_t after = edgellm::mem_now().rss;
  ASSERT_EQ(edgellm_model_free(m), EDGELLM_OK);
  const double grew_mib = (double(after) - double(before)) / 1048576.0;
  std::printf("[ capi ] 1000 create/generate/free cycles: RSS %.1f -> %.1f MiB (%+.2f MiB)\n", before / 1048576.0,
              after / 1048576.0, grew_mib);
  if (!kAsan) {
    EXPECT_LT(grew_mib, 4.0);
  }
}

TEST(CApi, SessionFileAndMemoryPressureContinueExactly) {
  Api whole;
  const Stream all = generate(whole, "Once upon", greedy(40));

  // Save after 15, load into a fresh context, generate the rest.
  Api first;
  Stream a = generate(first, "Once upon", greedy(15));
  const std::string path = edgellm::test::temp_dir() + "/capi.session";
  ASSERT_EQ(edgellm_session_save(first.ctx, path.c_str()), EDGELLM_OK) << edgellm_last_error(first.ctx);
  Api second;
  ASSERT_EQ(edgellm_session_load(second.ctx, path.c_str()), EDGELLM_OK) << edgellm_last_error(second.ctx);
  const edgellm_sampling g25 = greedy(25);
  ASSERT_EQ(edgellm_generate(second.ctx, &g25, Stream::on_token, &a, nullptr), EDGELLM_OK);
  EXPECT_EQ(a.ids, all.ids);

  // Critical pressure between calls spills and restores the cache.
  Api third;
  Stream b = generate(third, "Once upon", greedy(15));
  ASSERT_EQ(edgellm_memory_pressure(third.ctx, EDGELLM_MEMORY_PRESSURE_CRITICAL), EDGELLM_OK)
      << edgellm_last_error(third.ctx);
  edgellm_context_info info;
  edgellm_context_info_init(&info);
  ASSERT_EQ(edgellm_context_info_get(third.ctx, &info), EDGELLM_OK);
  EXPECT_EQ(info.released, 1);
  ASSERT_EQ(edgellm_memory_pressure(third.ctx, EDGELLM_MEMORY_PRESSURE_MODERATE), EDGELLM_OK);
  ASSERT_EQ(edgellm_generate(third.ctx, &g25, Stream::on_token, &b, nullptr), EDGELLM_OK);
  EXPECT_EQ(b.ids, all.ids);
  ASSERT_EQ(edgellm_context_info_get(third.ctx, &info), EDGELLM_OK);
  EXPECT_EQ(info.released, 0);
  EXPECT_EQ(info.n_past, int32_t(third.tokenize("Once upon").size()) + 40);
}

TEST(CApi, ThermalStateLowersThreadsAndLogsIt) {
  static std::mutex mu;
  static std::vector<std::string> lines;
  auto sink = [](int32_t, const char* msg, void*) {
    std::lock_guard<std::mutex> lk(mu);
    lines.emplace_back(msg);
  };
  ASSERT_EQ(edgellm_set_log_callback(sink, nullptr, EDGELLM_LOG_INFO), EDGELLM_OK);
  Api whole(4);
  const Stream all = generate(whole, "Once", greedy(30));
  Api hot(4);
  Stream s = generate(hot, "Once", greedy(10));
  ASSERT_EQ(edgellm_set_thermal_state(hot.ctx, EDGELLM_THERMAL_CRITICAL), EDGELLM_OK);
  const edgellm_sampling g20 = greedy(20);
  ASSERT_EQ(edgellm_generate(hot.ctx, &g20, Stream::on_token, &s, nullptr), EDGELLM_OK);
  edgellm_context_info info;
  edgellm_context_info_init(&info);
  ASSERT_EQ(edgellm_context_info_get(hot.ctx, &info), EDGELLM_OK);
  EXPECT_EQ(info.n_threads, 1);
  EXPECT_EQ(s.ids, all.ids);  // the same tokens on fewer threads
  ASSERT_EQ(edgellm_set_thermal_state(hot.ctx, EDGELLM_THERMAL_SERIOUS), EDGELLM_OK);
  ASSERT_EQ(edgellm_generate(hot.ctx, &g20, nullptr, nullptr, nullptr), EDGELLM_OK);
  ASSERT_EQ(edgellm_context_info_get(hot.ctx, &info), EDGELLM_OK);
  EXPECT_EQ(info.n_threads, 2);
  ASSERT_EQ(edgellm_set_log_callback(nullptr, nullptr, EDGELLM_LOG_INFO), EDGELLM_OK);
  std::lock_guard<std::mutex> lk(mu);
  bool said = false;
  for (const std::string& l : lines) said |= l.find("thermal state critical: running on 1 thread (was 4)") != std::string::npos;
  EXPECT_TRUE(said) << "no thermal line among " << lines.size() << " log lines";
}

TEST(CApi, TextRoundTripsAndChatTemplate) {
  Api a;
  const std::string text = "Once upon a time, Lily saw a big red ball.";
  const std::vector<int32_t> ids = a.tokenize(text);
  ASSERT_GT(ids.size(), 3u);
  EXPECT_EQ(ids[0], 1);
  int32_t len = 0;
  char small[8];
  EXPECT_EQ(edgellm_detokenize(a.model, ids.data(), int32_t(ids.size()), small, sizeof small, &len),
            EDGELLM_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, int32_t(text.size()));
  std::vector<char> buf(size_t(len) + 1);
  ASSERT_EQ(edgellm_detokenize(a.model, ids.data(), int32_t(ids.size()), buf.data(), len + 1, &len), EDGELLM_OK);
  EXPECT_EQ(std::string(buf.data()), text);
  int32_t n = 0;
  EXPECT_EQ(edgellm_tokenize(a.model, text.c_str(), -1, 1, 0, nullptr, 0, &n), EDGELLM_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, int32_t(ids.size()));

  const char* msgs = R"([{"role":"user","content":"Hi"}])";
  ASSERT_EQ(edgellm_apply_chat_template(a.model, "chatml", msgs, 1, nullptr, 0, &len), EDGELLM_ERR_BUFFER_TOO_SMALL);
  std::vector<char> chat(size_t(len) + 1);
  ASSERT_EQ(edgellm_apply_chat_template(a.model, "chatml", msgs, 1, chat.data(), len + 1, &len), EDGELLM_OK);
  EXPECT_EQ(std::string(chat.data()), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(edgellm_apply_chat_template(a.model, nullptr, msgs, 1, chat.data(), len + 1, &len), EDGELLM_ERR_FAILED);
  EXPECT_NE(std::string(edgellm_last_error(a.model)).find("no chat template"), std::string::npos);

  edgellm_model_info mi;
  edgellm_model_info_init(&mi);
  ASSERT_EQ(edgellm_model_info_get(a.model, &mi), EDGELLM_OK);
  EXPECT_EQ(mi.n_vocab, 512);
  EXPECT_EQ(mi.n_layer, 5);
  EXPECT_EQ(mi.bos, 1);
  EXPECT_EQ(mi.has_chat_template, 0);
  char arch[16];
  ASSERT_EQ(edgellm_model_metadata(a.model, "general.architecture", arch, sizeof arch, &len), EDGELLM_OK);
  EXPECT_STREQ(arch, "llama");
  edgellm_memory_plan plan;
  edgellm_memory_plan_init(&plan);
  ASSERT_EQ(edgellm_model_plan(a.model, nullptr, &plan), EDGELLM_OK);
  EXPECT_GT(plan.kv_bytes, 0);
  EXPECT_GE(plan.footprint_bytes, plan.kv_bytes);
  EXPECT_EQ(plan.fits, 1);
  EXPECT_EQ(edgellm_api_version(), EDGELLM_API_VERSION);
  EXPECT_NE(std::string(edgellm_version()).find("edgellm "), std::string::npos);
}

}  // namespace

namespace {

// The weights stay while a context uses them, after the model handle is gone.
TEST(CApi, ContextOutlivesItsModelHandle) {
  edgellm_model* m = nullptr;
  edgellm_context* c = nullptr;
  ASSERT_EQ(edgellm_model_load(stories260k().c_str(), nullptr, &m), EDGELLM_OK);
  ASSERT_EQ(edgellm_context_create(m, nullptr, &c), EDGELLM_OK);
  ASSERT_EQ(edgellm_model_free(m), EDGELLM_OK);
  const int32_t bos = 1;
  ASSERT_EQ(edgellm_prefill(c, &bos, 1), EDGELLM_OK);
  const edgellm_sampling g = greedy(16);
  Stream s;
  ASSERT_EQ(edgellm_generate(c, &g, Stream::on_token, &s, nullptr), EDGELLM_OK) << edgellm_last_error(c);
  EXPECT_EQ(s.text.rfind("Once upon a time", 0), 0u) << s.text;
  ASSERT_EQ(edgellm_context_free(c), EDGELLM_OK);
}

// Memory pressure that arrives during a call (here from the callback, as
// from another thread) is applied when the call returns; the next call
// restores the cache and the text goes on exactly.
TEST(CApi, PressureDuringGenerationIsAppliedWhenItReturns) {
  Api whole;
  const Stream all = generate(whole, "Once", greedy(30));
  Api a;
  const std::vector<int32_t> p = a.tokenize("Once");
  ASSERT_EQ(edgellm_prefill(a.ctx, p.data(), int32_t(p.size())), EDGELLM_OK);
  struct Press {
    Stream s;
    edgellm_context* ctx;
    edgellm_status st = -100;
  } pr{{}, a.ctx};
  auto cb = [](int32_t id, const char* piece, int32_t len, void* user) -> int32_t {
    auto* x = static_cast<Press*>(user);
    Stream::on_token(id, piece, len, &x->s);
    if (x->s.ids.size() == 5) x->st = edgellm_memory_pressure(x->ctx, EDGELLM_MEMORY_PRESSURE_CRITICAL);
    return 0;
  };
  const edgellm_sampling g10 = greedy(10);
  ASSERT_EQ(edgellm_generate(a.ctx, &g10, cb, &pr, nullptr), EDGELLM_OK);
  EXPECT_EQ(pr.st, EDGELLM_OK);
  edgellm_context_info info;
  edgellm_context_info_init(&info);
  ASSERT_EQ(edgellm_context_info_get(a.ctx, &info), EDGELLM_OK);
  EXPECT_EQ(info.released, 1);
  const edgellm_sampling g20 = greedy(20);
  ASSERT_EQ(edgellm_generate(a.ctx, &g20, Stream::on_token, &pr.s, nullptr), EDGELLM_OK);
  EXPECT_EQ(pr.s.ids, all.ids);
}

// swa_full (API 2): a gemma3 model's sliding layers keep the whole context
// instead of a ring, the plan counts it, and greedy text is the same either
// way, decoded well past the 32-token window.
TEST(CApi, SwaFullKeepsTheWholeContextAndTheSameText) {
  const std::string file = edgellm::test::synth_tiny("gemma3", "f16");
  edgellm_model* m = nullptr;
  ASSERT_EQ(edgellm_model_load(file.c_str(), nullptr, &m), EDGELLM_OK) << edgellm_last_error(nullptr);
  std::vector<int32_t> got[2];
  int64_t kv[2] = {0, 0};
  for (int full : {0, 1}) {
    edgellm_context_options co;
    edgellm_context_options_init(&co);
    EXPECT_EQ(co.swa_full, 0);
    co.n_ctx = 256;
    co.n_batch = 16;
    co.swa_full = full;
    edgellm_memory_plan plan;
    edgellm_memory_plan_init(&plan);
    ASSERT_EQ(edgellm_model_plan(m, &co, &plan), EDGELLM_OK) << edgellm_last_error(m);
    edgellm_context* c = nullptr;
    ASSERT_EQ(edgellm_context_create(m, &co, &c), EDGELLM_OK) << edgellm_last_error(m);
    edgellm_context_info info;
    edgellm_context_info_init(&info);
    ASSERT_EQ(edgellm_context_info_get(c, &info), EDGELLM_OK);
    EXPECT_EQ(info.kv_bytes, plan.kv_bytes);
    kv[full] = plan.kv_bytes;
    const std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 429, 381, 307, 293, 270};
    ASSERT_EQ(edgellm_prefill(c, prompt.data(), int32_t(prompt.size())), EDGELLM_OK) << edgellm_last_error(c);
    Stream out;
    const edgellm_sampling g = greedy(100);
    ASSERT_EQ(edgellm_generate(c, &g, Stream::on_token, &out, nullptr), EDGELLM_OK) << edgellm_last_error(c);
    got[full] = out.ids;
    EXPECT_EQ(edgellm_context_free(c), EDGELLM_OK);
  }
  EXPECT_EQ(edgellm_model_free(m), EDGELLM_OK);
  // Five of six layers slide: each holds a ring of some 32 + 16 rows (the
  // window and a batch, rounded up) instead of 256.
  EXPECT_GT(kv[1], 2 * kv[0]) << "swa_full " << kv[1] << " bytes, ring " << kv[0];
  ASSERT_EQ(got[0].size(), 100u);
  EXPECT_EQ(got[0], got[1]);
}

}  // namespace
