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
# Left out besides the solutions and the grader: the lesson template (an author's checklist,
# about solutions.c and the grader) and the course's CI, .ci/ and .github/ (in a student's
# repository the workflow would run on every push).
rm -rf "$out"/course/lessons/*/solutions.c "$out/course/tests/grading" "$out/course/docs/instructors.md" "$out/course/.ci" \
    "$out/course/docs/lesson-template.md" "$out/course/.github"
# The handout's README is the course's, for students (README.md marks what differs):
#   a line with <!-- course-only -->, and <!-- course: --> ... <!-- :course --> (inline, or
#   lines of their own) are left out; <!-- handout: ... :handout --> lines are the handout's own
#   text, a comment in the course's README. make test's summary loses its reference solutions.
awk '
    $0 == "<!-- course: -->" { skip = 1; next }
    $0 == "<!-- :course -->" { skip = 0; next }
    skip { next }
    $0 == "<!-- handout:" || $0 == ":handout -->" { next }
    /<!-- course-only -->/ { next }
    {
        while ((i = index($0, "<!-- course: -->")) > 0 && (j = index($0, "<!-- :course -->")) > i)
            $0 = substr($0, 1, i - 1) substr($0, j + length("<!-- :course -->"))
        if (/^lesson [0-9]+ \(.*\): .*; reference solutions: [0-9]+\/[0-9]+ passed$/)
            sub(/; reference solutions: [0-9]+\/[0-9]+ passed$/, "")
        print
    }
' "$out/course/README.md" >"$out/README.handout" && mv "$out/README.handout" "$out/course/README.md"
if grep -q -e 'solutions\.c' -e 'instructors\.md' -e '\.ci/' -e '\.github/' -e '<!-- *course' -e 'handout:' "$out/course/README.md"; then
    echo "handout.sh: the handout's README still speaks of the course's own files (README.md's markers):" >&2
    grep -n -e 'solutions\.c' -e 'instructors\.md' -e '\.ci/' -e '\.github/' -e '<!-- *course' -e 'handout:' "$out/course/README.md" >&2
    exit 1
fi
(cd "$out" && find course -type f | sort) >"$out/files.txt"
tar -czf "$out/course-handout.tar.gz" -C "$out" course
if [ -n "$(git status --porcelain)" ]; then
    echo "handout.sh: warning: the working tree has changes that are not committed (git status);" \
        "they are not in the handout, which packs commit $short" >&2
fi
echo "handout: $out/course-handout.tar.gz (commit $short, $(wc -l <"$out/files.txt" | tr -d ' ') files, no solutions.c)"
