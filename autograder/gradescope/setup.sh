#!/usr/bin/env bash
# Gradescope autograder image setup (Ubuntu base image). Gradescope runs this once when it
# builds the image, from /autograder/source (the zip holds this course repository: make it with
#   autograder/gradescope/make_zip.sh   from the repository root).
#
# COURSE_GRADESCOPE_SOURCE (default /autograder/source) and COURSE_GRADESCOPE_SKIP_PACKAGES=1
# let autograder/gradescope/measure_budget.py rehearse the image on another machine.
set -euo pipefail
SOURCE=${COURSE_GRADESCOPE_SOURCE:-/autograder/source}
if [ "${COURSE_GRADESCOPE_SKIP_PACKAGES:-0}" != 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends cmake ninja-build clang libgtest-dev libopenblas-dev python3 binutils
fi
cd "$SOURCE"
# Build the reference solutions once, into the image, then seal that build: it keeps the
# reference's test programs and objects (what grading compares with) and loses the
# simulator's rewritten copies of the solutions' sources. Then solutions/ itself goes, so
# nothing a submission's code could read at grading time holds the answers.
./course --backend sim seal-reference
rm -rf solutions
# Grade the untouched skeletons once, the way run_autograder grades a submission (staged in
# the same folder, so the same build folder): builds the simulator and the test programs into
# the image, so a submission compiles only its own files; and checks that grading works here
# without solutions/ (a failure fails the image build, not a student's grade).
results=$(mktemp -d)
COURSE_GRADESCOPE_SOURCE=$SOURCE COURSE_GRADESCOPE_SUBMISSION=$SOURCE/exercises COURSE_GRADESCOPE_RESULTS=$results \
  bash "$SOURCE/autograder/gradescope/run_autograder"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r.get("tests") else
                "grading the skeletons failed in the image: " + r.get("output", ""))' "$results/results.json"
