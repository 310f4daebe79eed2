#include "server/metrics.h"

#include <cstdio>

namespace edgellm::server {

namespace {
std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
void line(std::string& out, const std::string& name, const std::string& type, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}
void metric(std::string& out, const std::string& name, const std::string& type, const std::string& help, double v) {
  line(out, name, type, help);
  out += name + " " + num(v) + "\n";
}
}  // namespace

void Histogram::observe(double s) {
  for (size_t i = 0; i < kBounds.size(); ++i)
    if (s <= kBounds[i]) ++counts_[i];
  ++count_;
  sum_ += s;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help) const {
  line(out, name, "histogram", help);
  for (size_t i = 0; i < kBounds.size(); ++i)
    out += name + "_bucket{le=\"" + num(kBounds[i]) + "\"} " + std::to_string(counts_[i]) + "\n";
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + num(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

void Metrics::request(const std::string& endpoint, int status) {
  std::lock_guard lk(mu_);
  ++requests_[{endpoint, status}];
}

void Metrics::tokens(int64_t prompt, int64_t cached, int64_t generated) {
  std::lock_guard lk(mu_);
  prompt_ += uint64_t(prompt);
  cached_ += uint64_t(cached);
  generated_ += uint64_t(generated);
}

void Metrics::ttft(double s) {
  std::lock_guard lk(mu_);
  ttft_.observe(s);
}

void Metrics::inter_token(double s) {
  std::lock_guard lk(mu_);
  itl_.observe(s);
}

void Metrics::cancelled() {
  std::lock_guard lk(mu_);
  ++cancelled_;
}

std::string Metrics::render(const Gauges& g) const {
  std::lock_guard lk(mu_);
  std::string out;
  line(out, "edgellm_requests_total", "counter", "HTTP requests answered, by endpoint and status code.");
  for (const auto& [key, n] : requests_)
    out += "edgellm_requests_total{endpoint=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  metric(out, "edgellm_prompt_tokens_total", "counter", "Prompt tokens of completed requests (cached ones included).", double(prompt_));
  metric(out, "edgellm_prompt_tokens_cached_total", "counter", "Prompt tokens reused from a slot's KV cache, not prefilled.", double(cached_));
  metric(out, "edgellm_generated_tokens_total", "counter", "Tokens generated.", double(generated_));
  metric(out, "edgellm_requests_cancelled_total", "counter", "Generations stopped because the client went away.", double(cancelled_));
  ttft_.render(out, "edgellm_time_to_first_token_seconds", "From the request's arrival to its first generated token.");
  itl_.render(out, "edgellm_inter_token_latency_seconds", "Between consecutive generated tokens of a request.");
  metric(out, "edgellm_queue_depth", "gauge", "Requests waiting for a slot.", g.queue_depth);
  metric(out, "edgellm_queue_capacity", "gauge", "Requests that may wait (--queue); more get 429.", g.queue_capacity);
  metric(out, "edgellm_slots_busy", "gauge", "Slots running a request.", g.slots_busy);
  metric(out, "edgellm_slots_total", "gauge", "Slots (--parallel).", g.slots_total);
  metric(out, "edgellm_kv_cells_in_use", "gauge", "KV cache positions held, over all slots.", double(g.kv_cells_in_use));
  metric(out, "edgellm_kv_cells_total", "gauge", "KV cache positions planned, over all slots.", double(g.kv_cells_total));
  metric(out, "edgellm_batch_passes_total", "counter", "Forward passes of the generation engine (one per step, over every busy slot).", double(g.passes));
  metric(out, "edgellm_batch_sequences_total", "counter", "Sequences those passes carried (divided by the passes: the mean batch width).", double(g.pass_sequences));
  metric(out, "edgellm_batch_tokens_total", "counter", "Tokens those passes evaluated (prompt chunks and decode tokens).", double(g.pass_tokens));
  metric(out, "edgellm_batch_widest", "gauge", "The most sequences one pass carried so far.", double(g.widest_pass));
  metric(out, "edgellm_process_resident_memory_bytes", "gauge", "Resident set size (file-backed weights included).", double(g.rss_bytes));
  metric(out, "edgellm_process_anonymous_memory_bytes", "gauge", "Anonymous resident memory: the footprint a mobile OS counts.", double(g.anon_bytes));
  return out;
}

}  // namespace edgellm::server
