#!/bin/sh
# Times `rdmapct replay FILE --audit` against `tshark -r FILE` on the same
# capture and prints both (wall-clock seconds and MB/s of capture file, MB =
# 10^6 octets) and their ratio. Not run in CI: it takes minutes on the
# default 1 GiB capture, and tshark's own time dominates.
#
#   tools/audit_vs_tshark.sh [FILE] [RDMAPCT]
#
# FILE defaults to the capture bench/audit_bench.cc writes
# (/tmp/rdmapct_audit_bench.pcap, about 1.1 GB); when it does not exist it is
# written by running that benchmark once. RDMAPCT defaults to build/rdmapct.
# tshark dissects every frame (`-r FILE` with output to /dev/null, its default
# one-line summary per frame, the cheapest full dissection); with
# `TSHARK_ARGS=-V` it prints every field as `replay --decode` does.
set -eu

file=${1:-/tmp/rdmapct_audit_bench.pcap}
rdmapct=${2:-build/rdmapct}
bench=${BENCH:-$(dirname "$rdmapct")/bench/rdmapct_bench}

if [ ! -f "$file" ]; then
  if [ "$file" != /tmp/rdmapct_audit_bench.pcap ]; then
    echo "error: $file: no such file" >&2
    exit 2
  fi
  echo "writing $file with $bench (BM_AuditCapture)..." >&2
  "$bench" --benchmark_filter=BM_AuditCapture >/dev/null
fi
command -v tshark >/dev/null 2>&1 || { echo "error: tshark not found (apt-get install tshark)" >&2; exit 2; }
[ -x "$rdmapct" ] || { echo "error: $rdmapct: not built (cmake --build build --target rdmapct)" >&2; exit 2; }

size=$(stat -c %s "$file")
now() { date +%s.%N; }

t0=$(now)
status=0
"$rdmapct" replay "$file" --audit >/dev/null || status=$?
t1=$(now)
# shellcheck disable=SC2086  # TSHARK_ARGS is a list of flags
tshark -r "$file" ${TSHARK_ARGS:-} >/dev/null 2>&1
t2=$(now)

awk -v size="$size" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v st="$status" -v f="$file" 'BEGIN {
  a = t1 - t0; t = t2 - t1;
  printf "capture: %s, %.1f MB\n", f, size / 1e6;
  printf "rdmapct replay --audit: %8.2f s  %9.1f MB/s  (exit status %d)\n", a, size / 1e6 / a, st;
  printf "tshark -r:              %8.2f s  %9.1f MB/s\n", t, size / 1e6 / t;
  printf "ratio: rdmapct is %.1f times as fast as tshark\n", t / a;
}'
