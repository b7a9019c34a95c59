#!/usr/bin/env bash
# Certifies a target under every profile and writes the reports.
#   tools/certify.sh [TARGET] [OUTDIR] [-- extra 'rdmapct conform' flags]
# TARGET: reference (default), reference?fault=NAME, plugin:PATH, tcp://HOST:PORT
# OUTDIR: reports/<target slug>/ by default; per profile P it holds P.html,
#         P.json, P.xml (JUnit), P.txt (the console report) and P.log (progress, errors).
# Exit status: 0 if every MUST / MUST NOT case passed under every profile,
# 1 if any failed, 2 for usage or target errors (the worst of the profiles).
set -uo pipefail
cd "$(dirname "$0")/.."

target=${1:-reference}
slug=$(printf '%s' "$target" | tr -c 'A-Za-z0-9._-' '_')
out=${2:-reports/$slug}
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
bin=build/rdmapct
[ -x "$bin" ] || { echo "certify: $bin not built; run tools/setup.sh first" >&2; exit 2; }
mkdir -p "$out" || exit 2

worst=0
for profile in rfc5040 rfc7306 commit; do
  echo "== $target, profile $profile"
  "$bin" conform --target "$target" --profile "$profile" \
    --report "$out/$profile.html" --json "$out/$profile.json" --junit "$out/$profile.xml" "$@" \
    > "$out/$profile.txt" 2> "$out/$profile.log"
  rc=$?
  sed -n '/^Summary/,$p' "$out/$profile.txt"
  [ $rc -ge 2 ] && tail -n 5 "$out/$profile.log" >&2
  case $rc in 0) ;; 1) [ $worst -lt 1 ] && worst=1 ;; *) worst=2 ;; esac
done
echo "reports: $out/{rfc5040,rfc7306,commit}.{html,json,xml,txt}"
exit $worst
