#!/bin/sh
# handout.sh - writes the student handout: the course without its reference solutions and
# without anything built from them (the grader's fixtures and tests, the instructors' page).
#   tests/handout.sh OUT_DIR     writes OUT_DIR/course-handout.tar.gz (unpacks to course/)
# Only committed files go in, so nothing local leaks into it.
set -eu
out=${1:-build/handout}
command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "handout.sh: run it in a git checkout of the course" >&2; exit 2; }
rm -rf "$out/course"
mkdir -p "$out/course"
git ls-files | grep -v -E '^lessons/[^/]+/solutions\.c$|^tests/grading/|^docs/instructors\.md$' >"$out/files.txt"
tar -cf - -T "$out/files.txt" | tar -xf - -C "$out/course"
tar -czf "$out/course-handout.tar.gz" -C "$out" course
echo "handout: $out/course-handout.tar.gz ($(wc -l <"$out/files.txt") files, no solutions.c)"
