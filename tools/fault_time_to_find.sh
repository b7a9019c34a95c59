#!/usr/bin/env bash
# For every fault switch of the reference target, how long the session fuzzer
# (`rdmapct fuzz --target reference --fault F`, no libFuzzer, fixed seed)
# takes to find it: seconds and sessions to the first finding, or "not found"
# within the budget. Not run in CI (a full table takes up to
# faults x SECONDS); docs/testing.md has the last table.
#
# Usage: tools/fault_time_to_find.sh [SECONDS per fault, default 60] [FAULT...]
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
printf '%-34s %10s %10s  %s\n' fault seconds sessions "first finding"
found=0
for f in "${faults[@]}"; do
  "$rdmapct" fuzz --target reference --fault "$f" --time "${seconds}s" --stop-at-first --quiet --out "$work/$f" >/dev/null 2>&1 || true
  python3 - "$work/$f/stats.json" "$f" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
if s["findings"]:
    first = min(s["findings"], key=lambda f: f["first_seen_s"])
    print("%-34s %10.2f %10d  %s: %s" % (sys.argv[2], first["first_seen_s"], first["first_seen_sessions"],
                                         first["oracle"], first["description"][:70]))
else:
    print("%-34s %10s %10d  not found" % (sys.argv[2], "-", s["sessions"]))
PY
done
