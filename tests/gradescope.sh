#!/bin/sh
# gradescope.sh - writes the autograder zip for Gradescope, made from the student handout (so
# it holds no solutions.c: grading does not need them, and the container that runs the
# students' code then has none):
#   tests/gradescope.sh OUT_DIR     writes OUT_DIR/autograder.zip
# The zip holds setup.sh and run_autograder (from tests/gradescope/) and course/, the handout
# of commit HEAD. Gradescope unpacks it into /autograder/source.
set -eu
out=${1:-build/gradescope}
for tool in zip git; do
    command -v $tool >/dev/null 2>&1 || { echo "gradescope.sh: needs $tool" >&2; exit 2; }
done
sh tests/handout.sh "$out/handout" >/dev/null # (its warnings go to stderr)
rm -rf "$out/zip" "$out/autograder.zip"
mkdir -p "$out/zip"
cp -R "$out/handout/course" "$out/zip/course"
for f in setup.sh run_autograder; do
    cp "$out/zip/course/tests/gradescope/$f" "$out/zip/$f"
    chmod 755 "$out/zip/$f" # Gradescope runs them as programs
done
(cd "$out/zip" && zip -q -r -X ../autograder.zip setup.sh run_autograder course)
echo "gradescope: $out/autograder.zip (setup.sh, run_autograder, and course/: the handout of commit" \
    "$(git rev-parse --short HEAD), no solutions.c); upload it as the assignment's autograder"
