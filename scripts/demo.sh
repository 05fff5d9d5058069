#!/usr/bin/env bash
# The demo: install what is needed, build (release), load the builtin plugin libraries and
# print the default profile as the host builds it: extension points, plugins, weights, and the
# library each plugin came from. (Scheduling the example cluster arrives with the scheduling
# loop; until then this is what the host can show end to end.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target schedctl builtin_plugins
build/release/bin/schedctl config check --config config/schedhost.toml
