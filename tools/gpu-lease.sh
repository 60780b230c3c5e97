#!/usr/bin/env bash
# The course's checks for one short lease of a GPU machine, most important first, inside a
# deadline: what one lent call can do (docs/gpu-results.md says how to run it and where the
# figures go). Each step is one `./course gpu-report --steps ...`; the report is rewritten after
# every step, and packed into $OUT after every step, so a call cut off at its limit still brings
# back everything measured before.
#
# Usage, on the GPU machine from the repository root (a copy without .git is fine):
#   COURSE_SOURCE_COMMIT=<sha> tools/gpu-lease.sh [SECONDS] [GTEST_SOURCE_DIR] [PLAN]
# SECONDS (default 540) is the whole budget; GTEST_SOURCE_DIR (default .gtest-carry/googletest)
# holds GoogleTest's sources where the machine has no GoogleTest package; PLAN (default
# "build ctest grade1 experiments grade3 skeletons") names the steps, in the order to run them:
# a second lease that only re-checks fixes can leave out the experiments. A grade or skeletons
# item can name lessons (grade3:00,03 grades lessons 00 and 03 three times); "ranking" times the
# slow solutions of autograder/submissions/rank_slow.py against the references.
set -uo pipefail

budget="${1:-540}"
gtest="${2:-.gtest-carry/googletest}"
plan="${3:-build ctest grade1 experiments grade3 skeletons}"
deadline=$((SECONDS + budget))
# A lease measures the GPU: the grade steps leave out the simulator's second grading of each
# submission (tools/course/gpu_checks.py; CI and the simulator's selftest run those tests),
# unless the caller asks for it (COURSE_GPU_SIMULATOR_CHECKS=1).
export COURSE_GPU_SIMULATOR_CHECKS="${COURSE_GPU_SIMULATOR_CHECKS:-0}"
report="${TMPDIR:-/tmp}/course-gpu-report"
out="${OUT:-build/gpu-lease}"
mkdir -p "$out"

# Packing takes a few seconds; each step leaves this much of the budget for it.
reserve=15

pack() {
    cp -f "$report/report.md" "$report/report.json" "$out/" 2>/dev/null
    tar czf "$out/gpu-report.tgz" -C "$(dirname "$report")" "$(basename "$report")" 2>/dev/null
}

# step CAP_SECONDS STEPS [gpu-report options]: run when enough budget is left; each command of
# the step stops at the smaller of CAP_SECONDS and what is left.
step() {
    local cap="$1" steps="$2"
    shift 2
    local left=$((deadline - SECONDS - reserve))
    if ((left < 30)); then
        echo "gpu-lease: skipped $steps (${left}s of the budget left)"
        return
    fi
    local limit=$((cap < left ? cap : left))
    echo "gpu-lease: $steps (limit ${limit}s, $((deadline - SECONDS))s of the budget left)"
    # A step of several commands (three grade runs) could outlast one command's limit: the
    # whole step stops at what is left; the grade step has saved each finished run by then.
    timeout --kill-after=5 "$left" ./course gpu-report --out "$report" --gtest-source "$gtest" \
        --time-limit "$limit" --steps "$steps" "$@"
    pack
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$out/nvidia-smi.csv"
# Build first: every later step needs it; then what a GPU alone can show, cheapest first.
for item in $plan; do
    lessons=()
    if [[ "$item" == *:* ]]; then
        lessons=(--lesson "${item#*:}")
        item="${item%%:*}"
    fi
    case "$item" in
        build) step 300 build ;;
        ctest) step 150 ctest ;;
        grade1) step 200 grade --repeats 1 "${lessons[@]}" ;;
        experiments) step 90 roofline,tokens_per_second,batch_sweep,loader_benchmark,parallelism_experiment ;;
        grade3) step 240 grade --repeats 3 "${lessons[@]}" ;;
        skeletons) step 120 skeletons "${lessons[@]}" ;;
        ranking) step 300 ranking ;;
        *) echo "gpu-lease: unknown plan item '$item' (build ctest grade1 experiments grade3 skeletons ranking;" \
                "grade and skeletons may name lessons: grade3:00,03)" >&2; exit 2 ;;
    esac
done
pack
echo "gpu-lease: done in ${SECONDS}s"
tail -n 40 "$report/report.md" 2>/dev/null
