#include "server/http_server.h"

#include <httplib.h>

#include <sys/socket.h>

#include <ctime>

#include "base/build_info.h"
#include "base/error.h"
#include "base/mem_stats.h"
#include "runtime/chat_prompt.h"
#include "server/api_error.h"
#include "server/peer_socket.h"
#include "server/request.h"
#include "server/responses.h"

namespace edgellm::server {

using nlohmann::json;

namespace {

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  if (e.status == 429 || e.status == 503) res.set_header("Retry-After", "1");
  send_json(res, e.status, e.body());
}

// Compares every byte whatever the first difference, so the time taken
// does not tell an attacker how much of a guess was right.
bool same_secret(const std::string& a, const std::string& b) {
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

// Metrics label: the known routes by name, anything else as "other" (a
// scanner's random paths must not grow the label set).
std::string endpoint_label(const std::string& path) {
  for (const char* p : {"/v1/chat/completions", "/v1/completions", "/chat/completions", "/completions", "/v1/models",
                        "/health", "/metrics", "/tokenize", "/detokenize", "/apply-template"})
    if (path == p) return p;
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

HttpServer::HttpServer(ServedModel model, SlotPool& pool, ServerOptions opt)
    : m_(std::move(model)), pool_(pool), opt_(std::move(opt)), svr_(std::make_unique<httplib::Server>()) {
  const int threads = opt_.http_threads > 0 ? opt_.http_threads : pool_.n_slots() + pool_.queue_capacity() + 8;
  svr_->new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
  svr_->set_payload_max_length(opt_.max_body_bytes);
  svr_->set_read_timeout(opt_.read_timeout_s, 0);
  svr_->set_write_timeout(opt_.read_timeout_s, 0);
  svr_->set_keep_alive_timeout(opt_.read_timeout_s);
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT on Linux, with
  // which a second server (another user's process, a stale copy) binds the
  // same port silently and the kernel splits the clients between the two.
  svr_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  routes();
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  const int port = opt_.port == 0 ? svr_->bind_to_any_port(opt_.host)
                                  : (svr_->bind_to_port(opt_.host, opt_.port) ? opt_.port : -1);
  if (port < 0)
    fail("serve: cannot listen on ", opt_.host, ":", opt_.port,
         " (in use, or not an address of this machine?); pick another with --port / --host");
  return port;
}

void HttpServer::run() { svr_->listen_after_bind(); }

void HttpServer::stop() {
  stopping_ = true;
  pool_.shutdown();
  svr_->stop();
}

void HttpServer::routes() {
  httplib::Server& s = *svr_;

  // The key guards every route but /health, unknown paths included (a 401
  // before a 404: an unauthenticated client learns nothing about routes).
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (opt_.api_key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0 &&
        same_secret(auth.substr(prefix.size()), opt_.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, ApiError(401,
                             auth.empty() ? "no API key given: send the header 'Authorization: Bearer YOUR_KEY'"
                                          : "the API key is not valid",
                             "", "invalid_request_error", "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });

  // Errors httplib answers itself (no route, body too large, a malformed
  // request line) get OpenAI's error shape too.
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string msg;
    switch (res.status) {
      case 404: msg = "no route " + req.method + " " + req.path + " (see GET /v1/models, POST /v1/chat/completions)"; break;
      case 413:
        // httplib caps form-encoded bodies at 8 KiB whatever --max-body says:
        // `curl -d` without a content type sends one.
        msg = req.get_header_value("Content-Type").find("x-www-form-urlencoded") != std::string::npos
                  ? "a form-encoded body over 8 KiB is refused: send JSON with 'Content-Type: application/json'"
                  : "the request body is too large (the server's --max-body)";
        break;
      case 414: msg = "the request URI is too long"; break;
      case 405: msg = "method not allowed"; break;
      default: msg = "bad request"; break;
    }
    send_error(res, ApiError(res.status, msg));
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what += std::string(": ") + e.what();
    } catch (...) {
    }
    send_error(res, ApiError(500, what));
  });
  s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics_.request(endpoint_label(req.path), res.status);
  });

  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (stopping_) return send_error(res, ApiError(503, "the server is shutting down"));
    send_json(res, 200, {{"status", "ok"}, {"slots_idle", pool_.n_slots() - pool_.busy()}, {"slots_busy", pool_.busy()}});
  });

  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Gauges g;
    g.queue_depth = pool_.queue_depth();
    g.queue_capacity = pool_.queue_capacity();
    g.slots_busy = pool_.busy();
    g.slots_total = pool_.n_slots();
    g.kv_cells_in_use = pool_.cells_in_use();
    g.kv_cells_total = pool_.cells_total();
    const MemSample mem = mem_now();
    g.rss_bytes = mem.rss;
    g.anon_bytes = mem.anon;
    const Scheduler::Stats st = pool_.scheduler().stats();
    g.passes = st.passes;
    g.pass_sequences = st.parts;
    g.pass_tokens = st.tokens;
    g.widest_pass = st.widest;
    res.set_content(metrics_.render(g), "text/plain; version=0.0.4");
  });

  auto model_json = [this] {
    const HParams& hp = m_.model->hparams();
    return json{{"id", m_.id},
                {"object", "model"},
                {"created", 0},
                {"owned_by", "edgellm"},
                {"meta", {{"n_ctx", pool_.executor().plan().n_ctx}, {"n_ctx_train", hp.n_ctx_train},
                          {"n_vocab", hp.n_vocab}, {"n_embd", hp.n_embd}, {"slots", pool_.n_slots()}}}};
  };
  s.Get("/v1/models", [model_json](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"object", "list"}, {"data", json::array({model_json()})}});
  });
  s.Get(R"(/v1/models/(.+))", [this, model_json](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (id != m_.id && id != base_name(opt_.model_path))
      return send_error(res, ApiError(404, "the model '" + id + "' does not exist; this server serves '" + m_.id + "'",
                                      "model", "invalid_request_error", "model_not_found"));
    send_json(res, 200, model_json());
  });

  s.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const json body = parse_body(req.body);
      const auto c = body.find("content");
      if (c == body.end() || !c->is_string()) bad_field("content", "must be a string (the text to tokenize)");
      const auto add = body.find("add_special");
      if (add != body.end() && !add->is_boolean()) bad_field("add_special", "must be true or false");
      const auto ps = body.find("parse_special");
      if (ps != body.end() && !ps->is_boolean()) bad_field("parse_special", "must be true or false");
      const auto pieces = body.find("with_pieces");
      if (pieces != body.end() && !pieces->is_boolean()) bad_field("with_pieces", "must be true or false");
      const bool add_special = add != body.end() && add->get<bool>();
      const bool parse_special = ps == body.end() || ps->get<bool>();
      std::vector<int32_t> ids;
      try {
        ids = m_.tok->encode(c->get_ref<const std::string&>(), add_special && m_.tok->vocab().add_bos, parse_special);
      } catch (const Error& e) {
        throw ApiError(400, std::string("cannot tokenize: ") + e.what(), "content");
      }
      json tokens = json::array();
      for (int32_t id : ids) {
        if (pieces != body.end() && pieces->get<bool>()) tokens.push_back({{"id", id}, {"piece", m_.tok->token_to_piece(id)}});
        else tokens.push_back(id);
      }
      send_json(res, 200, {{"tokens", tokens}});
    } catch (const ApiError& e) {
      send_error(res, e);
    }
  });

  s.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const json body = parse_body(req.body);
      const auto t = body.find("tokens");
      if (t == body.end() || !t->is_array()) bad_field("tokens", "must be an array of token ids");
      std::vector<int32_t> ids;
      const int64_t n_vocab = m_.model->hparams().n_vocab;
      for (size_t i = 0; i < t->size(); ++i) {
        const json& v = (*t)[i];
        if (!v.is_number_integer() || v.get<double>() < 0 || v.get<double>() >= double(n_vocab))
          bad_field("tokens[" + std::to_string(i) + "]", "must be a token id in 0.." + std::to_string(n_vocab - 1));
        ids.push_back(v.get<int32_t>());
      }
      send_json(res, 200, {{"content", detokenize(*m_.tok, ids)}});
    } catch (const ApiError& e) {
      send_error(res, e);
    }
  });

  s.Post("/apply-template", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      RequestLimits lim;
      lim.n_vocab = int32_t(m_.model->hparams().n_vocab);
      const CompletionRequest r = parse_completion_request(parse_body(req.body), true, lim);
      ChatPromptOptions opt;
      opt.parse_special_in_messages = false;
      opt.extra = r.template_extra;
      std::string prompt;
      try {
        prompt = build_chat_prompt(*m_.tok, m_.template_text, r.messages, true, opt).text;
      } catch (const Error& e) {
        throw ApiError(400, std::string("cannot apply the chat template: ") + e.what(), "messages");
      }
      send_json(res, 200, {{"prompt", prompt}});
    } catch (const ApiError& e) {
      send_error(res, e);
    }
  });

  auto completion = [this](bool chat) {
    return [this, chat](const httplib::Request& req, httplib::Response& res) {
      const Clock::time_point arrival = Clock::now();
      const auto deadline = arrival + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt_.timeout_s));
      try {
        RequestLimits lim;
        lim.n_vocab = int32_t(m_.model->hparams().n_vocab);
        auto r = std::make_shared<CompletionRequest>(parse_completion_request(parse_body(req.body), chat, lim));
        if (!r->model.empty() && r->model != m_.id && r->model != opt_.model_path && r->model != base_name(opt_.model_path))
          throw ApiError(404, "the model '" + r->model + "' does not exist; this server serves '" + m_.id + "'", "model",
                         "invalid_request_error", "model_not_found");
        auto prompt = std::make_shared<std::vector<int32_t>>(prompt_ids(m_, *r));
        const int64_t n_ctx = pool_.executor().plan().n_ctx;
        if (int64_t(prompt->size()) >= n_ctx)
          throw ApiError(400, "the prompt is " + std::to_string(prompt->size()) + " tokens and the context is " +
                                  std::to_string(n_ctx) + "; shorten the prompt or start the server with a larger -c",
                         chat ? "messages" : "prompt", "", "context_length_exceeded");

        const int fd = find_connection_fd(req.local_port, req.remote_addr, req.remote_port);
        auto interrupted = [this, fd, deadline] {
          if (stopping_) return Interrupt::ShuttingDown;
          if (Clock::now() >= deadline) return Interrupt::TimedOut;
          if (peer_closed(fd)) return Interrupt::ClientGone;
          return Interrupt::None;
        };
        SlotPool::Refusal why = SlotPool::Refusal::None;
        Slot* slot = pool_.acquire(*prompt, deadline, [&] { return interrupted() != Interrupt::None; }, &why);
        if (!slot) {
          if (why == SlotPool::Refusal::QueueFull)
            throw ApiError(429, "all " + std::to_string(pool_.n_slots()) + " slots are busy and " +
                                    std::to_string(pool_.queue_capacity()) + " requests are waiting; retry later",
                           "", "rate_limit_error", "queue_full");
          if (why == SlotPool::Refusal::TimedOut)
            throw ApiError(503, "no slot became free within the server's --timeout", "", "timeout_error", "timeout");
          if (why == SlotPool::Refusal::ShuttingDown) throw ApiError(503, "the server is shutting down");
          res.status = 499;  // the client is gone: nobody reads this
          return;
        }
        // The slot goes back when the last user of this lease is gone: the
        // handler (non-streamed) or the stream's content provider.
        std::shared_ptr<Slot> lease(slot, [this](Slot* sl) { pool_.release(sl); });

        ResponseIds ids;
        ids.id = std::string(chat ? "chatcmpl-" : "cmpl-") + std::to_string(std::time(nullptr)) + "-" + std::to_string(++next_id_);
        ids.created = int64_t(std::time(nullptr));
        ids.model = m_.id;
        ids.fingerprint = std::string("edgellm-") + build_commit();
        const size_t text_offset = r->echo ? 0 : r->prompt_text ? r->prompt_text->size() : 0;

        if (!r->stream) {
          CompletionHooks hooks;
          hooks.emit = [](const std::string&, std::span<const TokenLogprob>) { return true; };
          hooks.interrupted = interrupted;
          const CompletionResult out = run_completion(pool_, *slot, m_, *r, *prompt, arrival, hooks, metrics_);
          if (out.client_gone) { res.status = 499; return; }
          send_json(res, 200, chat ? chat_response(ids, out, *m_.tok, r->logprobs)
                                   : text_response(ids, out, *m_.tok, r->logprobs, *prompt, text_offset, r->echo && r->logprobs));
          return;
        }

        res.set_header("Cache-Control", "no-cache");
        res.set_chunked_content_provider(
            "text/event-stream",
            [this, chat, r, prompt, lease, ids, arrival, interrupted, text_offset](size_t, httplib::DataSink& sink) {
              auto event = [&](const json& j) {
                const std::string line = "data: " + dump(j) + "\n\n";
                return sink.write(line.data(), line.size());
              };
              size_t offset = text_offset;
              CompletionHooks hooks;
              hooks.interrupted = interrupted;
              bool first = true;
              hooks.emit = [&](const std::string& text, std::span<const TokenLogprob> lps) {
                if (chat) {
                  json delta = {{"content", text}};
                  if (first) delta["role"] = "assistant";
                  first = false;
                  return event(chat_chunk(ids, delta, r->logprobs ? chat_logprobs_json(*m_.tok, lps) : json(nullptr),
                                          nullptr, r->include_usage));
                }
                json lp = nullptr;
                if (r->logprobs) {
                  lp = completion_logprobs_json(*m_.tok, lps, offset);
                  for (const TokenLogprob& t : lps) offset += m_.tok->token_to_piece(t.id).size();
                }
                return event(text_chunk(ids, text, lp, nullptr, r->include_usage));
              };
              try {
                if (chat && !event(chat_chunk(ids, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr, r->include_usage)))
                  return false;
                first = false;
                const CompletionResult out = run_completion(pool_, *lease, m_, *r, *prompt, arrival, hooks, metrics_);
                if (out.client_gone) return false;
                const bool ok = chat ? event(chat_chunk(ids, json::object(), nullptr, out.finish_reason, r->include_usage))
                                     : event(text_chunk(ids, "", nullptr, out.finish_reason, r->include_usage));
                if (!ok) return false;
                if (r->include_usage && !event(usage_chunk(ids, chat, out))) return false;
              } catch (const ApiError& e) {
                // Mid-stream the status line is long gone: the error is the last event.
                if (!event(e.body())) return false;
                sink.done();
                return true;
              } catch (const std::exception& e) {
                if (!event(ApiError(500, std::string("internal error: ") + e.what()).body())) return false;
                sink.done();
                return true;
              }
              const std::string done = "data: [DONE]\n\n";
              if (!sink.write(done.data(), done.size())) return false;
              sink.done();
              return true;
            });
      } catch (const ApiError& e) {
        send_error(res, e);
      } catch (const Error& e) {
        send_error(res, ApiError(400, e.what()));
      }
    };
  };
  s.Post("/v1/chat/completions", completion(true));
  s.Post("/v1/completions", completion(false));
  // The paths without /v1 that many local clients use.
  s.Post("/chat/completions", completion(true));
  s.Post("/completions", completion(false));
}

}  // namespace edgellm::server
