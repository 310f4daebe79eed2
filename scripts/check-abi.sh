#!/usr/bin/env bash
# ABI discipline for the C API (include/edgellm/edgellm.h), run by CTest
# (tests/CMakeLists.txt) on every build and by scripts/test-arm64.sh on the
# arm64 one:
#   1. libedgellm.so exports exactly capi/edgellm.symbols, all edgellm_*;
#   2. its SONAME is libedgellm.so.<EDGELLM_API_VERSION>;
#   3. the public structs have the sizes and field offsets of
#      capi/edgellm.layout (tests/capi/abi_layout.c prints them);
#   4. the header compiles alone as C99 and as C++11 with
#      -Wall -Wextra -pedantic -Werror.
# An intended change: update the files with --update and raise
# EDGELLM_API_VERSION when an existing symbol or field changed.
#   scripts/check-abi.sh BUILD_DIR [--update]
# Cross builds: CC=aarch64-linux-gnu-gcc RUN="qemu-aarch64 -L /usr/aarch64-linux-gnu" scripts/check-abi.sh build-arm64
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: scripts/check-abi.sh BUILD_DIR [--update]}" && pwd)
update=${2:-}
cc=${CC:-cc}
cxx=${CXX:-c++}
run=${RUN:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

lib=$(ls "$build"/libedgellm.so.*.*.* 2>/dev/null | head -n 1)
[ -n "$lib" ] || { echo "check-abi: no libedgellm.so.X.Y.Z in $build (build the edgellm_shared target)" >&2; exit 1; }

# 1. Exported symbols: defined, global or weak, default visibility.
readelf --dyn-syms -W "$lib" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $8 != "" {print $8}' |
  sed 's/@.*//' | sort -u > "$tmp/symbols"
if grep -v '^edgellm_' "$tmp/symbols" > "$tmp/stray"; then
  echo "check-abi: $lib exports symbols outside the C API:" >&2
  head -n 20 "$tmp/stray" >&2
  fail=1
fi
want_symbols=$src/capi/edgellm.symbols
if [ "$update" = --update ]; then
  { grep '^#' "$want_symbols"; cat "$tmp/symbols"; } > "$tmp/new" && mv "$tmp/new" "$want_symbols"
fi
if ! diff <(grep -v '^#' "$want_symbols") "$tmp/symbols" > "$tmp/symbols.diff"; then
  echo "check-abi: the exported symbols differ from capi/edgellm.symbols (< expected, > found):" >&2
  cat "$tmp/symbols.diff" >&2
  fail=1
fi

# 2. SONAME follows the API version.
api=$(sed -n 's/^#define EDGELLM_API_VERSION \([0-9]*\)$/\1/p' "$src/include/edgellm/edgellm.h")
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" != "libedgellm.so.$api" ]; then
  echo "check-abi: SONAME is '$soname', expected libedgellm.so.$api (EDGELLM_API_VERSION)" >&2
  fail=1
fi

# 3. Struct layout.
$cc -std=c99 -Wall -Wextra -pedantic -Werror -I"$src/include" "$src/tests/capi/abi_layout.c" -o "$tmp/abi_layout"
$run "$tmp/abi_layout" > "$tmp/layout"
want_layout=$src/capi/edgellm.layout
if [ "$update" = --update ]; then
  { grep '^#' "$want_layout"; cat "$tmp/layout"; } > "$tmp/new" && mv "$tmp/new" "$want_layout"
fi
if ! diff <(grep -v '^#' "$want_layout") "$tmp/layout" > "$tmp/layout.diff"; then
  echo "check-abi: the public structs' layout differs from capi/edgellm.layout (< expected, > found):" >&2
  cat "$tmp/layout.diff" >&2
  fail=1
fi

# 4. The header alone, strict C99 and C++11.
$cc -std=c99 -Wall -Wextra -pedantic -Werror -I"$src/include" -fsyntax-only "$src/tests/capi/header_c99.c"
$cxx -std=c++11 -Wall -Wextra -pedantic -Werror -I"$src/include" -fsyntax-only -x c++ "$src/tests/capi/header_c99.c"

if [ $fail -ne 0 ]; then
  echo "check-abi: FAILED. If the change is intended: scripts/check-abi.sh $1 --update, and raise" >&2
  echo "EDGELLM_API_VERSION in include/edgellm/edgellm.h if an existing function or field changed." >&2
  exit 1
fi
echo "check-abi: $(wc -l < "$tmp/symbols") symbols, all edgellm_*; SONAME $soname; $(grep -c ' ' "$tmp/layout") struct sizes/offsets as recorded; header compiles as C99 and C++11"
