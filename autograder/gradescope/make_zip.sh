#!/usr/bin/env sh
# Makes autograder.zip for Gradescope: setup.sh and run_autograder at the top, the course
# repository (without build folders and .git) under source/ is what Gradescope unpacks into
# /autograder/source. Run from the repository root.
#
#   autograder/gradescope/make_zip.sh [--lesson NN[,MM...]] [OUT.zip]
#
# --lesson bakes an assignment into the zip: run_autograder then grades those lessons only, so
# a student sees the points of this assignment, not of the whole course.
set -eu
lessons=""
out=autograder.zip
while [ $# -gt 0 ]; do
  case "$1" in
    --lesson) [ $# -ge 2 ] || { echo "make_zip.sh: --lesson needs a value, e.g. --lesson 00 or --lesson 00,03" >&2; exit 2; }
              lessons=$2; shift 2 ;;
    --lesson=*) lessons=${1#--lesson=}; shift ;;
    -*) echo "make_zip.sh: unknown option $1 (usage: make_zip.sh [--lesson NN[,MM]] [OUT.zip])" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
if [ -n "$lessons" ]; then
  for l in $(echo "$lessons" | tr ',' ' '); do
    n=$(printf '%s' "$l" | cut -c1-2)
    if ! ls -d lessons/"$n"-*/ > /dev/null 2>&1; then
      echo "make_zip.sh: no lesson '$l' (the lessons: $(cd lessons && ls -d [0-9][0-9]-* | tr '\n' ' '))" >&2
      exit 2
    fi
  done
fi
tmp=$(mktemp -d)
mkdir -p "$tmp/source"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tmp/source"
if [ -n "$lessons" ]; then
  printf '%s\n' "$lessons" > "$tmp/source/autograder/gradescope/assignment_lessons"
fi
cp autograder/gradescope/setup.sh autograder/gradescope/run_autograder "$tmp/"
chmod +x "$tmp/setup.sh" "$tmp/run_autograder"
(cd "$tmp" && zip -qr - .) > "$out"
rm -rf "$tmp"
echo "wrote $out${lessons:+ (lessons $lessons)}"
