#!/usr/bin/env sh
# Makes autograder.zip for Gradescope: setup.sh and run_autograder at the top, the course
# repository (without build folders and .git) under source/ is what Gradescope unpacks into
# /autograder/source. Run from the repository root.
set -eu
out=${1:-autograder.zip}
tmp=$(mktemp -d)
mkdir -p "$tmp/source"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tmp/source"
cp autograder/gradescope/setup.sh autograder/gradescope/run_autograder "$tmp/"
chmod +x "$tmp/setup.sh" "$tmp/run_autograder"
(cd "$tmp" && zip -qr - .) > "$out"
rm -rf "$tmp"
echo "wrote $out"
