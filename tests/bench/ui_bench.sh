#!/usr/bin/env bash
# ui_bench.sh: how the web UI holds up on a large cluster. Starts the build tree's schedhostd
# with [ui] on loopback, applies NODES nodes and PODS pods (a tenth of them too big for any
# node, so they wait with an explanation of every node), then times each JSON endpoint the
# pages read (median and max of 20 requests, and the answer's size) and, in Debian's chromium,
# the pod page of a waiting pod until its first 50 grid rows are drawn.
#
#   tests/bench/ui_bench.sh BUILD [--nodes 5000] [--pods 1000]
#
# BUILD is a configured build tree with schedhostd, schedctl, builtin_plugins and ui built
# (cmake --build BUILD --target schedhostd schedctl builtin_plugins ui).
set -euo pipefail
prog=ui_bench
here=$(cd "$(dirname "$0")" && pwd)
. "$here/kube_lib.sh"
[[ $# -ge 1 && "$1" != -* ]] || usage
build=$(cd "$1" && pwd)
shift
nodes=5000
pods=1000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    *) usage ;;
  esac
done
for f in "$build/bin/schedhostd" "$build/bin/schedctl" "$build/ui/app.js"; do
  [[ -e "$f" ]] || { log "missing $f: cmake --build $build --target schedhostd schedctl builtin_plugins ui"; exit 2; }
done

work=$(mktemp -d)
daemon=""
trap 'stop "$daemon"; rm -rf "$work"' EXIT
ui_port=$(free_port)
cat >"$work/schedhost.toml" <<TOML
[host]
state_dir = "$work/state"
[api]
listen = "unix://$work/s.sock"
[metrics]
listen = "127.0.0.1:0"
[ui]
listen = "127.0.0.1:$ui_port"
TOML
# Nodes of 4 cpu over 10 zones; pods of 100m, every tenth asking 64 cpu (fits nowhere).
python3 - "$nodes" "$pods" >"$work/cluster.yaml" <<'PY'
import sys
nodes, pods = int(sys.argv[1]), int(sys.argv[2])
for i in range(nodes):
    print(f"""---
apiVersion: v1
kind: Node
metadata: {{name: node-{i:05d}, labels: {{topology.kubernetes.io/zone: zone-{i % 10}}}}}
status: {{capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}}}""")
for i in range(pods):
    cpu = "64" if i % 10 == 0 else "100m"
    print(f"""---
apiVersion: v1
kind: Pod
metadata: {{name: pod-{i:05d}, namespace: default, labels: {{app: bench}}}}
spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}""")
PY
"$build/bin/schedhostd" --config "$work/schedhost.toml" >"$work/daemon.log" 2>&1 &
daemon=$!
base="http://127.0.0.1:$ui_port"
for _ in $(seq 100); do curl -sf "$base/api/v1/stats" >/dev/null && break; sleep 0.1; done
"$build/bin/schedctl" --server "unix://$work/s.sock" apply -f "$work/cluster.yaml" >/dev/null
waiting=$((pods / 10))
for _ in $(seq 600); do
  s=$(curl -s "$base/api/v1/stats")
  [[ "$(field <(echo "$s") bound_pods)" == "$((pods - waiting))" &&
     "$(field <(echo "$s") active_pods)" == "0" ]] && break
  sleep 0.2
done
log "$nodes nodes, $pods pods: $(field <(echo "$s") bound_pods) bound, $waiting waiting"

# time ENDPOINT: median and max seconds of 20 GETs, and the size of the answer.
time_endpoint() {
  local t size
  t=$(for _ in $(seq 20); do curl -s -o /dev/null -w '%{time_total}\n' "$base$1"; done | sort -n)
  size=$(curl -s "$base$1" | wc -c)
  printf '| `%s` | %.1f | %.1f | %s |\n' "$1" \
    "$(echo "$t" | sed -n 10p | awk '{print $1 * 1000}')" \
    "$(echo "$t" | tail -n 1 | awk '{print $1 * 1000}')" "$size"
}
echo "| endpoint | median ms | max ms | bytes |"
echo "| --- | --- | --- | --- |"
for e in /api/v1/stats /api/v1/nodes /api/v1/pods /api/v1/queue /api/v1/latency \
         "/api/v1/explain?name=pod-00000&limit=50" "/api/v1/explain?name=pod-00000&limit=50&feasible=false&node=node-049"; do
  time_endpoint "$e"
done

# The pod page in chromium: from navigation to 50 grid rows drawn.
if [[ -x /usr/bin/chromium ]]; then
  NODE_PATH="$here/../../ui/node_modules" node - "$base" <<'JS'
const { chromium } = require("playwright-core");
(async () => {
  const base = process.argv[2];
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const times = [];
  for (let i = 0; i < 5; i++) {
    const start = Date.now();
    await page.goto(`${base}/#/pod/default/pod-00000`);
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=grid-row]").length >= 50);
    times.push(Date.now() - start);
    await page.goto("about:blank");
  }
  times.sort((a, b) => a - b);
  console.log(`pod page, 50 of the grid's rows drawn: median ${times[2]} ms, max ${times[4]} ms`);
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
JS
fi
