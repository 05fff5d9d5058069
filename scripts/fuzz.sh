#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 14 and runs each on its seed corpus for a bounded time
# (FUZZ_SECONDS, default 60). Any crash, leak or sanitizer report fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
targets=(manifest config)
cmake --preset fuzz >/dev/null
# Only the fuzz targets and what they link: the rest of the tree is built and tested by the
# other presets, and building it again here would spend CI time on nothing.
cmake --build --preset fuzz --target "${targets[@]/%/_fuzz}"
for target in "${targets[@]}"; do
  work="build/fuzz/corpus-${target}"
  mkdir -p "$work"
  echo "fuzzing ${target} for ${seconds}s"
  "build/fuzz/bin/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$work" "tests/fuzz/corpus/${target}"
done
