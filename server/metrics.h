// The server's counters, in Prometheus' text format for GET /metrics:
// requests by endpoint and status, prompt / cached / generated tokens,
// time-to-first-token and inter-token latency histograms. Gauges that
// belong to other parts (queue depth, slots, KV cells, memory) are read when
// the page is rendered and passed in.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace edgellm::server {

class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10,  30};
  void observe(double seconds);
  void render(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::array<uint64_t, kBounds.size()> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

struct Gauges {
  int queue_depth = 0, queue_capacity = 0, slots_busy = 0, slots_total = 0;
  int64_t kv_cells_in_use = 0, kv_cells_total = 0;
  uint64_t rss_bytes = 0, anon_bytes = 0;
  // The generation engine's batched passes: how many, the sequences they
  // carried (parts / passes = the mean batch width), the widest.
  uint64_t passes = 0, pass_sequences = 0, pass_tokens = 0;
  int64_t widest_pass = 0;
};

class Metrics {
 public:
  void request(const std::string& endpoint, int status);
  void tokens(int64_t prompt, int64_t cached, int64_t generated);
  void ttft(double seconds);
  void inter_token(double seconds);
  void cancelled();
  std::string render(const Gauges& g) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  uint64_t prompt_ = 0, cached_ = 0, generated_ = 0, cancelled_ = 0;
  Histogram ttft_, itl_;
};

}  // namespace edgellm::server
