#!/usr/bin/env bash
# Every test: install what is needed, then
#   1. the `ci` preset (g++, -Werror, clang-tidy): build and run the whole suite,
#   2. `packages`: the .deb/.rpm packages made from the `ci` tree (cpack, no compile), installed,
#      the SDK example built against them, upgrade and purge (scripts/test-packages.sh; needs
#      root and installs packages: CI machines are throwaway),
#   3. the `asan` preset (AddressSanitizer + UBSan): build and run the whole suite,
#   4. the `tsan` preset: the concurrent parts (framework, plugins' parallel Filter),
#   5. the libFuzzer targets for about a minute each.
# Set SCHEDHOST_TEST_PRESETS to a subset (e.g. "ci") for a quicker local run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
presets="${SCHEDHOST_TEST_PRESETS:-ci packages asan tsan fuzz}"
for preset in $presets; do
  echo "=== preset: ${preset} (at ${SECONDS}s)"
  case "$preset" in
    fuzz) scripts/fuzz.sh ;;
    packages) scripts/test-packages.sh build/ci ;;
    tsan)
      cmake --preset tsan >/dev/null
      cmake --build --preset tsan --target concurrent_tests
      ctest --preset tsan -L concurrent ;;
    *) cmake --workflow --preset "$preset" ;;
  esac
done
echo "=== all presets passed in ${SECONDS}s: ${presets}"
