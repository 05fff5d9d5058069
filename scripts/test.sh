#!/usr/bin/env bash
# Every test: install what is needed, then
#   1. the `ci` preset (g++, -Werror, clang-tidy): build and run the whole suite,
#   2. the `asan` preset (AddressSanitizer + UBSan): build and run the whole suite,
#   3. the `tsan` preset: the concurrent parts (framework, plugins' parallel Filter),
#   4. the libFuzzer targets for about a minute each.
# Set SCHEDHOST_TEST_PRESETS to a subset (e.g. "ci") for a quicker local run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
presets="${SCHEDHOST_TEST_PRESETS:-ci asan tsan fuzz}"
for preset in $presets; do
  echo "=== preset: ${preset}"
  case "$preset" in
    fuzz) scripts/fuzz.sh ;;
    tsan)
      cmake --preset tsan >/dev/null
      cmake --build --preset tsan --target concurrent_tests
      ctest --preset tsan -L concurrent ;;
    *) cmake --workflow --preset "$preset" ;;
  esac
done
