#!/usr/bin/env bash
# Runs every test: the release build, then the whole suite again under
# ASan + UBSan. CI (.ci/run) calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --no-build

jobs=$(nproc)
for preset in release asan; do
  echo "== $preset: configure and build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset: ctest"
  ctest --preset "$preset" -j "$jobs"
done
