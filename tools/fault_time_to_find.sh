#!/usr/bin/env bash
# For every fault switch of the reference target, how long the session fuzzer
# takes to find it:
#  - search: `rdmapct fuzz --target reference --fault F` (no coverage
#    feedback, fixed seed): seconds and sessions to the first finding;
#  - libfuzzer (when $FUZZ_SESSION names a libFuzzer fuzz_session binary,
#    e.g. build-fuzz/fuzz/fuzz_session): seconds until it stops on its first
#    finding, from a copy of corpus/fuzz_session, fixed -seed=1.
# "-" means not found within the budget. Not run in CI (a full table takes up
# to faults x SECONDS x 2); docs/testing.md has the last table.
#
# Usage: [FUZZ_SESSION=BIN] tools/fault_time_to_find.sh [SECONDS per fault, default 60] [FAULT...]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
rdmapct=${RDMAPCT:-$src/build/rdmapct}
seconds=${1:-60}
shift || true
if (($#)); then faults=("$@"); else
  mapfile -t faults < <("$rdmapct" --list-faults | awk '/^[a-z]/ {print $1}')
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-34s %10s %10s %10s  %s\n' fault "search s" sessions "libFuzzer s" "first finding (search)"
found=0
for f in "${faults[@]}"; do
  "$rdmapct" fuzz --target reference --fault "$f" --time "${seconds}s" --stop-at-first --quiet --out "$work/$f" >/dev/null 2>&1 || true
  lf="n/a"
  if [[ -n "${FUZZ_SESSION:-}" ]]; then
    mkdir -p "$work/$f.corpus" && cp "$src"/corpus/fuzz_session/* "$work/$f.corpus/"
    t0=$(date +%s.%N)
    if RDMAPCT_SESSION_FAULTS=$f "$FUZZ_SESSION" -seed=1 -max_total_time="$seconds" -rss_limit_mb=4096 \
         -artifact_prefix="$work/$f-" "$work/$f.corpus" 2>"$work/$f.log" >/dev/null; then
      lf="-"
    else
      lf=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")
      grep -q '^finding:' "$work/$f.log" || lf="$lf (crash?)"
    fi
  fi
  python3 - "$work/$f/stats.json" "$f" "$lf" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
if s["findings"]:
    first = min(s["findings"], key=lambda f: f["first_seen_s"])
    print("%-34s %10.2f %10d %10s  %s: %s" % (sys.argv[2], first["first_seen_s"], first["first_seen_sessions"], sys.argv[3],
                                              first["oracle"], first["description"][:60]))
else:
    print("%-34s %10s %10d %10s  not found" % (sys.argv[2], "-", s["sessions"], sys.argv[3]))
PY
done
