#!/usr/bin/env bash
# Installs the Debian packages edgellm builds and tests with (only those that
# are missing), so every entry point works on a fresh Debian 12 machine.
set -euo pipefail
PACKAGES="cmake ninja-build g++ clang libclang-rt-14-dev libgtest-dev pkg-config libpcre2-dev python3 python3-jinja2 libedit-dev tmux"
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
