// edgellm serve: a local OpenAI-compatible HTTP server (server/). Loads the
// model once, plans memory for --parallel slots up front, and serves until
// SIGINT / SIGTERM.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <malloc.h>
#include <pthread.h>
#include <thread>

#include "apps/edgellm/common.h"
#include "base/error.h"
#include "base/input_file.h"
#include "base/text_escape.h"

#ifdef EDGELLM_HAVE_SERVER
#include "format/file_type.h"
#include "runtime/memory_plan.h"
#include "server/http_server.h"
#include "template/chat.h"
#endif

namespace edgellm::cli {

#ifndef EDGELLM_HAVE_SERVER
int cmd_serve(int, char**) {
  fail("serve: this build has no server: install libcpp-httplib-dev and nlohmann-json3-dev (Debian) and rebuild");
}
#else

namespace {
std::string model_id(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0) name.resize(name.size() - 5);
  return name;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}
}  // namespace

int cmd_serve(int argc, char** argv) {
  Args args("serve",
            "Serve the model over a local OpenAI-compatible HTTP API: /v1/chat/completions, /v1/completions,\n"
            "/v1/models, /health, /metrics, /tokenize, /detokenize, /apply-template.");
  ModelFlags mf;
  std::string host = "127.0.0.1", api_key, api_key_file, builtin, template_file, max_body = "8M";
  int64_t port = 8080, parallel = 1, queue = 16, max_tokens_cap = 0, read_timeout = 5;
  float timeout = 600;
  mf.add_to(args, false);
  args.add({"--host"}, &host, "address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface)");
  args.add({"--port"}, &port, "TCP port (0: any free port, printed when ready)", 0, 65535);
  args.add({"--api-key"}, &api_key, "require 'Authorization: Bearer KEY' on every route but /health");
  args.add({"--api-key-file"}, &api_key_file, "read the API key from the first line of a file");
  args.add({"--parallel", "-np"}, &parallel, "slots: requests served at once, each with its own KV cache", 1, 256);
  args.add({"--queue"}, &queue, "requests that may wait for a slot; more get 429 with Retry-After", 0, 4096);
  args.add({"--max-tokens-cap"}, &max_tokens_cap, "most tokens one request may generate (0: up to the context)", 0,
           int64_t(1) << 30);
  args.add({"--timeout"}, &timeout, "seconds a request may take in all, queue included", 0.1f, 1e7f);
  args.add({"--read-timeout"}, &read_timeout, "seconds a client may stay silent mid-request before it is dropped", 1, 3600);
  args.add({"--max-body"}, &max_body, "largest request body, e.g. 8M");
  args.add({"--chat-template"}, &builtin, "a built-in chat template instead of the model's (e.g. chatml)");
  args.add({"--chat-template-file"}, &template_file, "a Jinja chat template file instead of the model's");
  if (!args.parse(argc, argv)) return 0;

  if (!api_key.empty() && !api_key_file.empty()) fail("serve: give only one of --api-key and --api-key-file");
  if (!builtin.empty() && !template_file.empty()) fail("serve: give only one of --chat-template and --chat-template-file");
  if (!api_key_file.empty()) {
    const std::string text = read_input_file(api_key_file, "--api-key-file", false, 1 << 16);
    api_key = trimmed(text.substr(0, text.find('\n')));
    if (api_key.empty()) fail("serve: --api-key-file ", escape_control(api_key_file), " holds no key on its first line");
  }
  server::ServerOptions opt;
  opt.host = host;
  opt.port = int(port);
  opt.api_key = api_key;
  opt.timeout_s = timeout;
  opt.read_timeout_s = int(read_timeout);
  opt.max_body_bytes = parse_size(max_body);
  if (opt.max_body_bytes < 1024) fail("--max-body: ", max_body, " is too small (at least 1K)");
  opt.model_path = mf.model;

  // Signals go to one thread that stops the server; every other thread
  // (httplib's, the kernels' pool) starts with them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // Per-thread malloc arenas would let each HTTP thread keep its own freed
  // memory: two arenas keep the heap from creeping up request after request.
  mallopt(M_ARENA_MAX, 2);

  mf.n_seq = int(parallel);
  const auto t0 = std::chrono::steady_clock::now();
  ModelFlags::Planned planned = mf.load_planned();
  const Model& model = *planned.model;
  if (!model.tokenizer()) fail("serve: ", escape_control(mf.model), " has no tokenizer; the server needs one");
  if (!planned.note.empty()) std::fprintf(stderr, "plan: %s\n", planned.note.c_str());

  server::ServedModel served;
  served.model = &model;
  served.tok = model.tokenizer();
  served.id = model_id(mf.model);
  served.max_tokens_cap = max_tokens_cap;
  if (!template_file.empty()) {
    served.template_text = read_input_file(template_file, "--chat-template-file");
  } else if (!builtin.empty()) {
    const char* t = tmpl::builtin_chat_template(builtin);
    if (!t) fail("--chat-template: no built-in template '", builtin, "'");
    served.template_text = t;
  } else if (const gguf::Value* t = model.file().find("tokenizer.chat_template")) {
    served.template_text = t->as_string("tokenizer.chat_template");
  } else {
    served.template_text = tmpl::builtin_chat_template("chatml");
    std::fprintf(stderr, "serve: the model has no chat template; chat requests use chatml (--chat-template to choose)\n");
  }

  Executor executor(model, planned.plan, mf.pin);
  server::SlotPool pool(executor, int(parallel), int(queue), mf.n_batch);
  server::HttpServer http(served, pool, opt);
  const int bound = http.bind();
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::atomic<bool> exiting{false};
  std::thread signals([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (exiting) return;  // woken by the exit path below
    std::fprintf(stderr, "serve: %s received; finishing\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    http.stop();
  });
  const MemoryPlan& p = planned.plan;
  std::fprintf(stderr, "serve: model %s (%s, %s) | %lld slots x ctx %lld | KV %s | footprint %s | load %.0f ms\n",
               served.id.c_str(), escape_control(model.arch().name).c_str(), gguf::file_type_label(model.file()).c_str(),
               (long long)parallel, (long long)p.n_ctx, format_mib(p.kv_bytes).c_str(), format_mib(p.footprint_bytes).c_str(),
               load_ms);
  std::printf("edgellm serve: listening on http://%s:%d (model %s)%s\n", host.find(':') != std::string::npos
              ? ("[" + host + "]").c_str() : host.c_str(), bound, served.id.c_str(),
              api_key.empty() ? "" : " (API key required)");
  std::fflush(stdout);
  http.run();
  if (!http.stopping()) {
    http.stop();
    std::fprintf(stderr, "serve: the listener stopped unexpectedly\n");
  }
  exiting = true;
  pthread_kill(signals.native_handle(), SIGTERM);  // ends sigwait if no signal came
  signals.join();
  std::fprintf(stderr, "serve: stopped\n");
  return 0;
}
#endif

}  // namespace edgellm::cli
