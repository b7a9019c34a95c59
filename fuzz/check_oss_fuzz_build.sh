#!/usr/bin/env bash
# Builds the harnesses as OSS-Fuzz / ClusterFuzzLite would (fuzz/build.sh
# under their build contract) and checks every harness staged in $OUT:
# every shared library beyond the C runtime comes from $OUT/lib (a runner
# image has none of them), and it starts, runs its seed corpus zip once
# (-runs=0) and exits 0. No container needed; a stand-in for
# .clusterfuzzlite/Dockerfile's build, run by CTest (label oss-fuzz, option
# RDMAPCT_OSS_FUZZ_CHECK) and by hand:
#
#   fuzz/check_oss_fuzz_build.sh [WORKDIR]     # default: a new temporary dir
#
# The contract (https://google.github.io/oss-fuzz/getting-started/new-project-guide/):
# CC/CXX clang, CFLAGS/CXXFLAGS with -fsanitize=address,fuzzer-no-link,
# LIB_FUZZING_ENGINE=-fsanitize=fuzzer, and SRC, WORK, OUT set.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
# build.sh gives the staged libraries $ORIGIN rpaths with patchelf, as the
# container build does (.clusterfuzzlite/Dockerfile installs it).
if ! command -v patchelf >/dev/null 2>&1; then
  echo "check: needs patchelf (apt-get install patchelf)" >&2
  exit 1
fi
root=${1:-$(mktemp -d /tmp/rdmapct-oss-fuzz.XXXXXX)}
mkdir -p "$root/src" "$root/work" "$root/out"
export CC=clang CXX=clang++
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export SRC="$root/src" WORK="$root/work" OUT="$root/out"
export RDMAPCT_FUZZ_JOBS=${RDMAPCT_FUZZ_JOBS:-2}
# CMake's compiler checks and ccache across runs (unchanged files are not rebuilt).
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi

"$src/fuzz/build.sh" > "$root/build.log" 2>&1 || { tail -30 "$root/build.log"; echo "check: fuzz/build.sh failed" >&2; exit 1; }

failed=0 checked=0
for harness in "$OUT"/fuzz_*; do
  [[ -x "$harness" && ! "$harness" == *.* ]] || continue
  name=$(basename "$harness")
  checked=$((checked + 1))
  # Self-contained: every library beyond the C runtime resolves to $OUT/lib.
  outside=$(ldd "$harness" | awk '$2 == "=>" {print $1, $3}' |
    grep -vE '^(libc|libm|libdl|libpthread|librt|libgcc_s)\.so|^ld-linux' | grep -v " $OUT/lib/" || true)
  if [[ -n "$outside" ]]; then
    echo "check: $name: libraries not staged in \$OUT/lib:"; echo "$outside"
    failed=1; continue
  fi
  corpus="$WORK/corpus-$name"
  rm -rf "$corpus"; mkdir -p "$corpus"
  if [[ -f "$OUT/${name}_seed_corpus.zip" ]]; then
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
      "$OUT/${name}_seed_corpus.zip" "$corpus"
  fi
  seeds=$(find "$corpus" -type f | wc -l)
  options=()
  [[ -f "$OUT/$name.dict" ]] && options+=("-dict=$OUT/$name.dict")
  if (cd "$WORK" && "$harness" -runs=0 "${options[@]}" "$corpus" > "$WORK/$name.log" 2>&1); then
    echo "check: $name: ok ($seeds seeds)"
  else
    echo "check: $name: exit status $? on its seed corpus ($seeds seeds):"; tail -20 "$WORK/$name.log"
    failed=1
  fi
done
if ((checked == 0)); then echo "check: no harness in $OUT" >&2; exit 1; fi
echo "check: $checked harnesses in $OUT, $([[ $failed == 0 ]] && echo "all ran their seed corpus and exited 0" || echo "FAILED")"
exit $failed
