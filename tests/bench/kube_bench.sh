#!/usr/bin/env bash
# kube_bench.sh [BUILD_DIR] [--nodes N] [--pods N] [options]: schedhostd against the null
# scheduler and upstream kube-scheduler v1.37.2, each on a fresh control plane (etcd +
# kube-apiserver on loopback) of the same settings, one after the other. The null scheduler
# (loadgen null) binds each pending pod to the nodes in turn and writes its Scheduled event:
# the least any scheduler must send, so its rate is the control plane's limit on this machine.
# Per scheduler: start the control plane, register the nodes, start the scheduler and wait
# until it is ready, create the pods and wait until every one is bound (loadgen pods) and its
# Scheduled event written (or their number stops growing for 5 s), record the API server's
# request counts and the CPU time of the scheduler, kube-apiserver and etcd over that span,
# count the Scheduled events, stop everything. Then print the table.
#
# BUILD_DIR (default build/release) must hold the targets schedhostd, builtin_plugins and
# upstream_binaries; nothing is built here. Options:
#   --nodes N          nodes to register (default 1000)
#   --pods N           pods to create and bind (default 10000)
#   --only NAME        run one scheduler only: schedhostd, null or kube-scheduler
#   --rounds N         repeat both runs N times, one table per round (default 1)
#   --parallel N       pod creations in flight (default 32)
#   --timeout DUR      give up on a run when not every pod is bound by then (default 10m)
#   --content-type T   what schedhostd speaks to the API server: protobuf (default) or json
#   --backlog          create the pods before the scheduler starts and time it from its start
#   --ready-only       with --backlog: stop once the scheduler is ready (has listed the nodes and
#                      the pending pods), for its start-up (relist) time alone
#                      (default: the scheduler runs and is ready, then the pods are created)
#   --keep             keep the work directory (configs, logs, JSON, the control plane's
#                      files and logs) and print its path
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
prog=kube_bench.sh
# shellcheck source=tests/bench/kube_lib.sh
source "$repo/tests/bench/kube_lib.sh"
build="$repo/build/release"
nodes=1000
pods=10000
only=""
rounds=1
parallel=32
timeout=10m
keep=0
backlog=0
ready_only=0
content_type=application/vnd.kubernetes.protobuf
positional=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --backlog) backlog=1; shift ;;
    --ready-only) ready_only=1; shift ;;
    --content-type)
      case "$2" in
        protobuf) content_type=application/vnd.kubernetes.protobuf ;;
        json) content_type=application/json ;;
        *) log "--content-type protobuf|json"; exit 2 ;;
      esac
      shift 2 ;;
    -h|--help) usage ;;
    -*) log "unknown option $1"; usage ;;
    *)
      [[ $positional -eq 0 ]] || { log "one BUILD_DIR only"; usage; }
      build=$(cd "$1" && pwd); positional=1; shift ;;
  esac
done
case "$only" in ""|schedhostd|null|kube-scheduler) ;; *) log "--only schedhostd|null|kube-scheduler"; exit 2 ;; esac
[[ $ready_only -eq 0 || $backlog -eq 1 ]] || { log "--ready-only needs --backlog"; exit 2; }

bin="$build/upstream/bin"
require_built "$build/bin/schedhostd" "$build/plugins/default_binder.so" "$bin/controlplane" \
  "$bin/etcd" "$bin/kube-apiserver" "$bin/kube-scheduler" "$bin/loadgen"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
if [[ "$build_type" != "Release" ]]; then
  log "warning: $build is a ${build_type:-unknown} build; figures for schedhostd want the release preset" >&2
fi

work=$(mktemp -d /tmp/schedhost-kube-bench.XXXXXX)
cp_pid=""
sched_pid=""
wait_pid=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop "$wait_pid"
  stop "$sched_pid"
  stop "$cp_pid"   # controlplane stops etcd and kube-apiserver and removes its work dir
  if [[ $keep -eq 1 ]]; then
    log "kept $work"
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_schedhostd() {
  local dir=$1 user_kc=$2
  cat >"$dir/schedhost.toml" <<EOF
[api]
listen = "unix://$dir/schedhost.sock"
[metrics]
listen = "127.0.0.1:0"
[host]
state_dir = "$dir/state"
[kubernetes]
kubeconfig = "$user_kc"
qps = 0
content_type = "$content_type"
[kubernetes.leader_election]
enabled = false
[[profile]]
name = "default-scheduler"
EOF
  "$build/bin/schedhostd" --config "$dir/schedhost.toml" >"$dir/scheduler.log" 2>&1 &
  sched_pid=$!
  # The line comes once every reflector has listed and the scheduling loop runs.
  wait_for_line "schedhost serving on" "$dir/scheduler.log" schedhostd
}

# wait_for_line TEXT LOG NAME: returns once LOG holds TEXT; fails when the scheduler (sched_pid)
# exits first or 120 s pass.
wait_for_line() {
  local text=$1 file=$2 name=$3
  for _ in $(seq 1200); do
    grep -q "$text" "$file" && return 0
    kill -0 "$sched_pid" 2>/dev/null || fail_with_log "$name exited" "$file"
    sleep 0.1
  done
  fail_with_log "$name not ready within 120 s" "$file"
}

start_kube_scheduler() {
  local dir=$1 user_kc=$2 port
  port=$(free_port)
  cat >"$dir/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $user_kc
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
EOF
  "$bin/kube-scheduler" --config "$dir/kube-scheduler.yaml" --bind-address 127.0.0.1 \
    --secure-port "$port" >"$dir/scheduler.log" 2>&1 &
  sched_pid=$!
  # /readyz answers 200 once the informers have synced and the event handlers are in place.
  for _ in $(seq 1200); do
    if curl -ksf --max-time 2 "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "$sched_pid" 2>/dev/null || fail_with_log "kube-scheduler exited" "$dir/scheduler.log"
    sleep 0.1
  done
  fail_with_log "kube-scheduler not ready within 120 s" "$dir/scheduler.log"
}

# elapsed START: seconds since START (date +%s.%N), to the millisecond.
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }

start_null() {
  local dir=$1 user_kc=$2
  "$bin/loadgen" null --kubeconfig "$user_kc" >"$dir/scheduler.log" 2>&1 &
  sched_pid=$!
  wait_for_line "loadgen null: binding" "$dir/scheduler.log" "loadgen null"
}

# start_scheduler NAME DIR USER_KUBECONFIG: starts schedhostd, the null scheduler or
# kube-scheduler and returns once it is ready.
start_scheduler() {
  case "$1" in
    schedhostd) start_schedhostd "$2" "$3" ;;
    null) start_null "$2" "$3" ;;
    kube-scheduler) start_kube_scheduler "$2" "$3" ;;
  esac
}

# run_one NAME DIR: one scheduler on a fresh control plane; leaves DIR/pods.json and
# DIR/metrics.json for the report.
run_one() {
  local name=$1 dir=$2
  mkdir -p "$dir"
  log "$name: starting etcd and kube-apiserver"
  start_control_plane "$dir"
  local ready="$dir/controlplane.json"
  local admin_kc user_kc api_pid etcd_pid
  admin_kc=$(field "$ready" admin_kubeconfig)
  user_kc=$(field "$ready" user_kubeconfig)
  api_pid=$(field "$ready" apiserver_pid)
  etcd_pid=$(field "$ready" etcd_pid)

  log "$name: registering $nodes nodes"
  "$bin/loadgen" nodes --kubeconfig "$admin_kc" --count "$nodes" 2>>"$dir/loadgen.log"

  local pids=(--pid "apiserver=$api_pid" --pid "etcd=$etcd_pid")
  local status=0 ready_lines=0
  if [[ $backlog -eq 0 ]]; then
    log "$name: starting the scheduler"
    local started
    started=$(date +%s.%N)
    start_scheduler "$name" "$dir" "$user_kc"
    ready_lines=$(wc -l <"$dir/scheduler.log")
    log "$name: ready after $(elapsed "$started") s; creating $pods pods (load average $(load))"
    pids+=(--pid "scheduler=$sched_pid")
    "$bin/loadgen" metrics --kubeconfig "$admin_kc" "${pids[@]}" -o "$dir/before.json"
    "$bin/loadgen" pods --kubeconfig "$admin_kc" --count "$pods" --scheduler-name default-scheduler \
      --parallel "$parallel" --timeout "$timeout" >"$dir/pods.json" 2>>"$dir/loadgen.log" || status=$?
  else
    log "$name: creating $pods pods before the scheduler starts"
    "$bin/loadgen" pods --kubeconfig "$admin_kc" --count "$pods" --scheduler-name default-scheduler \
      --parallel "$parallel" --no-wait >"$dir/create.json" 2>>"$dir/loadgen.log"
    : >"$dir/wait.log"
    "$bin/loadgen" wait --kubeconfig "$admin_kc" --timeout "$timeout" \
      >"$dir/pods.json" 2>"$dir/wait.log" &
    wait_pid=$!
    until grep -q "loadgen wait: watching" "$dir/wait.log"; do
      kill -0 "$wait_pid" 2>/dev/null || fail_with_log "loadgen wait exited" "$dir/wait.log"
      sleep 0.05
    done
    "$bin/loadgen" metrics --kubeconfig "$admin_kc" "${pids[@]}" -o "$dir/before.json"
    log "$name: starting the scheduler on $pods pending pods (load average $(load))"
    local started
    started=$(date +%s.%N)
    start_scheduler "$name" "$dir" "$user_kc"
    ready_lines=$(wc -l <"$dir/scheduler.log")
    # schedhostd is ready once it has listed every kind: with pods waiting, this is its relist.
    log "$name: ready after $(elapsed "$started") s"
    if [[ $ready_only -eq 1 ]]; then
      stop "$wait_pid"; wait_pid=""
      stop "$sched_pid"; sched_pid=""
      stop "$cp_pid"; cp_pid=""
      return 0
    fi
    pids+=(--pid "scheduler=$sched_pid")
    wait "$wait_pid" || status=$?
    wait_pid=""
    cat "$dir/wait.log" >>"$dir/loadgen.log"
  fi
  # The events come after the bindings: the span ends once they are written too.
  "$bin/loadgen" events --kubeconfig "$admin_kc" --wait --expect "$pods" --settle 5s \
    >"$dir/events_wait.json" 2>>"$dir/loadgen.log" || rm -f "$dir/events_wait.json"
  "$bin/loadgen" metrics --kubeconfig "$admin_kc" "${pids[@]}" --since "$dir/before.json" \
    >"$dir/metrics.json"
  "$bin/loadgen" events --kubeconfig "$admin_kc" >"$dir/events.json" 2>>"$dir/loadgen.log" ||
    rm -f "$dir/events.json"
  log "$name: $(cat "$dir/pods.json")"
  [[ -f "$dir/events.json" ]] && log "$name: $(cat "$dir/events.json")"

  kill -0 "$sched_pid" 2>/dev/null || log "$name: the scheduler exited during the run"
  # What the scheduler logged above info level once ready (schedhostd: [warning]/[error];
  # klog: W/E/F lines; kube-scheduler warns at start about the delegated authentication it
  # is not given).
  local pattern='\[(warning|error|critical)\]|^[EWF][0-9]{4} '
  local complaints
  complaints=$(tail -n "+$((ready_lines + 1))" "$dir/scheduler.log" | grep -cE "$pattern" || true)
  if [[ "$complaints" -gt 0 ]]; then
    log "$name: $complaints warning or error lines in its log during the run; the first ones:"
    tail -n "+$((ready_lines + 1))" "$dir/scheduler.log" | grep -E "$pattern" | head -n 5 >&2
  fi
  stop "$sched_pid"; sched_pid=""
  stop "$cp_pid"; cp_pid=""
  if [[ $status -ne 0 ]]; then
    tail -n 5 "$dir/loadgen.log" >&2
    log "$name: not every pod was bound (see above)"
    failed=1
  fi
}

command -v curl >/dev/null || { log "curl is required (kube-scheduler's /readyz)"; exit 2; }
mode="pods created while the scheduler runs"
[[ $backlog -eq 1 ]] && mode="pods pending before the scheduler starts"
[[ "$content_type" == application/json ]] && mode="$mode, schedhostd speaking JSON"
log "$build ($build_type), $nodes nodes, $pods pods, $mode, $(nproc) cores; work dir $work"
schedulers=(schedhostd null kube-scheduler)
[[ -n "$only" ]] && schedulers=("$only")
failed=0
for round in $(seq "$rounds"); do
  reports=()
  for s in "${schedulers[@]}"; do
    dir="$work/round$round/$s"
    run_one "$s" "$dir"
    reports+=("$s=$dir")
  done
  echo
  [[ $rounds -gt 1 ]] && echo "round $round of $rounds"
  [[ ${#reports[@]} -gt 0 && $ready_only -eq 0 ]] && "$bin/loadgen" report "${reports[@]}"
done
exit "$failed"
