#!/usr/bin/env bash
# The demo: install what is needed, build (release), and schedule the example cluster
# (config/examples/demo-cluster.yaml) on an embedded host with the default profile and the
# builtin plugin libraries. Prints where every pod lands, or upstream's reason why it cannot.
# The run is on a virtual clock and seeded, so it gives the same table every time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target schedctl builtin_plugins
build/release/bin/schedctl simulate -f config/examples/demo-cluster.yaml "$@"
