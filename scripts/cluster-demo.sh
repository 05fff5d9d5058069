#!/usr/bin/env bash
# Kubernetes mode in one command: build schedhostd and upstream's kube-apiserver, etcd and
# kubectl (Go, from the module proxy; the first build takes a while), start a control plane on
# loopback, create the example cluster (config/examples/demo-cluster.yaml: nodes registered as
# kubelets register them, pods asking for schedulerName "schedhost"), run schedhostd against it
# as a second scheduler (profile "schedhost"), wait until every pod is bound or reported, and
# print `kubectl get pods -o wide` and the FailedScheduling events: the same placements and
# messages as scripts/demo.sh, which schedules the same file on an embedded host.
#
#   scripts/cluster-demo.sh [--keep]    # --keep: leave the control plane's files in place
set -euo pipefail
cd "$(dirname "$0")/.."
keep=0
[[ "${1:-}" == "--keep" ]] && keep=1

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target schedhostd builtin_plugins upstream_binaries
build=build/release
bin=$build/upstream/bin

work=$(mktemp -d /tmp/schedhost-cluster-demo.XXXXXX)
controlplane_pid=""
schedhostd_pid=""
cleanup() {
  [[ -n "$schedhostd_pid" ]] && kill "$schedhostd_pid" 2>/dev/null && wait "$schedhostd_pid" || true
  [[ -n "$controlplane_pid" ]] && kill "$controlplane_pid" 2>/dev/null && wait "$controlplane_pid" || true
  if ((keep)); then echo "kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  for ((i = 0; i < seconds * 5; ++i)); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  echo "cluster-demo: timed out waiting for $what" >&2
  return 1
}

echo "== starting etcd and kube-apiserver (logs in $work/controlplane)"
"$bin/controlplane" --bin-dir "$bin" --dir "$work/controlplane" --foreground \
  >"$work/controlplane.json" 2>"$work/controlplane.log" &
controlplane_pid=$!
wait_for 120 "the control plane (see $work/controlplane.log)" test -s "$work/controlplane.json" ||
  { tail -20 "$work/controlplane.log" >&2; exit 1; }
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" "$work/controlplane.json"; }
admin=$(field admin_kubeconfig)
user=$(field user_kubeconfig)
echo "   API server $(field server)"

kubectl() { "$bin/kubectl" --kubeconfig "$admin" "$@"; }
# The whole cluster first, then the scheduler: its first list holds every pod, queued by
# priority, as the embedded demo (schedctl simulate) queues them, so the two agree.
echo "== creating config/examples/demo-cluster.yaml (pods with schedulerName: schedhost)"
"$bin/loadgen" apply --kubeconfig "$admin" -f config/examples/demo-cluster.yaml \
  --scheduler-name schedhost >/dev/null

cat >"$work/schedhost.toml" <<EOF
[kubernetes]
kubeconfig = "$user"

[api]
listen = "unix://$work/schedhost.sock"

[metrics]
listen = "127.0.0.1:0"

[host]
state_dir = "$work/state"

[[profile]]
name = "schedhost"
EOF
echo "== starting schedhostd (profile \"schedhost\"; log in $work/schedhostd.log)"
"$build/bin/schedhostd" --config "$work/schedhost.toml" --plugin-dir "$build/plugins" \
  >"$work/schedhostd.log" 2>&1 &
schedhostd_pid=$!
wait_for 60 "schedhostd (see $work/schedhostd.log)" grep -q "schedhost serving" "$work/schedhostd.log" ||
  { tail -20 "$work/schedhostd.log" >&2; exit 1; }

# No kubelet runs here: a preempted pod would stay Terminating for its grace period. Finish
# terminating pods as a kubelet would, so their preemptors can be bound.
finish_terminating() {
  kubectl get pods -A -o \
    jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.namespace}{" "}{.metadata.name}{"\n"}{end}' |
    while read -r ns name; do
      [[ -n "$name" ]] && kubectl delete pod -n "$ns" "$name" --grace-period=0 --force >/dev/null 2>&1
    done
}
# Settled: nothing terminating, and every pod bound, or told why not and not waiting on a
# nomination.
settled() {
  finish_terminating
  local waiting
  waiting=$(kubectl get pods -A -o \
    jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"|"}{.spec.nodeName}{"|"}{.status.nominatedNodeName}{"|"}{.status.conditions[?(@.type=="PodScheduled")].status}{"\n"}{end}' |
    grep -v -e '^|[^|]\+|' -e '^|||False$' -c || true)
  [[ "$waiting" == 0 ]]
}
wait_for 60 "every pod to be bound or reported" settled
sleep 1  # the last events on their way

echo
echo "== kubectl get pods -A -o wide"
kubectl get pods -A -o wide
echo
echo "== FailedScheduling events"
kubectl get events -A --field-selector reason=FailedScheduling \
  -o custom-columns='NAMESPACE:.metadata.namespace,POD:.involvedObject.name,MESSAGE:.message'
