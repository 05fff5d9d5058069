#!/usr/bin/env bash
# Every test: install what is needed, then
#   1. `ci`: what ships (host, plugins, SDK, tools), g++ -O2 with -Werror, and clang-tidy over
#      the same sources in one parallel pass (scripts/tidy.py); no tests are compiled here,
#   2. `packages`: the .deb/.rpm packages made from the `ci` tree (cpack, no compile), installed,
#      the SDK example built against them, upgrade and purge (scripts/test-packages.sh; needs
#      root and installs packages: CI machines are throwaway),
#   3. `asan`: everything and every test, clang 14 with -Werror, AddressSanitizer + UBSan; the
#      whole suite runs here,
#   4. `tsan`: the concurrent parts (framework, scheduler, plugins' parallel Filter) under
#      ThreadSanitizer,
#   5. `fuzz`: each libFuzzer target on its corpus and new inputs (FUZZ_SECONDS each, 30 here).
# At the end (also after a failure) it prints a table of its phases with their seconds.
# SCHEDHOST_TEST_PRESETS selects a subset (e.g. "asan") for a quicker local run.
set -euo pipefail
cd "$(dirname "$0")/.."

phases=()
totals=()
results=(0 0 0)  # passed, failed, skipped over every ctest run
print_table() {
  local status=$?
  if ((${#phases[@]})); then
    echo
    echo "=== phases (seconds)"
    local i
    for i in "${!phases[@]}"; do
      printf '  %-20s %6s\n' "${phases[$i]}" "${totals[$i]}"
    done
    printf '  %-20s %6s\n' "total" "$SECONDS"
  fi
  # The closing line counts every test run by ctest (the tsan run repeats the concurrent tests).
  echo "ctest: ${results[0]} passed, ${results[1]} failed, ${results[2]} skipped"
  exit "$status"
}
trap print_table EXIT

# phase NAME COMMAND...: runs the command and records its wall time under NAME.
phase() {
  local name=$1 start=$SECONDS
  shift
  echo "=== ${name} (at ${SECONDS}s)"
  phases+=("$name")
  totals+=("...")
  "$@"
  totals[${#totals[@]} - 1]=$((SECONDS - start))
}

# run_ctest ARGS...: ctest with its output kept, its counts added to the closing line.
run_ctest() {
  local log
  log=$(mktemp)
  local rc=0
  ctest "$@" 2>&1 | tee "$log" || rc=$?
  local summary total failed skipped
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [ -n "$summary" ]; then
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$summary")
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
    skipped=$(grep -c -E '^\s+[0-9]+ - .* \(Skipped\)$' "$log" || true)
    results=($((results[0] + total - failed - skipped)) $((results[1] + failed))
             $((results[2] + skipped)))
  fi
  rm -f "$log"
  return "$rc"
}

phase deps scripts/install-deps.sh --with-browser
# The kube tests run upstream's kube-apiserver and etcd, built with Go by `upstream_binaries`
# (a dependency of the kube suite, so the asan build makes them): here a missing Go or binary
# fails those tests instead of skipping them.
export SCHEDHOST_REQUIRE_KUBE=1
# The web UI's end-to-end test drives Debian's chromium (installed above): here a missing browser
# fails it instead of skipping it.
export SCHEDHOST_REQUIRE_BROWSER=1
presets="${SCHEDHOST_TEST_PRESETS:-ci packages asan tsan fuzz}"
for preset in $presets; do
  case "$preset" in
    ci)
      phase "ci configure" cmake --preset ci
      phase "ci build" cmake --build --preset ci
      phase "ci clang-tidy" cmake --build --preset ci-tidy ;;
    packages)
      phase packages scripts/test-packages.sh build/ci ;;
    asan)
      phase "asan configure" cmake --preset asan
      # Go, on its own line of the table: kube-apiserver, etcd, kubectl, kube-scheduler and the
      # test programs (a cold Go cache takes most of it; a warm one, the links).
      phase "upstream go build" cmake --build --preset asan --target upstream_binaries
      phase "asan build" cmake --build --preset asan
      phase "asan test" run_ctest --preset asan ;;
    tsan)
      phase "tsan configure" cmake --preset tsan
      phase "tsan build" cmake --build --preset tsan --target concurrent_tests
      phase "tsan test" run_ctest --preset tsan -L concurrent ;;
    fuzz)
      phase "fuzz" env FUZZ_SECONDS="${FUZZ_SECONDS:-30}" scripts/fuzz.sh ;;
    *)
      echo "unknown preset in SCHEDHOST_TEST_PRESETS: ${preset} (ci packages asan tsan fuzz)" >&2
      exit 2 ;;
  esac
done
echo "=== all presets passed in ${SECONDS}s: ${presets}"
