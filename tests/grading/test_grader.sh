#!/bin/sh
# test_grader.sh - the grader's own tests (make test runs them). Each fixture submission is
# graded and its table, results.json and exit status are checked:
#   correct   every lesson's solutions.c as the student's file: full marks, exit 0
#   stubs     the untouched stubs (generated from exercises.h): all TODO, exit 1
#   empty     no files at all: all TODO, exit 1
#   mixed     tests/grading/fixtures/mixed: one exercise per kind of failure, and a lesson
#             that does not compile
#   tamper    a destructor (code that runs outside the tests): rejected
#   library   an exercise answered with the library's own function: passes, with a note
# plus one exercise at a time, grade-all's gradebook, SANITIZE=1 grading (an out-of-bounds
# write that gives the right numbers) and the student handout. Prints "ok - ..." or
# "FAIL - ..." per check; exit status 1 if any check failed.
set -u
build=${BUILD:-build}
make=${MAKE:-make}
fixtures=$build/grader-fixtures
rm -rf "$fixtures"
mkdir -p "$fixtures"
failed=0

check() { # DESCRIPTION COMMAND...
    description=$1
    shift
    if "$@" >/dev/null 2>&1; then echo "ok - $description"; else echo "FAIL - $description"; failed=1; fi
}
grade() { # NAME SUBMISSION [ARGS...]: grades, keeps the table in $fixtures/NAME.txt, returns the exit status
    name=$1 sub=$2
    shift 2
    BUILD=$build MAKE=$make sh tests/grade.sh --submission "$sub" --name "$name" "$@" >"$fixtures/$name.txt" 2>&1
}
has() { grep -q -e "$2" "$1"; }           # FILE PATTERN
row() { grep -q -E "^  $2 .* $3" "$1"; }  # TABLE ID STATUS-REGEX

# ---- fixtures built here: the solutions, the stubs, nothing --------------------------------
for dir in lessons/[1-9]-*; do
    mkdir -p "$fixtures/correct/$dir" "$fixtures/stubs/$dir"
    cp "$dir/solutions.c" "$fixtures/correct/$dir/exercises.c"
    sh tests/stubs.sh "$dir/exercises.h" >"$fixtures/stubs/$dir/exercises.c"
done
mkdir -p "$fixtures/empty"

# ---- all correct ---------------------------------------------------------------------------
grade grader-correct "$fixtures/correct"
check "all correct: exit status 0" test $? -eq 0
total=$(awk '/^  total/ { print $4 }' "$fixtures/grader-correct.txt")
check "all correct: the total is full marks ($total)" has "$fixtures/grader-correct.txt" "^  total  *$total / $total$"
results=$build/grade/grader-correct/results.json
check "all correct: results.json has score $total and max_score $total" \
    sh -c "grep -q '\"score\": $total,' '$results' && grep -q '\"max_score\": $total,' '$results'"
check "all correct: every test in results.json passed" sh -c "! grep -q '\"status\": \"failed\"' '$results'"
check "all correct: results.json has a test per exercise" \
    test "$(grep -c '"name":' "$results")" -eq "$(grep -c -E '^  [0-9]+\.[0-9]+ ' "$fixtures/grader-correct.txt")"

# ---- all TODO ------------------------------------------------------------------------------
grade grader-stubs "$fixtures/stubs"
check "stubs: exit status 1" test $? -eq 1
check "stubs: every exercise is TODO" sh -c "! grep -E '^  [0-9]+\.[0-9]+ ' '$fixtures/grader-stubs.txt' | grep -v -q ' TODO$'"
check "stubs: score 0" grep -q '"score": 0,' "$build/grade/grader-stubs/results.json"
grade grader-empty "$fixtures/empty"
check "empty: exit status 1" test $? -eq 1
check "empty: TODO, and says the file is missing" has "$build/grade/grader-empty/results.json" "no lessons/1-broadcast/exercises.c"

# ---- each kind of failure --------------------------------------------------------------------
grade grader-mixed tests/grading/fixtures/mixed
check "mixed: exit status 1" test $? -eq 1
table=$fixtures/grader-mixed.txt
check "mixed: 1.1 TODO" row "$table" 1.1 "TODO$"
check "mixed: 1.2 wrong, with its first failure message" sh -c "grep -q -E '^  1.2 .* wrong$' '$table' && grep -q 'exercise 1.2: ' '$table'"
check "mixed: 1.3 crashed, naming signal 11" row "$table" 1.3 "crashed: signal 11"
check "mixed: 1.4 timed out" row "$table" 1.4 "timed out$"
check "mixed: 1.5 exited early (exit(0) does not pass)" row "$table" 1.5 "exited early$"
check "mixed: 2.1 crashed, naming signal 6 (abort)" row "$table" 2.1 "crashed: signal 6"
check "mixed: 2.2 too much output" row "$table" 2.2 "too much output$"
check "mixed: 2.3 and 2.4 passed (without SANITIZE, the stray write goes unseen)" \
    sh -c "grep -q -E '^  2.3 .* passed$' '$table' && grep -q -E '^  2.4 .* passed$' '$table'"
check "mixed: lesson 3 did not compile, with the compiler's first error" \
    sh -c "grep -q -E '^  3.4 .* did not compile$' '$table' && grep -q 'exercises.c:[0-9]*:[0-9]*: error' '$table'"
check "mixed: lessons 4-6 graded as usual (TODO: no file)" row "$table" 6.4 "TODO$"
check "mixed: the total counts 2.3 and 2.4 only" has "$table" "^  total  *6 / "
results=$build/grade/grader-mixed/results.json
check "mixed: results.json score 6" grep -q '"score": 6,' "$results"
check "mixed: results.json marks 1.3 failed, with the signal in its output" \
    grep -q '"name": "1.3 [^"]*", "score": 0, "max_score": 3, "status": "failed", "output": "crashed: signal 11' "$results"
if command -v python3 >/dev/null 2>&1; then
    check "mixed and correct: results.json is valid JSON" python3 -c "import json, sys; [json.load(open(f)) for f in sys.argv[1:]]" \
        "$results" "$build/grade/grader-correct/results.json"
fi

# ---- code that runs outside the tests; the library's own answer --------------------------------
grade grader-tamper tests/grading/fixtures/tamper --exercise 1.2
check "tamper: a destructor gets the lesson rejected" row "$fixtures/grader-tamper.txt" 1.2 "rejected$"
grade grader-library tests/grading/fixtures/library --exercise 1.2
check "library: calling broadcast_shapes passes 1.2 ..." row "$fixtures/grader-library.txt" 1.2 "passed$"
check "library: ... and the report notes the call" has "$fixtures/grader-library.txt" "calls the lesson's own library: broadcast_shapes"

# ---- one exercise at a time ------------------------------------------------------------------
grade grader-one-ok "$fixtures/correct" --exercise 3.2
check "one exercise: 3.2 right, exit 0" test $? -eq 0
check "one exercise: only 3.2 in the table" sh -c "[ \$(grep -c -E '^  [0-9]+\.[0-9]+ ' '$fixtures/grader-one-ok.txt') -eq 1 ]"
grade grader-one-wrong tests/grading/fixtures/mixed --exercise 1.2
check "one exercise: 1.2 wrong, exit 1" test $? -eq 1
grade grader-one-none "$fixtures/correct" --exercise 9.9
check "one exercise: an unknown id is a usage error (exit 2)" test $? -eq 2

# ---- many submissions ------------------------------------------------------------------------
many=$fixtures/many
mkdir -p "$many"
cp -R "$fixtures/correct" "$many/alice"
cp -R tests/grading/fixtures/mixed "$many/bob"
mkdir -p "$many/carol"
BUILD=$build MAKE=$make sh tests/grade-all.sh --submissions "$many" --out "$fixtures/gradebook" >"$fixtures/grade-all.txt" 2>&1
check "grade-all: exit status 0" test $? -eq 0
book=$fixtures/gradebook/gradebook.csv
check "grade-all: a header with every exercise and the total" has "$book" "^student,1.1,1.2,.*,6.4,total$"
check "grade-all: alice full marks, bob 6, carol 0" \
    sh -c "grep -q '^alice,.*,$total\$' '$book' && grep -q '^bob,.*,6\$' '$book' && grep -q '^carol,.*,0\$' '$book'"
check "grade-all: each student's results.json" test -s "$fixtures/gradebook/bob/results.json"

# ---- SANITIZE=1: an out-of-bounds write that gives the right numbers -----------------------
if [ "${GRADER_SKIP_SANITIZE:-0}" = 1 ]; then
    echo "skip - SANITIZE=1 grading (GRADER_SKIP_SANITIZE=1)"
else
    BUILD=$build-sanitize MAKE=$make SANITIZE=1 sh tests/grade.sh --submission tests/grading/fixtures/mixed \
        --name grader-sanitize --exercise 2.3 >"$fixtures/grader-sanitize.txt" 2>&1
    check "SANITIZE=1: exit 1" test $? -eq 1
    check "SANITIZE=1: 2.3 is a memory error" row "$fixtures/grader-sanitize.txt" 2.3 "memory error$"
fi

# ---- the handout -----------------------------------------------------------------------------
if git rev-parse --git-dir >/dev/null 2>&1; then
    sh tests/handout.sh "$fixtures/handout" >/dev/null 2>&1
    check "handout: the archive exists" test -s "$fixtures/handout/course-handout.tar.gz"
    unpacked=$fixtures/unpacked
    mkdir -p "$unpacked"
    tar -xzf "$fixtures/handout/course-handout.tar.gz" -C "$unpacked"
    check "handout: no solutions.c in it" sh -c "! find '$unpacked' -name solutions.c | grep -q ."
    check "handout: no grader fixtures in it" test ! -d "$unpacked/course/tests/grading"
    # as a student would run it: none of this make's variables (BUILD, CC, ...) passed down
    (cd "$unpacked/course" && env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKE make test) \
        >"$fixtures/handout-test.txt" 2>&1
    check "handout: make test passes in the unpacked handout" test $? -eq 0
    check "handout: make test says the reference checks are skipped" has "$fixtures/handout-test.txt" "not in this handout (skipped)"
else
    echo "skip - the handout (not a git checkout)"
fi

exit $failed
