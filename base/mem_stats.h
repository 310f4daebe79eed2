// What the process holds, read from the kernel: resident memory (RSS), its
// anonymous part (heap, copies: the footprint Android's low-memory killer
// and iOS jetsam act on) and its file-backed part (mapped weights, program
// text: clean pages the kernel may drop and re-read).
//
// The kernel keeps a peak for RSS (VmHWM) but not for anonymous memory, so
// the process keeps its own: record_memory_peak() folds the current reading
// in, called where memory peaks by design (a model load's high-water mark,
// the end of a turn), and PeakSampler does it on a background thread every
// 100 ms as a safety net. (Every 5 ms cost 3-5 % of 2-thread decode on a
// 2-core host: the wake-ups preempt the spinning pool.)
#pragma once
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <thread>

namespace edgellm {

struct MemSample {
  uint64_t rss = 0, anon = 0, file = 0;  // bytes; all 0 where the OS has no /proc
};

MemSample mem_now();
uint64_t peak_rss_bytes();  // VmHWM (or getrusage's maximum), bytes
// Folds the current reading into the process-wide peaks PeakSampler reports.
void record_memory_peak();

class PeakSampler {
 public:
  explicit PeakSampler(int interval_ms = 100);
  ~PeakSampler();
  PeakSampler(const PeakSampler&) = delete;
  PeakSampler& operator=(const PeakSampler&) = delete;
  void sample() { record_memory_peak(); }
  // The process-wide peaks since the last reset.
  uint64_t peak_anon() const;
  uint64_t peak_rss() const;
  void reset();  // peaks start again from the current reading

 private:
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace edgellm
