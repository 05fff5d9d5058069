#!/usr/bin/env bash
# Installs the Debian 12 packages schedhost builds, tests and runs with. Needs root.
# --with-browser adds Debian's chromium, which the web UI's end-to-end test drives.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git file binutils
  libboost-dev libtomlplusplus-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev
  nlohmann-json3-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  python3-grpcio python3-protobuf python3-grpc-tools openssl
  clang-14 clang-tidy-14 libc++-14-dev libc++abi-14-dev libclang-rt-14-dev abigail-tools
  rpm lintian
  bindgen libclang1-14
)
[ "${1:-}" != "--with-browser" ] || packages+=(chromium)
# The Rust SDK (sdk/rust) builds with the machine's Rust toolchain (rustup's cargo, 1.77 or
# newer; Debian 12's rustc 1.63 is too old), which this script does not install: without cargo
# the build leaves the Rust parts out with a warning. bindgen (above) only checks the committed
# bindings against plugin.h.
# The web UI is built with Node.js and npm (ui/); Debian's own (Node.js 18) serve when the
# machine has none of its own.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
