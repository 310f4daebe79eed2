// Decode matrix x vector for q4_K, q5_K and q6_K weights x q8_K activations,
// AVX2 (KernelSet::gemv; reference twin: vec_dot per row, the scalar set's
// gemm). The integer core is the vec_dot's (kquant_avx2.h); what changes is
// the work around it, as in gemv_kquant_avx512.cpp:
//   - no horizontal sum per super-block: vec_dot reduces 8 int32 lanes and
//     scales in scalar float every 256 elements; here the lanes are converted
//     and accumulated by one FMA into a float vector, reduced once per row;
//     the mins' term likewise into 4 lanes of its own (d and dmin converted
//     together), where it was a horizontal int sum, a conversion and a
//     scalar FMA chain per super-block;
//   - rows one after another in memory order, one sequential stream per
//     thread, with a software prefetch 8 KB ahead (kGemvPrefetchBytes;
//     synth llama3.2-3b Q4_K_M, 2 threads: 11.0 tok/s at 2 KB, 11.6 at 4 KB,
//     alternating runs; 8 KB: kernels/stream_prefetch.h).
// Bytes per super-block of a row: q4_K 144, q5_K 176, q6_K 210 for 256 MACs;
// ~30 vector ops each, so one core needs ~1 op per 5-7 bytes streamed to
// keep up with ~10 GB/s per core.
// Results differ from vec_dot only in the order of the float operations.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/kquant_avx2.h"
#include "kernels/avx2/simd_avx2.h"

namespace edgellm {

namespace {


template <class Block>
float row_dot(int64_t nb, const Block* x, const block_q8_K* y) {
  __m256 acc = _mm256_setzero_ps();
  __m128 mins = _mm_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    prefetch_step<sizeof(Block)>(x + i, kGemvPrefetchBytes);
    if constexpr (std::is_same_v<Block, block_q6_K>) {
      const float dd = half(x[i].d) * y[i].d;
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(q6_isum(x[i], y[i])), _mm256_set1_ps(dd), acc);
    } else {
      // d and dmin (adjacent halves) in one conversion, times d_a.
      static_assert(offsetof(Block, dmin) == offsetof(Block, d) + 2, "d, dmin adjacent");
      uint32_t dpair;
      std::memcpy(&dpair, &x[i].d, 4);
      const __m128 dm = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(int(dpair))), _mm_set1_ps(y[i].d));
      const __m128i sm = scales_mins_k4(x[i].scales);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(affine_isum(x[i], sm, y[i])), _mm256_broadcastss_ps(dm), acc);
      // The mins' term in 4 lanes of its own, reduced once per row.
      mins = _mm_fmadd_ps(_mm_cvtepi32_ps(mins_bsums4(sm, y[i].bsums)), _mm_permute_ps(dm, 0x55), mins);
    }
  }
  __m128 m = _mm_add_ps(mins, _mm_movehl_ps(mins, mins));
  m = _mm_add_ss(m, _mm_movehdup_ps(m));
  return hsum(acc) - _mm_cvtss_f32(m);
}

template <class Block>
void gemv(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok, float* y,
          size_t ldy, void*) {
  const int64_t nb = n / QK_K;
  const auto* wb = static_cast<const uint8_t*>(w);
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* act = reinterpret_cast<const block_q8_K*>(static_cast<const uint8_t*>(a) + size_t(t) * as);
    float* yt = y + size_t(t) * ldy;
    for (int64_t r = 0; r < n_rows; ++r) yt[r] = row_dot(nb, reinterpret_cast<const Block*>(wb + size_t(r) * ws), act);
  }
}

}  // namespace

// No scratch: the activation side needs no preparation here.
void register_gemv_kquant_avx2(KernelSet& k) {
  k.gemv[int(GgmlType::Q4_K)] = gemv<block_q4_K>;
  k.gemv[int(GgmlType::Q5_K)] = gemv<block_q5_K>;
  k.gemv[int(GgmlType::Q6_K)] = gemv<block_q6_K>;
}

}  // namespace edgellm

#include "kernels/isa_end.h"
