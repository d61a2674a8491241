#!/usr/bin/env bash
# The whole spyre-mlir test suite, from a fresh machine: installs what the
# tests need (upstream MLIR 22, and CMake when it is missing, through apt-get
# when this is a root Debian machine; the package with its [test] extra through
# pip), then runs the lit suite through CMake's check-spyre-mlir target and the
# pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."

MLIR_BIN=/usr/lib/llvm-22/bin
apt_packages=()
if [ ! -x "$MLIR_BIN/mlir-opt" ] || [ ! -x "$MLIR_BIN/FileCheck" ]; then
  apt_packages+=(mlir-22-tools llvm-22-tools)
fi
if ! command -v cmake >/dev/null; then
  apt_packages+=(cmake)
fi
if [ ${#apt_packages[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_packages[@]}" >/dev/null
  elif ! command -v cmake >/dev/null; then
    echo "error: cmake is not installed and cannot be (not root or no apt-get): install CMake >= 3.20" >&2
    exit 1
  else
    echo "SKIP upstream MLIR: not root or no apt-get, so mlir-22-tools cannot be installed;" \
         "the upstream-MLIR tests will report UNSUPPORTED/SKIPPED"
  fi
fi

python3 -m pip install -q -e '.[test]'

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target check-spyre-mlir

# A pytest exit of 5 (no test collected) fails the run like any other non-zero exit.  The
# tests run on every core (pytest-xdist): each test compiles in its own directory.
python3 -m pytest test/python -q -p no:cacheprovider -n auto
