#!/usr/bin/env bash
# Gradescope autograder image setup (Ubuntu base image). Gradescope runs this once when it
# builds the image, from /autograder/source (the zip holds this course repository: make it with
#   autograder/gradescope/make_zip.sh   from the repository root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends cmake ninja-build clang libgtest-dev libopenblas-dev python3 binutils
cd /autograder/source
# Build the simulator and the reference solutions once, into the image, so each student's
# grading only compiles the student's files.
./course --backend sim grade --submission solutions --format json > /dev/null
