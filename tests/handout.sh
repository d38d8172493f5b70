#!/bin/sh
# handout.sh - writes the student handout: the course without its reference solutions and
# without anything built from them (the grader's fixtures and tests, the instructors' page).
#   tests/handout.sh OUT_DIR     writes OUT_DIR/course-handout.tar.gz (unpacks to course/)
# It packs the commit HEAD (git archive), never the working tree, so nothing local leaks into
# it; it names the commit, and warns when the working tree differs from it.
set -eu
out=${1:-build/handout}
command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "handout.sh: run it in a git checkout of the course" >&2; exit 2; }
commit=$(git rev-parse --verify -q HEAD) || { echo "handout.sh: nothing is committed yet" >&2; exit 2; }
short=$(git rev-parse --short HEAD)
rm -rf "$out/course"
mkdir -p "$out"
git archive --format=tar --prefix=course/ "$commit" | tar -xf - -C "$out"
rm -rf "$out"/course/lessons/*/solutions.c "$out/course/tests/grading" "$out/course/docs/instructors.md"
(cd "$out" && find course -type f | sort) >"$out/files.txt"
tar -czf "$out/course-handout.tar.gz" -C "$out" course
if [ -n "$(git status --porcelain)" ]; then
    echo "handout.sh: warning: the working tree has changes that are not committed (git status);" \
        "they are not in the handout, which packs commit $short" >&2
fi
echo "handout: $out/course-handout.tar.gz (commit $short, $(wc -l <"$out/files.txt" | tr -d ' ') files, no solutions.c)"
