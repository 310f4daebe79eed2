// Server slots: --parallel sessions (KV caches) over one executor, i.e. one
// copy of the weights, one thread pool and one activation arena, all planned
// up front (MemoryPlan with n_seq = slots). A request holds one slot from
// prefill to its last token; requests beyond the slots wait in a bounded
// FIFO queue, and one that finds the queue full is refused at once (429).
//
// The executor runs one forward pass at a time, so the slots take turns per
// pass through a FIFO ticket lock (StepLock): with 4 busy slots each decode
// step of each waits for at most 3 others, and no slot starves.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "runtime/executor.h"
#include "runtime/session.h"

namespace edgellm::server {

struct Slot {
  int id = 0;
  std::unique_ptr<Session> session;
  bool busy = false;
  uint64_t last_used = 0;  // release order, for least-recently-used choice
  // Positions cached, published after each step for /metrics (the session
  // itself is only touched by the request holding the slot).
  std::atomic<int64_t> cells{0};
};

class SlotPool {
 public:
  SlotPool(Executor& executor, int n_slots, int queue_capacity);

  // Why acquire() returned no slot.
  enum class Refusal { None, QueueFull, Cancelled, TimedOut, ShuttingDown };

  // Waits (FIFO) for a free slot and takes the free one whose cache shares
  // the longest prefix with `prompt` (ties: least recently used), so a
  // follow-up turn finds its conversation's cache. `give_up` is polled while
  // waiting (a client that went away, server shutdown). nullptr + why.
  Slot* acquire(std::span<const int32_t> prompt, std::chrono::steady_clock::time_point deadline,
                const std::function<bool()>& give_up, Refusal* why);
  void release(Slot* s);
  void shutdown();  // wakes every waiter, which gives up

  // One forward pass at a time, in arrival order.
  class StepLock {
   public:
    explicit StepLock(SlotPool& p);
    ~StepLock();
   private:
    SlotPool& p_;
  };

  int n_slots() const { return int(slots_.size()); }
  int queue_capacity() const { return queue_cap_; }
  int queue_depth() const;
  int busy() const;
  int64_t cells_in_use() const;  // positions cached over all slots
  int64_t cells_total() const;
  Executor& executor() { return ex_; }

 private:
  Executor& ex_;
  std::vector<std::unique_ptr<Slot>> slots_;
  int queue_cap_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0, serving_ = 0;  // queue order
  std::vector<uint64_t> abandoned_;          // tickets whose holders gave up while queued
  void advance_serving();                    // skips abandoned tickets at the front
  int waiting_ = 0;
  uint64_t uses_ = 0;
  bool shutdown_ = false;
  // StepLock's ticket pair (its own mutex: a step must not wait on the queue)
  std::mutex step_mu_;
  std::condition_variable step_cv_;
  uint64_t step_next_ = 0, step_serving_ = 0;
};

}  // namespace edgellm::server
