// The shared half of inference: the thread pool, the activation arena and the
// optimized forward pass (f32 activations, weights in their GGUF type, int8
// dot products via kernels/). It holds no sequence state: every call names
// the KvCache it extends, so several sequences (server slots, C API contexts)
// share one executor, one pool and one copy of the weights, one at a time.
// The double-precision model/reference_forward.cpp is its oracle.
//
// Everything is sized by the MemoryPlan given to the constructor and
// allocated there, in one block; forward() never allocates.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "base/thread_pool.h"
#include "model/model.h"
#include "runtime/kv_cache.h"
#include "runtime/memory_plan.h"

namespace edgellm {

class Executor {
 public:
  Executor(const Model& model, const MemoryPlan& plan, bool pin_threads = false);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs n tokens (n <= n_batch) at positions kv.size() .. kv.size()+n-1,
  // writes their keys/values into kv, records their ids there, and returns
  // logits: for the last token ([n_vocab]) or, with all_logits (needs a plan
  // with logits_all), for each of the n tokens ([n][n_vocab]). The pointer
  // stays valid until the next call.
  const float* forward(KvCache& kv, const int32_t* tokens, int64_t n, bool all_logits = false);

  // One pass over several sequences: part i runs its n tokens at positions
  // kv->size() .. kv->size()+n-1 of its own cache (attention sees only that
  // cache), the parts' tokens sharing every matrix product. Returns one row
  // of logits per part, for its last token ([n_parts][n_vocab]). Parts name
  // distinct caches; their tokens add up to at most n_batch, and there are
  // at most max_parts() of them.
  struct Part {
    KvCache* kv = nullptr;
    const int32_t* tokens = nullptr;
    int64_t n = 0;
  };
  const float* forward_batch(const Part* parts, int64_t n_parts);
  // Sequences one batched pass can carry: the plan's logits rows.
  int64_t max_parts() const;

  // Rotates the keys of cells [first, end) of every layer by delta positions
  // (negative: towards 0), in place: after KvCache::erase moved them down.
  void rotate_keys(KvCache& kv, int64_t first, int64_t end, int64_t delta);

  // Memory pressure: frees the activation arena; the next forward()
  // allocates it again (the same bytes).
  void release_buffers();
  bool buffers_resident() const { return arena_ != nullptr; }

  const Model& model() const { return model_; }
  const MemoryPlan& plan() const { return plan_; }
  int64_t n_batch() const { return plan_.n_batch; }
  ThreadPool& pool() { return pool_; }

 private:
  struct Buffers;
  void allocate_arena();
  const float* run(const Part* parts, int64_t n_parts, bool all_logits);
  void per_layer_inputs(int64_t T);
  void forward_layer(const Part* parts, int64_t n_parts, int64_t il, int64_t T);
  void attention(KvCache& kv, int64_t il, int64_t t0, int64_t n);
  const float* rope_table(int64_t il) const;

  const Model& model_;
  const MemoryPlan plan_;
  ThreadPool pool_;
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> arena_;
  std::unique_ptr<Buffers> b_;
  // Per token of the pass being run: its id, its position in its own cache
  // and which part it belongs to (n_batch each, sized at construction).
  std::vector<int32_t> tok_id_;
  std::vector<int64_t> tok_pos_;
  std::vector<int32_t> tok_part_;
};

}  // namespace edgellm
