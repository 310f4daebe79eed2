// Opens the AVX2 target region: every function defined from here to
// kernels/isa_end.h is compiled for the extensions named below, while the
// file as a whole, and every generic header (included first, through
// kernels/isa_prelude.h), is compiled for the baseline. Why not -m flags on
// the file: those would also compile the std templates and generic inline
// helpers the file instantiates for AVX2, and the linker may keep that
// copy for generic code (scripts/check-isa-symbols.sh). No include guard:
// one per region.
#ifdef EDGELLM_ISA_REGION
#error "a target region is already open: close it with kernels/isa_end.h first"
#endif
#include <immintrin.h>

#include "kernels/isa_prelude.h"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
// GCC does not give a captureless lambda's function-pointer thunk the
// region's target and warns that it would pass vectors by a different ABI;
// no kernel converts such a lambda to a pointer, so the thunk is never made.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#define EDGELLM_ISA_REGION "AVX2"
