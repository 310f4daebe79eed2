#include "base/mem_stats.h"

#include <sys/resource.h>

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

PeakSampler::PeakSampler(int interval_ms) {
  sample();
  thread_ = std::thread([this, interval_ms] {
    while (!stop_.load(std::memory_order_relaxed)) {
      sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    }
  });
}

PeakSampler::~PeakSampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void PeakSampler::sample() {
  const MemSample s = mem_now();
  uint64_t a = peak_anon_.load();
  while (s.anon > a && !peak_anon_.compare_exchange_weak(a, s.anon)) {
  }
  uint64_t r = peak_rss_.load();
  while (s.rss > r && !peak_rss_.compare_exchange_weak(r, s.rss)) {
  }
}

void PeakSampler::reset() {
  const MemSample s = mem_now();
  peak_anon_ = s.anon;
  peak_rss_ = s.rss;
}

}  // namespace edgellm
