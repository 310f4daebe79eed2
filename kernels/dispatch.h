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
using GemmFn = void (*)(int64_t n, const void* w, size_t w_stride, int64_t n_rows, const void* a,
                        size_t a_stride, int64_t n_tok, float* y, size_t ldy);

// Online-softmax attention of nq query heads that share one KV head, for a
// block of n_tok consecutive query tokens (token i sees cache rows
// 0 .. n_kv + i - 1: causal) over an f16 cache (the algorithm of
// kernels/attention.h; attend_group_reference() there is the scalar twin).
// Sharing the group and the tokens lets a kernel convert each K and V row to
// f32 once for n_tok * nq query rows instead of once per row.
struct AttendGroup {
  const float* q = nullptr;  // token i, head h at q + i * q_tok_stride + h * q_stride (head_dim floats)
  size_t q_stride = 0, q_tok_stride = 0;
  int nq = 0, n_tok = 1;
  const uint16_t* k = nullptr;  // position p's key at k + p * k_stride
  const uint16_t* v = nullptr;  // position p's value at v + p * v_stride
  size_t k_stride = 0, v_stride = 0;
  int64_t n_kv = 0, head_dim = 0, head_dim_v = 0;
  float scale = 1.0f;
  float* out = nullptr;  // like q: out + i * out_tok_stride + h * out_stride (head_dim_v floats)
  size_t out_stride = 0, out_tok_stride = 0;
};
using AttendGroupF16Fn = void (*)(const AttendGroup& g);
// gate[i] = silu(gate[i]) * up[i]
using SwigluFn = void (*)(float* gate, const float* up, int64_t n);

constexpr int kMaxTypeId = 40;

struct KernelSet {
  const char* isa = "scalar";
  VecDotFn vec_dot[kMaxTypeId] = {};          // by weight type id
  QuantizeRowFn quantize_act[kMaxTypeId] = {};  // by activation (vec_dot_type) id
  // Scalar only (every set inherits them): the per-head reference attention and
  // the f32-KV path; SIMD sets attend f16 caches through attend_group_f16.
  KvDotF16Fn kv_dot_f16 = nullptr;
  KvAxpyF16Fn kv_axpy_f16 = nullptr;
  // Null in the scalar set: attention.cpp then runs the reference per head.
  AttendGroupF16Fn attend_group_f16 = nullptr;
  SwigluFn swiglu = nullptr;
  // By weight type id; null where the set has no GEMM kernel for the type
  // (matmul then calls vec_dot per row and token). Unlike the other entries,
  // a SIMD set does NOT inherit the scalar set's gemm (a per-element loop over
  // the scalar vec_dot would be slower than the set's own vec_dot): the scalar
  // set's entries are the reference twins the tests compare against.
  GemmFn gemm[kMaxTypeId] = {};
  // Decode (one activation row; same signature, n_tok is normally 1) over a
  // block of weight rows, where sharing the activation's work across several
  // rows beats vec_dot row by row. Null: matmul calls vec_dot per row. Like
  // gemm, not inherited from the scalar set; agrees with vec_dot within its
  // tolerance.
  GemmFn gemv[kMaxTypeId] = {};
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

// Per-ISA sets (kernels/avx2, kernels/avx512): each overwrites, in a copy of
// the scalar set, only the entries it implements and sets isa. Call only when
// cpu_features() says the host can run that set.
void register_avx2(KernelSet& k);
void register_avx512(KernelSet& k);
// kernels/neon: SDOT integer dots where hwcaps report dotprod, else ARMv8.0 NEON.
void register_neon(KernelSet& k);
// kernels/avx2/attention_avx2.cpp, kernels/avx512/attention_avx512.cpp,
// kernels/neon/attention_neon.cpp: attend_group_f16 and swiglu
// (kernels/attention_tile.h at 8 / 16 / 4 lanes).
void register_attention_avx2(KernelSet& k);
void register_attention_avx512(KernelSet& k);
void register_attention_neon(KernelSet& k);  // kernels/neon/attention_neon.cpp (4 lanes)
// Called by register_avx2 / register_avx512 / register_neon: q5_0 x q8_0
// (kernels/*/dot_q5_0_*.cpp) and q4_K/q5_K/q6_K x q8_K (dot_kquant_*.cpp).
void register_q5_0_avx2(KernelSet& k);
void register_kquant_avx2(KernelSet& k);
void register_q5_0_avx512(KernelSet& k);
void register_kquant_avx512(KernelSet& k);
void register_q5_0_neon(KernelSet& k, bool dotprod);
void register_kquant_neon(KernelSet& k, bool dotprod);
// Prefill GEMM (KernelSet::gemm): kernels/avx2/gemm_avx2.cpp,
// kernels/avx512/gemm_avx512.cpp, kernels/neon/gemm_neon.cpp.
void register_gemm_avx2(KernelSet& k);
// kernels/avx2/gemm_kquant_avx2.cpp: q2_K..q6_K (one tile over
// tensor/kquant_unpack's integer form). only_missing: fill only the types the
// set has no gemm for (the AVX-512 set takes q2_K and q3_K from here).
void register_gemm_kquant_avx2(KernelSet& k, bool only_missing = false);
void register_gemm_avx512(KernelSet& k);
// kernels/{avx2,avx512,neon}/gemm_float_*.cpp: f32 / f16 / bf16 weights
// (kernels/gemm_float_tile.h at 8 / 16 / 4 lanes).
void register_gemm_float_avx2(KernelSet& k);
void register_gemm_float_avx512(KernelSet& k);
void register_gemm_float_neon(KernelSet& k);
void register_gemv_avx512(KernelSet& k);  // kernels/avx512/gemv_avx512.cpp (q4_0, q5_0, q8_0)
void register_gemv_kquant_avx512(KernelSet& k);  // kernels/avx512/gemv_kquant_avx512.cpp (q4_K, q5_K, q6_K)
void register_gemm_kquant_avx512(KernelSet& k);  // kernels/avx512/gemm_kquant_avx512.cpp (q4_K, q5_K, q6_K)
void register_gemm_neon(KernelSet& k);
// kernels/neon/gemm_kquant_neon.cpp: q2_K..q6_K (SDOT, widening, or the SMMLA
// tile of gemm_kquant_i8mm_neon.cpp where hwcaps report i8mm).
void register_gemm_kquant_neon(KernelSet& k);

}  // namespace edgellm
