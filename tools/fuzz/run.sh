#!/usr/bin/env bash
# Fuzzes the run-file reader for a fixed time and prints executions and crashes.
#   tools/fuzz/run.sh [SECONDS]      (default 60; needs clang-14 and libfuzzer-14-dev:
#                                     bash tools/install-deps.sh --fuzz)
# Seeds: the broken files of tests/data/run-files and a run file the fuzzer cannot easily invent.
# Crashing inputs are kept in build/fuzz/crashes/; the exit status is 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j2 --target fuzz_run_file >/dev/null
corpus=build/fuzz/corpus
crashes=build/fuzz/crashes
mkdir -p "$corpus" "$crashes"
cp -n tests/data/run-files/* "$corpus"/ 2>/dev/null || true
log=build/fuzz/fuzz.log
set +e
build/fuzz/tools/fuzz/fuzz_run_file "$corpus" -max_total_time="$seconds" -max_len=262144 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$crashes"/ -print_final_stats=1 >"$log" 2>&1
status=$?
set -e
executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
found=$(find "$crashes" -type f | wc -l)
echo "fuzz_run_file: ${executions} executions in ${seconds} s, ${found} crashing inputs (log: $log)"
[ "$found" -eq 0 ] && [ "$status" -eq 0 ]
