// Every C API function given what it must refuse: a NULL or freed handle,
// a NULL pointer, a negative size, invalid UTF-8, an oversized length or a
// too small buffer, a bad struct_size. Each returns an error status and
// leaves a message; none crashes (this runs under ASan+UBSan too).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edgellm/edgellm.h"
#include "test_models.h"

namespace {

using edgellm::test::stories260k;

const char kBadUtf8[] = "caf\xC3 \xFF";

// The status, and a message on the handle (or the thread) that names the function.
#define EXPECT_REFUSED(call, status, handle, fn)                                      \
  do {                                                                                \
    EXPECT_EQ((call), (status)) << #call;                                             \
    const std::string msg_ = edgellm_last_error(handle);                              \
    EXPECT_NE(msg_.find(fn), std::string::npos) << #call << ": message '" << msg_ << "'"; \
    const std::string tmsg_ = edgellm_last_error(nullptr);                            \
    EXPECT_NE(tmsg_.find(fn), std::string::npos) << #call << ": thread message '" << tmsg_ << "'"; \
  } while (0)

constexpr edgellm_status kBadArg = EDGELLM_ERR_INVALID_ARGUMENT;
constexpr edgellm_status kBadHandle = EDGELLM_ERR_INVALID_HANDLE;

struct Loaded {
  edgellm_model* m = nullptr;
  edgellm_context* c = nullptr;
  Loaded() {
    EXPECT_EQ(edgellm_model_load(stories260k().c_str(), nullptr, &m), EDGELLM_OK) << edgellm_last_error(nullptr);
    edgellm_context_options o;
    edgellm_context_options_init(&o);
    o.n_ctx = 64;
    EXPECT_EQ(edgellm_context_create(m, &o, &c), EDGELLM_OK) << edgellm_last_error(m);
  }
  ~Loaded() {
    edgellm_context_free(c);
    edgellm_model_free(m);
  }
};

// Every entry point that takes a handle, called with h (NULL or freed).
void expect_all_refuse_handle(edgellm_model* m, edgellm_context* c) {
  int32_t n = 0, ids[4] = {1, 2, 3, 4};
  char buf[64];
  edgellm_model_info mi;
  edgellm_model_info_init(&mi);
  edgellm_memory_plan mp;
  edgellm_memory_plan_init(&mp);
  edgellm_context_info ci;
  edgellm_context_info_init(&ci);
  edgellm_context* out = nullptr;
  EXPECT_REFUSED(edgellm_model_free(m), kBadHandle, nullptr, "edgellm_model_free");
  EXPECT_REFUSED(edgellm_model_info_get(m, &mi), kBadHandle, nullptr, "edgellm_model_info_get");
  EXPECT_REFUSED(edgellm_model_metadata(m, "general.name", buf, 64, &n), kBadHandle, nullptr, "edgellm_model_metadata");
  EXPECT_REFUSED(edgellm_model_plan(m, nullptr, &mp), kBadHandle, nullptr, "edgellm_model_plan");
  EXPECT_REFUSED(edgellm_context_create(m, nullptr, &out), kBadHandle, nullptr, "edgellm_context_create");
  EXPECT_EQ(out, nullptr);
  EXPECT_REFUSED(edgellm_tokenize(m, "a", -1, 1, 0, ids, 4, &n), kBadHandle, nullptr, "edgellm_tokenize");
  EXPECT_REFUSED(edgellm_detokenize(m, ids, 4, buf, 64, &n), kBadHandle, nullptr, "edgellm_detokenize");
  EXPECT_REFUSED(edgellm_apply_chat_template(m, "chatml", "[]", 1, buf, 64, &n), kBadHandle, nullptr,
                 "edgellm_apply_chat_template");
  EXPECT_REFUSED(edgellm_context_free(c), kBadHandle, nullptr, "edgellm_context_free");
  EXPECT_REFUSED(edgellm_context_info_get(c, &ci), kBadHandle, nullptr, "edgellm_context_info_get");
  EXPECT_REFUSED(edgellm_prefill(c, ids, 1), kBadHandle, nullptr, "edgellm_prefill");
  EXPECT_REFUSED(edgellm_generate(c, nullptr, nullptr, nullptr, nullptr), kBadHandle, nullptr, "edgellm_generate");
  EXPECT_REFUSED(edgellm_cancel(c), kBadHandle, nullptr, "edgellm_cancel");
  EXPECT_REFUSED(edgellm_reset(c), kBadHandle, nullptr, "edgellm_reset");
  EXPECT_REFUSED(edgellm_session_save(c, "/tmp/x"), kBadHandle, nullptr, "edgellm_session_save");
  EXPECT_REFUSED(edgellm_session_load(c, "/tmp/x"), kBadHandle, nullptr, "edgellm_session_load");
  EXPECT_REFUSED(edgellm_memory_pressure(c, EDGELLM_MEMORY_PRESSURE_CRITICAL), kBadHandle, nullptr,
                 "edgellm_memory_pressure");
  EXPECT_REFUSED(edgellm_set_thermal_state(c, EDGELLM_THERMAL_SERIOUS), kBadHandle, nullptr,
                 "edgellm_set_thermal_state");
}

TEST(CApiErrors, NullHandlesAreRefused) { expect_all_refuse_handle(nullptr, nullptr); }

TEST(CApiErrors, FreedHandlesAreRefused) {
  edgellm_model* m = nullptr;
  edgellm_context* c = nullptr;
  ASSERT_EQ(edgellm_model_load(stories260k().c_str(), nullptr, &m), EDGELLM_OK);
  ASSERT_EQ(edgellm_context_create(m, nullptr, &c), EDGELLM_OK);
  ASSERT_EQ(edgellm_context_free(c), EDGELLM_OK);
  ASSERT_EQ(edgellm_model_free(m), EDGELLM_OK);
  expect_all_refuse_handle(m, c);
  EXPECT_NE(std::string(edgellm_last_error(m)).find("not a live handle"), std::string::npos);
}

TEST(CApiErrors, WrongKindOfHandleIsRefused) {
  Loaded l;
  // A model where a context belongs (as an FFI caller might pass it).
  auto* as_ctx = reinterpret_cast<edgellm_context*>(l.m);
  EXPECT_REFUSED(edgellm_reset(as_ctx), kBadHandle, nullptr, "edgellm_reset");
  auto* as_model = reinterpret_cast<edgellm_model*>(l.c);
  int32_t n = 0, id = 0;
  EXPECT_REFUSED(edgellm_tokenize(as_model, "a", -1, 1, 0, &id, 1, &n), kBadHandle, nullptr, "edgellm_tokenize");
}

TEST(CApiErrors, ModelLoadRefusals) {
  edgellm_model* m = reinterpret_cast<edgellm_model*>(0x1);
  EXPECT_REFUSED(edgellm_model_load(nullptr, nullptr, &m), kBadArg, nullptr, "edgellm_model_load");
  EXPECT_EQ(m, nullptr);
  EXPECT_REFUSED(edgellm_model_load(stories260k().c_str(), nullptr, nullptr), kBadArg, nullptr, "edgellm_model_load");
  EXPECT_REFUSED(edgellm_model_load(kBadUtf8, nullptr, &m), kBadArg, nullptr, "edgellm_model_load");
  EXPECT_REFUSED(edgellm_model_load("/nonexistent/model.gguf", nullptr, &m), EDGELLM_ERR_LOAD, nullptr,
                 "/nonexistent/model.gguf");
  edgellm_model_options o;
  edgellm_model_options_init(&o);
  o.struct_size = 4;
  EXPECT_REFUSED(edgellm_model_load(stories260k().c_str(), &o, &m), kBadArg, nullptr, "struct_size");
  edgellm_model_options_init(&o);
  o.n_threads = -2;
  EXPECT_REFUSED(edgellm_model_load(stories260k().c_str(), &o, &m), kBadArg, nullptr, "n_threads");
  edgellm_model_options_init(&o);
  o.memory_limit = -1;
  EXPECT_REFUSED(edgellm_model_load(stories260k().c_str(), &o, &m), kBadArg, nullptr, "memory_limit");
  edgellm_model_options_init(&o);
  o.load_mode = 9;
  EXPECT_REFUSED(edgellm_model_load(stories260k().c_str(), &o, &m), kBadArg, nullptr, "load_mode");
  // A limit the context cannot fit.
  edgellm_model_options_init(&o);
  o.memory_limit = 1 << 20;
  ASSERT_EQ(edgellm_model_load(stories260k().c_str(), &o, &m), EDGELLM_OK) << edgellm_last_error(nullptr);
  edgellm_context* c = nullptr;
  EXPECT_REFUSED(edgellm_context_create(m, nullptr, &c), EDGELLM_ERR_OUT_OF_MEMORY, m, "memory_limit");
  edgellm_memory_plan p;
  edgellm_memory_plan_init(&p);
  ASSERT_EQ(edgellm_model_plan(m, nullptr, &p), EDGELLM_OK);
  EXPECT_EQ(p.fits, 0);
  EXPECT_EQ(edgellm_model_free(m), EDGELLM_OK);
}

TEST(CApiErrors, ModelQueryRefusals) {
  Loaded l;
  int32_t n = 0;
  char buf[8];
  edgellm_model_info mi;
  edgellm_model_info_init(&mi);
  EXPECT_REFUSED(edgellm_model_info_get(l.m, nullptr), kBadArg, l.m, "info is NULL");
  mi.struct_size = 1;
  EXPECT_REFUSED(edgellm_model_info_get(l.m, &mi), kBadArg, l.m, "struct_size");
  EXPECT_REFUSED(edgellm_model_metadata(l.m, nullptr, buf, 8, &n), kBadArg, l.m, "key is NULL");
  EXPECT_REFUSED(edgellm_model_metadata(l.m, kBadUtf8, buf, 8, &n), kBadArg, l.m, "UTF-8");
  EXPECT_REFUSED(edgellm_model_metadata(l.m, "no.such.key", buf, 8, &n), kBadArg, l.m, "no.such.key");
  EXPECT_REFUSED(edgellm_model_metadata(l.m, "general.architecture", buf, -1, &n), kBadArg, l.m, "negative");
  EXPECT_REFUSED(edgellm_model_metadata(l.m, "general.architecture", nullptr, 8, &n), kBadArg, l.m, "buffer is NULL");
  EXPECT_REFUSED(edgellm_model_metadata(l.m, "general.architecture", buf, 8, nullptr), kBadArg, l.m, "length is NULL");
  EXPECT_REFUSED(edgellm_model_metadata(l.m, "general.architecture", buf, 3, &n), EDGELLM_ERR_BUFFER_TOO_SMALL, l.m,
                 "needs 6");
  EXPECT_EQ(n, 5);
  edgellm_memory_plan p;
  edgellm_memory_plan_init(&p);
  edgellm_context_options o;
  edgellm_context_options_init(&o);
  o.n_ctx = -5;
  EXPECT_REFUSED(edgellm_model_plan(l.m, &o, &p), kBadArg, l.m, "n_ctx");
  EXPECT_REFUSED(edgellm_model_plan(l.m, nullptr, nullptr), kBadArg, l.m, "plan is NULL");
}

TEST(CApiErrors, ContextCreateRefusals) {
  Loaded l;
  edgellm_context* c = nullptr;
  EXPECT_REFUSED(edgellm_context_create(l.m, nullptr, nullptr), kBadArg, l.m, "context is NULL");
  edgellm_context_options o;
  struct Bad {
    void (*set)(edgellm_context_options&);
    const char* what;
  };
  const Bad bad[] = {
      {[](edgellm_context_options& x) { x.struct_size = 3; }, "struct_size"},
      {[](edgellm_context_options& x) { x.n_ctx = -1; }, "n_ctx"},
      {[](edgellm_context_options& x) { x.n_ctx = 1 << 30; }, "training context"},
      {[](edgellm_context_options& x) { x.n_batch = 0; }, "n_batch"},
      {[](edgellm_context_options& x) { x.type_k = 7; }, "type_k"},
      {[](edgellm_context_options& x) { x.type_v = -1; }, "type_v"},
      {[](edgellm_context_options& x) { x.overflow = 3; }, "overflow"},
      {[](edgellm_context_options& x) { x.n_keep = -1; }, "n_keep"},
      {[](edgellm_context_options& x) { x.n_window = -1; }, "n_window"},
      {[](edgellm_context_options& x) { x.spill_path = kBadUtf8; }, "spill_path"},
      {[](edgellm_context_options& x) { x.swa_full = 2; }, "swa_full"},
  };
  for (const Bad& b : bad) {
    edgellm_context_options_init(&o);
    b.set(o);
    EXPECT_REFUSED(edgellm_context_create(l.m, &o, &c), kBadArg, l.m, b.what);
    EXPECT_EQ(c, nullptr);
  }
}

TEST(CApiErrors, TextRefusals) {
  Loaded l;
  int32_t ids[64], n = 0;
  char buf[64];
  EXPECT_REFUSED(edgellm_tokenize(l.m, nullptr, -1, 1, 0, ids, 64, &n), kBadArg, l.m, "text is NULL");
  EXPECT_REFUSED(edgellm_tokenize(l.m, "abc", -2, 1, 0, ids, 64, &n), kBadArg, l.m, "negative");
  EXPECT_REFUSED(edgellm_tokenize(l.m, kBadUtf8, -1, 1, 0, ids, 64, &n), kBadArg, l.m, "UTF-8");
  // A length far past the real text is refused before a byte is read.
  EXPECT_REFUSED(edgellm_tokenize(l.m, "abc", INT32_MAX, 1, 0, ids, 64, &n), kBadArg, l.m, "MiB");
  EXPECT_REFUSED(edgellm_tokenize(l.m, "abc", -1, 1, 0, ids, -1, &n), kBadArg, l.m, "negative");
  EXPECT_REFUSED(edgellm_tokenize(l.m, "abc", -1, 1, 0, nullptr, 4, &n), kBadArg, l.m, "tokens is NULL");
  EXPECT_REFUSED(edgellm_tokenize(l.m, "abc", -1, 1, 0, ids, 64, nullptr), kBadArg, l.m, "n_tokens is NULL");
  EXPECT_REFUSED(edgellm_tokenize(l.m, "Once upon a time", -1, 1, 0, ids, 2, &n), EDGELLM_ERR_BUFFER_TOO_SMALL, l.m,
                 "buffer holds 2");
  EXPECT_GT(n, 2);

  const int32_t good[2] = {1, 300}, bad[2] = {1, 512};
  EXPECT_REFUSED(edgellm_detokenize(l.m, nullptr, 2, buf, 64, &n), kBadArg, l.m, "tokens is NULL");
  EXPECT_REFUSED(edgellm_detokenize(l.m, good, -1, buf, 64, &n), kBadArg, l.m, "negative");
  EXPECT_REFUSED(edgellm_detokenize(l.m, bad, 2, buf, 64, &n), kBadArg, l.m, "tokens[1] = 512");
  EXPECT_REFUSED(edgellm_detokenize(l.m, good, 2, buf, -3, &n), kBadArg, l.m, "negative");
  EXPECT_REFUSED(edgellm_detokenize(l.m, good, 2, nullptr, 64, &n), kBadArg, l.m, "buffer is NULL");
  EXPECT_REFUSED(edgellm_detokenize(l.m, good, 2, buf, 64, nullptr), kBadArg, l.m, "length is NULL");

  const char* msgs = R"([{"role":"user","content":"Hi"}])";
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, "chatml", nullptr, 1, buf, 64, &n), kBadArg, l.m,
                 "messages_json is NULL");
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, "chatml", "[{\"role\":\"user\",\"content\":\"\xFF\"}]", 1, buf, 64, &n),
                 kBadArg, l.m, "UTF-8");
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, "chatml", "[{\"role\":", 1, buf, 64, &n), kBadArg, l.m,
                 "messages_json");
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, "no-such-template", msgs, 1, buf, 64, &n), kBadArg, l.m,
                 "no-such-template");
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, kBadUtf8, msgs, 1, buf, 64, &n), kBadArg, l.m, "UTF-8");
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, "chatml", msgs, 1, buf, -1, &n), kBadArg, l.m, "negative");
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, "chatml", msgs, 1, buf, 64, nullptr), kBadArg, l.m,
                 "length is NULL");
  EXPECT_REFUSED(edgellm_apply_chat_template(l.m, "chatml", msgs, 1, buf, 10, &n), EDGELLM_ERR_BUFFER_TOO_SMALL, l.m,
                 "buffer holds 10");
}

TEST(CApiErrors, InferenceRefusals) {
  Loaded l;
  const int32_t bos = 1, bad = 600;
  EXPECT_REFUSED(edgellm_generate(l.c, nullptr, nullptr, nullptr, nullptr), EDGELLM_ERR_FAILED, l.c,
                 "prefill a prompt first");
  EXPECT_REFUSED(edgellm_prefill(l.c, nullptr, 3), kBadArg, l.c, "tokens is NULL");
  EXPECT_REFUSED(edgellm_prefill(l.c, &bos, -1), kBadArg, l.c, "negative");
  EXPECT_REFUSED(edgellm_prefill(l.c, &bad, 1), kBadArg, l.c, "tokens[0] = 600");
  // More tokens than the context holds (64), under the stop policy.
  std::vector<int32_t> many(100, 300);
  EXPECT_REFUSED(edgellm_prefill(l.c, many.data(), int32_t(many.size())), EDGELLM_ERR_CONTEXT_FULL, l.c,
                 "do not fit the context");
  ASSERT_EQ(edgellm_prefill(l.c, &bos, 1), EDGELLM_OK);
  edgellm_sampling s;
  edgellm_sampling_init(&s);
  s.struct_size = 0;
  EXPECT_REFUSED(edgellm_generate(l.c, &s, nullptr, nullptr, nullptr), kBadArg, l.c, "struct_size");
  edgellm_sampling_init(&s);
  s.n_predict = -7;
  EXPECT_REFUSED(edgellm_generate(l.c, &s, nullptr, nullptr, nullptr), kBadArg, l.c, "n_predict");
  edgellm_sampling_init(&s);
  s.top_p = -1.0f;
  EXPECT_REFUSED(edgellm_generate(l.c, &s, nullptr, nullptr, nullptr), kBadArg, l.c, "top_p");
  edgellm_sampling_init(&s);
  edgellm_generate_result r;
  edgellm_generate_result_init(&r);
  r.struct_size = 2;
  EXPECT_REFUSED(edgellm_generate(l.c, &s, nullptr, nullptr, &r), kBadArg, l.c, "struct_size");
  edgellm_context_info ci;
  edgellm_context_info_init(&ci);
  EXPECT_REFUSED(edgellm_context_info_get(l.c, nullptr), kBadArg, l.c, "info is NULL");
  ci.struct_size = 9;
  EXPECT_REFUSED(edgellm_context_info_get(l.c, &ci), kBadArg, l.c, "struct_size");
  EXPECT_REFUSED(edgellm_session_save(l.c, nullptr), kBadArg, l.c, "path is NULL");
  EXPECT_REFUSED(edgellm_session_save(l.c, kBadUtf8), kBadArg, l.c, "UTF-8");
  EXPECT_REFUSED(edgellm_session_save(l.c, "/nonexistent-dir/s.bin"), EDGELLM_ERR_FAILED, l.c, "/nonexistent-dir");
  EXPECT_REFUSED(edgellm_session_load(l.c, nullptr), kBadArg, l.c, "path is NULL");
  EXPECT_REFUSED(edgellm_session_load(l.c, kBadUtf8), kBadArg, l.c, "UTF-8");
  EXPECT_REFUSED(edgellm_session_load(l.c, stories260k().c_str()), EDGELLM_ERR_FAILED, l.c, "edgellm_session_load");
  EXPECT_REFUSED(edgellm_memory_pressure(l.c, 3), kBadArg, l.c, "level 3");
  EXPECT_REFUSED(edgellm_memory_pressure(l.c, -1), kBadArg, l.c, "level -1");
  EXPECT_REFUSED(edgellm_set_thermal_state(l.c, 4), kBadArg, l.c, "state 4");
  EXPECT_REFUSED(edgellm_set_thermal_state(l.c, -1), kBadArg, l.c, "state -1");
  EXPECT_REFUSED(edgellm_set_log_callback(nullptr, nullptr, 9), kBadArg, nullptr, "min_level");
  EXPECT_STREQ(edgellm_status_name(EDGELLM_ERR_CONTEXT_FULL), "EDGELLM_ERR_CONTEXT_FULL");
  EXPECT_STREQ(edgellm_status_name(1234), "unknown status");
}

TEST(CApiErrors, OneCallAtATimePerContext) {
  Loaded l;
  const int32_t bos = 1;
  ASSERT_EQ(edgellm_prefill(l.c, &bos, 1), EDGELLM_OK);
  struct State {
    edgellm_context* c;
    edgellm_status inner = EDGELLM_OK, free_status = EDGELLM_OK;
  } st{l.c};
  auto cb = [](int32_t, const char*, int32_t, void* user) -> int32_t {
    auto* s = static_cast<State*>(user);
    s->inner = edgellm_reset(s->c);             // re-entering the context
    s->free_status = edgellm_context_free(s->c);  // freeing it under the running call
    return 1;
  };
  ASSERT_EQ(edgellm_generate(l.c, nullptr, cb, &st, nullptr), EDGELLM_OK);
  EXPECT_EQ(st.inner, EDGELLM_ERR_BUSY);
  EXPECT_EQ(st.free_status, EDGELLM_ERR_BUSY);
}

}  // namespace
