#!/bin/sh
# Rebuilds the abi-probe library and rewrites the committed abidiff baseline
# tests/abi/abi-probe.abi from it. Run it only for an intended, versioned ABI change (see
# tests/abi/README.md): a compatible append bumps SCHEDHOST_ABI_MINOR, anything else
# SCHEDHOST_ABI_MAJOR.
#
#   tests/abi/update-abi-baseline.sh [BUILD_DIR]     (default: build/dev)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/dev}
if ! command -v abidw >/dev/null 2>&1; then
  echo "abidw not found: install abigail-tools" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "$build is not a configured build directory (cmake --preset dev first)" >&2
  exit 1
fi
cmake --build "$build" --target abi_probe
probe="$build/tests/abi/libabi-probe.so"
abidw --no-corpus-path --no-comp-dir-path --short-locs --out-file "$here/abi-probe.abi" "$probe"
echo "wrote $here/abi-probe.abi from $probe"
echo "now: check the ABI version bump in sdk/include/schedhost/plugin.h, and commit both files"
