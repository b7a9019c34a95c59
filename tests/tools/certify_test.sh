#!/usr/bin/env bash
# tools/certify.sh on a tiny selection (CTest certify_sh):
#  1. OUTDIR is optional even when `-- flags` follow TARGET (it failed with
#     "mkdir: missing operand");
#  2. each profile gets its own failure-pcap directory and each profile's
#     reports name the capture in it (the profiles overwrote each other's).
# Usage: certify_test.sh SOURCE_DIR RDMAPCT_BINARY SCRATCH_DIR
set -euo pipefail
src=$1 bin=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch/tools"
# A copy of the script in a scratch tree, so the default OUTDIR
# (reports/<slug> under the script's parent) lands in the scratch tree.
cp "$src/tools/certify.sh" "$scratch/tools/certify.sh"
mkdir -p "$scratch/build" && ln -s "$bin" "$scratch/build/rdmapct"   # its default binary
fail() { echo "FAIL: $*" >&2; exit 1; }
case_id=rfc5040/7.2/write-to-read-only-region
pcap=rfc5040_7.2_write-to-read-only-region.pcap

# 1. TARGET -- flags, no OUTDIR.
RDMAPCT=$bin "$scratch/tools/certify.sh" reference -- --jobs 2 --case "$case_id" > "$scratch/1.out" 2>&1 ||
  fail "certify.sh reference -- --jobs 2 exited $? ($(cat "$scratch/1.out"))"
for p in rfc5040 rfc7306 commit; do
  [ -s "$scratch/reports/reference/$p.json" ] || fail "no reports/reference/$p.json"
done
grep -q 'missing operand' "$scratch/1.out" && fail "mkdir: missing operand"

# 2. A fault every profile catches: three failure captures, one per profile.
out=$scratch/faulty
set +e
RDMAPCT=$bin "$scratch/tools/certify.sh" 'reference?fault=skip-access-rights-check' "$out" -- --case "$case_id" \
  > "$scratch/2.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "a failing certification exited $rc, not 1 ($(cat "$scratch/2.out"))"
for p in rfc5040 rfc7306 commit; do
  [ -s "$out/$p-failures/$pcap" ] || fail "no $out/$p-failures/$pcap"
  grep -q "\"pcap\": \"$out/$p-failures/$pcap\"" "$out/$p.json" || fail "$p.json does not name its own capture"
  grep -q "pcap: $out/$p-failures/$pcap" "$out/$p.txt" || fail "$p.txt does not name its own capture"
  grep -q "href=\"$p-failures/$pcap\"" "$out/$p.html" || fail "$p.html does not link its own capture"
done
[ ! -e "$out/rdmapct-failures" ] || fail "a shared rdmapct-failures/ was written"
echo "certify.sh: OK"
