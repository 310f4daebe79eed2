#!/usr/bin/env bash
# Installs the Debian packages edgellm builds and tests with (only those that
# are missing), so every entry point works on a fresh Debian 12 machine.
set -euo pipefail
PACKAGES="cmake ninja-build g++ clang libclang-rt-14-dev libgtest-dev pkg-config libpcre2-dev python3 python3-jinja2 libedit-dev tmux libcpp-httplib-dev nlohmann-json3-dev default-jdk-headless"
missing=""
for p in $PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "setup: installing$missing with apt-get${SUDO:+ through sudo (you may be asked for your password)}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
# Node.js and npm run the server's client tests (tests/server: the official
# `openai` package). Machines that already have a Node.js (e.g. NodeSource's,
# which bundles npm) keep it; Debian's own packages are the fallback.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "setup: installing nodejs npm with apt-get${SUDO:+ through sudo}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
