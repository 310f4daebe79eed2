// One dispatch table of row kernels, chosen once at start-up from the CPU's
// features (or EDGELLM_ISA=scalar|avx2|avx512|neon). Every entry has a scalar
// reference twin in tensor/ (the oracle the kernel tests compare against).
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensor/types.h"

namespace edgellm {

using VecDotFn = float (*)(int64_t n, const void* w_row, const void* act_row);
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n);
// Attention over an f16 KV cache: q . k and acc += w * v for one cache row.
using KvDotF16Fn = float (*)(const float* q, const uint16_t* k, int64_t n);
using KvAxpyF16Fn = void (*)(float* acc, float w, const uint16_t* v, int64_t n);
// Prefill GEMM over a block of weight rows and activation rows (tokens):
//   y[t * ldy + r] = vec_dot(n, w + r * w_stride, a + t * a_stride)
// for r < n_rows, t < n_tok, n elements per row (whole blocks). Any n_rows and
// n_tok >= 1: the kernel tiles them into register-blocked micro-tiles itself
// and handles the edge tiles. Same tolerance contract as vec_dot.
// scratch: this thread's work area (packed weight tiles, prepared
// activations), 64-byte aligned, at least the bytes the matching
// GemmScratchFn announces for (n, n_rows, n_tok); null where it announces 0.
// Its contents on entry do not matter (no clearing needed) and are garbage on
// return; a kernel never allocates.
using GemmFn = void (*)(int64_t n, const void* w, size_t w_stride, int64_t n_rows, const void* a,
                        size_t a_stride, int64_t n_tok, float* y, size_t ldy, void* scratch);
// Bytes of scratch one call of the matching GemmFn needs for these sizes:
// exact (each array of the kernel's layout rounded up to 64 bytes), known
// before the call, and nondecreasing in each argument (matmul plans a whole
// matrix with its full row count and largest token block). A null
// GemmScratchFn means 0: the kernel uses no scratch.
using GemmScratchFn = size_t (*)(int64_t n, int64_t n_rows, int64_t n_tok);
inline size_t gemm_scratch_bytes(GemmScratchFn f, int64_t n, int64_t n_rows, int64_t n_tok) {
  return f ? f(n, n_rows, n_tok) : 0;
}
// Bytes rounded up to a multiple of 64: kernels lay out their scratch arrays
// one after another at such offsets, so each starts 64-byte aligned.
constexpr size_t scratch_round64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Online-softmax attention of nq query heads that share one KV head, for a
// block of n_tok consecutive query tokens (token i sees cache rows
// 0 .. n_kv + i - 1: causal), the algorithm of kernels/attention.h;
// attend_group_reference() there is the scalar twin. Sharing the group and
// the tokens lets a kernel read (and widen) each K and V row once for
// n_tok * nq query rows instead of once per row.
//
// Cache types: K and V each F16, Q8_0 or Q4_0, independently (F32 caches take
// the reference path in attention.cpp). Rows are read in place:
//   - F16 K: the scores in f32 against the widened row;
//   - Q8_0 / Q4_0 K: each query row is quantized to q8_0 once per call
//     (quantize_q8, bit-identical in every set) and the scores are the int8
//     block dots of vec_dot_q8_0_q8_0 / vec_dot_q4_0_q8_0, times scale;
//   - V of any type: widened to f32 (f16 exactly; blocks as dequantize_row),
//     then out += p * v.
struct AttendGroup {
  const float* q = nullptr;  // token i, head h at q + i * q_tok_stride + h * q_stride (head_dim floats)
  size_t q_stride = 0, q_tok_stride = 0;
  int nq = 0, n_tok = 1;
  const uint8_t* k = nullptr;  // position p's key (head_dim elements of k_type) at k + p * k_stride bytes
  const uint8_t* v = nullptr;  // position p's value (head_dim_v elements of v_type) at v + p * v_stride bytes
  GgmlType k_type = GgmlType::F16, v_type = GgmlType::F16;
  size_t k_stride = 0, v_stride = 0;  // bytes
  // f32 -> q8_0 of one query row (block-type K only); null: the reference
  // quantizer (tensor/types.h). Every set's quantize_act[Q8_0] writes the
  // same bytes as the reference.
  QuantizeRowFn quantize_q8 = nullptr;
  int64_t n_kv = 0, head_dim = 0, head_dim_v = 0;
  // Sliding window: with window > 0 the row of token i (at position
  // p = n_kv - 1 + i) sees only positions p - window + 1 .. p.
  int64_t window = 0;
  // Ring cache: with ring > 0 position p's rows sit at row p % ring (a
  // sliding layer's cache holding only the last ring positions); ring is a
  // multiple of 32 and at least window + n_tok - 1. 0: position p at row p.
  int64_t ring = 0;
  float scale = 1.0f;
  // Logit soft-capping (gemma2): a scaled score s becomes cap * tanh(s / cap)
  // before the softmax; 0: none.
  float softcap = 0.0f;
  float* out = nullptr;  // like q: out + i * out_tok_stride + h * out_stride (head_dim_v floats)
  size_t out_stride = 0, out_tok_stride = 0;
};
using AttendGroupFn = void (*)(const AttendGroup& g);
// gate[i] = act(gate[i]) * up[i]: silu (SwiGLU) or tanh-approximated gelu (GeGLU)
using SwigluFn = void (*)(float* gate, const float* up, int64_t n);

constexpr int kMaxTypeId = 40;

struct KernelSet {
  const char* isa = "scalar";
  VecDotFn vec_dot[kMaxTypeId] = {};          // by weight type id
  QuantizeRowFn quantize_act[kMaxTypeId] = {};  // by activation (vec_dot_type) id
  // Scalar only (every set inherits them): the per-head reference attention and
  // the f32-KV path; SIMD sets attend f16 / q8_0 / q4_0 caches through attend_group.
  KvDotF16Fn kv_dot_f16 = nullptr;
  KvAxpyF16Fn kv_axpy_f16 = nullptr;
  // Null in the scalar set: attention.cpp then runs the reference per head.
  AttendGroupFn attend_group = nullptr;
  SwigluFn swiglu = nullptr;
  SwigluFn geglu = nullptr;  // gemma's FFN
  // By weight type id; null where the set has no GEMM kernel for the type
  // (matmul then calls vec_dot per row and token). Unlike the other entries,
  // a SIMD set does NOT inherit the scalar set's gemm (a per-element loop over
  // the scalar vec_dot would be slower than the set's own vec_dot): the scalar
  // set's entries are the reference twins the tests compare against.
  GemmFn gemm[kMaxTypeId] = {};
  // The per-call scratch bytes of gemm[t] (null: none; see GemmScratchFn),
  // always set together with gemm[t].
  GemmScratchFn gemm_scratch[kMaxTypeId] = {};
  // Decode (one activation row; same signature, n_tok is normally 1) over a
  // block of weight rows, where sharing the activation's work across several
  // rows beats vec_dot row by row. Null: matmul calls vec_dot per row. Like
  // gemm, not inherited from the scalar set; agrees with vec_dot within its
  // tolerance.
  GemmFn gemv[kMaxTypeId] = {};
  GemmScratchFn gemv_scratch[kMaxTypeId] = {};  // of gemv[t], as gemm_scratch
  // The most tokens one gemv[t] call serves with one read of each weight
  // row (the unpacking shared, each token's result bit for bit its own
  // single-token one): a batched decode step of that many sequences goes
  // through it. 0: the gemv takes its tokens one after another.
  int gemv_batch[kMaxTypeId] = {};
  // By weight type: false (the default) when every gemm result is
  // bit-identical to this set's vec_dot (the same float operations in the
  // same order), so batching never changes a result; true where the GEMM sums
  // in another order for speed (AVX-512 rows in lanes; the K-quant and float
  // tiles); the results then agree within the kernels' tolerance.
  bool gemm_reordered[kMaxTypeId] = {};
};

// The active set. First call reads EDGELLM_ISA and the CPU features.
const KernelSet& kernels();
// Every set this host can run ("scalar" first), for tests that run on each.
int available_kernel_sets(const KernelSet** out, int max);
// Force a set by name; throws if the host cannot run it. For tests and --isa.
void select_kernels(const char* isa);

// The SIMD sets' parts: each translation unit's register_* overwrites, in a
// copy of the scalar set, only the entries it implements. dispatch.cpp holds
// one table per set listing its parts in order, and calls them only when
// cpu_features() says the host can run that set. Where a part picks among
// paths by a feature the set does not require (NEON: SDOT, SMMLA), it reads
// cpu_features() itself.
//
// Parts of every SIMD set, at 8 / 16 / 4 lanes (kernels/avx2, kernels/avx512,
// kernels/neon):
//   register_dot_*        q4_0 / q8_0 x q8_0 dots and the q8_0 activation quantizer (dot_*.cpp)
//   register_q5_*         q5_0 x q8_0, q5_1 x q8_1 (dot_q5_0_*.cpp, one shared 5-bit unpack)
//   register_kquant_*     q4_K / q5_K / q6_K x q8_K and the q8_K quantizer (dot_kquant_*.cpp)
//   register_iq4_*        iq4_nl x q8_0, iq4_xs x q8_K: the nibble's grid value by
//                         one byte shuffle (vpshufb / TBL), then the int8 dots (dot_iq4_*.cpp)
//   register_float_*      f32 / f16 / bf16 dots and prefill GEMMs (kernels/float_tile.h)
//   register_attention_*  attend_group, swiglu, geglu (kernels/attention_tile.h)
//   register_gemm_*       prefill GEMMs of q4_0 / q5_0 / q8_0 / iq4_nl (gemm_*.cpp)
//   register_gemv_*       decode GEMVs of the same four types (gemv_*.cpp)
// iq4_nl's GEMM and GEMV are the q8_0 ones fed the looked-up values; iq4_xs's
// GEMMs are the K-quant tiles (and on AVX-512 its decode GEMV the K-quant
// one). Types without a GEMV decode through vec_dot per row.
void register_dot_avx2(KernelSet& k);
void register_q5_avx2(KernelSet& k);
void register_kquant_avx2(KernelSet& k);
void register_iq4_avx2(KernelSet& k);
void register_float_avx2(KernelSet& k);
void register_attention_avx2(KernelSet& k);
void register_gemm_avx2(KernelSet& k);
// kernels/avx2/gemm_kquant_avx2.cpp: q2_K..q6_K and iq4_xs (one tile over
// tensor/kquant_unpack's integer form). only_missing: fill only the types the
// set has no gemm for (the AVX-512 set takes q2_K and q3_K from here).
void register_gemm_kquant_avx2(KernelSet& k, bool only_missing = false);
// kernels/avx2/gemm_kquant_lanes_avx2.cpp: q4_K, q5_K, q6_K and iq4_xs with
// weight rows in lanes (replacing the above's for those four).
void register_gemm_kquant_lanes_avx2(KernelSet& k);
void register_gemv_avx2(KernelSet& k);
void register_gemv_kquant_avx2(KernelSet& k);  // q4_K, q5_K, q6_K

void register_dot_avx512(KernelSet& k);
void register_q5_avx512(KernelSet& k);
void register_kquant_avx512(KernelSet& k);
void register_iq4_avx512(KernelSet& k);
void register_float_avx512(KernelSet& k);
void register_attention_avx512(KernelSet& k);
void register_gemm_avx512(KernelSet& k);
void register_gemm_kquant_avx512(KernelSet& k);  // q4_K, q5_K, q6_K, iq4_xs
void register_gemv_avx512(KernelSet& k);
void register_gemv_kquant_avx512(KernelSet& k);  // q4_K, q5_K, q6_K, iq4_xs

// NEON: SDOT integer dots where the CPU has FEAT_DotProd, else the widening
// ARMv8.0 ones; the GEMMs use SMMLA tiles where it has FEAT_I8MM.
void register_dot_neon(KernelSet& k);
void register_q5_neon(KernelSet& k);
void register_kquant_neon(KernelSet& k);
void register_iq4_neon(KernelSet& k);
void register_float_neon(KernelSet& k);
void register_attention_neon(KernelSet& k);
void register_gemm_neon(KernelSet& k);
void register_gemm_kquant_neon(KernelSet& k);  // q2_K..q6_K, iq4_xs
void register_gemv_neon(KernelSet& k);

// The decode GEMVs over q8_0 activations every SIMD set has, one per weight
// type (q4_0, q5_0, q8_0, iq4_nl), all with the same scratch size function
// (defined in dispatch.cpp: generic code, never compiled for an ISA).
struct GemvQ8_0Family {
  GemmFn q4_0, q5_0, q8_0, iq4_nl;
  GemmScratchFn scratch;
  int batch = 0;  // gemv_batch for all four
};
void set_gemvs(KernelSet& k, const GemvQ8_0Family& f);

}  // namespace edgellm
