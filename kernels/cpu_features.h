// Run-time CPU feature flags, read once (x86: CPUID + the OS's saved-state
// mask, via the compiler's __builtin_cpu_supports; AArch64: the kernel's
// hwcaps). Kernel sets and their paths are chosen from these flags, never from
// architecture names (see DESIGN.md, calm).
#pragma once

namespace edgellm {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false;
  // AArch64 (Advanced SIMD itself is mandatory there): FEAT_DotProd's SDOT /
  // UDOT (Cortex-A55/A75 and later) and FEAT_I8MM's SMMLA (Cortex-A510/A710,
  // X2 and later).
  bool dotprod = false, i8mm = false;

  // What each x86 kernel set's target region (kernels/<isa>/isa_begin.h) enables.
  bool can_run_avx2() const { return avx2 && fma && f16c; }
  bool can_run_avx512() const {
    return can_run_avx2() && avx512f && avx512bw && avx512vl && avx512dq && avx512vnni;
  }
};

// The host's features; those of the other architecture stay false.
const CpuFeatures& cpu_features();

}  // namespace edgellm
