#!/bin/sh
# test_gradescope.sh - the Gradescope autograder, end to end: `make gradescope`, its zip
# unpacked into a temporary directory laid out as Gradescope's /autograder (source/, the
# submission, its metadata, results/), setup.sh run there, then run_autograder on
#   correct   every lesson's solutions.c as the student's file, zipped with the course folder
#             around it: full marks
#   hostile   (made here) lesson 1: a constructor that reads the submission's metadata (a
#             secret email), appends to the course's Makefile, writes results/ and leaves a
#             daemon that rewrites results.json with full marks for 10 s; 1.1 answers right
#             only if one of these got through. Lesson 2: #include of the metadata file.
#             Contained: 0 points, also 3 s later; the Makefile, the metadata and results/
#             as they were, no daemon, no secret in the results, and lesson 2 did not compile
#             because the compiler could not open the file
# under the sandbox this machine offers, under GRADE_SANDBOX=uid (as root: what Gradescope's
# containers give), and without isolation: there run_autograder writes a results.json that
# says it could not grade; so it does for a course that does not build. Last, the control: the hostile file run outside the sandbox, as a
# student's own `make lesson1 test` runs it, gets 1.1 and does its damage (the checks above
# can fail). Prints "ok - ..." or "FAIL - ..."; exit 1 on a FAIL.
set -u
build=${BUILD:-build}
make=${MAKE:-make}
# setup.sh and run_autograder run as on Gradescope: without the calling make's variables
# (BUILD=... would send the grader's build elsewhere, and its jobserver is not handed down)
as_gradescope="env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKE"
failed=0
check() { # DESCRIPTION COMMAND...
    description=$1
    shift
    if "$@" >/dev/null 2>&1; then echo "ok - $description"; else echo "FAIL - $description"; failed=1; fi
}
command -v python3 >/dev/null 2>&1 || { echo "test_gradescope.sh: needs python3 (to read results.json)" >&2; exit 2; }
json() { # RESULTS EXPRESSION: prints the expression of the decoded results.json (r)
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# ---- make gradescope ---------------------------------------------------------------------
mkdir -p "$build"
$make --no-print-directory -s BUILD="$build" gradescope >"$build/gradescope.log" 2>&1
check "make gradescope writes the zip" test $? -eq 0 -a -s "$build/gradescope/autograder.zip"
if [ ! -s "$build/gradescope/autograder.zip" ]; then
    sed 's/^/    | /' "$build/gradescope.log"
    exit 1
fi
zip=$(cd "$build/gradescope" && pwd -P)/autograder.zip
unzip -Z1 "$zip" >"$build/gradescope/listing.txt" 2>/dev/null
check "the zip holds setup.sh and run_autograder at its top, and the course" \
    sh -c "grep -qx setup.sh '$build/gradescope/listing.txt' && grep -qx run_autograder '$build/gradescope/listing.txt' &&
        grep -qx course/Makefile '$build/gradescope/listing.txt' && grep -qx course/tests/grade.sh '$build/gradescope/listing.txt'"
check "the zip holds no solutions.c and none of the grader's tests" \
    sh -c "! grep -q -e 'solutions\.c' -e '^course/tests/grading/' -e '^course/build/' '$build/gradescope/listing.txt'"

top=$(mktemp -d "${TMPDIR:-/tmp}/gradescope-test.XXXXXX")
trap '[ -n "${daemon:-}" ] && pkill -x "$daemon" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$top"' EXIT
chmod 755 "$top" # like /autograder: the path is open to all; what must be hidden, the grader hides
ag=$top/autograder
mkdir -p "$ag/source"
(cd "$ag/source" && unzip -q "$zip")
check "setup.sh and run_autograder are executable once unpacked" test -x "$ag/source/setup.sh" -a -x "$ag/source/run_autograder"
cp "$ag/source/run_autograder" "$ag/run_autograder" # where Gradescope puts it
$as_gradescope AUTOGRADER_ROOT="$ag" "$ag/source/setup.sh" >"$top/setup.log" 2>&1
check "setup.sh builds the grader in the unpacked course" \
    sh -c "[ $? -eq 0 ] && [ -x '$ag/source/course/build/grader/sandbox' ] && [ -x '$ag/source/course/build/grader/lesson1/judge' ]"
if [ ! -x "$ag/source/course/build/grader/sandbox" ]; then
    tail -n 20 "$top/setup.log" | sed 's/^/    | /'
    exit 1
fi

secret=gradescope-secret-$$-$(date +%s)@example.edu
daemon=gs-hostile-$$ # the hostile daemon's name (15 characters at most: the kernel's comm)
daemon=$(printf '%s' "$daemon" | cut -c 1-15)
submit() { # KIND: a fresh submission of that kind, and its metadata, as Gradescope lays them out
    rm -rf "$ag/submission" "$ag/results" "$ag/submission_metadata.json"
    mkdir -p "$ag/submission" "$ag/results"
    printf '{"id": 1, "users": [{"email": "%s", "name": "Student"}], "assignment": {"title": "tensors"}}\n' \
        "$secret" >"$ag/submission_metadata.json"
    chmod 644 "$ag/submission_metadata.json"
    case $1 in
    correct) # as a zip of the whole course folder: lessons/ one level down
        for dir in lessons/[1-9]-*; do
            mkdir -p "$ag/submission/my-course/$dir"
            cp "$dir/solutions.c" "$ag/submission/my-course/$dir/exercises.c"
        done ;;
    hostile)
        mkdir -p "$ag/submission/lessons/1-broadcast" "$ag/submission/lessons/2-reduce"
        {   cat <<EOF
/* hostile (tests/grading/test_gradescope.sh): 1.1 is right only if an attack got through */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "exercises.h"
static int h_escaped;
static void h_forge(void) {
    FILE *f = fopen("$ag/results/results.json", "w");
    if (f) fputs("{\"score\": 69.0, \"output\": \"forged\"}\n", f), fclose(f);
}
__attribute__((constructor)) static void h_attack(void) {
    char text[512] = "";
    int fd = open("$ag/submission_metadata.json", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, text, sizeof text - 1) > 0) h_escaped = 1, fprintf(stderr, "metadata: %s\n", text);
        close(fd);
    }
    fd = open("$ag/source/course/Makefile", O_WRONLY | O_APPEND);
    if (fd >= 0) h_escaped = 1, (void)!write(fd, "# hostile\n", 10), close(fd);
    fd = open("$ag/results/forged", O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
        close(fd);
        h_escaped = 1;
        if (fork() == 0) {
            setsid();
            if (fork() == 0) {
                prctl(PR_SET_NAME, "$daemon");
                for (int i = 0; i < 10; i++) sleep(1), h_forge();
            }
            _exit(0);
        }
    }
}
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    memset(answer, 0, sizeof *answer);
    if (h_escaped)
        *answer = (BroadcastByHand){.out_shape = {2, 3}, .b_source = {0, 1, 2, 0, 1, 2}, .c = {11, 22, 33, 14, 25, 36},
                                    .grad_a = {1, 1, 1, 1, 1, 1}, .grad_b = {2, 2, 2}, .grad_b_weighted = {4, 1, 2}};
}
EOF
            # the other exercises: TODO stubs (the stubs' own 1.1 renamed out of the way)
            sh tests/stubs.sh lessons/1-broadcast/exercises.h | sed 's/ex1_1_broadcast_by_hand(/h_stub_1_1(/'
        } >"$ag/submission/lessons/1-broadcast/exercises.c"
        printf '#include "%s"\n' "$ag/submission_metadata.json" >"$ag/submission/lessons/2-reduce/exercises.c" ;;
    esac
}
makefile_sum=$(cksum <"$ag/source/course/Makefile")
grade() { # NAME [ENVIRONMENT...]: runs run_autograder; keeps its results as $top/NAME.json, .txt
    name=$1
    shift
    $as_gradescope AUTOGRADER_ROOT="$ag" "$@" "$ag/run_autograder" >"$top/$name.out" 2>&1
    status=$?
    cp "$ag/results/results.json" "$top/$name.json" 2>/dev/null
    cp "$ag/results/report.txt" "$top/$name.txt" 2>/dev/null
    return $status
}
contained() { # NAME: the checks every contained run of the hostile submission must pass
    sleep 3 # the daemon, had it escaped, would have rewritten results.json by now
    check "$1: 0 points, also 3 s after grading" score_is "$ag/results/results.json" 0
    check "$1: results.json is the grader's (valid, not forged)" \
        sh -c "cmp -s '$ag/results/results.json' '$top/$1.json' && ! grep -q forged '$top/$1.json'"
    check "$1: nothing written to results/ but the grader's files" \
        sh -c "[ \"\$(ls '$ag/results' | tr '\n' ' ')\" = 'report.txt results.json summary.tsv ' ]"
    check "$1: the course's Makefile is unchanged" sh -c "[ \"\$(cksum <'$ag/source/course/Makefile')\" = '$makefile_sum' ]"
    check "$1: the secret in the metadata appears nowhere in the results" \
        sh -c "! grep -q -F '$secret' '$top/$1.json' '$top/$1.txt' '$top/$1.out'"
    check "$1: lesson 2 did not compile: the compiler could not open the metadata" \
        sh -c "grep -q -E '^  2\.1 .* did not compile$' '$top/$1.txt' &&
            grep -q -E \"submission_metadata\\.json'?(: (No such file|Permission denied)| file not found)\" '$top/$1.txt'"
    check "$1: no process of the submission is left" sh -c "! pgrep -x '$daemon'"
}
score_is() { [ "$(json "$1" 'r["score"]')" = "$2" ]; } # RESULTS POINTS

# ---- a correct submission ----------------------------------------------------------------
submit correct
grade correct
check "correct: run_autograder exits 0" test $? -eq 0
total=$(json "$top/correct.json" 'r["max_score"]')
full_marks() { [ -n "$total" ] && [ "$total" != 0 ] && score_is "$1" "$total"; }
check "correct: full marks in results.json ($(json "$top/correct.json" 'r["score"]') of ${total:-?})" full_marks "$top/correct.json"
check "correct: results.json's output starts with the sandbox in effect" \
    test "$(json "$top/correct.json" 'r["output"].startswith("sandbox: ")')" = True
check "correct: ... and says where the lessons were found (a zip of the whole course folder)" \
    test "$(json "$top/correct.json" '"my-course/lessons" in r["output"]')" = True
closed() { for f in "$@"; do case $(stat -c %a "$f") in *0) ;; *) echo "$f is open to others"; return 1 ;; esac; done; }
check "correct: the course, the results, the submission and the metadata were closed to others" \
    closed "$ag/source/course" "$ag/results" "$ag/submission" "$ag/submission_metadata.json"

# ---- the hostile submission, contained -----------------------------------------------------
submit hostile
grade hostile
check "hostile: run_autograder exits 0" test $? -eq 0
contained hostile
if [ "$(id -u)" = 0 ]; then
    submit hostile
    grade hostile-uid GRADE_SANDBOX=uid
    check "hostile, uid of its own: graded in that mode" sh -c "head -n 1 '$top/hostile-uid.txt' | grep -q '^sandbox: uid of its own'"
    contained hostile-uid
else
    echo "skip - the uid sandbox (needs root)"
fi

# ---- without isolation ---------------------------------------------------------------------
submit hostile
grade none GRADE_SANDBOX=none
check "no isolation: run_autograder exits 0 all the same" test $? -eq 0
check "no isolation: results.json says it could not grade, with grade.sh's reason, and 0 points" test \
    "$(json "$top/none.json" 'r["score"] == 0 and "could not be graded" in r["output"] and "refusing to grade for credit" in r["output"]')" = True
# a course that does not build: results.json says so, with 0 points
cp "$ag/source/course/common/tensor.c" "$top/tensor.c.saved"
echo '#error this copy of the course is broken' >>"$ag/source/course/common/tensor.c"
submit correct
grade broken
check "a course that does not build: results.json has 0 points and grade.sh's reason" test \
    "$(json "$top/broken.json" 'r["score"] == 0 and "the course itself does not build" in r["output"]')" = True
cp "$top/tensor.c.saved" "$ag/source/course/common/tensor.c"

# the control: the same file as a student's own exercises.c, run by `make lesson1 test` (no
# sandbox): there its attacks get through, and 1.1 passes
submit hostile
course=$ag/source/course
cp "$ag/submission/lessons/1-broadcast/exercises.c" "$course/lessons/1-broadcast/exercises.c"
(cd "$course" && $make --no-print-directory -s lesson1 test) >"$top/control.txt" 2>&1
check "the checks can fail: outside the sandbox (make lesson1 test) the same file's attacks get through" \
    sh -c "grep -q -E '^ +1\.1 +done' '$top/control.txt' && [ -e '$ag/results/forged' ] &&
        [ \"\$(cksum <'$course/Makefile')\" != '$makefile_sum' ]"
pkill -x "$daemon" 2>/dev/null

[ $failed -eq 0 ] && echo "gradescope: every check passed" || echo "gradescope: a check FAILED"
exit $failed
