#!/usr/bin/env bash
# kube_failover_bench.sh [BUILD_DIR] [options]: two schedhostd replicas with leader election on
# one local control plane (etcd + kube-apiserver on loopback) at size. Registers the nodes,
# starts replicas a and b (election on, kube-scheduler's timings: lease 15 s, renew 10 s,
# retry 2 s; client rate limits lifted), creates the pods and waits until the leader has bound
# every one, records the memory of leader and standby, then kills the leader with SIGKILL and
# creates more pods: the figures are the time from the kill to the standby leading and to its
# first binding, and how fast it binds the rest. One line of JSON per figure goes to stdout.
#
# BUILD_DIR (default build/release) must hold schedhostd, builtin_plugins and upstream_binaries.
# Options:
#   --nodes N          nodes to register (default 5000)
#   --pods N           pods the leader binds before the failover (default 50000)
#   --after N          pods created once the leader is killed (default 2000)
#   --delay-cache      the standby mirrors nothing until elected (delay_cache_until_active)
#   --parallel N       pod creations in flight (default 32)
#   --timeout DUR      give up when the pods are not all bound by then (default 20m)
#   --keep             keep the work directory and print its path
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
prog=kube_failover_bench.sh
# shellcheck source=tests/bench/kube_lib.sh
source "$repo/tests/bench/kube_lib.sh"
build="$repo/build/release"
nodes=5000
pods=50000
after=2000
delay_cache=false
parallel=32
timeout=20m
keep=0
positional=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --delay-cache) delay_cache=true; shift ;;
    --parallel) parallel=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    -*) log "unknown option $1"; usage ;;
    *)
      [[ $positional -eq 0 ]] || { log "one BUILD_DIR only"; usage; }
      build=$(cd "$1" && pwd); positional=1; shift ;;
  esac
done

bin="$build/upstream/bin"
require_built "$build/bin/schedhostd" "$build/plugins/default_binder.so" "$bin/controlplane" \
  "$bin/etcd" "$bin/kube-apiserver" "$bin/loadgen"
command -v curl >/dev/null || { log "curl is required (the replicas' /readyz)"; exit 2; }

work=$(mktemp -d /tmp/schedhost-failover-bench.XXXXXX)
cp_pid=""
declare -A pid port
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for r in "${!pid[@]}"; do stop "${pid[$r]}"; done
  stop "$cp_pid"
  if [[ $keep -eq 1 ]]; then log "kept $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_replica NAME: schedhostd with election on, its metrics on a port of its own.
start_replica() {
  local name=$1 dir="$work/$1"
  mkdir -p "$dir"
  port[$name]=$(free_port)
  cat >"$dir/schedhost.toml" <<EOF
[api]
listen = "unix://$dir/schedhost.sock"
[metrics]
listen = "127.0.0.1:${port[$name]}"
[host]
state_dir = "$dir/state"
[kubernetes]
kubeconfig = "$user_kc"
qps = 0
[kubernetes.leader_election]
identity = "$name"
delay_cache_until_active = $delay_cache
[[profile]]
name = "default-scheduler"
EOF
  "$build/bin/schedhostd" --config "$dir/schedhost.toml" >"$dir/schedhostd.log" 2>&1 &
  pid[$name]=$!
}

# readyz NAME: the replica's /readyz body ("ok: leading (...)", "ok: standby (...)", ...).
readyz() { curl -s --max-time 2 "http://127.0.0.1:${port[$1]}/readyz" 2>/dev/null || true; }

# memory NAME: "rss MiB / peak MiB" of the replica's process.
memory() {
  awk '/^VmRSS/ {rss=$2} /^VmHWM/ {hwm=$2} END {printf "%d / %d", rss/1024, hwm/1024}' \
    "/proc/${pid[$1]}/status"
}

# leader: the name of the replica whose /readyz says it leads, or "".
leader() {
  for r in a b; do
    [[ "$(readyz "$r")" == "ok: leading"* ]] && { echo "$r"; return; }
  done
  echo ""
}

now() { date +%s.%N; }
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }

log "$build, $nodes nodes, $pods pods, then $after more after the kill; delay_cache_until_active = $delay_cache; $(nproc) cores; work dir $work"
start_control_plane "$work"
admin_kc=$(field "$work/controlplane.json" admin_kubeconfig)
user_kc=$(field "$work/controlplane.json" user_kubeconfig)
log "registering $nodes nodes"
"$bin/loadgen" nodes --kubeconfig "$admin_kc" --count "$nodes" 2>>"$work/loadgen.log"

start_replica a
start_replica b
first=""
for _ in $(seq 1200); do
  first=$(leader)
  [[ -n "$first" ]] && break
  for r in a b; do kill -0 "${pid[$r]}" 2>/dev/null || fail_with_log "replica $r exited" "$work/$r/schedhostd.log"; done
  sleep 0.1
done
[[ -n "$first" ]] || fail_with_log "no replica leads after 120 s" "$work/a/schedhostd.log"
standby=b
[[ "$first" == b ]] && standby=a
log "$first leads, $standby stands by (load average $(load)); creating $pods pods"

"$bin/loadgen" pods --kubeconfig "$admin_kc" --count "$pods" --scheduler-name default-scheduler \
  --namespace bench --parallel "$parallel" --timeout "$timeout" >"$work/pods.json" 2>>"$work/loadgen.log"
echo "{\"figure\":\"leader\",\"nodes\":$nodes,$(sed 's/^{//' "$work/pods.json")"
leader_memory=$(memory "$first")
standby_memory=$(memory "$standby")
echo "{\"figure\":\"memory_mib\",\"pods\":$pods,\"leader\":\"$leader_memory\",\"standby\":\"$standby_memory\"}"

log "killing $first (SIGKILL)"
killed=$(now)
kill -KILL "${pid[$first]}"
wait "${pid[$first]}" 2>/dev/null || true
unset "pid[$first]"
"$bin/loadgen" pods --kubeconfig "$admin_kc" --count "$after" --scheduler-name default-scheduler \
  --namespace after --parallel "$parallel" --timeout "$timeout" >"$work/after.json" 2>>"$work/loadgen.log" &
after_pid=$!
led=""
for _ in $(seq 1200); do
  if [[ "$(readyz "$standby")" == "ok: leading"* ]]; then led=$(now); break; fi
  kill -0 "${pid[$standby]}" 2>/dev/null || fail_with_log "replica $standby exited" "$work/$standby/schedhostd.log"
  sleep 0.05
done
[[ -n "$led" ]] || fail_with_log "$standby did not lead within 60 s" "$work/$standby/schedhostd.log"
wait "$after_pid"
first_bound=$(field "$work/after.json" first_bound)
first_bound_s=$(date -d "$first_bound" +%s.%N)
echo "{\"figure\":\"takeover\",\"pods_in_cluster\":$((pods + after)),\"delay_cache_until_active\":$delay_cache,\"kill_to_leading_s\":$(seconds_between "$killed" "$led"),\"kill_to_first_binding_s\":$(seconds_between "$killed" "$first_bound_s"),\"new_leader_memory_mib\":\"$(memory "$standby")\",$(sed 's/^{//' "$work/after.json")"
