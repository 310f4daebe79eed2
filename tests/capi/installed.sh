#!/usr/bin/env bash
# The C API as an app sees it: installed with `cmake --install`, then each
# example built against that install (never against the source tree) and run.
#   tests/capi/installed.sh STEP BUILD_DIR SOURCE_DIR
# STEP:
#   install    cmake --install BUILD_DIR --prefix BUILD_DIR/capi-install
#   cmake      examples/c via find_package(edgellm), shared and static: prints
#              the stories260K golden story exactly as `edgellm run`; cancel
#              after N tokens; a chat turn
#   pkgconfig  examples/c via pkg-config (shared, and --static)
#   python     examples/python's test (ctypes, no third-party packages)
#   jni        examples/android: javac the Java class, compile the JNI C file
#              against the JDK's jni.h and the installed header, link it to
#              the installed library, and run the Java class on stories260K
# CTest runs install first (a fixture). EDGELLM_CC_FLAGS: extra compiler
# flags (the sanitizers, when the library was built with them).
set -euo pipefail
step=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd)
prefix=$build/capi-install
model=$src/../shared/testdata/models/stories260K.gguf
cli=$build/edgellm
work=$build/capi-test/$step
cc=${CC:-cc}
cflags="-std=c99 -Wall -Wextra -pedantic -Werror ${EDGELLM_CC_FLAGS:-}"

# The golden story, as `edgellm run` prints it (greedy, one thread).
golden() {
  "$cli" run -m "$model" -p "" -n 256 --temp 0 -t 1 2>/dev/null
}
expect_golden() {  # $1: a file of the example's stdout
  local want
  want=$(golden)
  case "$want" in
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."*) ;;
    *) echo "edgellm run no longer prints the golden story: $want" >&2; exit 1 ;;
  esac
  if [ "$(cat "$1")" != "$want" ]; then
    echo "the example's text differs from edgellm run's:" >&2
    diff <(echo "$want") "$1" >&2 || true
    exit 1
  fi
}
run_example() {  # $1: the example binary
  local bin=$1
  "$bin" "$model" -t 1 > "$work/golden.out" 2> "$work/golden.err" || { cat "$work/golden.err" >&2; exit 1; }
  expect_golden "$work/golden.out"
  grep -q "generated 256 tokens" "$work/golden.err" || { cat "$work/golden.err" >&2; exit 1; }
  # Cancel after 10 tokens: exactly 10 reach the callback.
  "$bin" "$model" -t 1 --cancel-after 10 > "$work/cancel.out" 2> "$work/cancel.err"
  grep -q "generated 10 tokens.*stopped: cancelled" "$work/cancel.err" || { cat "$work/cancel.err" >&2; exit 1; }
  # One chat turn (stories260K has no template of its own: a built-in one).
  "$bin" "$model" -t 1 --template chatml -p 'Hi "there"' -n 16 -v > "$work/chat.out" 2> "$work/chat.err" ||
    { cat "$work/chat.err" >&2; exit 1; }
  grep -q "^\[edgellm 1\] loaded" "$work/chat.err" || { cat "$work/chat.err" >&2; exit 1; }
  echo "$bin: golden text, cancel after 10, chat turn: ok"
}

rm -rf "$work"
mkdir -p "$work"
case "$step" in
  install)
    rm -rf "$prefix"
    cmake --install "$build" --prefix "$prefix" > "$work/install.log"
    for f in include/edgellm/edgellm.h lib/libedgellm.a lib/cmake/edgellm/edgellmConfig.cmake \
             lib/cmake/edgellm/edgellmConfigVersion.cmake lib/pkgconfig/edgellm.pc; do
      [ -f "$prefix/$f" ] || { echo "install: $f is missing" >&2; exit 1; }
    done
    ls "$prefix"/lib/libedgellm.so.* > /dev/null
    echo "installed into $prefix"
    ;;
  cmake)
    for kind in OFF ON; do
      cmake -S "$src/examples/c" -B "$work/build-$kind" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
        -DEDGELLM_STATIC=$kind -DCMAKE_C_FLAGS="${EDGELLM_CC_FLAGS:-} -Werror" \
        -DCMAKE_EXE_LINKER_FLAGS="${EDGELLM_CC_FLAGS:-}" > "$work/configure-$kind.log"
      cmake --build "$work/build-$kind" > "$work/build-$kind.log" || { cat "$work/build-$kind.log" >&2; exit 1; }
      # The shared build must load the installed library, not one in the build tree.
      if [ $kind = OFF ]; then
        ldd "$work/build-$kind/edgellm_example" > "$work/ldd.txt"
        grep -q "$prefix/lib/libedgellm.so" "$work/ldd.txt" ||
          { cat "$work/ldd.txt" >&2; echo "not linked to the installed library" >&2; exit 1; }
      fi
      run_example "$work/build-$kind/edgellm_example"
    done
    ;;
  pkgconfig)
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    # shellcheck disable=SC2046
    $cc $cflags "$src/examples/c/edgellm_example.c" $(pkg-config --cflags --libs edgellm) \
      -Wl,-rpath,"$(pkg-config --variable=libdir edgellm)" -o "$work/example-shared"
    run_example "$work/example-shared"
    # shellcheck disable=SC2046
    $cc $cflags "$src/examples/c/edgellm_example.c" $(pkg-config --cflags edgellm) "$prefix/lib/libedgellm.a" \
      $(pkg-config --static --libs-only-l edgellm | sed 's/-ledgellm//') -o "$work/example-static"
    run_example "$work/example-static"
    ;;
  python)
    if [ -n "${EDGELLM_CC_FLAGS:-}" ]; then
      echo "python: skipped in a sanitizer build (the interpreter is not instrumented)"
      exit 77
    fi
    # No __pycache__ in the source tree.
    PYTHONDONTWRITEBYTECODE=1 EDGELLM_LIBRARY=$(ls "$prefix"/lib/libedgellm.so.*.*.*) EDGELLM_MODEL=$model EDGELLM_CLI=$cli \
      python3 "$src/examples/python/test_edgellm.py" -v
    ;;
  jni)
    if ! command -v javac > /dev/null; then
      echo "jni: installing default-jdk-headless (javac and jni.h)" >&2
      SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq default-jdk-headless > /dev/null ||
        { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq default-jdk-headless > /dev/null; }
    fi
    jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
    [ -f "$jdk/include/jni.h" ] || { echo "jni: no jni.h under $jdk (apt-get install default-jdk-headless)" >&2; exit 1; }
    mkdir -p "$work/classes"
    javac -h "$work/headers" -d "$work/classes" "$src"/examples/android/java/ai/edgellm/*.java
    # The generated JNI header must declare what the C glue defines.
    $cc -std=c11 -Wall -Wextra -Werror -fPIC -shared ${EDGELLM_CC_FLAGS:-} \
      -I"$jdk/include" -I"$jdk/include/linux" -I"$prefix/include" -I"$work/headers" \
      -include "$work/headers/ai_edgellm_EdgeLlm.h" \
      "$src/examples/android/jni/edgellm_jni.c" -L"$prefix/lib" -ledgellm -Wl,-rpath,"$prefix/lib" \
      -o "$work/libedgellm_jni.so"
    echo "jni: libedgellm_jni.so built against $prefix"
    if [ -n "${EDGELLM_CC_FLAGS:-}" ]; then
      echo "jni: not run in a sanitizer build (the JVM is not instrumented)"
      exit 0
    fi
    java -Djava.library.path="$work" -cp "$work/classes" ai.edgellm.Demo "$model" > "$work/java.out"
    expect_golden "$work/java.out"
    echo "jni: the Java demo printed the golden story"
    ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
