// Opens the NEON target region (ARMv8.2 dotprod + fp16):
// every function defined from here to kernels/isa_end.h is compiled for
// those extensions, while the file as a whole, and every generic header
// (included first, through kernels/isa_prelude.h), is compiled for ARMv8.0.
// Why not -march flags on the file: those would also compile the std
// templates and generic inline helpers the file instantiates for ARMv8.2, and
// the linker may keep that copy for generic code
// (scripts/check-isa-symbols.sh). Clang builds add the flags all the same
// (CMakeLists.txt says why). No include guard: one per region.
#ifdef EDGELLM_ISA_REGION
#error "a target region is already open: close it with kernels/isa_end.h first"
#endif
#include <arm_neon.h>

#include "kernels/isa_prelude.h"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("dotprod,fullfp16"))), apply_to = function)
#else
// GCC does not give a captureless lambda's function-pointer thunk the
// region's target and warns that it would pass vectors by a different ABI;
// no kernel converts such a lambda to a pointer, so the thunk is never made.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod+fp16")
#endif
#define EDGELLM_ISA_REGION "NEON"
