// Run-time CPU feature flags, read once (CPUID + the OS's saved-state mask, via
// the compiler's __builtin_cpu_supports). Kernel sets are chosen from these
// flags, never from architecture names (see DESIGN.md, calm).
#pragma once

namespace edgellm {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false;

  // What each kernel set was compiled for (CMakeLists.txt's per-folder flags).
  bool can_run_avx2() const { return avx2 && fma && f16c; }
  bool can_run_avx512() const {
    return can_run_avx2() && avx512f && avx512bw && avx512vl && avx512dq && avx512vnni;
  }
};

// The host's features; all false on non-x86 builds.
const CpuFeatures& cpu_features();

}  // namespace edgellm
