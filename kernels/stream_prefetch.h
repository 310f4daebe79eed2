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
