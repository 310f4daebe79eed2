#!/usr/bin/env bash
# No code compiled for one instruction set may stand in for another's.
#   scripts/check-isa-symbols.sh BUILD_DIR     (NM=aarch64-linux-gnu-nm for an arm64 build)
#
# The kernels/avx2, kernels/avx512 and kernels/neon files are compiled with
# -mavx2 / -mavx512* / -march=armv8.2-a+... An inline function or template
# they instantiate with external linkage (a helper from a generic header,
# std::min, std::fill_n ...) is emitted as a weak (COMDAT) symbol when it is
# not inlined, and the linker keeps ONE copy of each such symbol for the whole
# program. If it keeps the AVX-512 copy, generic code calls AVX-512
# instructions on a CPU without them: SIGILL, depending only on link order.
# So: every external symbol an ISA-flagged object defines must be defined by
# no object of another kind (generic code or another instruction set).
# Symbols of an ISA's own helpers live in an anonymous namespace (local) and
# are safe; the register_* entry points are strong and unique.
set -euo pipefail
dir=${1:?usage: scripts/check-isa-symbols.sh BUILD_DIR}
NM=${NM:-nm}
objdir=$dir/CMakeFiles/edgellm_objects.dir
[ -d "$objdir" ] || { echo "check-isa-symbols: no $objdir (build first)" >&2; exit 2; }

kind_of() {
  case "$1" in
    */kernels/avx2/*) echo avx2 ;;
    */kernels/avx512/*) echo avx512 ;;
    */kernels/neon/*i8mm*) echo neon-i8mm ;;
    */kernels/neon/*) echo neon ;;
    *) echo generic ;;
  esac
}

table=$(mktemp)
trap 'rm -f "$table"' EXIT
n_isa=0
while IFS= read -r -d '' obj; do
  kind=$(kind_of "$obj")
  [ "$kind" = generic ] || n_isa=$((n_isa + 1))
  # -P: "name type value size"; defined, external, code only (T strong, W
  # weak, i indirect): data (an inline constexpr table, type u/V/R) is the
  # same bytes whichever copy is kept, and never executed.
  "$NM" -P --defined-only --extern-only "$obj" |
    awk -v k="$kind" -v o="${obj#"$objdir"/}" '$2 ~ /^[TWi]$/ {print $1 "\t" k "\t" o}'
done < <(find "$objdir" -name '*.o' -print0) > "$table"
[ "$n_isa" -gt 0 ] || { echo "check-isa-symbols: no ISA-flagged objects under $objdir" >&2; exit 2; }

# Symbols defined by objects of two or more kinds, one of them an ISA's.
leaks=$(sort -u -k1,1 -k2,2 "$table" | awk -F'\t' '
  { kinds[$1] = kinds[$1] " " $2; n[$1]++; if ($2 != "generic") isa[$1] = 1; where[$1] = where[$1] " " $3 }
  END { for (s in n) if (n[s] > 1 && isa[s]) print s "\t" kinds[s] "\t" where[s] }')
if [ -n "$leaks" ]; then
  echo "check-isa-symbols: symbols defined both in ISA-flagged code and elsewhere (the linker may keep the ISA copy for all):" >&2
  echo "$leaks" | while IFS=$'\t' read -r sym kinds where; do
    printf '  %s  [%s ]  in%s\n' "$(echo "$sym" | c++filt)" "$kinds" "$where" >&2
  done
  echo "check-isa-symbols: give the helper internal linkage (an anonymous namespace in the ISA folder's header) or keep the generic header out of ISA files" >&2
  exit 1
fi
echo "check-isa-symbols: $n_isa ISA-flagged objects, no symbol shared with another kind"
