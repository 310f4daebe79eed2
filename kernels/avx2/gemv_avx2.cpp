// Decode matrix x vector for q4_0, q5_0, q8_0 and iq4_nl weights x q8_0
// activations, AVX2 + FMA + F16C (KernelSet::gemv; reference twin: vec_dot
// per row, the scalar set's gemm; tests/test_kernels_gemm.cpp compares them).
//
// Decode reads each weight byte once: the bound is memory bandwidth
// (qwen2.5-0.5b Q4_0: 346 MB per token) unless unpacking and multiplying
// cannot keep up with the stream, which on AVX2 (no vpdpbusd, 8 int32 lanes)
// they barely do. vec_dot per row spends per block: 4 ops to unpack, 2 sign
// moves, maddubs + madd, cvt, and ~5 on the scale (two scalar half
// conversions, a multiply, a broadcast) before the FMA. Here what depends on
// the activation only is prepared once per call and shared by every row (the
// same design as kernels/avx512/gemv_avx512.cpp, at one block per vector):
//  - d_a of each group of 4 blocks, so a row converts its 4 weight scales
//    with one vcvtph2ps and one multiply, and each block broadcasts its own;
//  - for the unsigned-level formats (q4_0 levels 0..15, q5_0 levels 0..31),
//    the correction -bias * sum(y) per int32 lane: maddubs takes the levels
//    as they are (a pair sums to at most 2 * 31 * 127 = 7874, no int16
//    saturation) and the two sign moves vanish. q8_0 and iq4_nl values are
//    signed (and +128 would saturate maddubs), so they keep dot_i8's sign
//    moves and gain the scale work only.
// Per q4_0 block then: unpack 4, maddubs, madd, add the correction, cvt, FMA,
// broadcast. Instructions per block in the g++ 12 -O3 loops (objdump -d),
// loads and loop control included: vec_dot 21 (42 per pair), this GEMV 15.5
// (62 per 4 blocks). Rows are read one after another in memory
// order with a software prefetch ~2 KB ahead (one sequential stream per
// thread; the hardware prefetcher alone keeps too few lines in flight).
#include <immintrin.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/simd_avx2.h"
#include "kernels/avx2/shared_x86.h"

namespace edgellm {

namespace {

constexpr int kPrefetchBytes = 2304;  // as kernels/avx512/gemv_avx512.cpp (measured there)

// Per format: the 8 int32 lanes of a weight block's integer dot with the
// activation bytes y (element order), given the prepared correction of that
// activation block (unused by the signed formats).
struct Q4 {  // levels 0..15 in element order, value = level - 8
  using Block = block_q4_0;
  static constexpr bool kUnsigned = true;
  static constexpr char kBias = 8;
  static __m256i ints(const Block& x, __m256i y, __m256i corr) {
    return _mm256_add_epi32(dot_u5_i8(nibbles(x.qs), y), corr);
  }
};
struct Q5 {  // levels 0..31 (nibble | fifth bit << 4), value = level - 16
  using Block = block_q5_0;
  static constexpr bool kUnsigned = true;
  static constexpr char kBias = 16;
  static __m256i ints(const Block& x, __m256i y, __m256i corr) {
    return _mm256_add_epi32(dot_u5_i8(levels_q5(x.qs, x.qh), y), corr);
  }
};
struct Q8 {  // signed bytes
  using Block = block_q8_0;
  static constexpr bool kUnsigned = false;
  static constexpr char kBias = 0;
  static __m256i ints(const Block& x, __m256i y, __m256i) { return dot_i8(load256(x.qs), y); }
};
struct IQ4NL {  // the nibbles' signed grid values (one vpshufb)
  using Block = block_iq4_nl;
  static constexpr bool kUnsigned = false;
  static constexpr char kBias = 0;
  static __m256i ints(const Block& x, __m256i y, __m256i) { return dot_i8(values_iq4(x.qs), y); }
};

struct alignas(16) Scales4 {
  float d[4];  // d_a of 4 consecutive blocks
};

// One row against the activation and its prepared parts, blocks in memory
// order; two accumulators (even / odd blocks) hide the FMA latency.
template <class F>
inline float row_dot(int64_t nb, const typename F::Block* x, const block_q8_0* y, const __m256i* corr,
                     const Scales4* da4) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  const __m256i none = _mm256_setzero_si256();
  auto block = [&](int64_t i, __m256 scale, __m256 acc) {
    const __m256i c = F::kUnsigned ? _mm256_load_si256(corr + i) : none;
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(F::ints(x[i], load256(y[i].qs), c)), scale, acc);
  };
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    prefetch_step<4 * sizeof(typename F::Block)>(x + i, kPrefetchBytes);
    const __m128 s4 = _mm_mul_ps(scales4(x + i), _mm_load_ps(da4[i / 4].d));
    acc0 = block(i, _mm256_broadcastss_ps(s4), acc0);
    acc1 = block(i + 1, _mm256_broadcastss_ps(_mm_movehdup_ps(s4)), acc1);
    const __m128 hi = _mm_movehl_ps(s4, s4);
    acc0 = block(i + 2, _mm256_broadcastss_ps(hi), acc0);
    acc1 = block(i + 3, _mm256_broadcastss_ps(_mm_movehdup_ps(hi)), acc1);
  }
  // Even blocks into acc0, odd into acc1, as vec_dot sums them: the result
  // is bit-identical to it (and to the AVX2 GEMM that equals vec_dot).
  for (; i < nb; ++i) {
    __m256& acc = i % 2 ? acc1 : acc0;
    acc = block(i, _mm256_set1_ps(half(x[i].d) * half(y[i].d)), acc);
  }
  return hsum(_mm256_add_ps(acc0, acc1));
}

// Scratch (GemmScratchFn): the prepared parts of one token's activation
// (reused by the next token):
//   [__m256i corr[nb]] (unsigned formats only) [Scales4 da4[nb / 4]]   each rounded up to 64 B
// with nb = n / 32: 32 B per block + 16 B per 4, e.g. 896 wide: 896 + 448 B,
// 4864 wide: 4864 + 2432 B (L1-resident).
size_t gemv_scratch(int64_t n, int64_t, int64_t) {
  const size_t nb = size_t(n / QK8_0);
  return scratch_round64(nb * sizeof(__m256i)) + scratch_round64(nb / 4 * sizeof(Scales4));
}

template <class F>
void gemv(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok, float* y,
          size_t ldy, void* scratch) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  // The caller's area: gemv_scratch(n, n_rows, n_tok) bytes, 64-byte aligned.
  auto* corr = static_cast<__m256i*>(scratch);
  auto* da4 = reinterpret_cast<Scales4*>(static_cast<uint8_t*>(scratch) + scratch_round64(size_t(nb) * sizeof(__m256i)));
  const __m256i bias = _mm256_set1_epi8(F::kBias);
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* act = reinterpret_cast<const block_q8_0*>(static_cast<const uint8_t*>(a) + size_t(t) * as);
    for (int64_t i = 0; i + 4 <= nb; i += 4) _mm_store_ps(da4[size_t(i / 4)].d, scales4(act + i));
    if constexpr (F::kUnsigned)
      for (int64_t i = 0; i < nb; ++i)
        _mm256_store_si256(corr + i, _mm256_sub_epi32(_mm256_setzero_si256(), dot_u5_i8(bias, load256(act[i].qs))));
    float* yt = y + size_t(t) * ldy;
    for (int64_t r = 0; r < n_rows; ++r)
      yt[r] = row_dot<F>(nb, reinterpret_cast<const typename F::Block*>(wb + size_t(r) * ws), act, corr, da4);
  }
}

}  // namespace

void register_gemv_avx2(KernelSet& k) { set_gemvs(k, {gemv<Q4>, gemv<Q5>, gemv<Q8>, gemv<IQ4NL>, gemv_scratch}); }

}  // namespace edgellm

#include "kernels/isa_end.h"
