// A session: one conversation's state over a loaded model. It owns the KV
// cache and every activation buffer, sized from (n_ctx, n_batch) and allocated
// once, in one block, at construction. decode() never allocates.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "base/thread_pool.h"
#include "model/model.h"

namespace edgellm {

struct SessionConfig {
  int64_t n_ctx = 0;      // 0: the model's training context, capped at 4096
  int64_t n_batch = 512;  // tokens per forward pass during prefill
  int n_threads = 0;      // 0: hardware concurrency
  bool pin_threads = false;  // bind thread i to the i-th allowed CPU (ThreadPool)
  GgmlType kv_type = GgmlType::F16;  // F16 or F32
  bool logits_all = false;  // room for logits of every token of a batch (eval), not just the last
};

class Session {
 public:
  Session(const Model& model, const SessionConfig& cfg);
  ~Session();

  // Runs n tokens (n <= n_batch) at positions n_past()..n_past()+n-1, appends
  // their keys/values to the cache and returns logits: for the last token only
  // ([n_vocab]) or, with all_logits (needs SessionConfig::logits_all), for each
  // of the n tokens ([n][n_vocab]).
  // The pointer stays valid until the next call.
  const float* decode(const int32_t* tokens, int64_t n, bool all_logits = false);

  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_batch() const { return n_batch_; }
  const Model& model() const { return model_; }
  // Forget cached positions >= n (n = 0 resets the conversation).
  void truncate(int64_t n);
  // Bytes this session allocated: KV cache and activation buffers.
  size_t kv_bytes() const { return kv_bytes_; }
  size_t buffer_bytes() const { return arena_bytes_; }
  ThreadPool& pool() { return pool_; }

 private:
  struct Buffers;
  void forward_layer(int64_t il, int64_t T);
  void attention(int64_t il, int64_t T);

  const Model& model_;
  int64_t n_ctx_, n_batch_;
  GgmlType kv_type_;
  bool logits_all_;
  int64_t n_past_ = 0;
  ThreadPool pool_;
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> arena_;
  size_t arena_bytes_ = 0, kv_bytes_ = 0;
  std::unique_ptr<Buffers> b_;
};

}  // namespace edgellm
