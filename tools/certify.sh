#!/usr/bin/env bash
# Certifies a target under every profile and writes the reports.
#   tools/certify.sh [TARGET] [OUTDIR] [-- extra 'rdmapct conform' flags]
# TARGET: reference (default), reference?fault=NAME, plugin:PATH, tcp://HOST:PORT
# OUTDIR: reports/<target slug>/ by default (also when only `-- flags` follow
#         TARGET); per profile P it holds P.html, P.json, P.xml (JUnit),
#         P.txt (the console report), P.log (progress, errors) and
#         P-failures/ (a pcap capture of every case that failed or ended in an
#         error, which the reports link to; one directory per profile so the
#         profiles never overwrite each other's captures).
# RDMAPCT: the rdmapct binary (default build/rdmapct).
# Exit status: 0 if every MUST / MUST NOT case passed under every profile,
# 1 if any failed, 2 for usage or target errors (the worst of the profiles),
# 130 if interrupted (the reports of the profile in flight are marked partial).
set -uo pipefail
cd "$(dirname "$0")/.."

# Up to two positional arguments, then an optional `--` and conform flags.
positional=()
while [ $# -gt 0 ] && [ "$1" != "--" ] && [ ${#positional[@]} -lt 2 ]; do
  positional+=("$1")
  shift
done
if [ $# -gt 0 ]; then
  [ "$1" = "--" ] || { echo "certify: unexpected argument '$1' (usage: tools/certify.sh [TARGET] [OUTDIR] [-- FLAGS])" >&2; exit 2; }
  shift
fi
target=${positional[0]:-reference}
slug=$(printf '%s' "$target" | tr -c 'A-Za-z0-9._-' '_')
out=${positional[1]:-reports/$slug}
bin=${RDMAPCT:-build/rdmapct}
[ -x "$bin" ] || { echo "certify: $bin not built; run tools/setup.sh first" >&2; exit 2; }
mkdir -p -- "$out" || exit 2

worst=0
for profile in rfc5040 rfc7306 commit; do
  echo "== $target, profile $profile"
  rm -rf -- "$out/$profile-failures"
  "$bin" conform --target "$target" --profile "$profile" \
    --report "$out/$profile.html" --json "$out/$profile.json" --junit "$out/$profile.xml" \
    --failure-pcap-dir "$out/$profile-failures" "$@" \
    > "$out/$profile.txt" 2> "$out/$profile.log"
  rc=$?
  sed -n '/^Summary/,$p' "$out/$profile.txt"
  [ $rc -ge 2 ] && tail -n 5 "$out/$profile.log" >&2
  case $rc in
    0) ;;
    1) [ $worst -lt 1 ] && worst=1 ;;
    130) echo "certify: interrupted during profile $profile" >&2; exit 130 ;;
    *) worst=2 ;;
  esac
done
echo "reports: $out/{rfc5040,rfc7306,commit}.{html,json,xml,txt}, failure captures in $out/<profile>-failures/"
exit $worst
