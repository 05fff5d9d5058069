#!/bin/sh
# Compares the freshly built abi-probe library with the committed baseline (docs/abi.md rule 13).
#
#   check_abi_probe.sh ABIDW ABIDIFF PROBE_SO BASELINE_ABI
#
# Exits 0 when nothing changed, 77 (skipped) when abigail-tools is missing, 1 on any change.
set -u
abidw=$1
abidiff=$2
probe=$3
baseline=$4
if [ -z "$abidw" ] || [ -z "$abidiff" ] || ! command -v "$abidw" >/dev/null 2>&1 ||
   ! command -v "$abidiff" >/dev/null 2>&1; then
  echo "SKIPPED: abidw/abidiff not found; install abigail-tools to run the ABI diff (CI does)"
  exit 77
fi
if [ "$(uname -m)" != x86_64 ]; then
  echo "SKIPPED: the committed baseline describes x86_64; this machine is $(uname -m)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$abidw" --no-corpus-path --no-comp-dir-path --short-locs --out-file "$tmp/current.abi" \
     "$probe"; then
  echo "FAIL: abidw could not read $probe"
  exit 1
fi
"$abidiff" --no-added-syms --harmless "$baseline" "$tmp/current.abi"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "ok: the plugin ABI types match $baseline"
  exit 0
fi
cat <<MSG

FAIL: the plugin ABI (sdk/include/schedhost/plugin.h) no longer matches the committed baseline
$baseline (abidiff exit code $rc; bit 8 = incompatible change).

The rule (docs/abi.md rules 3 and 4):
  - An incompatible change (a field or entry removed, reordered, retyped or resized; an enum
    value changed) needs a new ABI major: SCHEDHOST_ABI_MAJOR + 1, a new entry symbol
    schedhost_plugin_library_v<N>, and a new layout list.
  - A compatible append (new fields or table entries at the end, new enumerators, new types)
    is a minor bump: SCHEDHOST_ABI_MINOR + 1, entries marked "since: abi 1.N", new lines in
    tests/abi/abi_layout.inc, and a new baseline.
  - If the change was not intended, revert it.

To accept an intended change after bumping the version:
  tests/abi/update-abi-baseline.sh [BUILD_DIR]
and commit tests/abi/abi-probe.abi together with the header.
MSG
exit 1
