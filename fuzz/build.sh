#!/usr/bin/env bash
# Builds the libFuzzer harnesses and stages them OSS-Fuzz style.
#
# Inside OSS-Fuzz / ClusterFuzzLite ($LIB_FUZZING_ENGINE and $OUT set): the
# infrastructure's $CC/$CXX/$CFLAGS/$CXXFLAGS choose compiler, sanitizer and
# coverage flags; the harnesses link $LIB_FUZZING_ENGINE (RDMAPCT_FUZZ_ENGINE
# in fuzz/CMakeLists.txt) and the project adds no sanitizer flags itself.
#
# Anywhere else: the "fuzz" preset (clang, ASan + UBSan + libFuzzer) into
# build-fuzz/ (or $RDMAPCT_FUZZ_BUILD_DIR), staged into build-fuzz/out/
# unless $OUT is set.
#
# For every fuzz/fuzz_<name>.cc, $OUT receives:
#   fuzz_<name>                     the harness
#   fuzz_<name>_seed_corpus.zip     corpus/fuzz_<name>/ + corpus/regressions/fuzz_<name>/
#   fuzz_<name>.dict, .options      from fuzz/
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${RDMAPCT_FUZZ_JOBS:-$(nproc)}
mapfile -t names < <(cd "$src/fuzz" && ls fuzz_*.cc | sed 's/\.cc$//' | sort)
if ((${#names[@]} == 0)); then
  echo "build.sh: no fuzz/fuzz_*.cc harnesses" >&2
  exit 1
fi

oss_fuzz=0
if [[ -n "${LIB_FUZZING_ENGINE:-}" && -n "${OUT:-}" ]]; then
  oss_fuzz=1
  build=${RDMAPCT_FUZZ_BUILD_DIR:-${WORK:-/tmp}/rdmapct-fuzz-build}
  # CMake takes CC/CXX/CFLAGS/CXXFLAGS from the environment on first configure.
  # The harnesses find the shared libraries staged beside them (below): a
  # ClusterFuzz runner has only the base image's.
  cmake -S "$src" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRDMAPCT_FUZZ=OFF -DRDMAPCT_SANITIZE=OFF \
    -DRDMAPCT_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
    -DCMAKE_BUILD_RPATH='$ORIGIN/lib' \
    -DRDMAPCT_TESTS=OFF -DRDMAPCT_BENCH=OFF
else
  build=${RDMAPCT_FUZZ_BUILD_DIR:-$src/build-fuzz}
  OUT=${OUT:-$build/out}
  cmake --preset fuzz -S "$src" -B "$build"
fi
cmake --build "$build" -j "$jobs" --target "${names[@]}"

mkdir -p "$OUT"

# zip(1) when present, else python3's zipfile (same flat layout).
make_zip() {
  local zip_path=$1
  shift
  rm -f "$zip_path"
  if [[ $# -eq 0 ]]; then return 0; fi
  if command -v zip >/dev/null 2>&1; then
    zip -q -j -X "$zip_path" "$@"
  else
    python3 - "$zip_path" "$@" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for path in sys.argv[2:]:
        z.write(path, os.path.basename(path))
PY
  fi
}

for name in "${names[@]}"; do
  cp "$build/fuzz/$name" "$OUT/"
  for ext in dict options; do
    if [[ -f "$src/fuzz/$name.$ext" ]]; then cp "$src/fuzz/$name.$ext" "$OUT/"; fi
  done
  seeds=()
  for dir in "$src/corpus/$name" "$src/corpus/regressions/$name"; do
    if [[ ! -d "$dir" ]]; then continue; fi
    while IFS= read -r -d '' f; do seeds+=("$f"); done < <(find "$dir" -type f -print0 | sort -z)
  done
  # Regression inputs may share a name with a seed: keep both by prefixing.
  staged=$(mktemp -d)
  for f in "${seeds[@]+"${seeds[@]}"}"; do
    base=$(basename "$f")
    if [[ "$f" == */regressions/* ]]; then base="regression-$base"; fi
    cp "$f" "$staged/$base"
  done
  shopt -s nullglob
  files=("$staged"/*)
  shopt -u nullglob
  make_zip "$OUT/${name}_seed_corpus.zip" "${files[@]+"${files[@]}"}"
  rm -rf "$staged"
  echo "build.sh: $name (${#seeds[@]} seeds)"
done
# OSS-Fuzz / ClusterFuzzLite: the shared libraries a harness needs beyond the
# C runtime (libprotobuf, libpcap and theirs, transitively) go to $OUT/lib,
# found through the harness's $ORIGIN/lib rpath and (patchelf) the copies'
# own $ORIGIN, so the harnesses run on a runner image without them.
if ((oss_fuzz)); then
  mkdir -p "$OUT/lib"
  for name in "${names[@]}"; do
    ldd "$OUT/$name" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
      case "$(basename "$lib")" in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*) ;;
        *) cp -Ln "$lib" "$OUT/lib/" 2>/dev/null || true ;;
      esac
    done
  done
  if command -v patchelf >/dev/null 2>&1; then
    for lib in "$OUT"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$lib"; done
  else
    echo "build.sh: no patchelf: the libraries in $OUT/lib find their own dependencies only on the system" >&2
  fi
fi
echo "build.sh: staged ${#names[@]} harnesses in $OUT"
