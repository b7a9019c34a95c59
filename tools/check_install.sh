#!/usr/bin/env bash
# CTest install_relocated: `cmake --install` the build into a scratch prefix,
# then run the installed rdmapct from / with an environment that cannot see
# the source or build tree (they are hidden under an empty tmpfs in a private
# mount namespace where `unshare` allows it), and require a passing
# `conform --profile commit` against the reference target. Also checks the
# installed layout and that a plugin author's find_package(rdmapct) and
# pkg-config work. Nothing is removed from the source tree.
# With --deb (CTest install_deb) the tree comes from the Debian package
# instead: cpack builds the .deb, its control fields are checked, and
# `dpkg-deb -x` unpacks it into the scratch directory (what `dpkg -i` would
# put under /, without needing root); the same checks follow.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR [--deb]
set -euo pipefail
build=$(cd "$1" && pwd -P)
src=$(cd "$2" && pwd -P)
mode=${3:-}
scratch=$(mktemp -d /tmp/rdmapct-install.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
fail() { echo "check_install: $*" >&2; exit 1; }

if [ "$mode" = --deb ]; then
  (cd "$scratch" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch/pkg" >"$scratch/cpack.log" 2>&1) ||
    { tail -20 "$scratch/cpack.log" >&2; fail "cpack -G DEB failed"; }
  deb=$(ls "$scratch"/pkg/rdmapct_*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || fail "cpack wrote no rdmapct_*.deb"
  [ "$(dpkg-deb -f "$deb" Package)" = rdmapct ] || fail "$deb: Package is not rdmapct"
  dpkg-deb -f "$deb" Depends | grep -q 'libpcap' || fail "$deb: Depends does not name libpcap"
  dpkg-deb -x "$deb" "$scratch/root"
  prefix=$scratch/root/usr
  [ -x "$prefix/bin/rdmapct" ] || fail "$deb: no usr/bin/rdmapct"
else
  cmake --install "$build" --prefix "$prefix" >/dev/null
fi
for f in bin/rdmapct share/rdmapct/conformance/requirements.tsv share/rdmapct/conformance/cases \
         share/rdmapct/docs/decisions.md include/rdmapct/rdmapct_target_plugin.h \
         lib/cmake/rdmapct/rdmapctConfig.cmake share/pkgconfig/rdmapct.pc \
         share/man/man1/rdmapct.1 share/bash-completion/completions/rdmapct; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done

# No path of the source tree may be compiled into the binary's constant data.
objcopy -O binary --only-section=.rodata "$prefix/bin/rdmapct" "$scratch/rodata"
if tr '\0' '\n' <"$scratch/rodata" | grep -qxF -e "$src" -e "$build"; then
  fail "bin/rdmapct has the source or build directory compiled in"
fi

# The run: cwd /, a bare environment, source and build trees hidden.
cat >"$scratch/run.sh" <<RUN
set -e
if [ -n "\${HIDE:-}" ]; then
  # The build tree first: it may sit inside the source tree.
  for d in "$build" "$src"; do [ ! -d "\$d" ] || mount -t tmpfs none "\$d"; done
  [ ! -e "$src/conformance" ] || { echo "source tree still visible" >&2; exit 3; }
fi
cd /
# ASan builds: LeakSanitizer's tracer may not work in a user namespace.
exec env -i PATH=/usr/bin:/bin HOME=/nonexistent ASAN_OPTIONS="detect_leaks=0\${ASAN_OPTIONS:+:\$ASAN_OPTIONS}" \
  UBSAN_OPTIONS="\${UBSAN_OPTIONS:-}" "\$@"
RUN
hidden() {
  mkdir -p "$scratch/probe"
  if unshare -rm sh -c "mount -t tmpfs none '$scratch/probe'" 2>/dev/null; then
    HIDE=1 unshare -rm bash "$scratch/run.sh" "$@"
  else
    echo "check_install: no private mount namespace (unshare -rm); running without hiding the trees" >&2
    bash "$scratch/run.sh" "$@"
  fi
}
hidden "$prefix/bin/rdmapct" --version | grep -q '^rdmapct ' || fail "--version"
out=$scratch/conform.txt
if ! hidden "$prefix/bin/rdmapct" conform --profile commit --target reference >"$out" 2>&1; then
  tail -20 "$out" >&2
  fail "installed rdmapct conform --profile commit --target reference did not pass"
fi
grep -q '^Result: PASS' "$out" || fail "no 'Result: PASS' in the conform output"
cases=$(sed -n 's/.*profile commit, \([0-9]*\) case(s).*/\1/p' "$out" | head -n 1)
[ "${cases:-0}" -ge 100 ] || fail "the installed case tree ran ${cases:-no} cases"

# A plugin author: find_package(rdmapct) and pkg-config.
mkdir -p "$scratch/plugin"
cat >"$scratch/plugin/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(plugin LANGUAGES C)
find_package(rdmapct 0.1 REQUIRED)
add_library(p MODULE p.c)
target_link_libraries(p PRIVATE rdmapct::plugin_abi)
if(NOT EXISTS "${rdmapct_EXECUTABLE}")
  message(FATAL_ERROR "rdmapct_EXECUTABLE ${rdmapct_EXECUTABLE}")
endif()
CM
printf '#include <rdmapct/rdmapct_target_plugin.h>\nint probe(void) { return RDMAPCT_PLUGIN_ABI_VERSION; }\n' \
  >"$scratch/plugin/p.c"
cmake -S "$scratch/plugin" -B "$scratch/plugin/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null ||
  fail "find_package(rdmapct) failed"
cmake --build "$scratch/plugin/build" >/dev/null || fail "a plugin against the installed header does not build"
cflags=$(PKG_CONFIG_PATH=$prefix/share/pkgconfig pkg-config --cflags rdmapct)
inc=$(echo "$cflags" | sed 's/^ *-I//; s/ *$//')
[ -f "$inc/rdmapct/rdmapct_target_plugin.h" ] || fail "pkg-config --cflags rdmapct: $cflags"
echo "check_install: installed rdmapct${mode:+ (from the .deb)} passes conform --profile commit from / without the source tree"
