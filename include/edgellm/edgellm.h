/*
 * edgellm.h: the C API of edgellm, an on-device LLM runtime.
 *
 * Plain C99, a stable ABI for JNI (Android), Swift / Objective-C (iOS) and
 * any FFI (Python ctypes, Go cgo, Rust). The rules this header keeps:
 *
 *  - Handles are opaque (edgellm_model, edgellm_context). A NULL handle, a
 *    freed one or one of the wrong kind is refused with
 *    EDGELLM_ERR_INVALID_HANDLE; the library never reads through it.
 *  - Every function that can fail returns an edgellm_status (0 = success)
 *    and writes its results through pointers. edgellm_last_error(handle)
 *    says what went wrong in words; edgellm_last_error(NULL) gives the
 *    calling thread's last error (e.g. a model that failed to load).
 *  - Option and result structs begin with `struct_size`, filled by their
 *    *_init function (which does nothing given NULL): a library built
 *    against a different layout refuses the struct instead of misreading
 *    it. Sizes and counts are signed, so a negative one is caught and
 *    refused rather than read as huge.
 *  - Text is UTF-8; invalid UTF-8 is refused. Output buffers come with their
 *    capacity; when one is too small the call returns
 *    EDGELLM_ERR_BUFFER_TOO_SMALL and says how much it needs.
 *  - No C++ exception ever crosses this boundary, and the API writes
 *    nothing to stdout or stderr: messages go to edgellm_set_log_callback's
 *    callback. (One line still bypasses it: the GGUF reader's "note:
 *    MADV_COLLAPSE" on stderr, when huge pages cannot be collapsed.)
 *
 * Threads: a model may be shared by any number of contexts and threads. A
 * context runs one call at a time (a second concurrent call gets
 * EDGELLM_ERR_BUSY); edgellm_cancel, edgellm_memory_pressure,
 * edgellm_set_thermal_state and edgellm_last_error may be called from any
 * thread at any time.
 *
 * A minimal program (examples/c/edgellm_example.c is a complete one):
 *
 *   edgellm_model* m; edgellm_context* c;
 *   if (edgellm_model_load("model.gguf", NULL, &m) != EDGELLM_OK) { puts(edgellm_last_error(NULL)); ... }
 *   edgellm_context_create(m, NULL, &c);
 *   int32_t ids[512], n;
 *   edgellm_tokenize(m, "Once upon a time", -1, 1, 0, ids, 512, &n);
 *   edgellm_prefill(c, ids, n);
 *   edgellm_generate(c, NULL, on_token, NULL, NULL);   (on_token prints each piece)
 *   edgellm_context_free(c); edgellm_model_free(m);
 */
#ifndef EDGELLM_EDGELLM_H
#define EDGELLM_EDGELLM_H

#include <stddef.h>
#include <stdint.h>

/* The ABI's version: raised on any incompatible change (a function's
 * signature or a struct's layout). Compare it with edgellm_api_version(). */
#define EDGELLM_API_VERSION 2

#if defined(_WIN32)
#  if defined(EDGELLM_BUILDING_LIBRARY)
#    define EDGELLM_API __declspec(dllexport)
#  else
#    define EDGELLM_API
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define EDGELLM_API __attribute__((visibility("default")))
#else
#  define EDGELLM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ------------------------------------------------------ */

typedef int32_t edgellm_status;
enum {
  EDGELLM_OK = 0,
  EDGELLM_ERR_INVALID_ARGUMENT = -1, /* NULL pointer, negative size, out-of-range value, invalid UTF-8 */
  EDGELLM_ERR_INVALID_HANDLE = -2,   /* NULL, freed or wrong-kind handle */
  EDGELLM_ERR_BUFFER_TOO_SMALL = -3, /* the size it needs was written to the call's count */
  EDGELLM_ERR_LOAD = -4,             /* the model file cannot be used */
  EDGELLM_ERR_OUT_OF_MEMORY = -5,    /* an allocation failed, or the plan exceeds the memory limit */
  EDGELLM_ERR_CONTEXT_FULL = -6,     /* the tokens do not fit the context (under its overflow policy) */
  EDGELLM_ERR_CANCELLED = -7,        /* edgellm_cancel stopped a prefill */
  EDGELLM_ERR_BUSY = -8,             /* another call is running on this context */
  EDGELLM_ERR_FAILED = -9,           /* anything else the runtime refused (template, session file, ...) */
  EDGELLM_ERR_INTERNAL = -10         /* a bug: please report the message */
};

/* "EDGELLM_ERR_BUFFER_TOO_SMALL", ...; "unknown status" for others. */
EDGELLM_API const char* edgellm_status_name(edgellm_status status);

/* ---- version ----------------------------------------------------------- */

/* The library's version and build: "edgellm 0.1.0 (api 1, commit abc1234, Release)". */
EDGELLM_API const char* edgellm_version(void);
/* EDGELLM_API_VERSION as the library was built. */
EDGELLM_API int32_t edgellm_api_version(void);

/* ---- errors and logging ------------------------------------------------ */

typedef struct edgellm_model edgellm_model;
typedef struct edgellm_context edgellm_context;

/* The last error recorded on a model or context handle (pass either), or,
 * for NULL, the calling thread's last error, whatever handle it came from.
 * Never NULL: "" when there was none. The text stays valid until the next
 * call on that handle (for NULL: on that thread). */
EDGELLM_API const char* edgellm_last_error(const void* handle);

enum {
  EDGELLM_LOG_DEBUG = 0,
  EDGELLM_LOG_INFO = 1,
  EDGELLM_LOG_WARN = 2,
  EDGELLM_LOG_ERROR = 3
};
/* message: one line, no trailing newline. May be called from any thread
 * that calls into the library (one at a time: calls are serialized). */
typedef void (*edgellm_log_callback)(int32_t level, const char* message, void* user_data);
/* Process-wide. NULL (the default) drops every message. min_level: the
 * least severe level passed on. */
EDGELLM_API edgellm_status edgellm_set_log_callback(edgellm_log_callback callback, void* user_data,
                                                    int32_t min_level);

/* ---- model ------------------------------------------------------------- */

enum {
  EDGELLM_LOAD_AUTO = 0,      /* huge-page copy for large models when it fits the memory limit, else mmap */
  EDGELLM_LOAD_MMAP = 1,      /* weights stay in the read-only file mapping (clean, reclaimable pages) */
  EDGELLM_LOAD_HUGEPAGES = 2  /* weights read into anonymous 2 MiB pages: faster decode, counted as footprint */
};

typedef struct edgellm_model_options {
  uint32_t struct_size; /* sizeof(edgellm_model_options), set by edgellm_model_options_init */
  int32_t n_threads;    /* threads each context runs on; 0: one per performance core allowed to this process */
  int32_t load_mode;    /* EDGELLM_LOAD_* */
  int32_t pin_threads;  /* 1: bind thread i to the i-th fastest allowed CPU (Linux, Android) */
  int64_t memory_limit; /* bytes of footprint (anonymous memory) a context may plan for; 0: no limit */
} edgellm_model_options;

EDGELLM_API void edgellm_model_options_init(edgellm_model_options* options);

/* Loads a GGUF file. options may be NULL (the defaults). On failure *model
 * is NULL and edgellm_last_error(NULL) says why. */
EDGELLM_API edgellm_status edgellm_model_load(const char* path, const edgellm_model_options* options,
                                              edgellm_model** model);
/* Frees the handle. Contexts created from it stay usable; the weights go
 * when the last of them is freed. */
EDGELLM_API edgellm_status edgellm_model_free(edgellm_model* model);

typedef struct edgellm_model_info {
  uint32_t struct_size;
  int32_t n_vocab;
  int64_t n_ctx_train;     /* the context the model was trained with */
  int32_t n_layer, n_embd, n_head, n_head_kv;
  int64_t n_params;
  int64_t weights_bytes;   /* tensor data in the file */
  int32_t bos, eos;        /* token ids; -1 when the vocabulary has none */
  int32_t has_tokenizer;   /* 0: the file has no tokenizer this library supports (use token ids) */
  int32_t has_chat_template;
} edgellm_model_info;

EDGELLM_API void edgellm_model_info_init(edgellm_model_info* info);
EDGELLM_API edgellm_status edgellm_model_info_get(edgellm_model* model, edgellm_model_info* info);

/* A metadata value of the GGUF file ("general.architecture",
 * "tokenizer.chat_template", ...) as text: strings as they are, numbers in
 * decimal, arrays summarized. Writes at most `capacity` bytes including a
 * terminating NUL; *length gets the text's length (without the NUL), also
 * when the buffer is too small (EDGELLM_ERR_BUFFER_TOO_SMALL). An absent
 * key is EDGELLM_ERR_INVALID_ARGUMENT. buffer may be NULL when capacity is 0. */
EDGELLM_API edgellm_status edgellm_model_metadata(edgellm_model* model, const char* key, char* buffer,
                                                  int32_t capacity, int32_t* length);

/* ---- context (one conversation) ---------------------------------------- */

/* KV cache element types (their GGML type ids). */
enum {
  EDGELLM_KV_F32 = 0,
  EDGELLM_KV_F16 = 1,
  EDGELLM_KV_Q4_0 = 2,
  EDGELLM_KV_Q8_0 = 8
};

/* What happens when the context fills (runtime/context_policy.h). */
enum {
  EDGELLM_OVERFLOW_STOP = 0,  /* generation ends (EDGELLM_STOP_CONTEXT_FULL); a prefill that does not fit fails */
  EDGELLM_OVERFLOW_SHIFT = 1, /* keep the first n_keep tokens, drop the oldest half of the rest */
  EDGELLM_OVERFLOW_WINDOW = 2 /* 4 attention sinks + the most recent n_window tokens */
};

typedef struct edgellm_context_options {
  uint32_t struct_size;
  int32_t n_ctx;      /* context in tokens; 0: the model's, at most 4096 */
  int32_t n_batch;    /* prompt tokens per forward pass (512) */
  int32_t type_k;     /* EDGELLM_KV_* (F16) */
  int32_t type_v;     /* EDGELLM_KV_* (F16) */
  int32_t overflow;   /* EDGELLM_OVERFLOW_* (STOP) */
  int32_t n_keep;     /* SHIFT: tokens at the start never dropped (0) */
  int32_t n_window;   /* WINDOW: recent tokens kept; 0: 3/4 of the context */
  const char* spill_path; /* memory pressure spills the KV cache here; NULL: an unlinked temporary file */
  /* Since API 2. Sliding-window layers (gemma2/3/4) keep the whole context
   * instead of a ring of window + batch positions (the CLI's --swa-full):
   * more KV memory, but any earlier prefix stays reusable. 0 or 1 (0). */
  int32_t swa_full;
} edgellm_context_options;

EDGELLM_API void edgellm_context_options_init(edgellm_context_options* options);

/* The memory plan for a context with these options (NULL: defaults): every
 * byte it will hold, computed before anything is allocated. */
typedef struct edgellm_memory_plan {
  uint32_t struct_size;
  int32_t fits;                    /* 1 when footprint <= memory_limit (or there is no limit) */
  int64_t n_ctx, n_batch;          /* as resolved */
  int64_t weights_bytes;           /* tensor data */
  int64_t weights_resident_bytes;  /* of which copied into anonymous memory (0: file-backed) */
  int64_t kv_bytes;                /* KV cache */
  int64_t buffers_bytes;           /* activation arena + host tables */
  int64_t overhead_bytes;          /* runtime, thread stacks, allocator slack */
  int64_t footprint_bytes;         /* anonymous memory at peak: what Android's LMK / iOS jetsam count */
  int64_t total_bytes;             /* peak RSS: footprint + file-backed weights + code */
  int64_t memory_limit;            /* the model's limit (0: none) */
} edgellm_memory_plan;

EDGELLM_API void edgellm_memory_plan_init(edgellm_memory_plan* plan);
EDGELLM_API edgellm_status edgellm_model_plan(edgellm_model* model, const edgellm_context_options* options,
                                              edgellm_memory_plan* plan);

/* Allocates the KV cache and buffers the plan names (nothing grows later).
 * Refused with EDGELLM_ERR_OUT_OF_MEMORY when the plan exceeds the model's
 * memory limit. */
EDGELLM_API edgellm_status edgellm_context_create(edgellm_model* model, const edgellm_context_options* options,
                                                  edgellm_context** context);
EDGELLM_API edgellm_status edgellm_context_free(edgellm_context* context);

typedef struct edgellm_context_info {
  uint32_t struct_size;
  int32_t n_ctx, n_batch;
  int32_t n_past;        /* tokens the context holds (evaluated or waiting to be) */
  int32_t n_threads;     /* as now in use (thermal state lowers it) */
  int32_t released;      /* 1 while memory pressure has the KV cache spilled (restored on next use) */
  int64_t kv_bytes;
  /* Since creation or the last edgellm_reset: */
  int64_t n_prefilled;   /* tokens evaluated by edgellm_prefill */
  double prefill_ms;
  int64_t n_generated;   /* tokens sampled by edgellm_generate */
  double generate_ms;
} edgellm_context_info;

EDGELLM_API void edgellm_context_info_init(edgellm_context_info* info);
EDGELLM_API edgellm_status edgellm_context_info_get(edgellm_context* context, edgellm_context_info* info);

/* ---- text -------------------------------------------------------------- */

/* UTF-8 text -> token ids. text_length: bytes, or -1 for a NUL-terminated
 * text (any other negative value is refused). add_bos: frame the text as
 * the vocabulary does (BOS first). parse_special: read control-token texts
 * ("<|im_start|>") as those tokens; a text that then already starts with
 * BOS's text (a rendered chat template) gets no second BOS. Otherwise the
 * ids are `edgellm run -p`'s. *n_tokens gets the count, also when
 * `capacity` is too small (EDGELLM_ERR_BUFFER_TOO_SMALL); text longer than
 * 64 MiB is refused. */
EDGELLM_API edgellm_status edgellm_tokenize(edgellm_model* model, const char* text, int32_t text_length,
                                            int32_t add_bos, int32_t parse_special, int32_t* tokens,
                                            int32_t capacity, int32_t* n_tokens);

/* Token ids -> UTF-8 text, NUL-terminated in `buffer` (capacity includes the
 * NUL); *length gets the text's length, also when the buffer is too small.
 * A leading BOS makes the text start as its first word (SPM's dummy space
 * dropped), as edgellm_generate's pieces do after a prompt with BOS. */
EDGELLM_API edgellm_status edgellm_detokenize(edgellm_model* model, const int32_t* tokens, int32_t n_tokens,
                                              char* buffer, int32_t capacity, int32_t* length);

/* Renders a conversation with a chat template: messages_json is a JSON
 * array of {"role": ..., "content": ...} objects (OpenAI style).
 * template_name: NULL for the model's own template (tokenizer.chat_template),
 * or a built-in one ("chatml", "llama2", "llama3", "mistral", "phi3",
 * "gemma", "zephyr"). add_generation_prompt: end with the assistant's turn
 * opening. The text (NUL-terminated) goes to buffer as edgellm_detokenize's;
 * tokenize it with add_bos = 1 (the BOS is not doubled when the template
 * wrote it) and parse_special = 1. */
EDGELLM_API edgellm_status edgellm_apply_chat_template(edgellm_model* model, const char* template_name,
                                                       const char* messages_json, int32_t add_generation_prompt,
                                                       char* buffer, int32_t capacity, int32_t* length);

/* ---- inference --------------------------------------------------------- */

/* Evaluates n_tokens ids after those the context holds (in batches of
 * n_batch); generation then continues from the last one. A prompt that
 * does not fit is refused (EDGELLM_ERR_CONTEXT_FULL) unless the overflow
 * policy can make room. edgellm_cancel stops it between batches
 * (EDGELLM_ERR_CANCELLED; the batches done stay in the context). */
EDGELLM_API edgellm_status edgellm_prefill(edgellm_context* context, const int32_t* tokens, int32_t n_tokens);

typedef struct edgellm_sampling {
  uint32_t struct_size;
  float temperature;      /* 0.8; <= 0: greedy */
  int32_t top_k;          /* 40; <= 0: off */
  float top_p;            /* 0.95; >= 1: off */
  float min_p;            /* 0.05; <= 0: off */
  float repeat_penalty;   /* 1.0 (off) */
  int32_t repeat_last_n;  /* 64; 0: off; -1: the whole context */
  int32_t n_predict;      /* most tokens to generate; -1: until end of generation or a full context */
  uint64_t seed;          /* 0xED6E; the same seed gives the same tokens, on any machine */
} edgellm_sampling;

EDGELLM_API void edgellm_sampling_init(edgellm_sampling* sampling);

/* Called for each generated token, in order: its id and the text it adds
 * (piece_length bytes of UTF-8, NUL-terminated; empty while the bytes of a
 * character split over several tokens are held back). Return non-zero to
 * stop after this token. Calling edgellm_* on the same context from here
 * is refused (EDGELLM_ERR_BUSY), except edgellm_cancel and the others that
 * any thread may call. */
typedef int32_t (*edgellm_token_callback)(int32_t token, const char* piece, int32_t piece_length,
                                          void* user_data);

enum {
  EDGELLM_STOP_EOG = 0,          /* the model ended its text (the end token is not passed on) */
  EDGELLM_STOP_N_PREDICT = 1,    /* n_predict tokens were generated */
  EDGELLM_STOP_CALLBACK = 2,     /* the callback returned non-zero */
  EDGELLM_STOP_CANCELLED = 3,    /* edgellm_cancel */
  EDGELLM_STOP_CONTEXT_FULL = 4  /* the context is full and the policy is STOP */
};

typedef struct edgellm_generate_result {
  uint32_t struct_size;
  int32_t n_generated;  /* tokens passed to the callback */
  int32_t stop_reason;  /* EDGELLM_STOP_* */
  int32_t n_past;       /* tokens the context holds afterwards */
  double generate_ms;
} edgellm_generate_result;

EDGELLM_API void edgellm_generate_result_init(edgellm_generate_result* result);

/* Samples tokens after what the context holds (a prefill first, or a
 * previous generate to continue) and streams them to callback (may be
 * NULL). sampling may be NULL (the defaults); the sampler is seeded afresh
 * on every call. result may be NULL. Each token passed on is kept in the
 * context, so a following prefill appends after it. */
EDGELLM_API edgellm_status edgellm_generate(edgellm_context* context, const edgellm_sampling* sampling,
                                            edgellm_token_callback callback, void* user_data,
                                            edgellm_generate_result* result);

/* Asks the call running on this context to stop: generation within one
 * token, prefill between batches. Any thread; a no-op when nothing runs. */
EDGELLM_API edgellm_status edgellm_cancel(edgellm_context* context);

/* Forgets every token of the context (and the timings). */
EDGELLM_API edgellm_status edgellm_reset(edgellm_context* context);

/* Session state: the context's tokens and KV cache, written crash-safely
 * (runtime/session_file.h); loading checks it belongs to this model and
 * fits this context, then continues from it exactly. */
EDGELLM_API edgellm_status edgellm_session_save(edgellm_context* context, const char* path);
EDGELLM_API edgellm_status edgellm_session_load(edgellm_context* context, const char* path);

/* ---- the app's signals ------------------------------------------------- */

enum {
  EDGELLM_MEMORY_PRESSURE_NONE = 0,     /* nothing to do */
  EDGELLM_MEMORY_PRESSURE_MODERATE = 1, /* free the activation buffers (Android TRIM_MEMORY_RUNNING_LOW) */
  EDGELLM_MEMORY_PRESSURE_CRITICAL = 2  /* also spill the KV cache to the session file and free it
                                           (TRIM_MEMORY_RUNNING_CRITICAL, iOS didReceiveMemoryWarning) */
};
/* Frees what the level says; the next call that needs it brings it back
 * (the KV cache from the spill file: the same rows, so the same output).
 * From another thread while a call runs, it takes effect when that call
 * returns. */
EDGELLM_API edgellm_status edgellm_memory_pressure(edgellm_context* context, int32_t level);

enum {
  EDGELLM_THERMAL_NOMINAL = 0, /* all the configured threads */
  EDGELLM_THERMAL_FAIR = 1,    /* all the configured threads */
  EDGELLM_THERMAL_SERIOUS = 2, /* half of them */
  EDGELLM_THERMAL_CRITICAL = 3 /* one */
};
/* The device's thermal state (iOS ProcessInfo.thermalState; Android
 * PowerManager thermal status: NONE/LIGHT -> NOMINAL/FAIR, MODERATE/SEVERE
 * -> SERIOUS, CRITICAL and above -> CRITICAL). Lowers the context's threads
 * as above from its next call, and says so in the log. */
EDGELLM_API edgellm_status edgellm_set_thermal_state(edgellm_context* context, int32_t state);

#ifdef __cplusplus
}
#endif

#endif /* EDGELLM_EDGELLM_H */
