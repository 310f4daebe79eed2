// Everything generic an ISA file may use, included before its target region
// opens (kernels/<isa>/isa_begin.h includes this first). A header first
// included inside the region would be compiled for that instruction set, and
// its inline functions and templates with external linkage (std::min,
// f32_to_fp16 ...) emitted as weak symbols the linker may then hand to
// generic code: SIGILL on a CPU without the extension, depending on link
// order. Included here, they are compiled for the baseline (and still inlined
// into the region's functions: a baseline callee may be inlined into a
// caller with more extensions). scripts/check-isa-symbols.sh --O0 (CI) finds
// a header that was missed; add it here.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "base/fp16.h"
#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "kernels/stream_prefetch.h"
#include "kernels/tile_table.h"
#include "tensor/blocks.h"
#include "tensor/kquant_unpack.h"
#include "tensor/types.h"
