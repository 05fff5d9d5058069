# kube_lib.sh: what the Kubernetes-mode benchmark scripts share (kube_bench.sh,
# kube_failover_bench.sh). Source it first thing, after setting `prog` (the name messages start
# with); the functions read `build` (the build tree), `bin` (its upstream programs) and `keep`
# (1: keep the control plane's work directory) when called. start_control_plane sets `cp_pid`.

# usage prints the calling script's header comment (line 2 to `set -euo`) and exits 2.
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
}

# stop PID: SIGTERM, then SIGKILL after 10 s; reaps it.
stop() {
  local pid=$1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

log() { echo "$prog: $*" >&2; }

# require_built FILE...: exits 2 naming the files of the build tree that are missing, and how to
# build them.
require_built() {
  local missing=() f
  for f in "$@"; do
    [[ -e "$f" ]] || missing+=("$f")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "missing ${missing[*]}"
    echo "  build them: cmake --build $build --target schedhostd builtin_plugins upstream_binaries -j2" >&2
    exit 2
  fi
}

# field FILE KEY: a string or number field of the one-line JSON object in FILE.
field() {
  sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1"
}

# free_port: a loopback port nothing listens on now.
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# fail_with_log MESSAGE FILE: prints the message and the end of a log, exits 1.
fail_with_log() {
  log "$1"
  [[ -f "$2" ]] && { echo "--- tail of $2" >&2; tail -n 30 "$2" >&2; }
  exit 1
}

# load: the load average over 1, 5 and 15 minutes.
load() { cut -d' ' -f1-3 /proc/loadavg; }

# start_control_plane DIR: runs controlplane (etcd and kube-apiserver) with its files under
# DIR and returns once it printed its ready line, DIR/controlplane.json.
start_control_plane() {
  local dir=$1 keep_flag=()
  [[ $keep -eq 1 ]] && keep_flag=(--keep)
  "$bin/controlplane" --bin-dir "$bin" --dir "$dir/cp" --foreground "${keep_flag[@]}" \
    >"$dir/controlplane.json" 2>"$dir/controlplane.log" &
  cp_pid=$!
  for _ in $(seq 1200); do
    [[ -s "$dir/controlplane.json" ]] && return 0
    kill -0 "$cp_pid" 2>/dev/null || fail_with_log "controlplane exited" "$dir/controlplane.log"
    sleep 0.1
  done
  fail_with_log "controlplane not ready within 120 s" "$dir/controlplane.log"
}

