// Server slots: --parallel sessions (KV caches) over one executor, i.e. one
// copy of the weights, one thread pool and one activation arena, all planned
// up front (MemoryPlan with n_seq = slots). A request holds one slot from
// prefill to its last token; requests beyond the slots wait in a bounded
// FIFO queue, and one that finds the queue full is refused at once (429).
//
// The busy slots generate together: their requests go to one Scheduler
// (runtime/scheduler.h), whose every step is one forward pass over the next
// token of each decoding slot plus prompt chunks under the -b budget.
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
#include "runtime/scheduler.h"
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
  // step_tokens: the scheduler's per-step token budget (-b; 0: the batch).
  SlotPool(Executor& executor, int n_slots, int queue_capacity, int64_t step_tokens = 0);

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


  int n_slots() const { return int(slots_.size()); }
  int queue_capacity() const { return queue_cap_; }
  int queue_depth() const;
  int busy() const;
  int64_t cells_in_use() const;  // positions cached over all slots
  int64_t cells_total() const;
  Executor& executor() { return ex_; }
  Scheduler& scheduler() { return sched_; }

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
  Scheduler sched_;
};

}  // namespace edgellm::server
