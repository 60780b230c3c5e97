#!/usr/bin/env bash
# Runs the simulator's benchmark plain, with the memory-traffic counters, and with the counters
# plus each check, and prints what each costs against the plain run.
#   cudasim/bench/run_bench.sh [BUILD_DIR]      (default: build/sim, configured by ./course)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build/sim}"
cmake --build "$build" --target cudasim_bench cudasim_bench_counted >/dev/null
plain="$build/cudasim/cudasim_bench"
counted="$build/cudasim/cudasim_bench_counted"

echo "== plain (uninstrumented) =="
"$plain" | tee /tmp/cudasim_bench_plain.txt
figure() { grep -F "$1" "$2" | awk '{print $(NF-1)}'; }
compare() {
  local label=$1 file=$2
  for kernel in "vector add, 4M elements, simulator" "tiled matmul 256^3 (16x16 tiles), simulator"; do
    local base now
    base=$(figure "$kernel" /tmp/cudasim_bench_plain.txt)
    now=$(figure "$kernel" "$file")
    awk -v l="$label" -v k="$kernel" -v b="$base" -v n="$now" \
      'BEGIN { printf "%-28s %-46s %9.2f ms  %5.1fx the plain run\n", l, k, n, n / b }'
  done
}
echo
echo "== slowdown of counting and of each check =="
"$counted" > /tmp/cudasim_bench_counted.txt
compare "counting + memcheck" /tmp/cudasim_bench_counted.txt
CUDASIM_CHECK=race "$counted" > /tmp/cudasim_bench_race.txt
compare "counting + racecheck" /tmp/cudasim_bench_race.txt
CUDASIM_CHECK=shuffle "$counted" > /tmp/cudasim_bench_shuffle.txt
compare "counting + shuffled order" /tmp/cudasim_bench_shuffle.txt
