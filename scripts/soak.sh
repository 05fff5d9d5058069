#!/usr/bin/env bash
# The high-availability soak: three schedhostd replicas against a real kube-apiserver and etcd
# (built from tests/upstream), each behind a TCP proxy, while pods arrive without pause. Every
# round takes down the leader with one fault in turn (kill -9, SIGSTOP past the lease, a network
# cut past the lease, SIGTERM, a kube-apiserver restart) and starts it again as a standby. It
# ends by checking that every pod is bound, once, and that the leader's mirror matches the API
# server, and prints the figures: faults injected, failovers survived, pods bound, pods bound
# twice, pods lost, and the time from each fault to the next leader's first binding.
#
#   scripts/soak.sh [ROUNDS]     # default 50 rounds, about 10 s each
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-50}

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target kube_ha_test schedhostd schedctl builtin_plugins \
  upstream_binaries
SCHEDHOST_SOAK_ROUNDS=$rounds SCHEDHOST_REQUIRE_KUBE=1 build/release/tests/kube_ha_test \
  --gtest_filter='*Soak*'
