/*
 * A minimal app on the edgellm C API: load a model, render one chat turn
 * (or take a plain prompt), stream the reply to stdout, optionally cancel
 * after N tokens, and print the timings to stderr.
 *
 *   edgellm_example MODEL.gguf [-p PROMPT] [-n N] [--temp T] [--seed S] [-t THREADS]
 *                   [--chat] [--template NAME] [--cancel-after N] [-v]
 *
 * Greedy (the default, --temp 0) on stories260K with an empty prompt prints
 * the golden story of shared/testdata/models/PROVENANCE.md ("Once upon a
 * time, there was a little girl named Lily. ..."), as
 * `edgellm run -m stories260K.gguf -p "" -n 256 --temp 0` does.
 *
 * Build against an installed edgellm (see README.md in this folder):
 *   cmake -S examples/c -B build-example -DCMAKE_PREFIX_PATH=PREFIX    (find_package)
 *   cc edgellm_example.c $(pkg-config --cflags --libs edgellm)          (pkg-config)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <edgellm/edgellm.h>

struct stream {
  edgellm_context* ctx;
  int32_t count;
  int32_t cancel_after; /* 0: never */
};

/* Each token's text as it comes. edgellm_cancel (callable from any thread;
 * here from the callback) stops the stream after this token. */
static int32_t on_token(int32_t token, const char* piece, int32_t piece_length, void* user_data) {
  struct stream* s = (struct stream*)user_data;
  (void)token;
  fwrite(piece, 1, (size_t)piece_length, stdout);
  fflush(stdout);
  s->count++;
  if (s->cancel_after > 0 && s->count == s->cancel_after) edgellm_cancel(s->ctx);
  return 0;
}

static void on_log(int32_t level, const char* message, void* user_data) {
  (void)user_data;
  fprintf(stderr, "[edgellm %d] %s\n", (int)level, message);
}

/* JSON string for the one user message. */
static char* json_string(const char* s) {
  size_t n = strlen(s), o = 0, i;
  char* out = (char*)malloc(n * 6 + 3);
  if (!out) return NULL;
  out[o++] = '"';
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      out[o++] = '\\';
      out[o++] = (char)c;
    } else if (c < 0x20) {
      o += (size_t)sprintf(out + o, "\\u%04x", c);
    } else {
      out[o++] = (char)c;
    }
  }
  out[o++] = '"';
  out[o] = '\0';
  return out;
}

/* One user turn rendered with the model's chat template (template_name
 * NULL) or a built-in one; NULL on failure (edgellm_last_error says why). */
static char* chat_prompt(edgellm_model* model, const char* prompt, const char* template_name) {
  char* content = json_string(prompt);
  size_t cap = strlen(content) + 64;
  char* messages = (char*)malloc(cap);
  char* text = NULL;
  int32_t length = 0;
  snprintf(messages, cap, "[{\"role\":\"user\",\"content\":%s}]", content);
  free(content);
  /* First ask for the length, then render into a buffer that fits. */
  if (edgellm_apply_chat_template(model, template_name, messages, 1, NULL, 0, &length) ==
      EDGELLM_ERR_BUFFER_TOO_SMALL) {
    text = (char*)malloc((size_t)length + 1);
    if (edgellm_apply_chat_template(model, template_name, messages, 1, text, length + 1, &length) != EDGELLM_OK) {
      free(text);
      text = NULL;
    }
  }
  free(messages);
  return text;
}

/* Text -> ids (BOS first, control-token texts parsed); NULL on failure. */
static int32_t* tokenize(edgellm_model* model, const char* text, int32_t* n_tokens) {
  int32_t n = 0;
  int32_t* ids;
  edgellm_status st = edgellm_tokenize(model, text, -1, 1, 1, NULL, 0, &n);
  if (st != EDGELLM_OK && st != EDGELLM_ERR_BUFFER_TOO_SMALL) return NULL;
  ids = (int32_t*)malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  if (edgellm_tokenize(model, text, -1, 1, 1, ids, n, &n) != EDGELLM_OK) {
    free(ids);
    return NULL;
  }
  *n_tokens = n;
  return ids;
}

static const char* stop_name(int32_t reason) {
  switch (reason) {
    case EDGELLM_STOP_EOG: return "end of text";
    case EDGELLM_STOP_N_PREDICT: return "n_predict";
    case EDGELLM_STOP_CALLBACK: return "callback";
    case EDGELLM_STOP_CANCELLED: return "cancelled";
    case EDGELLM_STOP_CONTEXT_FULL: return "context full";
  }
  return "?";
}

int main(int argc, char** argv) {
  const char *model_path = NULL, *prompt = "", *template_name = NULL;
  int chat = 0, verbose = 0, i;
  edgellm_model_options mo;
  edgellm_sampling sampling;
  edgellm_model_options_init(&mo);
  edgellm_sampling_init(&sampling);
  sampling.temperature = 0.0f;
  sampling.n_predict = 256;
  struct stream s = {NULL, 0, 0};

  for (i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--chat")) chat = 1;
    else if (!strcmp(a, "-v")) verbose = 1;
    else if (v && !strcmp(a, "-p")) prompt = argv[++i];
    else if (v && !strcmp(a, "-n")) sampling.n_predict = atoi(argv[++i]);
    else if (v && !strcmp(a, "--temp")) sampling.temperature = (float)atof(argv[++i]);
    else if (v && !strcmp(a, "--seed")) sampling.seed = strtoull(argv[++i], NULL, 10);
    else if (v && !strcmp(a, "-t")) mo.n_threads = atoi(argv[++i]);
    else if (v && !strcmp(a, "--template")) template_name = argv[++i], chat = 1;
    else if (v && !strcmp(a, "--cancel-after")) s.cancel_after = atoi(argv[++i]);
    else if (a[0] != '-' && !model_path) model_path = a;
    else {
      fprintf(stderr, "usage: %s MODEL.gguf [-p PROMPT] [-n N] [--temp T] [--seed S] [-t THREADS] [--chat] "
                      "[--template NAME] [--cancel-after N] [-v]\n", argv[0]);
      return 2;
    }
  }
  if (!model_path) {
    fprintf(stderr, "%s: no model given\n", argv[0]);
    return 2;
  }
  if (edgellm_api_version() != EDGELLM_API_VERSION) {
    fprintf(stderr, "edgellm_example: built for API %d, the library has API %d\n", EDGELLM_API_VERSION,
            (int)edgellm_api_version());
    return 1;
  }
  if (verbose) edgellm_set_log_callback(on_log, NULL, EDGELLM_LOG_INFO);

  edgellm_model* model = NULL;
  if (edgellm_model_load(model_path, &mo, &model) != EDGELLM_OK) {
    fprintf(stderr, "edgellm_example: %s\n", edgellm_last_error(NULL));
    return 1;
  }
  edgellm_context* ctx = NULL;
  if (edgellm_context_create(model, NULL, &ctx) != EDGELLM_OK) {
    fprintf(stderr, "edgellm_example: %s\n", edgellm_last_error(model));
    edgellm_model_free(model);
    return 1;
  }
  s.ctx = ctx;

  int rc = 1;
  char* text = chat ? chat_prompt(model, prompt, template_name) : NULL;
  int32_t n_prompt = 0;
  int32_t* ids = (!chat || text) ? tokenize(model, chat ? text : prompt, &n_prompt) : NULL;
  edgellm_generate_result result;
  edgellm_generate_result_init(&result);
  if (!ids) {
    fprintf(stderr, "edgellm_example: %s\n", edgellm_last_error(model));
  } else if (edgellm_prefill(ctx, ids, n_prompt) != EDGELLM_OK ||
             edgellm_generate(ctx, &sampling, on_token, &s, &result) != EDGELLM_OK) {
    fprintf(stderr, "edgellm_example: %s\n", edgellm_last_error(ctx));
  } else {
    edgellm_context_info info;
    edgellm_context_info_init(&info);
    edgellm_context_info_get(ctx, &info);
    fputc('\n', stdout);
    fprintf(stderr,
            "timings: prompt %d tokens, %.1f ms, %.1f tok/s | generated %d tokens, %.1f ms, %.1f tok/s | "
            "stopped: %s | threads %d | %s\n",
            (int)info.n_prefilled, info.prefill_ms, info.n_prefilled * 1000.0 / (info.prefill_ms + 1e-9),
            (int)result.n_generated, result.generate_ms, result.n_generated * 1000.0 / (result.generate_ms + 1e-9),
            stop_name(result.stop_reason), (int)info.n_threads, edgellm_version());
    rc = 0;
  }
  free(ids);
  free(text);
  edgellm_context_free(ctx);
  edgellm_model_free(model);
  return rc;
}
