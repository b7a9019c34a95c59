#!/usr/bin/env bash
# Installs every Debian package rdmapct needs (idempotent) and builds the
# release preset into build/. Usage: tools/setup.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git python3
  clang libclang-rt-dev               # libFuzzer and sanitizer runtimes for the fuzz preset
  clang-format                        # tests check the tree keeps .clang-format (tools/format.sh)
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  protobuf-compiler libprotobuf-dev
  libpcap-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  tshark                              # tests check that Wireshark decodes the captures
  libibverbs-dev librdmacm-dev        # rdmapct-agent (targets/agent), the verbs test ULP
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  # wireshark-common asks whether non-root users may capture; answer no.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo_cmd debconf-set-selections || true
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "${1:-}" = "--no-build" ] && exit 0
cmake --preset release >/dev/null
cmake --build --preset release
