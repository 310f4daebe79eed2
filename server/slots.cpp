#include "server/slots.h"

#include <algorithm>

namespace edgellm::server {

SlotPool::SlotPool(Executor& executor, int n_slots, int queue_capacity, int64_t step_tokens)
    : ex_(executor), queue_cap_(queue_capacity), sched_(executor, step_tokens) {
  for (int i = 0; i < n_slots; ++i) {
    auto s = std::make_unique<Slot>();
    s->id = i;
    s->session = std::make_unique<Session>(executor);
    slots_.push_back(std::move(s));
  }
}

Slot* SlotPool::acquire(std::span<const int32_t> prompt, std::chrono::steady_clock::time_point deadline,
                        const std::function<bool()>& give_up, Refusal* why) {
  std::unique_lock lk(mu_);
  auto free_slot = [&] { return std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return !s->busy; }); };
  // A request that can start now does not queue; otherwise it queues if
  // there is room, behind every earlier one.
  if (!(waiting_ == 0 && free_slot())) {
    if (waiting_ >= queue_cap_) { *why = Refusal::QueueFull; return nullptr; }
  }
  const uint64_t ticket = next_ticket_++;
  ++waiting_;
  *why = Refusal::None;
  while (!(serving_ == ticket && free_slot())) {
    if (shutdown_) *why = Refusal::ShuttingDown;
    else if (std::chrono::steady_clock::now() >= deadline) *why = Refusal::TimedOut;
    else if (give_up && give_up()) *why = Refusal::Cancelled;
    if (*why != Refusal::None) break;
    cv_.wait_for(lk, std::chrono::milliseconds(50));
  }
  --waiting_;
  if (*why != Refusal::None) {
    // Leaving the queue, maybe from its middle: the ticket is skipped when
    // it reaches the front, so the ones behind it do not wait for it.
    abandoned_.push_back(ticket);
    advance_serving();
    cv_.notify_all();
    return nullptr;
  }
  ++serving_;
  advance_serving();
  // The free slot whose cache shares the longest prefix with the prompt, if
  // that is at least half the prompt (a follow-up turn of its conversation);
  // else the least recently used one (empty slots first), so a stranger's
  // request does not evict a conversation for the sake of a shared BOS.
  Slot* best = nullptr;
  Slot* oldest = nullptr;
  size_t best_common = 0;
  for (auto& s : slots_) {
    if (s->busy) continue;
    if (!oldest || s->last_used < oldest->last_used) oldest = s.get();
    const auto& cached = s->session->tokens();
    const size_t n = std::min(cached.size(), prompt.size());
    size_t common = 0;
    while (common < n && cached[common] == prompt[common]) ++common;
    if (common > best_common) {
      best = s.get();
      best_common = common;
    }
  }
  if (!best || 2 * best_common < prompt.size()) best = oldest;
  best->busy = true;
  cv_.notify_all();
  return best;
}

void SlotPool::advance_serving() {
  // Tickets whose holders gave up are skipped when they reach the front.
  for (auto it = std::find(abandoned_.begin(), abandoned_.end(), serving_); it != abandoned_.end();
       it = std::find(abandoned_.begin(), abandoned_.end(), serving_)) {
    abandoned_.erase(it);
    ++serving_;
  }
}

void SlotPool::release(Slot* s) {
  std::lock_guard lk(mu_);
  s->busy = false;
  s->last_used = ++uses_;
  cv_.notify_all();
}

void SlotPool::shutdown() {
  std::lock_guard lk(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

int SlotPool::queue_depth() const {
  std::lock_guard lk(mu_);
  return waiting_;
}

int SlotPool::busy() const {
  std::lock_guard lk(mu_);
  return int(std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return s->busy; }));
}

int64_t SlotPool::cells_in_use() const {
  int64_t n = 0;
  for (const auto& s : slots_) n += s->cells.load(std::memory_order_relaxed);
  return n;
}

int64_t SlotPool::cells_total() const { return int64_t(slots_.size()) * ex_.plan().n_ctx; }

}  // namespace edgellm::server
