#!/bin/sh
# A Rust plugin built against the previous SDK minor loads in today's host: the Rust SDK is
# copied with its bindings regenerated from plugin.h of ABI 1.8 (include-1.8/, the header as
# it was at 1.8), Panicky is built against it (its manifest says abi 1.8), and today's
# `schedctl simulate` loads it and schedules with it: a pod it admits binds, one it rejects
# stays pending with its reason, and a panic inside it is an Error status with the message.
#
#   previous_minor.sh SOURCE_DIR BIN_DIR CARGO WORK_DIR
set -eu
src=$1
bin=$2
cargo=$3
work=$4
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
rm -rf "$work"
mkdir -p "$work/sdk"
(cd "$src/sdk/rust" && tar --exclude=./target -cf - .) | (cd "$work/sdk" && tar -xf -)
sh "$work/sdk/schedhost-plugin/gen-sys.sh" "$src/tests/abi/rust/include-1.8" ||
  fail "bindgen could not make the 1.8 bindings"
grep -q "SCHEDHOST_ABI_MINOR : u32 = 8 ;" "$work/sdk/schedhost-plugin/src/sys.rs" ||
  fail "the regenerated bindings are not of ABI 1.8"
CARGO_TARGET_DIR="$work/target" "$cargo" build --release --locked --quiet \
  --manifest-path "$work/sdk/Cargo.toml" -p panicky || fail "Panicky did not build against SDK 1.8"
lib="$work/target/release/libpanicky.so"
readelf -p schedhost_manifest "$lib" | grep -q "abi 1.8" || fail "$lib does not say abi 1.8"
readelf -p schedhost_manifest "$lib" | grep -q "sdk 1.8.0" || fail "$lib does not say sdk 1.8.0"

cat >"$work/config.toml" <<TOML
[host]
libraries = [{ path = "$lib" }]
[[profile]]
name = "default-scheduler"
[profile.plugins.filter]
enabled = [{ name = "Panicky" }]
TOML
node() {
  printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s}}\nstatus:\n  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}\n---\n' "$1" "$1"
}
pod() {
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n  containers: [{name: c, image: app}]\n---\n' "$1"
}
{ node n1; pod calm; pod reject; pod panic; } >"$work/cluster.yaml"
"$bin/schedctl" simulate -c "$work/config.toml" -f "$work/cluster.yaml" -o json >"$work/out.json" \
  2>"$work/err.txt" || { cat "$work/err.txt" >&2; fail "schedctl simulate refused the 1.8 build"; }
python3 - "$work/out.json" <<'PY' || fail "placements of the 1.8 build (above)"
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["pods"]}
ok = (pods["calm"]["status"] == "Bound" and pods["reject"]["status"] == "Pending"
      and "rejected by Panicky" in pods["reject"]["message"]
      and pods["panic"]["status"] == "Pending" and "Panicky panicked in Filter" in pods["panic"]["message"])
if not ok:
    print(json.dumps(pods, indent=1))
sys.exit(0 if ok else 1)
PY
echo "ok: Panicky built against SDK 1.8 loads and schedules in this host"
