// What the process holds, read from the kernel: resident memory (RSS), its
// anonymous part (heap, copies: the footprint Android's low-memory killer
// and iOS jetsam act on) and its file-backed part (mapped weights, program
// text: clean pages the kernel may drop and re-read).
//
// The kernel keeps a peak for RSS (VmHWM) but not for anonymous memory, so
// PeakSampler reads /proc/self/status on a background thread every few
// milliseconds (a 1-2 us read) and keeps the maxima; callers also sample at
// the moments that matter (end of prefill, end of a turn) with sample().
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>

namespace edgellm {

struct MemSample {
  uint64_t rss = 0, anon = 0, file = 0;  // bytes; all 0 where the OS has no /proc
};

MemSample mem_now();
uint64_t peak_rss_bytes();  // VmHWM (or getrusage's maximum), bytes

class PeakSampler {
 public:
  explicit PeakSampler(int interval_ms = 5);
  ~PeakSampler();
  PeakSampler(const PeakSampler&) = delete;
  PeakSampler& operator=(const PeakSampler&) = delete;
  void sample();  // fold the current reading into the peaks now
  uint64_t peak_anon() const { return peak_anon_.load(); }
  uint64_t peak_rss() const { return peak_rss_.load(); }
  void reset();  // peaks start again from the current reading

 private:
  std::atomic<uint64_t> peak_anon_{0}, peak_rss_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace edgellm
