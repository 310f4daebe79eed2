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
//    moves.
// q4_0, q5_0 and iq4_nl then go two blocks per vector (row_dot_pairs): elements
// 0..15 of both blocks in one ymm and 16..31 in another, so the unpack, the
// vpmaddwd, the cvt and the FMA each serve two blocks; per q4_0 pair: 2
// loads + insert, and, shift + and, 2 maddubs, an int16 add, madd, the
// correction, cvt, FMA (the g++ 12 loop: ~12.5 instructions per block,
// scales and loop control included, against 15.5 one block at a time).
// Rows are read one after another in memory order with a software prefetch
// 8 KB ahead (one sequential stream per thread; the hardware prefetcher
// alone keeps too few lines in flight). One thread, the GEMV alone, mean
// GB/s (Zen 5, 2026-12-07), before -> after: q4_0 19-20 -> 27-28.6, q5_0
// 16.6-17.2 -> 20-21, iq4_nl 16.0-16.4 -> 21.2-21.8, q8_0 (the prefetch
// distance only) 30-32 -> 39-41.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "tensor/blocks.h"

#include "kernels/avx2/isa_begin.h"  // AVX2 code from here to kernels/isa_end.h
#include "kernels/avx2/simd_avx2.h"
#include "kernels/avx2/shared_x86.h"

namespace edgellm {

namespace {

// The nibbles of two blocks' 16 bytes qs0, qs1 (q4_0's layout) as lo =
// elements 0..15 of the first block, then of the second; hi = elements
// 16..31 of each: the bytes side by side, an and, a shift + and.
inline void nibbles_pair(const uint8_t* qs0, const uint8_t* qs1, __m256i& lo, __m256i& hi) {
  const __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(qs0)), load128(qs1), 1);
  const __m256i m = _mm256_set1_epi8(0x0F);
  lo = _mm256_and_si256(q, m);
  hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m);
}

// The pair formats' activation side per 2 blocks (96 B): elements 0..15 of
// block i then of i+1, elements 16..31 of each, and -bias * sum(y) per int32
// lane (lanes 0..3 block i, 4..7 block i+1).
struct PairPrep {
  __m256i ylo, yhi, corr;
};

// The int32 lanes of two blocks of unsigned levels (lo, hi as nibbles_pair
// lays them out) against their prepared activation: two vpmaddubsw whose
// int16 sums add (at most 2 x 2 x 31 x 127 = 15748), one vpmaddwd and the
// correction.
inline __m256i unsigned_pair_ints(__m256i lo, __m256i hi, const PairPrep& p) {
  const __m256i s16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo, p.ylo), _mm256_maddubs_epi16(hi, p.yhi));
  return _mm256_add_epi32(_mm256_madd_epi16(s16, _mm256_set1_epi16(1)), p.corr);
}

// Per format: the 8 int32 lanes of a weight block's integer dot with the
// activation bytes y (element order), given the prepared correction of that
// activation block (unused by the signed formats).
struct Q4 {  // levels 0..15 in element order, value = level - 8
  using Block = block_q4_0;
  static constexpr char kBias = 8;
  static __m256i ints(const Block& x, __m256i y, __m256i corr) {
    return _mm256_add_epi32(dot_u5_i8(nibbles(x.qs), y), corr);
  }
  // Two blocks at once (row_dot_pairs): the 16 bytes of each side by side,
  // an and and a shift + and: lo = elements 0..15 of block i, then of i+1;
  // hi = elements 16..31 of each.
  static constexpr bool kPairs = true;
  static __m256i pair_ints(const Block* x, const PairPrep& p) {
    __m256i lo, hi;
    nibbles_pair(x[0].qs, x[1].qs, lo, hi);
    return unsigned_pair_ints(lo, hi, p);
  }
};
struct Q5 {  // levels 0..31 (nibble | fifth bit << 4), value = level - 16
  using Block = block_q5_0;
  static constexpr char kBias = 16;
  static __m256i ints(const Block& x, __m256i y, __m256i corr) {
    return _mm256_add_epi32(dot_u5_i8(levels_q5(x.qs, x.qh), y), corr);
  }
  // Two blocks at once, as Q4's, plus the fifth bits: both blocks' qh words
  // in one broadcast 64-bit lane; per half a vpshufb gives byte j the qh byte
  // holding its bit (lo: bytes 0, 1 of block i, then 4, 5 of i+1; hi: 2, 3
  // and 6, 7), an and + cmpeq tests it, and an and + or puts 16 in.
  static constexpr bool kPairs = true;
  static __m256i pair_ints(const Block* x, const PairPrep& p) {
    __m256i lo, hi;
    nibbles_pair(x[0].qs, x[1].qs, lo, hi);
    uint32_t h0, h1;
    std::memcpy(&h0, x[0].qh, 4);
    std::memcpy(&h1, x[1].qh, 4);
    const __m256i h = _mm256_set1_epi64x(int64_t(uint64_t(h0) | uint64_t(h1) << 32));
    const __m256i pick_lo = _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0404040404040404,
                                               0x0505050505050505);
    const __m256i pick_hi = _mm256_add_epi8(pick_lo, _mm256_set1_epi8(2));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201)), c16 = _mm256_set1_epi8(16);
    const __m256i b_lo = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(h, pick_lo), bit), bit);
    const __m256i b_hi = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(h, pick_hi), bit), bit);
    lo = _mm256_or_si256(lo, _mm256_and_si256(b_lo, c16));
    hi = _mm256_or_si256(hi, _mm256_and_si256(b_hi, c16));
    return unsigned_pair_ints(lo, hi, p);
  }
};
struct Q8 {  // signed bytes
  using Block = block_q8_0;
  static constexpr char kBias = 0;
  static __m256i ints(const Block& x, __m256i y, __m256i) { return dot_i8(load256(x.qs), y); }
  static constexpr bool kPairs = false;
};
struct IQ4NL {  // the nibbles' signed grid values (one vpshufb)
  using Block = block_iq4_nl;
  static constexpr char kBias = 0;
  static __m256i ints(const Block& x, __m256i y, __m256i) { return dot_i8(values_iq4(x.qs), y); }
  // Two blocks at once: the nibbles as Q4's, one vpshufb per half into the
  // grid, then the sign trick per half (signed values up to 127: the two
  // halves' int16 pair sums could overflow if added, so two vpmaddwd).
  static constexpr bool kPairs = true;
  static __m256i pair_ints(const Block* x, const PairPrep& p) {
    __m256i lo, hi;
    nibbles_pair(x[0].qs, x[1].qs, lo, hi);
    const __m256i grid = _mm256_broadcastsi128_si256(load128(kvalues_iq4nl));
    return _mm256_add_epi32(dot_i8(_mm256_shuffle_epi8(grid, lo), p.ylo), dot_i8(_mm256_shuffle_epi8(grid, hi), p.yhi));
  }
};

struct alignas(16) Scales4 {
  float d[4];  // d_a of 4 consecutive blocks
};

// The blocks past the last whole group of 4, one at a time, straight from the
// activation (the unsigned formats: levels with their bias taken back off).
template <class F>
inline float tail_dot(int64_t i, int64_t nb, const typename F::Block* x, const block_q8_0* y) {
  float tail = 0;
  const __m256i bias = _mm256_set1_epi8(F::kBias);
  for (; i < nb; ++i) {
    const __m256i yv = load256(y[i].qs);
    const __m256i dsum = F::ints(x[i], yv, _mm256_sub_epi32(_mm256_setzero_si256(), dot_u5_i8(bias, yv)));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(dsum), _mm256_extracti128_si256(dsum, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
    tail += half(x[i].d) * half(y[i].d) * float(_mm_cvtsi128_si32(s4));
  }
  return tail;
}

// One row of a pair format (q4_0, q5_0, iq4_nl): per 2 blocks, the format's
// int32 lanes against the prepared activation (pair_ints), cvt and one FMA
// with the pair's scales (lanes 0..3 block i, 4..7 i+1). For q4_0 ~9
// instructions per block where the one-block form spends 15.5: the unpack,
// the vpmaddwd, the cvt and the FMA serve two blocks. (Summed in another
// order than vec_dot, within the kernels' tolerance.)
template <class F>
inline float row_dot_pairs(int64_t nb, const typename F::Block* x, const block_q8_0* y, const PairPrep* prep,
                           const Scales4* da4) {
  const __m256i lo4 = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1), hi4 = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
  auto pair = [&](const PairPrep& p, const typename F::Block* xp, __m256 scale, __m256& acc) {
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(F::pair_ints(xp, p)), scale, acc);
  };
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4, prep += 2, ++da4) {
    prefetch_step<4 * sizeof(typename F::Block)>(x + i, kGemvPrefetchBytes);
    const __m256 s4 = _mm256_castps128_ps256(_mm_mul_ps(scales4(x + i), _mm_load_ps(da4->d)));
    pair(prep[0], x + i, _mm256_permutevar8x32_ps(s4, lo4), acc0);
    pair(prep[1], x + i + 2, _mm256_permutevar8x32_ps(s4, hi4), acc1);
  }
  return hsum(_mm256_add_ps(acc0, acc1)) + tail_dot<F>(i, nb, x, y);
}

// One row of q8_0 (one block fills a vector) against the activation and its
// prepared scales, one block per vector in memory order; two accumulators
// (even / odd blocks) hide the FMA latency.
template <class F>
inline float row_dot(int64_t nb, const typename F::Block* x, const block_q8_0* y, const Scales4* da4) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  const __m256i none = _mm256_setzero_si256();
  auto block = [&](int64_t i, __m256 scale, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(F::ints(x[i], load256(y[i].qs), none)), scale, acc);
  };
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    prefetch_step<4 * sizeof(typename F::Block)>(x + i, kGemvPrefetchBytes);
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
//   [PairPrep prep[nb / 4 * 2]] (the pair formats) [Scales4 da4[nb / 4]]   each rounded up to 64 B
// with nb = n / 32: 112 B per 4 blocks, e.g. 896 wide: 1344 + 448 B, 4864
// wide: 7296 + 2432 B (L1-resident).
size_t gemv_scratch(int64_t n, int64_t, int64_t) {
  const size_t quads = size_t(n / QK8_0 / 4);
  return scratch_round64(quads * 2 * sizeof(PairPrep)) + scratch_round64(quads * sizeof(Scales4));
}

template <class F>
void gemv(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok, float* y,
          size_t ldy, void* scratch) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  // The caller's area: gemv_scratch(n, n_rows, n_tok) bytes, 64-byte aligned.
  const size_t quads = size_t(nb / 4);
  auto* prep = static_cast<PairPrep*>(scratch);
  auto* da4 = reinterpret_cast<Scales4*>(static_cast<uint8_t*>(scratch) + scratch_round64(quads * 2 * sizeof(PairPrep)));
  const __m256i bias = _mm256_set1_epi8(F::kBias);
  for (int64_t t = 0; t < n_tok; ++t) {
    const auto* act = reinterpret_cast<const block_q8_0*>(static_cast<const uint8_t*>(a) + size_t(t) * as);
    for (int64_t i = 0; i + 4 <= nb; i += 4) _mm_store_ps(da4[size_t(i / 4)].d, scales4(act + i));
    if constexpr (F::kPairs) {
      for (int64_t i = 0; i + 2 <= nb / 4 * 4; i += 2) {  // the pairs of whole groups of 4
        PairPrep& p = prep[size_t(i / 2)];
        p.ylo = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(act[i].qs)), load128(act[i + 1].qs), 1);
        p.yhi = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(act[i].qs + 16)), load128(act[i + 1].qs + 16), 1);
        const __m256i sum = _mm256_madd_epi16(
            _mm256_add_epi16(_mm256_maddubs_epi16(bias, p.ylo), _mm256_maddubs_epi16(bias, p.yhi)), _mm256_set1_epi16(1));
        p.corr = _mm256_sub_epi32(_mm256_setzero_si256(), sum);
      }
    }
    float* yt = y + size_t(t) * ldy;
    for (int64_t r = 0; r < n_rows; ++r) {
      const auto* x = reinterpret_cast<const typename F::Block*>(wb + size_t(r) * ws);
      if constexpr (F::kPairs) {
        yt[r] = row_dot_pairs<F>(nb, x, act, prep, da4);
      } else {
        yt[r] = row_dot<F>(nb, x, act, da4);
      }
    }
  }
}

}  // namespace

void register_gemv_avx2(KernelSet& k) { set_gemvs(k, {gemv<Q4>, gemv<Q5>, gemv<Q8>, gemv<IQ4NL>, gemv_scratch}); }

}  // namespace edgellm

#include "kernels/isa_end.h"
