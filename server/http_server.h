// `edgellm serve`'s HTTP side: OpenAI-compatible routes over cpp-httplib,
// the API key check in front of every route but /health, body and time
// limits, SSE streaming, and the clean stop on SIGINT/SIGTERM.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "server/completion.h"
#include "server/metrics.h"
#include "server/slots.h"

namespace httplib {
class Server;
}

namespace edgellm::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;            // 0: any free port
  std::string api_key;        // "": no key needed
  double timeout_s = 600;     // a request's whole life, queue included
  size_t max_body_bytes = size_t(8) << 20;
  int read_timeout_s = 5;     // a client silent this long mid-request is dropped
  int http_threads = 0;       // 0: slots + queue + 8
  std::string model_path;     // also accepted as the model's name
};

class HttpServer {
 public:
  HttpServer(ServedModel model, SlotPool& pool, ServerOptions opt);
  ~HttpServer();
  // Binds (throws edgellm::Error naming host and port on failure); returns the port.
  int bind();
  void run();   // serves until stop()
  void stop();  // from any thread: in-flight requests end with an error, run() returns
  bool stopping() const { return stopping_.load(); }

 private:
  void routes();
  ServedModel m_;
  SlotPool& pool_;
  ServerOptions opt_;
  Metrics metrics_;
  std::unique_ptr<httplib::Server> svr_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace edgellm::server
