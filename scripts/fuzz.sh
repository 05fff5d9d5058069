#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 14 and runs each on its seed corpus and new inputs for
# FUZZ_SECONDS (default 60; scripts/test.sh sets 30). libFuzzer runs one thread, so the targets
# run side by side, one per core. Any crash, leak or sanitizer report fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
targets=(manifest config)
cmake --preset fuzz >/dev/null
# Only the fuzz targets and what they link: the rest of the tree is built and tested by the
# other presets, and building it again here would spend CI time on nothing.
cmake --build --preset fuzz --target "${targets[@]/%/_fuzz}"
pids=()
for target in "${targets[@]}"; do
  work="build/fuzz/corpus-${target}"
  mkdir -p "$work"
  echo "fuzzing ${target} for ${seconds}s (log: build/fuzz/${target}.log)"
  "build/fuzz/bin/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$work" "tests/fuzz/corpus/${target}" >"build/fuzz/${target}.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  if wait "${pids[$i]}"; then
    echo "fuzz ${targets[$i]}: no crash; $(grep -E '^stat::number_of_executed_units' \
      "build/fuzz/${targets[$i]}.log" | tr -s ' ')"
  else
    echo "fuzz ${targets[$i]}: FAILED; its log:" >&2
    tail -n 60 "build/fuzz/${targets[$i]}.log" >&2
    failed=1
  fi
done
exit "$failed"
