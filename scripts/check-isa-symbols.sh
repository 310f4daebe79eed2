#!/usr/bin/env bash
# No instruction beyond the baseline may reach generic code through the linker.
#   scripts/check-isa-symbols.sh BUILD_DIR
#       checks the objects of an existing build (NM=aarch64-linux-gnu-nm
#       OBJDUMP=aarch64-linux-gnu-objdump for an arm64 build)
#   scripts/check-isa-symbols.sh --self-test    (x86-64: the check catches a leak)
#   scripts/check-isa-symbols.sh --O0 BUILD_DIR [cmake arguments...]
#       configures BUILD_DIR as a Debug (-O0) build with those arguments,
#       compiles the ISA-flagged objects only and checks them: at -O0 nothing
#       is inlined, so every inline helper and template an ISA file touches
#       is emitted as a symbol, which is where the hazard shows.
#
# The kernels/avx2, kernels/avx512 and kernels/neon files hold code for one
# instruction set each, inside a target region (kernels/<isa>/isa_begin.h ...
# kernels/isa_end.h: `#pragma GCC target` / `#pragma clang attribute`); the
# compiler flags of the whole file stay the baseline's. An inline function or
# template with external linkage is emitted as a weak (COMDAT) symbol when it
# is not inlined, and the linker keeps ONE copy of each such symbol for the
# whole program. If the copy it keeps was compiled for AVX-512, generic code
# calls AVX-512 instructions on a CPU without them: SIGILL, depending only on
# link order. So: no weak code symbol an ISA-flagged object defines may hold
# an instruction beyond the baseline (x86-64: any VEX/EVEX-encoded or mask
# instruction, BMI, POPCNT/LZCNT, MOVBE, CRC32; arm64 ARMv8.0: dot products,
# matrix multiplies, half-precision arithmetic, ARMv8.1 atomics and RDMA,
# CRC32). ISA helpers live in anonymous namespaces (local symbols) and the
# register_* entry points are strong and unique; what stays weak is generic
# code (std::min, base/fp16.h ...) compiled outside the region, which any
# copy of is safe to keep.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self=$root/scripts/check-isa-symbols.sh
NM=${NM:-nm}
OBJDUMP=${OBJDUMP:-objdump}

if [ "${1:-}" = --self-test ]; then
  # The check must catch what it is for: a weak helper defined inside an
  # AVX2 region is a leak; the same helper defined before the region is not.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/bad/CMakeFiles/edgellm_objects.dir/kernels/avx2" "$tmp/good/CMakeFiles/edgellm_objects.dir/kernels/avx2"
  body='inline float twice(float x) { return x * 2.0f; }'
  use='float use_twice(float x) { return twice(x); }'
  printf '#include "kernels/avx2/isa_begin.h"\n%s\n%s\n#include "kernels/isa_end.h"\n' "$body" "$use" > "$tmp/bad.cpp"
  printf '%s\n#include "kernels/avx2/isa_begin.h"\n%s\n#include "kernels/isa_end.h"\n' "$body" "$use" > "$tmp/good.cpp"
  for k in bad good; do
    "${CXX:-c++}" -std=c++20 -O0 -I"$root" -c "$tmp/$k.cpp" -o "$tmp/$k/CMakeFiles/edgellm_objects.dir/kernels/avx2/probe.o"
  done
  if bash "$self" "$tmp/bad" > "$tmp/bad.out" 2>&1 || ! grep -q 'twice(float)' "$tmp/bad.out"; then
    echo "check-isa-symbols --self-test: a weak AVX2 helper was not reported:" >&2; cat "$tmp/bad.out" >&2; exit 1
  fi
  bash "$self" "$tmp/good" > "$tmp/good.out" 2>&1 ||
    { echo "check-isa-symbols --self-test: a baseline helper was reported:" >&2; cat "$tmp/good.out" >&2; exit 1; }
  echo "check-isa-symbols --self-test: a weak AVX2 helper is reported, a baseline one is not"
  exit 0
fi

if [ "${1:-}" = --O0 ]; then
  dir=${2:?usage: scripts/check-isa-symbols.sh --O0 BUILD_DIR [cmake arguments...]}
  shift 2
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEDGELLM_TESTS=OFF "$@" >/dev/null
  mapfile -t targets < <(ninja -C "$dir" -t targets all |
    sed -n 's#^\(CMakeFiles/edgellm_objects.dir/kernels/\(avx2\|avx512\|neon\)/[^:]*\.o\):.*#\1#p')
  [ "${#targets[@]}" -gt 0 ] || { echo "check-isa-symbols: no ISA-flagged objects to build in $dir" >&2; exit 2; }
  ninja -C "$dir" "${targets[@]}" > "$dir/isa-objects.log" 2>&1 ||
    { grep -m 20 -E 'error|FAILED' "$dir/isa-objects.log" >&2; echo "check-isa-symbols: the ISA objects do not compile in $dir (log: $dir/isa-objects.log)" >&2; exit 2; }
  set -- "$dir"
fi

dir=${1:?usage: scripts/check-isa-symbols.sh BUILD_DIR | --O0 BUILD_DIR [cmake arguments...]}
objdir=$dir/CMakeFiles/edgellm_objects.dir
[ -d "$objdir" ] || { echo "check-isa-symbols: no $objdir (build first)" >&2; exit 2; }

# awk conditions on an instruction's mnemonic m and operands ops: true when
# it is beyond the baseline.
x86_isa='m ~ /^(v|k)/ || m ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|pdep|pext|rorx|sarx|shlx|shrx|popcnt|lzcnt|movbe|crc32)/'
arm_isa='m ~ /^(sdot|udot|usdot|sudot|smmla|ummla|usmmla|sqrdmlah|sqrdmlsh|crc32|cas|swp|ld(add|clr|eor|set|smax|smin|umax|umin)|st(add|clr|eor|set|smax|smin|umax|umin))/ || (m ~ /^f/ && m !~ /^fcvt[ln]?2?$/ && ops ~ /(^|[ ,])(h[0-9]+|v[0-9]+\.[48]h)/)'

n_isa=0
leaks=""
while IFS= read -r -d '' obj; do
  case "$obj" in
    */kernels/avx2/* | */kernels/avx512/*) isa=$x86_isa ;;
    */kernels/neon/*) isa=$arm_isa ;;
    *) continue ;;
  esac
  n_isa=$((n_isa + 1))
  # Weak code symbols (W, and i for ifuncs): the ones the linker may pick
  # from this object over another's. Data (V, u) is the same bytes whichever
  # copy is kept, and never executed.
  weak=$("$NM" -P --defined-only --extern-only "$obj" | awk '$2 ~ /^[Wi]$/ {print $1}')
  [ -n "$weak" ] || continue
  # Functions of this object that hold an instruction beyond the baseline.
  isa_fns=$("$OBJDUMP" -d --no-show-raw-insn "$obj" | awk '
    /^[0-9a-f]+ <.*>:$/ { fn = substr($2, 2, length($2) - 3); next }
    /^ +[0-9a-f]+:\t/ { n = split($0, f, "\t"); insn = f[2]; for (i = 3; i <= n; i++) insn = insn " " f[i]; m = insn; sub(/ .*/, "", m); ops = insn; sub(/^[^ ]* */, "", ops);
                        if (fn != "" && ('"$isa"')) { print fn; fn = "" } }')
  hits=$(comm -12 <(echo "$weak" | sort -u) <(echo "$isa_fns" | sort -u))
  for sym in $hits; do
    leaks+="  $(echo "$sym" | c++filt)  in ${obj#"$objdir"/}"$'\n'
  done
done < <(find "$objdir" -name '*.o' -print0 | sort -z)
[ "$n_isa" -gt 0 ] || { echo "check-isa-symbols: no ISA-flagged objects under $objdir" >&2; exit 2; }

if [ -n "$leaks" ]; then
  echo "check-isa-symbols: weak symbols compiled for an instruction set beyond the baseline (the linker may keep such a copy for generic code too):" >&2
  printf '%s' "$leaks" >&2
  echo "check-isa-symbols: include what the function comes from before the target region (kernels/<isa>/isa_begin.h includes kernels/isa_prelude.h first: add the header there), or give it internal linkage (an anonymous namespace)" >&2
  exit 1
fi
echo "check-isa-symbols: $n_isa ISA-flagged objects, no weak symbol holds code beyond the baseline"
