#include "base/mem_stats.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace edgellm {

MemSample mem_now() {
  MemSample s;
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return s;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long kb = 0;
    if (std::sscanf(line, "VmRSS: %llu kB", &kb) == 1) s.rss = kb << 10;
    else if (std::sscanf(line, "RssAnon: %llu kB", &kb) == 1) s.anon = kb << 10;
    else if (std::sscanf(line, "RssFile: %llu kB", &kb) == 1) s.file = kb << 10;
  }
  std::fclose(f);
  return s;
}

uint64_t peak_rss_bytes() {
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned long long kb = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "VmHWM: %llu kB", &kb) == 1;
    std::fclose(f);
    if (found) return kb << 10;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return uint64_t(ru.ru_maxrss) << 10;  // KiB on Linux
}

namespace {
std::atomic<uint64_t> g_peak_anon{0}, g_peak_rss{0};
void raise(std::atomic<uint64_t>& peak, uint64_t v) {
  uint64_t cur = peak.load();
  while (v > cur && !peak.compare_exchange_weak(cur, v)) {
  }
}
}  // namespace

void record_memory_peak() {
  const MemSample s = mem_now();
  raise(g_peak_anon, s.anon);
  raise(g_peak_rss, s.rss);
}

uint64_t PeakSampler::peak_anon() const { return g_peak_anon.load(); }
uint64_t PeakSampler::peak_rss() const { return g_peak_rss.load(); }

PeakSampler::PeakSampler(int interval_ms) {
  sample();
  thread_ = std::thread([this, interval_ms] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      sample();
      cv_.wait_for(lock, std::chrono::milliseconds(interval_ms), [this] { return stop_.load(); });
    }
  });
}

PeakSampler::~PeakSampler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeakSampler::reset() {
  const MemSample s = mem_now();
  g_peak_anon = s.anon;
  g_peak_rss = s.rss;
}

}  // namespace edgellm
