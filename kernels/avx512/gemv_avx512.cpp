// Decode matrix x vector for q4_0, q5_0, q8_0 and iq4_nl weights x q8_0
// activations, AVX-512 VNNI
// (KernelSet::gemv; reference twin: vec_dot per row, the scalar set's gemm).
//
// Decode is one token: each weight byte is used once, so the speed limit is
// memory bandwidth (qwen2.5-0.5b Q4_0: 346 MB per token) unless the cores
// cannot unpack and multiply the blocks as fast as they stream in. vec_dot
// row by row spends ~23 vector ops per pair of blocks, half of them on the
// activations (load, bias correction, scales), which are the same for every
// row. Here the activation side is prepared once per call and each row then
// costs only its own unpacking:
//   - q4_0, iq4_nl and q5_0, per group of 4 blocks (QuadPrep: the
//     activations' elements 0..15 of the 4 blocks, then 16..31, and -bias *
//     sum(y) per int32 lane): 4 x 16 B of nibbles joined, an and and a
//     shift+and into the low and high levels (iq4_nl: one vpshufb each into
//     its grid, + 128; q5_0: + 16 under the fifth-bit masks), two vpdpbusd
//     onto the correction, cvt, one FMA with the 4 scales (a word permute);
//   - q8_0, per pair of blocks in element order (ActPrep: the pair's
//     activations and -bias * sum(y); lanes 0-7 block i, 8-15 i+1): the
//     pair's bytes + 128 by a xor (bias 128), one vpdpbusd, cvt, one FMA; per
//     4 blocks one vcvtph2ps of the weight scales.
// Rows are read one after another in memory order (one sequential stream
// per thread, with a software prefetch 8 KB ahead): passes over 8 rows side
// by side, which shared the activation work instead, were 4-8 % slower
// (streams of a few hundred bytes that the hardware prefetcher does not
// learn). The quad form against the pair form q4_0 had until 2026-12-07
// (nibble order, 2 x (2 loads, insert, shift, insert, and) per 4 blocks),
// one thread, mean GB/s, Zen 5: llama3-8b shapes 4096 x 6144 41.2 -> 45.4,
// 28672 x 4096 40.2 -> 43.3, 4096 x 14336 33.5 -> 37.8; qwen2.5-0.5b 1152
// x 896 38 -> 44, 9728 x 896 39 -> 43-44; iq4_nl 4096 x 4096 27.6 -> 43.3.
// Earlier, against vec_dot per row, at -t 2 on the qwen2.5-0.5b files
// (tg64): Q4_K_M (mostly q5_0) 97-98 -> 116-117 t/s, Q8_0 96-100 -> 112-114;
// Q4_0 (its q8_0 output matrix) 134-145 -> 145-148.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/token_count.h"
#include "tensor/blocks.h"

#include "kernels/avx512/isa_begin.h"  // AVX-512 code from here to kernels/isa_end.h
#include "kernels/avx512/simd_avx512.h"

namespace edgellm {

namespace {

// Software prefetch distance in a weight row's stream: the bytes a thread
// must have in flight to cover the memory latency under load, ~35 GB/s per
// thread x ~150-230 ns = 5-8 KB. Measured with the earlier 8-row passes on
// qwen2.5-0.5b Q4_0, 2 threads (Intel host): none ~109 tok/s, 18 blocks
// (~0.3 KB) ~102, ~2 KB ~120, ~4.5 KB ~120 (noisy host, +-4). Zen 5 host,
// this GEMV alone, 2 threads taking one half of the rows each, 2304 / 8192 /
// 16384 bytes interleaved in one process (mean GB/s, probe 69.6): q4_0 4864
// x 896 56.3 / 67.4 / 67.0, 896 x 4864 53.8 / 60.0 / 59.1, 896 x 1152 (q, k,
// v) 46.4 / 51.8 / 48.2; q5_0 and q8_0 +2-8 %. One thread: 31-32 -> 35-37.
// (kGemvPrefetchBytes, kernels/stream_prefetch.h.)

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// The fp16 scales of 4 consecutive 18-byte blocks (q4_0, iq4_nl), as floats:
// all four lie in the group's first 64 bytes (offsets 0, 18, 36, 54), so one
// load and one word permute (vpermw) gather them, where scales4 spends 4
// scalar loads and 3 inserts. Measured with the GEMV alone, 2 threads, both
// forms interleaved in one process while the bus read 83-89 GB/s: q4_0 896 x
// 4864 62.2-62.6 -> 68.9-70.1 GB/s, 4864 x 896 63.1-63.3 -> 66.5-68.5, 896 x
// 1152 49.2 -> 50.2-52.1; iq4_nl +4-6 %. (q5_0's and q8_0's groups span 88
// and 136 bytes: two loads and vpermt2w measured no gain over scales4.)
template <class Block>
inline __m128 scales4_one_load(const Block* x) {
  static_assert(sizeof(Block) == 18, "four scales within 64 bytes");
  const __m512i idx = _mm512_zextsi128_si512(_mm_setr_epi16(0, 9, 18, 27, 0, 0, 0, 0));
  const __m512i w = _mm512_permutexvar_epi16(idx, _mm512_loadu_si512(x));
  return _mm_cvtph_ps(_mm512_castsi512_si128(w));
}

// The 16 bytes of nibbles (qs) of 4 consecutive blocks (q4_0, iq4_nl, q5_0),
// side by side in one zmm: four 16-byte loads and three inserts. (Two 64-byte
// loads and one vpermt2w instead: 35-37 against 43-45 GB/s per thread on
// the llama3-8b q4_0 shapes, Zen 5; for q5_0 equal on 896-wide rows, 32 against
// 40 on 4864-wide ones.)
template <class Block>
inline __m512i nibbles4(const Block* x) {
  constexpr size_t qs = offsetof(Block, qs), bs = sizeof(Block);
  const auto* b = reinterpret_cast<const uint8_t*>(x);
  const __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(b + qs)), load128(b + qs + bs), 1);
  const __m256i c =
      _mm256_inserti128_si256(_mm256_castsi128_si256(load128(b + qs + 2 * bs)), load128(b + qs + 3 * bs), 1);
  return join(a, c);
}

// Per format: the bias its unsigned levels carry (taken back off as bias *
// sum(y) per lane, in the prepared correction), one block's levels in
// element order (the tail), the scales of a group of 4 blocks, and kQuad:
// the levels of 4 blocks at once (levels_quad) or of a pair (levels_pair,
// element order).
struct Q4 {  // levels 0..15, value = level - 8
  using Block = block_q4_0;
  static constexpr char kBias = 8;
  static __m256i levels(const Block& x) { return nibbles(x.qs); }
  // 4 blocks: elements 0..15 of each (lo), then 16..31 of each (hi); returns
  // their 4 scales.
  static constexpr bool kQuad = true;
  static __m128 levels_quad(const Block* x, __m512i& lo, __m512i& hi) {
    const __m512i v = nibbles4(x), m = _mm512_set1_epi8(0x0F);
    lo = _mm512_and_si512(v, m);
    hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
    return scales4_one_load(x);
  }
};
// Q5::levels_quad's word gather (vpermt2w over the group's bytes 0..63 and
// 66..81): every 128-bit lane gets the 4 scales d0..d3 (words 0..3, at bytes
// 0, 22, 44, 66), lane k then block k's qh (words 4, 5, at bytes 22k+2).
// kQ5BitLo: byte j of a lane picks the qh byte holding element j's fifth bit
// (lane bytes 8, 9); + 2 gives element 16+j's (bytes 10, 11).
alignas(64) constexpr uint16_t kQ5Fields[32] = {0, 11, 22, 32, 1,  2,  0, 0, 0, 11, 22, 32, 12, 13, 0, 0,
                                                0, 11, 22, 32, 23, 24, 0, 0, 0, 11, 22, 32, 33, 34, 0, 0};
alignas(64) constexpr uint8_t kQ5BitLo[64] = {8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9,
                                              8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9,
                                              8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9,
                                              8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9};

struct Q5 {  // levels 0..31 (simd_avx512.h), value = level - 16
  using Block = block_q5_0;
  static constexpr char kBias = 16;
  // 4 blocks (88 bytes): the nibbles as q4_0's (nibbles4), the scales and
  // fifth bits by one vpermt2w from a 64-byte and a 16-byte load; per half a
  // vpshufb spreads each qh byte over its 8 elements and a vptestmb against
  // each element's bit gives the mask for one masked + 16. ~19 vector ops
  // per 88 B where the pair form took ~22 plus 8 scalar loads, 4 shift / or
  // and 2 kmov (kmov k, r64 runs 1 per cycle on Zen 5). The GEMV alone, one
  // thread, both forms interleaved, mean GB/s (BENCHMARKS.md, 2026-12-07):
  // 896 x 4864 30-34 -> 40.5, 4864 x 896 29-31 -> 37, 1152 x 896 31 -> 38,
  // the 151936-row head 30-31 -> 33-38, 4096 x 4096 32-33 -> 40.
  static constexpr bool kQuad = true;
  static __m128 levels_quad(const Block* x, __m512i& lo, __m512i& hi) {
    const auto* b = reinterpret_cast<const uint8_t*>(x);
    const __m512i f = _mm512_permutex2var_epi16(load512(b), load512(kQ5Fields), _mm512_castsi128_si512(load128(b + 66)));
    const __m512i sel = load512(kQ5BitLo), bit = _mm512_set1_epi64(0x8040201008040201ll);
    const __mmask64 k_lo = _mm512_test_epi8_mask(_mm512_shuffle_epi8(f, sel), bit);
    const __mmask64 k_hi = _mm512_test_epi8_mask(_mm512_shuffle_epi8(f, _mm512_add_epi8(sel, _mm512_set1_epi8(2))), bit);
    const __m512i v = nibbles4(x), m = _mm512_set1_epi8(0x0F), c16 = _mm512_set1_epi8(16);
    const __m512i nlo = _mm512_and_si512(v, m), nhi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m);
    lo = _mm512_mask_add_epi8(nlo, k_lo, nlo, c16);
    hi = _mm512_mask_add_epi8(nhi, k_hi, nhi, c16);
    return _mm_cvtph_ps(_mm512_castsi512_si128(f));
  }
  static __m256i levels(const Block& x) { return levels_q5(x); }
};
struct Q8 {  // element order, the signed bytes made unsigned by + 128 (a xor)
  using Block = block_q8_0;
  static constexpr char kBias = char(0x80);
  static constexpr bool kQuad = false;
  static __m512i levels_pair(const Block* x) {
    return _mm512_xor_si512(join(load256(x[0].qs), load256(x[1].qs)), _mm512_set1_epi8(char(0x80)));
  }
  static __m256i levels(const Block& x) { return _mm256_xor_si256(load256(x.qs), _mm256_set1_epi8(char(0x80))); }
  static __m128 scales(const Block* x) { return scales4(x); }
};
struct IQ4NL {  // element order, the grid values made unsigned by + 128 (simd_avx512.h)
  using Block = block_iq4_nl;
  static constexpr char kBias = char(0x80);
  static __m256i levels(const Block& x) { return levels_iq4(x.qs); }
  static constexpr bool kQuad = true;
  static __m128 levels_quad(const Block* x, __m512i& lo, __m512i& hi) {
    const __m512i v = nibbles4(x), m = _mm512_set1_epi8(0x0F), flip = _mm512_set1_epi8(char(0x80));
    const __m512i grid = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kvalues_iq4nl)));
    lo = _mm512_xor_si512(_mm512_shuffle_epi8(grid, _mm512_and_si512(v, m)), flip);
    hi = _mm512_xor_si512(_mm512_shuffle_epi8(grid, _mm512_and_si512(_mm512_srli_epi16(v, 4), m)), flip);
    return scales4_one_load(x);
  }
};

// The activation side of every pair of blocks, prepared once per call and
// shared by all rows (L1-resident: 128 B per 64 elements, 1.8 KB for a
// 896-wide row, 9.7 KB for 4864).
struct ActPrep {
  __m512i yv, corr;  // activations in the levels' order; -bias * sum(y) per int32 lane
};
// The quad formats' activation side per 4 blocks (192 B, within the 256 B
// two ActPreps take in the same scratch): elements 0..15 of each block, then
// 16..31 of each, and -bias * sum(y) per int32 lane of both.
struct QuadPrep {
  __m512i ylo, yhi, corr;
};
// A token's 4 block scales spread over the lanes that use them, per group
// of 4 blocks: the quad formats' lane order in d[0]; the pair form's two
// pairs in d[0] and d[1]. (The weight scales get the same spreading once
// per group; permute-then-multiply gives each lane the product
// multiply-then-permute would.)
struct LaneScales {
  __m512 d[2];
};

// The blocks past the last whole group of 4, one at a time (levels of one
// block in element order), straight from the activation.
template <class F>
inline float tail_dot(int64_t i, int64_t nb, const typename F::Block* x, const block_q8_0* y) {
  float tail = 0;
  for (; i < nb; ++i) {
    const __m256i yv = load256(y[i].qs);
    const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), F::levels(x[i]), yv);
    const __m256i c = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(F::kBias), yv);
    const __m256i dsum = _mm256_sub_epi32(p, c);
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(dsum), _mm256_extracti128_si256(dsum, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    tail += half(x[i].d) * half(y[i].d) * float(_mm_cvtsi128_si32(s));
  }
  return tail;
}

// One row against T prepared tokens (T = 1: decode; more: a batched decode
// step, one token per sequence). Each group of blocks is unpacked once and
// multiplied into every token's accumulators, so the row streams from
// memory once for all of them and only the per-token half of the work
// grows with T; per token the operations and their order do not depend on
// T (two accumulators, even and odd groups; the same tail), so each result
// is bit for bit what that token gets alone.
//
// Quad formats (q4_0, iq4_nl, q5_0): per 4 blocks, 2 loads and a word
// permute gather their 64 bytes of nibbles, and-ed / shifted into 128
// levels, then per token two vpdpbusd onto the prepared correction (int32
// lane l: block l / 4), cvt, one FMA with the 4 scales. ~15 vector ops per
// 72 B where the pair form spends ~25 (two loads, two inserts, a shift and
// an and per pair of blocks); measured in BENCHMARKS.md (2026-12-07).
template <class F, int T>
inline void row_dot_quad(int64_t nb, const typename F::Block* x, const block_q8_0* const* y,
                         const QuadPrep* const* prep, const LaneScales* const* ls, float* out) {
  const __m512i pick = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  __m512 acc0[T], acc1[T];
  for (int t = 0; t < T; ++t) acc0[t] = acc1[t] = _mm512_setzero_ps();
  auto quad = [&](int64_t i, __m512* acc) {
    prefetch_step<4 * sizeof(typename F::Block)>(x + i, kGemvPrefetchBytes);
    __m512i lo, hi;
    const __m512 dw = _mm512_permutexvar_ps(pick, _mm512_castps128_ps512(F::levels_quad(x + i, lo, hi)));
    for (int t = 0; t < T; ++t) {
      const QuadPrep& p = prep[t][i / 4];
      const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(p.corr, lo, p.ylo), hi, p.yhi);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, ls[t][i / 4].d[0]), acc[t]);
    }
  };
  int64_t i = 0;
  for (; i + 8 <= nb; i += 8) {
    quad(i, acc0);
    quad(i + 4, acc1);
  }
  if (i + 4 <= nb) {
    quad(i, acc0);
    i += 4;
  }
  for (int t = 0; t < T; ++t) out[t] = hsum(_mm512_add_ps(acc0[t], acc1[t])) + tail_dot<F>(i, nb, x, y[t]);
}

// The pair form (q8_0): blocks in memory order, two accumulators (even / odd
// pairs) hide the FMA latency.
template <class F, int T>
inline void row_dot(int64_t nb, const typename F::Block* x, const block_q8_0* const* y, const ActPrep* const* prep,
                    const LaneScales* const* ls, float* out) {
  // int32 lane -> block of the pair (pick0: blocks 0, 1 of 4; pick1: 2, 3).
  const __m512i pick0 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const __m512i pick1 = _mm512_add_epi32(pick0, _mm512_set1_epi32(2));
  __m512 acc0[T], acc1[T];
  for (int t = 0; t < T; ++t) acc0[t] = acc1[t] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    prefetch_step<4 * sizeof(typename F::Block)>(x + i, kGemvPrefetchBytes);
    const __m512 sc = _mm512_castps128_ps512(F::scales(x + i));
    const __m512 w0 = _mm512_permutexvar_ps(pick0, sc), w1 = _mm512_permutexvar_ps(pick1, sc);
    const __m512i l0 = F::levels_pair(x + i), l1 = F::levels_pair(x + i + 2);
    for (int t = 0; t < T; ++t) {
      const LaneScales& d = ls[t][i / 4];
      const ActPrep& p0 = prep[t][i / 2];
      const ActPrep& p1 = prep[t][i / 2 + 1];
      acc0[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(p0.corr, l0, p0.yv)), _mm512_mul_ps(w0, d.d[0]),
                                acc0[t]);
      acc1[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(p1.corr, l1, p1.yv)), _mm512_mul_ps(w1, d.d[1]),
                                acc1[t]);
    }
  }
  for (int t = 0; t < T; ++t) out[t] = hsum(_mm512_add_ps(acc0[t], acc1[t])) + tail_dot<F>(i, nb, x, y[t]);
}

// Scratch (GemmScratchFn): the prepared activation of each token a call
// serves at once (1, or n_tok <= kGemvBatch), each laid out as (the rows
// read pairs and scales of whole groups of 4 blocks, the 0-3 tail blocks
// straight from the activation):
//   [ActPrep prep[nb / 4 * 2]] [LaneScales ls[nb / 4]]      each rounded up to 64 B
// with nb = n / 32: 384 B per 4 blocks, whatever n_rows; e.g. 896 wide:
// 28 * 64 + 7 * 128 = 2.7 KB, 4864 wide: 76 * 128 + 38 * 128 = 14.6 KB per token.
constexpr int kGemvBatch = 8;
size_t per_token_bytes(int64_t n) {
  const size_t quads = size_t(n / QK8_0 / 4);
  return scratch_round64(quads * 2 * sizeof(ActPrep)) + scratch_round64(quads * sizeof(LaneScales));
}
size_t gemv_scratch(int64_t n, int64_t, int64_t n_tok) {
  return per_token_bytes(n) * size_t(n_tok > 1 && n_tok <= kGemvBatch ? n_tok : 1);
}

// One token's activation side into its area of the scratch.
template <class F>
void prepare(int64_t nb, const block_q8_0* act, uint8_t* area) {
  const size_t quads = size_t(nb / 4);
  auto* prep = reinterpret_cast<ActPrep*>(area);
  auto* quad = reinterpret_cast<QuadPrep*>(area);
  auto* ls = reinterpret_cast<LaneScales*>(area + scratch_round64(quads * 2 * sizeof(ActPrep)));
  const __m512i bias = _mm512_set1_epi8(F::kBias);
  const __m512i pick = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  const __m512i pick0 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const __m512i pick1 = _mm512_add_epi32(pick0, _mm512_set1_epi32(2));
  for (int64_t i = 0; i + 4 <= nb; i += 4) {
    const __m512 d4 = _mm512_castps128_ps512(scales4(act + i));
    LaneScales& l = ls[size_t(i / 4)];
    if constexpr (F::kQuad) {
      l.d[0] = _mm512_permutexvar_ps(pick, d4);
      QuadPrep& p = quad[size_t(i / 4)];
      __m128i lo[4], hi[4];
      for (int k = 0; k < 4; ++k) {
        lo[k] = load128(act[i + k].qs);
        hi[k] = load128(act[i + k].qs + 16);
      }
      p.ylo = join(_mm256_set_m128i(lo[1], lo[0]), _mm256_set_m128i(lo[3], lo[2]));
      p.yhi = join(_mm256_set_m128i(hi[1], hi[0]), _mm256_set_m128i(hi[3], hi[2]));
      const __m512i sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, p.ylo), bias, p.yhi);
      p.corr = _mm512_sub_epi32(_mm512_setzero_si512(), sum);
      continue;
    }
    l.d[0] = _mm512_permutexvar_ps(pick0, d4);
    l.d[1] = _mm512_permutexvar_ps(pick1, d4);
    for (int k = 0; k < 2; ++k) {
      const block_q8_0* yk = act + i + 2 * k;
      ActPrep& p = prep[size_t(i / 2 + k)];
      p.yv = join(load256(yk[0].qs), load256(yk[1].qs));
      p.corr = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, p.yv));
    }
  }
}

// Rows against T prepared tokens (areas of per_tok bytes from scratch).
template <class F, int T>
void rows(int64_t nb, const uint8_t* wb, size_t ws, int64_t n_rows, const block_q8_0* const* act, uint8_t* scratch,
          size_t per_tok, float* y, size_t ldy) {
  const size_t ls_at = scratch_round64(size_t(nb / 4) * 2 * sizeof(ActPrep));
  const QuadPrep* quad[T];
  const ActPrep* prep[T];
  const LaneScales* ls[T];
  for (int t = 0; t < T; ++t) {
    uint8_t* area = scratch + size_t(t) * per_tok;
    quad[t] = reinterpret_cast<const QuadPrep*>(area);
    prep[t] = reinterpret_cast<const ActPrep*>(area);
    ls[t] = reinterpret_cast<const LaneScales*>(area + ls_at);
  }
  float out[T];
  for (int64_t r = 0; r < n_rows; ++r) {
    const auto* x = reinterpret_cast<const typename F::Block*>(wb + size_t(r) * ws);
    if constexpr (F::kQuad) {
      row_dot_quad<F, T>(nb, x, act, quad, ls, out);
    } else {
      row_dot<F, T>(nb, x, act, prep, ls, out);
    }
    for (int t = 0; t < T; ++t) y[size_t(t) * ldy + size_t(r)] = out[t];
  }
}

template <class F>
void gemv(int64_t n, const void* w, size_t ws, int64_t n_rows, const void* a, size_t as, int64_t n_tok, float* y,
          size_t ldy, void* scratch) {
  const int64_t nb = n / QK8_0;
  const auto* wb = static_cast<const uint8_t*>(w);
  auto* sc = static_cast<uint8_t*>(scratch);  // gemv_scratch(n, n_rows, n_tok) bytes
  const size_t per_tok = per_token_bytes(n);
  auto act_of = [&](int64_t t) {
    return reinterpret_cast<const block_q8_0*>(static_cast<const uint8_t*>(a) + size_t(t) * as);
  };
  // Up to kGemvBatch tokens in one pass over the rows; more, one at a time.
  const int64_t group = n_tok <= kGemvBatch ? n_tok : 1;
  for (int64_t t0 = 0; t0 < n_tok; t0 += group) {
    const block_q8_0* act[kGemvBatch];
    for (int64_t t = 0; t < group; ++t) {
      act[t] = act_of(t0 + t);
      prepare<F>(nb, act[t], sc + size_t(t) * per_tok);
    }
    with_token_count<kGemvBatch>(group, [&](auto T) {
      rows<F, T.value>(nb, wb, ws, n_rows, act, sc, per_tok, y + size_t(t0) * ldy, ldy);
    });
  }
}

}  // namespace

void register_gemv_avx512(KernelSet& k) {
  set_gemvs(k, {gemv<Q4>, gemv<Q5>, gemv<Q8>, gemv<IQ4NL>, gemv_scratch, kGemvBatch});
}

}  // namespace edgellm

#include "kernels/isa_end.h"
