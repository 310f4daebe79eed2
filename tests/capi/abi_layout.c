/* Prints the size and every field offset of the public structs, one per
 * line, for scripts/check-abi.sh to compare with capi/edgellm.layout: a
 * field moved, resized or inserted in the middle changes the ABI even when
 * the symbol list does not. */
#include <stddef.h>
#include <stdio.h>

#include <edgellm/edgellm.h>

#define SIZE(T) printf("%s %u\n", #T, (unsigned)sizeof(T))
#define FIELD(T, f) printf("%s.%s %u\n", #T, #f, (unsigned)offsetof(T, f))

int main(void) {
  SIZE(edgellm_model_options);
  FIELD(edgellm_model_options, n_threads);
  FIELD(edgellm_model_options, load_mode);
  FIELD(edgellm_model_options, pin_threads);
  FIELD(edgellm_model_options, memory_limit);
  SIZE(edgellm_model_info);
  FIELD(edgellm_model_info, n_vocab);
  FIELD(edgellm_model_info, n_ctx_train);
  FIELD(edgellm_model_info, n_layer);
  FIELD(edgellm_model_info, n_embd);
  FIELD(edgellm_model_info, n_head);
  FIELD(edgellm_model_info, n_head_kv);
  FIELD(edgellm_model_info, n_params);
  FIELD(edgellm_model_info, weights_bytes);
  FIELD(edgellm_model_info, bos);
  FIELD(edgellm_model_info, eos);
  FIELD(edgellm_model_info, has_tokenizer);
  FIELD(edgellm_model_info, has_chat_template);
  SIZE(edgellm_context_options);
  FIELD(edgellm_context_options, n_ctx);
  FIELD(edgellm_context_options, n_batch);
  FIELD(edgellm_context_options, type_k);
  FIELD(edgellm_context_options, type_v);
  FIELD(edgellm_context_options, overflow);
  FIELD(edgellm_context_options, n_keep);
  FIELD(edgellm_context_options, n_window);
  FIELD(edgellm_context_options, spill_path);
  FIELD(edgellm_context_options, swa_full);
  SIZE(edgellm_memory_plan);
  FIELD(edgellm_memory_plan, fits);
  FIELD(edgellm_memory_plan, n_ctx);
  FIELD(edgellm_memory_plan, n_batch);
  FIELD(edgellm_memory_plan, weights_bytes);
  FIELD(edgellm_memory_plan, weights_resident_bytes);
  FIELD(edgellm_memory_plan, kv_bytes);
  FIELD(edgellm_memory_plan, buffers_bytes);
  FIELD(edgellm_memory_plan, overhead_bytes);
  FIELD(edgellm_memory_plan, footprint_bytes);
  FIELD(edgellm_memory_plan, total_bytes);
  FIELD(edgellm_memory_plan, memory_limit);
  SIZE(edgellm_context_info);
  FIELD(edgellm_context_info, n_ctx);
  FIELD(edgellm_context_info, n_batch);
  FIELD(edgellm_context_info, n_past);
  FIELD(edgellm_context_info, n_threads);
  FIELD(edgellm_context_info, released);
  FIELD(edgellm_context_info, kv_bytes);
  FIELD(edgellm_context_info, n_prefilled);
  FIELD(edgellm_context_info, prefill_ms);
  FIELD(edgellm_context_info, n_generated);
  FIELD(edgellm_context_info, generate_ms);
  SIZE(edgellm_sampling);
  FIELD(edgellm_sampling, temperature);
  FIELD(edgellm_sampling, top_k);
  FIELD(edgellm_sampling, top_p);
  FIELD(edgellm_sampling, min_p);
  FIELD(edgellm_sampling, repeat_penalty);
  FIELD(edgellm_sampling, repeat_last_n);
  FIELD(edgellm_sampling, n_predict);
  FIELD(edgellm_sampling, seed);
  SIZE(edgellm_generate_result);
  FIELD(edgellm_generate_result, n_generated);
  FIELD(edgellm_generate_result, stop_reason);
  FIELD(edgellm_generate_result, n_past);
  FIELD(edgellm_generate_result, generate_ms);
  return 0;
}
