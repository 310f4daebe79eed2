// Software prefetch of a decode GEMV's weight stream, one instruction per
// whole 64 bytes of a step. The GEMVs walk a row in steps of one K-quant super-block
// (144-210 B) or one group of 4 small blocks (72-136 B); a single prefetch
// per step reached only every second or third line of q8_0, q4_K and q6_K
// rows (steps of 136-210 B over 64-byte lines), and the hardware prefetcher
// did not make up for the rest: one thread streamed a 14336-wide q6_K
// matrix at 22 GB/s where the bus gives it 41 (Zen 5 host; every line: 39).
// Baseline code with internal linkage, included through isa_prelude.h, so
// that every kernel set inlines its own copy.
#pragma once
#include <cstddef>

namespace edgellm {
namespace {

// How far down a decode GEMV's weight stream to prefetch: the bytes one
// thread must have in flight to cover the memory latency under load (~35 GB/s
// per thread x ~150-230 ns = 5-8 KB). The x86 GEMVs share it; measurements in
// kernels/avx512/gemv_avx512.cpp, and for the AVX2 set (one thread, the GEMV
// alone, mean GB/s, Zen 5, 2026-12-07): q8_0 at 2304 B 30-32 -> 39-41 at
// 8192, q6_K at 4096 B 29-33 -> 33-35 (a 14336-wide row 28.6 -> 33.5), q4_0
// +5 %, q4_K and q5_0 equal. The NEON GEMVs keep 2304 B (not measurable here).
constexpr size_t kGemvPrefetchBytes = 8192;

// One prefetch per whole 64 bytes of a step (at least one), `ahead` bytes
// further down the stream (past the matrix's end is harmless: a prefetch
// never faults). Steps of 136 B (q8_0 x 4) then miss one line in 17, 72 B
// (q4_0 x 4) one in 9; a prefetch for every line touched instead cost the
// q4_0 GEMV 1-4 % on one thread (issue slots) and gained nothing on two.
template <size_t Bytes>
inline void prefetch_step(const void* p, size_t ahead) {
  const char* a = static_cast<const char*>(p) + ahead;
  __builtin_prefetch(a);
  for (size_t o = 64; o + 64 <= Bytes; o += 64) __builtin_prefetch(a + o);
}

}  // namespace
}  // namespace edgellm
