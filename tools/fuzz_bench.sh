#!/usr/bin/env bash
# exec/s of every libFuzzer harness and of an empty harness, in the same run,
# with and without sanitizers (issue goals, one core, no sanitizers: raw
# harnesses >= 300k exec/s, fuzz_session >= 30k exec/s).
#
# Usage: tools/fuzz_bench.sh [SECONDS per harness, default 10] [HARNESS...]
# Builds build-fuzzbench/ (clang, coverage only) and build-fuzz/ (ASan +
# UBSan) as needed. Each harness runs one job from its seed corpus (copied,
# so corpus/ is untouched); the figure is libFuzzer's final exec/s.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-10}
shift || true
jobs=${RDMAPCT_FUZZ_JOBS:-$(nproc)}

cmake -S "$src" -B "$src/build-fuzzbench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
  -DRDMAPCT_FUZZ=ON -DRDMAPCT_FUZZ_SANITIZE=OFF -DRDMAPCT_TESTS=OFF -DRDMAPCT_BENCH=OFF >/dev/null
cmake --preset fuzz -S "$src" >/dev/null

if (($#)); then names=("$@"); else
  mapfile -t names < <(cd "$src/fuzz" && ls fuzz_*.cc | sed 's/\.cc$//' | sort)
fi
cmake --build "$src/build-fuzzbench" -j "$jobs" --target empty_harness "${names[@]}" >/dev/null
cmake --build "$src/build-fuzz" -j "$jobs" --target empty_harness "${names[@]}" >/dev/null

run() {  # binary name -> exec/s
  local bin=$1 name=$2 work
  work=$(mktemp -d)
  if [[ -d "$src/corpus/$name" ]]; then cp -r "$src/corpus/$name/." "$work/"; fi
  local extra=()
  [[ -f "$src/fuzz/$name.dict" ]] && extra+=("-dict=$src/fuzz/$name.dict")
  "$bin" -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=4096 "${extra[@]}" "$work" 2>&1 |
    sed -n 's/^stat::average_exec_per_sec: *//p' | tail -1
  rm -rf "$work"
}

printf '%-26s %16s %16s\n' harness "exec/s (plain)" "exec/s (asan)"
for name in empty_harness "${names[@]}"; do
  plain=$(run "$src/build-fuzzbench/fuzz/$name" "$name")
  asan=$(run "$src/build-fuzz/fuzz/$name" "$name")
  printf '%-26s %16s %16s\n' "$name" "${plain:-?}" "${asan:-?}"
done
