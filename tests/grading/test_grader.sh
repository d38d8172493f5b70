#!/bin/sh
# test_grader.sh - the grader's own tests (make test runs them). Each fixture submission is
# graded and its table, results.json and exit status are checked:
#   correct   every lesson's solutions.c as the student's file: full marks, exit 0
#   stubs     the untouched stubs (generated from exercises.h): all TODO, exit 1
#   empty     no files at all: all TODO, and the table says why
#   mixed     tests/grading/fixtures/mixed: one exercise per kind of failure, and a lesson
#             that does not compile
#   sneaky    tests/grading/fixtures/sneaky: what must not pass or leak: _exit with the
#             harness's status, a file written to the working directory (it is not: the
#             runner opens no file), 3 GB of memory, an assert, a double free, a message that
#             is not valid JSON as it stands, a compiler warning about a variable named error,
#             the student's own exercises.h, a definition of fprintf
#   includes  (made here) exercises.c that includes solutions.c or another .c file of the
#             course, or a later lesson's header: the sandbox has none of them, so it does not
#             compile; a link to solutions.c: rejected
#   library   exercises answered with the library's own functions: they pass, with a note
#   undeclared tests/grading/fixtures/undeclared: library functions and memset called without
#             their headers: did not compile, naming each header to include
# The attacks of a hostile student are tests/grading/test_hostile.sh's.
# plus one exercise or one lesson at a time (and ids that are not exercises), make grade's exit
# status and last line, a nested submission, the time a looping stub costs and the time budget,
# grade-all's gradebook and statuses, SANITIZE=1 grading (out-of-bounds writes that give the
# right numbers, past a malloc'd array and past a tensor in the arena; stores through NULL,
# quoted from the sanitizer) and the student handout. Prints "ok - ..." or "FAIL - ..." per check; exit status 1
# if any check failed.
set -u
build=${BUILD:-build}
make=${MAKE:-make}
# make test-grader's jobserver is not handed down (no "+"): a make run here that is told of one
# warns "jobserver unavailable" on the first line of the output these tests read
[ -n "${MAKEFLAGS:-}" ] && MAKEFLAGS=$(printf '%s\n' "$MAKEFLAGS" | sed 's/--jobserver-[a-z]*=[^ ]*//g')
fixtures=$build/grader-fixtures
rm -rf "$fixtures"
mkdir -p "$fixtures"
failed=0

check() { # DESCRIPTION COMMAND...; on failure, shows the file named by $show (then unset)
    description=$1
    shift
    if "$@" >/dev/null 2>&1; then echo "ok - $description"; else
        echo "FAIL - $description"
        failed=1
        if [ -n "${show:-}" ] && [ -f "$show" ]; then head -n 40 "$show" | sed 's/^/    | /'; fi
    fi
    show=
}
grade() { # NAME SUBMISSION [ARGS...]: grades, keeps the table in $fixtures/NAME.txt, returns the exit status
    name=$1 sub=$2
    shift 2
    BUILD=$build MAKE=$make sh tests/grade.sh --submission "$sub" --name "$name" "$@" >"$fixtures/$name.txt" 2>&1
}
has() { grep -a -q -e "$2" "$1"; }          # FILE PATTERN
has_text() { grep -a -q -F -e "$2" "$1"; }  # FILE TEXT
row() { grep -a -q -E "^  $2 .* $3" "$1"; } # TABLE ID STATUS-REGEX
elapsed() { echo $(($(date +%s) - $1)); }
if command -v python3 >/dev/null 2>&1; then
    valid_json() { python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1"; }
    json_has() { # RESULTS ID TEXT: the decoded output of exercise ID's test contains TEXT
        python3 -c 'import json, sys; sys.exit(0 if any(t["name"].split()[0] == sys.argv[2] and sys.argv[3] in t["output"]
            for t in json.load(open(sys.argv[1]))["tests"]) else 1)' "$1" "$2" "$3"
    }
else
    echo "skip - results.json is not parsed as JSON (no python3)"
fi

# ---- fixtures built here: the solutions, the stubs, nothing --------------------------------
for dir in lessons/[1-9]-*; do
    mkdir -p "$fixtures/correct/$dir" "$fixtures/stubs/$dir"
    cp "$dir/solutions.c" "$fixtures/correct/$dir/exercises.c"
    sh tests/stubs.sh "$dir/exercises.h" >"$fixtures/stubs/$dir/exercises.c"
done
mkdir -p "$fixtures/empty"
# exercises.c that reach for the course's own files (the includes section, below)
course=$(pwd -P)
trap '[ -n "${course_mode:-}" ] && chmod "$course_mode" "$course"' EXIT # the uid checks hide it for a while
mkdir -p "$fixtures/includes/lessons/1-broadcast" "$fixtures/includes/lessons/2-reduce" "$fixtures/includes/lessons/3-softmax"
{   # by absolute path, after a line marker that makes the compiler call what follows a system header
    echo '# 1 "system-header.h" 3'
    echo "#include \"$course/lessons/1-broadcast/solutions.c\""
} >"$fixtures/includes/lessons/1-broadcast/exercises.c"
echo '#include "solutions.c"' >"$fixtures/includes/lessons/2-reduce/exercises.c"
echo "#include \"$course/common/tensor.c\"" >"$fixtures/includes/lessons/3-softmax/exercises.c"
mkdir -p "$fixtures/includes/lessons/4-permute" "$fixtures/includes/lessons/5-gather"
ln -s "$course/lessons/4-permute/solutions.c" "$fixtures/includes/lessons/4-permute/exercises.c"
echo '#include "bmm.h"' >"$fixtures/includes/lessons/5-gather/exercises.c" # lesson 6's header, in lesson 5

# a runner that hangs in 1.2's probe (pause, forever) after starting a process of its own that
# ignores the polite signals in a session of its own (the runner's filter may refuse the fork)
# NAME [HEADER...]: a submission $fixtures/NAME whose lesson 1 is the stubs, but for 1.2, whose
# body is read from standard input (the C library's HEADERs included first)
ex1_2_submission() {
    sub_name=$1
    shift
    mkdir -p "$fixtures/$sub_name/lessons/1-broadcast"
    {
        for header in "$@"; do echo "#include <$header>"; done
        sh tests/stubs.sh lessons/1-broadcast/exercises.h | sed 's/^int ex1_2_broadcast_shapes(/int ex1_2_stub(/'
        echo 'int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {'
        cat
        echo '}'
    } >"$fixtures/$sub_name/lessons/1-broadcast/exercises.c"
}
ex1_2_submission hang signal.h unistd.h <<'EOF'
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    if (fork() == 0) {
        setsid();
        signal(SIGTERM, SIG_IGN), signal(SIGHUP, SIG_IGN), signal(SIGINT, SIG_IGN);
        execl("/bin/sleep", "grader-hang-child", "60", (char *)0);
        _exit(0);
    }
    signal(SIGTERM, SIG_IGN), signal(SIGHUP, SIG_IGN), signal(SIGINT, SIG_IGN);
    for (;;) pause();
EOF
# [MODE]: the processes of a grading left once grade.sh has returned (its runners, a child of
# theirs, and, under uid, any process of a run's own user: 0x70000000 and up)
survivors() {
    ps -eo uid=,pid=,stat=,args= 2>/dev/null |
        awk '$3 !~ /^Z/ && ($1 >= 1879048192 || /course-grade\.[A-Za-z0-9]*\/lesson[0-9]\/runner|grader-hang-chil[d]/) { print $2 }'
}

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

check "all correct: the report's first line says what isolation is in effect" \
    sh -c "head -n 1 '$fixtures/grader-correct.txt' | grep -q '^sandbox: .*seccomp allowlist' && ! grep -q 'NOT ISOLATED' '$fixtures/grader-correct.txt'"
check "all correct: so does results.json's output" grep -q '"output": "sandbox: ' "$results"

# ---- off Linux (a Mac), the grader refuses in one line: its sandbox is Linux's -----------------
mkdir -p "$fixtures/darwin-bin"
printf '#!/bin/sh\necho Darwin\n' >"$fixtures/darwin-bin/uname"
chmod +x "$fixtures/darwin-bin/uname"
for script in grade.sh grade-all.sh; do
    case $script in grade.sh) args="--submission $fixtures/correct" ;; *) args="--submissions $fixtures" ;; esac
    PATH="$fixtures/darwin-bin:$PATH" BUILD=$build MAKE=$make sh tests/$script $args >"$fixtures/grader-darwin.txt" 2>&1
    code=$? show=$fixtures/grader-darwin.txt
    check "on macOS: $script refuses (exit 2) in one line that says the grader runs on Linux only" \
        sh -c "[ $code -eq 2 ] && [ \$(wc -l <'$fixtures/grader-darwin.txt') -eq 1 ] && grep -q 'runs on Linux only' '$fixtures/grader-darwin.txt'"
done
PATH="$fixtures/darwin-bin:$PATH" sh tests/ensure-deps.sh grader >"$fixtures/grader-darwin.txt" 2>&1
code=$? show=$fixtures/grader-darwin.txt
check "on macOS: the grader's dependencies are refused in one line, not looked for" \
    sh -c "[ $code -eq 2 ] && [ \$(wc -l <'$fixtures/grader-darwin.txt') -eq 1 ] && grep -q 'runs on Linux only' '$fixtures/grader-darwin.txt'"

# ---- the sandbox's modes: without isolation the grader refuses, unless told ---------------------
GRADE_SANDBOX=none BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/correct" --name grader-none \
    --exercise 1.2 >"$fixtures/grader-none.txt" 2>&1
check "no isolation: refuses to grade (exit 2) ..." test $? -eq 2
check "no isolation: ... saying what is missing and how to grade anyway" \
    sh -c "grep -q 'NOT ISOLATED' '$fixtures/grader-none.txt' && grep -q 'refusing to grade for credit' '$fixtures/grader-none.txt' && grep -q -- '--unsandboxed' '$fixtures/grader-none.txt'"
GRADE_SANDBOX=none BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/correct" --name grader-none-ok \
    --exercise 1.2 --unsandboxed >"$fixtures/grader-none-ok.txt" 2>&1
check "no isolation, --unsandboxed: grades (exit 0), and the first line says it is not for credit" \
    sh -c "[ $? -eq 0 ] && head -n 1 '$fixtures/grader-none-ok.txt' | grep -q 'not for credit'"
GRADE_SANDBOX=none $make --no-print-directory -s BUILD="$build" grade SUBMISSION="$fixtures/correct" EXERCISE=1.2 UNSANDBOXED=1 \
    >"$fixtures/grader-none-make.txt" 2>&1
check "no isolation, make grade UNSANDBOXED=1: grades (exit 0), not for credit" \
    sh -c "[ $? -eq 0 ] && head -n 1 '$fixtures/grader-none-make.txt' | grep -q 'not for credit'"
if [ "$(id -u)" = 0 ]; then
    # a uid of its own without namespaces (a container's root): the grader's files hidden by permissions
    show=$fixtures/grader-uid-open.txt
    GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/correct" --name grader-uid-open \
        --exercise 1.2 >"$fixtures/grader-uid-open.txt" 2>&1
    open_status=$?
    # (only where others can enter the checkout at all: a clone in a mktemp -d is closed already)
    closed_above=
    above=$course
    while [ "$above" != / ]; do
        case $(stat -c %a "$above") in *[1357]) ;; *) closed_above=$above ;; esac
        above=$(dirname "$above")
    done
    if [ -z "$closed_above" ]; then
        check "uid: refuses while the course's directory is open to others (its solutions.c, .git, builds), naming it" \
            sh -c "[ $open_status -eq 2 ] && grep -q -F 'NOT ISOLATED: the sandbox can read $course (chmod o= it)' '$fixtures/grader-uid-open.txt'"
    else
        echo "skip - uid: the refusal while the course is open to others ($closed_above is closed to them already)"
    fi
    course_mode=$(stat -c %a "$course")
    chmod o-rwx "$course"
    open_to_all=$(mktemp -d "${TMPDIR:-/tmp}/grader-open-to-all.XXXXXX") && chmod 755 "$open_to_all" # (outside the course)
    GRADE_HIDDEN=$open_to_all GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/correct" \
        --name grader-uid-hidden --exercise 1.2 >"$fixtures/grader-uid-hidden.txt" 2>&1
    hidden_status=$?
    rmdir "$open_to_all"
    # two gradings at once: each run's user is its own, so neither's sweep touches the other
    GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/correct" --name grader-uid-twin \
        >"$fixtures/grader-uid-twin.txt" 2>&1 &
    twin=$!
    GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/correct" --name grader-uid \
        >"$fixtures/grader-uid.txt" 2>&1
    uid_status=$?
    wait $twin
    twin_status=$?
    GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/includes" --name grader-uid-includes \
        --exercise 1.2 >"$fixtures/grader-uid-includes.txt" 2>&1
    GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission tests/grading/fixtures/mixed --name grader-uid-mixed \
        >"$fixtures/grader-uid-mixed.txt" 2>&1
    GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/hang" --name grader-uid-hang \
        --exercise 1.2 >"$fixtures/grader-uid-hang.txt" 2>&1
    sleep 1
    left=$(survivors | tr '\n' ' ')
    chmod "$course_mode" "$course"
    show=$fixtures/grader-uid.txt
    check "uid: with them hidden, the solutions get full marks (exit 0)" \
        sh -c "[ $uid_status -eq 0 ] && grep -q '^  total  *$total / $total$' '$fixtures/grader-uid.txt' && head -n 1 '$fixtures/grader-uid.txt' | grep -q '^sandbox: uid of its own'"
    show=$fixtures/grader-uid-hidden.txt
    check "uid: refuses while a path of GRADE_HIDDEN is open to others, naming it" \
        sh -c "[ $hidden_status -eq 2 ] && grep -q 'NOT ISOLATED: the sandbox can read .*grader-open-to-all\\.[A-Za-z0-9]* (chmod o= it)' '$fixtures/grader-uid-hidden.txt'"
    show=$fixtures/grader-uid-twin.txt
    check "uid: a second grading at the same time gets full marks too" \
        sh -c "[ $twin_status -eq 0 ] && grep -q '^  total  *$total / $total$' '$fixtures/grader-uid-twin.txt'"
    show=$fixtures/grader-uid-includes.txt
    check "uid: solutions.c by absolute path cannot be read: did not compile" \
        sh -c "grep -q -E '^  1.2 .* did not compile$' '$fixtures/grader-uid-includes.txt' && grep -q -E \"solutions\\.c'?: (Permission denied|No such file)|solutions\\.c'? file not found\" '$fixtures/grader-uid-includes.txt'"
    show=$fixtures/grader-uid-mixed.txt
    check "uid: every kind of failure is told apart as under namespaces" \
        sh -c "grep -q -E '^  1.3 .* crashed: signal 11' '$fixtures/grader-uid-mixed.txt' && grep -q -E '^  1.4 .* timed out$' '$fixtures/grader-uid-mixed.txt' &&
            grep -q -E '^  1.5 .* exited early$' '$fixtures/grader-uid-mixed.txt' && grep -q -E '^  2.2 .* too much output$' '$fixtures/grader-uid-mixed.txt' &&
            grep -q -E '^  2.1 .* crashed: signal 6' '$fixtures/grader-uid-mixed.txt' && grep -q '^  total  *6 / ' '$fixtures/grader-uid-mixed.txt'"
    # (a uid's death signal was cleared by the change of user, and its sandbox was killed before
    # it could sweep: the runner lived on, as the run's user, after grading)
    show=$fixtures/grader-uid-hang.txt
    check "uid: a runner that hangs in the probe, ignoring signals, is gone when grade.sh returns: no process of a run's user (left: ${left:-none})" \
        sh -c "grep -q -E '^  1.2 .* timed out$' '$show' && [ -z '$left' ]"
else
    echo "skip - the uid sandbox (needs root)"
fi

# ---- nothing of a grading outlives it ---------------------------------------------------------
grade grader-hang "$fixtures/hang" --exercise 1.2
sleep 1
left=$(survivors | tr '\n' ' ')
show=$fixtures/grader-hang.txt
check "processes: a runner that hangs in the probe, ignoring signals, and its child are gone when grade.sh returns (left: ${left:-none})" \
    sh -c "grep -q -E '^  1.2 .* timed out$' '$show' && [ -z '$left' ]"

# ---- all TODO ------------------------------------------------------------------------------
grade grader-stubs "$fixtures/stubs"
check "stubs: exit status 1" test $? -eq 1
check "stubs: every exercise is TODO" sh -c "! grep -E '^  [0-9]+\.[0-9]+ ' '$fixtures/grader-stubs.txt' | grep -v -q ' TODO$'"
check "stubs: score 0" grep -q '"score": 0,' "$build/grade/grader-stubs/results.json"
grade grader-empty "$fixtures/empty"
check "empty: exit status 1" test $? -eq 1
check "empty: TODO, and results.json says the file is missing" has "$build/grade/grader-empty/results.json" "no lessons/1-broadcast/exercises.c"
check "empty: the table says why too: no lessons/ directory" \
    has "$fixtures/grader-empty.txt" "no lessons/1-broadcast/exercises.c in the submission (it has no lessons/ directory)"

# ---- each kind of failure --------------------------------------------------------------------
grade grader-mixed tests/grading/fixtures/mixed
check "mixed: exit status 1" test $? -eq 1
table=$fixtures/grader-mixed.txt
check "mixed: 1.1 TODO" row "$table" 1.1 "TODO$"
check "mixed: 1.2 wrong, with its first failure message" sh -c "grep -q -E '^  1.2 .* wrong$' '$table' && grep -q 'exercise 1.2: ' '$table'"
check "mixed: 1.3 crashed, naming signal 11" row "$table" 1.3 "crashed: signal 11"
check "mixed: 1.4 timed out" row "$table" 1.4 "timed out$"
check "mixed: 1.5 exited early (exit(0) does not pass)" row "$table" 1.5 "exited early$"
check "mixed: 1.5's message says where the test's output is" has "$table" "(the test's output: .*lesson1/1.5.log)"
check "mixed: 2.1 crashed, naming signal 6 (abort)" row "$table" 2.1 "crashed: signal 6"
check "mixed: abort() is explained as an assert or a corrupted heap" \
    has "$table" "abort() was called: an assert() failed, or the C library found the heap corrupted"
check "mixed: 2.2 too much output" row "$table" 2.2 "too much output$"
check "mixed: the report holds no message of the grader's own shell (a lesson that did not compile has no link.log)" \
    sh -c "! grep -q -E '(^|/)grade\.sh: [0-9]+: ' '$table'"
check "mixed: of 2.2's output (1 MB from each of its runners) 256 KB is kept, saying how much was cut" \
    sh -c "[ \$(wc -c <'$build/grade/grader-mixed/lesson2/2.2.log') -le 262400 ] &&
        grep -q 'grade.sh kept 256 KB of this log: [0-9]* bytes cut here' '$build/grade/grader-mixed/lesson2/2.2.log'"
check "mixed: 2.3 and 2.4 passed (without SANITIZE, the stray write goes unseen)" \
    sh -c "grep -q -E '^  2.3 .* passed$' '$table' && grep -q -E '^  2.4 .* passed$' '$table'"
check "mixed: lesson 3 did not compile, with the compiler's first error" \
    sh -c "grep -q -E '^  3.4 .* did not compile$' '$table' && grep -q '^ *lessons/3-softmax/exercises.c:[0-9]*:[0-9]*: error' '$table'"
check "mixed: lessons 4-6 graded as usual (TODO: no file) ..." row "$table" 6.4 "TODO$"
check "mixed: ... and the table says the file is missing" has "$table" "no lessons/6-bmm/exercises.c in the submission"
check "mixed: the total counts 2.3 and 2.4 only" has "$table" "^  total  *6 / "
results=$build/grade/grader-mixed/results.json
check "mixed: results.json score 6" grep -q '"score": 6,' "$results"
check "mixed: results.json marks 1.3 failed, with the signal in its output" \
    grep -q '"name": "1.3 [^"]*", "score": 0, "max_score": 3, "status": "failed", "output": "crashed: signal 11' "$results"
check "mixed: 1.3's crash is said once in the table (its status names the signal, the line below names the test it crashed in and does not repeat the signal)" \
    sh -c "grep -A 1 -E '^  1.3 ' '$table' | tail -n 1 | grep -q '^        in test_1_3_[a-z_0-9]* (lessons/1-broadcast/test_exercises.c:[0-9]*): A crash in an exercise' && ! grep -q 'received signal' '$table'"
check "mixed: ... and once in results.json (one 'signal 11' in 1.3's output)" \
    test "$(grep '"name": "1.3 ' "$results" | grep -o 'signal 11' | wc -l)" -eq 1
check "mixed: results.json names no file of the instructor's (logs, the staging directory)" \
    sh -c "! grep -q -e 'grade/grader-mixed' -e '\.log' '$results'"
if command -v python3 >/dev/null 2>&1; then
    check "mixed and correct: results.json is valid JSON" valid_json "$results"
    check "mixed and correct: results.json is valid JSON (correct)" valid_json "$build/grade/grader-correct/results.json"
fi

# ---- what a submission must not get away with --------------------------------------------------
rm -f grader-was-here.txt
touch "$fixtures/before-sneaky"
grade grader-sneaky tests/grading/fixtures/sneaky
check "sneaky: exit status 1" test $? -eq 1
table=$fixtures/grader-sneaky.txt
check "sneaky: 1.2 _exit(90), the harness's own status, exited early" row "$table" 1.2 "exited early$"
check "sneaky: 1.3 passed, but the file it tried to write is nowhere: the runner opens no file ..." \
    sh -c "grep -q -E '^  1.3 .* passed$' '$table' && ! find . '${TMPDIR:-/tmp}' -name grader-was-here.txt -newer '$fixtures/before-sneaky' 2>/dev/null | grep -q ."
check "sneaky: 1.4 took 3 GB: malloc gave NULL (the memory limit), so it crashed" row "$table" 1.4 "crashed: signal 11"
check "sneaky: 1.5 crashed on an assert, and the table says so" \
    sh -c "grep -q -E '^  1.5 .* crashed: signal 6' '$table' && grep -q 'Here an assert failed: lessons/1-broadcast/exercises.c:[0-9]*: .*ex1_5' '$table'"
check "sneaky: 5.2 frees twice: crashed, and the table quotes the C library" \
    sh -c "grep -q -E '^  5.2 .* crashed: signal 6' '$table' && grep -q 'Here the C library found the heap corrupted: free(): double free' '$table'"
check "sneaky: 5.3 stores through NULL, 5.4 just past NULL: both crashed: signal 11" \
    sh -c "grep -q -E '^  5.3 .* crashed: signal 11' '$table' && grep -q -E '^  5.4 .* crashed: signal 11' '$table'"
results=$build/grade/grader-sneaky/results.json
check "sneaky: 2.1 wrong, its message holding a backslash and a Latin-1 byte" row "$table" 2.1 "wrong$"
check "sneaky: the backslash is escaped in results.json" has_text "$results" 'a back\\slash, a \"quote\" and caf?'
if command -v python3 >/dev/null 2>&1; then
    check "sneaky: results.json is valid JSON (python3's json.load)" valid_json "$results"
    check "sneaky: 2.1's output decodes to the message, the invalid byte as ?" \
        json_has "$results" 2.1 'a back\slash, a "quote" and caf?'
fi
check "sneaky: 2.4 passes without SANITIZE (the write past the tensor's data is unseen)" row "$table" 2.4 "passed$"
check "sneaky: lesson 3's first error is the error, not the warning about a variable named error" \
    sh -c "grep -q -E '^  3.1 .* did not compile$' '$table' && grep -q 'error: .*not_declared_anywhere' '$table' && ! grep -q 'unused variable' '$table'"
check "sneaky: lesson 4 is compiled with the course's exercises.h, not the student's" \
    sh -c "grep -q -E '^  4.1 .* did not compile$' '$table' && grep -q 'no member named .shortcut.' '$table'"
check "sneaky: lesson 6 defines fprintf, yet 6.1 is still wrong and 6.2 TODO" \
    sh -c "grep -q -E '^  6.1 .* wrong$' '$table' && grep -q -E '^  6.2 .* TODO$' '$table'"

# an answer that rewrites its inputs, from which the test computes what it expects: zeroed, a
# loss of 0 would match (what the runner writes into a tensor argument never comes back)
mkdir -p "$fixtures/rewrite-inputs/lessons/2-reduce"
{ sh tests/stubs.sh lessons/2-reduce/exercises.h | sed 's/^Tensor \*ex2_4_mse_loss(/Tensor *ex2_4_stub(/'
  cat <<'EOF'
#include "broadcast.h"
#include "reduce.h"
Tensor *ex2_4_mse_loss(Tensor *pred, Tensor *target) {
    for (int64_t i = 0; i < pred->storage->size; i++) pred->storage->data[i] = 0;
    for (int64_t i = 0; i < target->storage->size; i++) target->storage->data[i] = 0;
    return tensor_mul_scalar(tensor_sum(tensor_pow_scalar(tensor_sub(pred, target), 2.0f)), 1.0f);
}
EOF
} >"$fixtures/rewrite-inputs/lessons/2-reduce/exercises.c"
grade grader-rewrite-inputs "$fixtures/rewrite-inputs" --exercise 2.4
show=$fixtures/grader-rewrite-inputs.txt
check "sneaky: 2.4 that zeroes its input tensors (so that the expected loss would be 0) is wrong" \
    sh -c "grep -q -E '^  2.4 .* 0 / 2 +wrong$' '$show'"

# ---- the sandbox itself: the compiler's filter, and how an exit status reads -----------------
tcp='exec 3<>/dev/tcp/127.0.0.1/9; echo "status $?"' # bash's /dev/tcp: a socket and a connect
/bin/bash -c "$tcp" >"$fixtures/tcp-outside.txt" 2>&1
for mode in auto uid; do
    [ $mode = uid ] && [ "$(id -u)" != 0 ] && continue
    GRADE_SANDBOX=$mode "$build/grader/sandbox" run --profile compile --time 10 -- /bin/bash -c "$tcp" \
        >"$fixtures/tcp-$mode.txt" 2>&1
    check "sandbox ($mode): the compiler's profile may not make a network socket (outside: connect refused)" \
        sh -c "grep -q 'Connection refused' '$fixtures/tcp-outside.txt' && grep -q 'socket: Operation not permitted' '$fixtures/tcp-$mode.txt' &&
            ! grep -q 'Connection refused' '$fixtures/tcp-$mode.txt'"
done
# the compiler's filter: no ptrace, no new namespaces, no typing into a terminal (perl's
# syscall(), outside the sandbox: ptrace and unshare succeed, the ioctl finds no terminal)
syscalls='$r = syscall(101, 0, 0, 0, 0); print "ptrace ", ($r == -1 ? $!+0 : "ok"), "\n";
    $r = syscall(272, 0x10000000); print "unshare ", ($r == -1 ? $!+0 : "ok"), "\n";
    $c = "x"; $r = syscall(16, 0, 0x5412, $c); print "tiocsti ", ($r == -1 ? $!+0 : "ok"), "\n";'
if [ -x /usr/bin/perl ]; then
    /usr/bin/perl -e "$syscalls" </dev/null >"$fixtures/syscalls-outside.txt" 2>&1
    for mode in auto uid; do
        [ $mode = uid ] && [ "$(id -u)" != 0 ] && continue
        GRADE_SANDBOX=$mode "$build/grader/sandbox" run --profile compile --time 10 -- /usr/bin/perl -e "$syscalls" \
            >"$fixtures/syscalls-$mode.txt" 2>&1
        check "sandbox ($mode): the compiler's profile may not ptrace, unshare or TIOCSTI (EPERM; outside: ok, ok, ENOTTY)" \
            sh -c "printf 'ptrace ok\nunshare ok\ntiocsti 25\n' | cmp -s - '$fixtures/syscalls-outside.txt' &&
                printf 'ptrace 1\nunshare 1\ntiocsti 1\n' | cmp -s - '$fixtures/syscalls-$mode.txt'"
    done
else
    echo "skip - the compiler's filter on ptrace, unshare and TIOCSTI (no /usr/bin/perl)"
fi
mkdir -p "$fixtures/exit139/lessons/1-broadcast"
{
    sh tests/stubs.sh lessons/1-broadcast/exercises.h | sed 's/^int ex1_2_broadcast_shapes(/int ex1_2_stub(/; s/^int ex1_3_broadcast_strides(/int ex1_3_stub(/'
    echo '#include <stdlib.h>'
    echo 'int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {'
    echo '    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;'
    echo '    exit(139);'
    echo '}'
    echo 'int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,'
    echo '                            int target_rank, int64_t *out_strides) {'
    echo '    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;'
    echo '    exit(126);'
    echo '}'
} >"$fixtures/exit139/lessons/1-broadcast/exercises.c"
if "$build/grader/sandbox" describe | grep -q '^sandbox: namespaces'; then
    grade grader-exit139 "$fixtures/exit139"
    show=$fixtures/grader-exit139.txt
    check "sandbox (namespaces): exit(139) reads as signal 11 (bubblewrap's 128 + N), as the instructors' page says" \
        row "$fixtures/grader-exit139.txt" 1.2 "crashed: signal 11"
    check "sandbox (namespaces): exit(126), the sandbox's own status, reads as crashed" row "$fixtures/grader-exit139.txt" 1.3 "crashed"
fi
if [ "$(id -u)" = 0 ]; then
    course_mode=$(stat -c %a "$course")
    chmod o-rwx "$course"
    GRADE_SANDBOX=uid BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/exit139" --name grader-exit139-uid \
        >"$fixtures/grader-exit139-uid.txt" 2>&1
    chmod "$course_mode" "$course"
    show=$fixtures/grader-exit139-uid.txt
    check "sandbox (uid): exit(139) is an exit" row "$fixtures/grader-exit139-uid.txt" 1.2 "exited early"
    check "sandbox (uid): exit(126), the sandbox's own status, reads as crashed" row "$fixtures/grader-exit139-uid.txt" 1.3 "crashed"
fi

# ---- includes: the sandbox holds the course's headers and the system's, nothing else -------------
grade grader-includes "$fixtures/includes"
table=$fixtures/grader-includes.txt
# (gcc says "X: No such file or directory", clang "'X' file not found" or "cannot open file 'X': ...")
check "includes: solutions.c by absolute path is not in the sandbox: did not compile, naming it" \
    sh -c "grep -q -E '^  1.2 .* did not compile$' '$table' && grep -q -E \"fatal error: '?[^ ]*lessons/1-broadcast/solutions\\.c('? file not found|: No such file)\" '$table'"
check "includes: \"solutions.c\" is on no include path (did not compile, naming it)" \
    sh -c "grep -q -E '^  2.1 .* did not compile$' '$table' && grep -q 'fatal error: .*solutions.c' '$table'"
check "includes: another .c file of the course is not in the sandbox either" \
    sh -c "grep -q -E '^  3.1 .* did not compile$' '$table' && grep -q -E \"common/tensor\\.c('? file not found|: No such file)\" '$table'"
check "includes: an exercises.c that is a link to solutions.c is rejected" \
    sh -c "grep -q -E '^  4.1 .* rejected$' '$table' && grep -q 'is a link to a file outside the submission' '$table'"
check "includes: a later lesson's header is not there (lesson 5 including lesson 6's bmm.h did not compile)" \
    sh -c "grep -q -E '^  5.1 .* did not compile$' '$table' && grep -q -E \"bmm\\.h('? file not found|: No such file)\" '$table'"

# ---- the library's own answer --------------------------------------------------------------------
grade grader-library tests/grading/fixtures/library
check "library: calling broadcast_shapes passes 1.2 ..." row "$fixtures/grader-library.txt" 1.2 "passed$"
check "library: ... and the report notes the call, naming the exercise" \
    has "$fixtures/grader-library.txt" "note: 1.2 (ex1_2_broadcast_shapes) calls the course's library: broadcast_shapes"
check "library: 1.3 through a pointer kept in data, and 1.4 through a table, pass and are noted" \
    sh -c "grep -q -E '^  1.3 .* passed$' '$fixtures/grader-library.txt' && grep -q -E '^  1.4 .* passed$' '$fixtures/grader-library.txt' &&
        grep -q \"note: 1.3 (ex1_3_broadcast_strides) calls the course's library: broadcast_strides\" '$fixtures/grader-library.txt' &&
        grep -q \"note: 1.4 (ex1_4_broadcast_map) calls the course's library: broadcast_map\" '$fixtures/grader-library.txt'"
check "library: a constructor no exercise calls, which stores a library function, is noted" \
    has "$fixtures/grader-library.txt" "note: stash_library, which no exercise calls (a constructor?), refers to the course's library: broadcast_shapes"
check "library: 4.4 through common/'s strided iterator, in a helper, is noted" \
    has "$fixtures/grader-library.txt" "note: 4.4 (ex4_4_contiguous_copy) calls the course's library: .*nditer_init"

# ---- a call without its header ------------------------------------------------------------------
# Only a warning, a call to tensor_sum_last_dim without reduce.h crashes 2.1 (the pointer it
# returns cut to 32 bits); the grader makes it an error and names the header, per function.
grade grader-undeclared tests/grading/fixtures/undeclared --lesson 2
table=$fixtures/grader-undeclared.txt
show=$table
check "undeclared: a library op called without its header does not compile (2.1), naming the function" \
    sh -c "grep -q -E '^  2.1 .* did not compile$' '$table' && grep -q \"exercises.c:[0-9]*:[0-9]*: error: .*'tensor_sum_last_dim'\" '$table'"
show=$table
check "undeclared: ... and the header to include for each function it calls without one (the course's, the C library's)" \
    sh -c "grep -q -F '#include \"reduce.h\" (tensor_sum_last_dim)' '$table' && grep -q -F '#include \"broadcast.h\" (tensor_mul_scalar)' '$table' &&
        grep -q -F '#include <string.h> (memset)' '$table'"
check "undeclared: results.json says so too" has_text "$build/grade/grader-undeclared/results.json" '#include \"reduce.h\" (tensor_sum_last_dim)'

# ---- one lesson at a time ------------------------------------------------------------------------
check "one lesson: --lesson 2 grades lesson 2's exercises only, and says so" \
    sh -c "[ \$(grep -c -E '^  [0-9]+\.[0-9]+ ' '$table') -eq 4 ] && [ \$(grep -c -E '^  2\.[0-9]+ ' '$table') -eq 4 ] &&
        grep -q '^grading grader-undeclared (lesson 2 only)$' '$table'"
grade grader-lesson-none "$fixtures/correct" --lesson 9
check "one lesson: a lesson that is not there is a usage error (exit 2), listing the lessons" \
    sh -c "[ $? -eq 2 ] && grep -q \"no lesson '9' in this course; its lessons are: 1 2 \" '$fixtures/grader-lesson-none.txt'"
grade grader-lesson-other "$fixtures/correct" --lesson 3 --exercise 2.1
check "one lesson: an exercise of another lesson is a usage error (exit 2), listing the lesson's" \
    sh -c "[ $? -eq 2 ] && grep -q \"no exercise '2.1' in lessons/3-softmax; its exercises are: 3.1 3.2\" '$fixtures/grader-lesson-other.txt'"

# ---- make grade: its exit status and its last line -------------------------------------------------
# It succeeds whenever it graded, and its last line is the score (make prints "Error N" after a
# failing recipe); STRICT=1 fails unless every graded exercise passed; not graded: it fails.
make_grade() { # NAME ARGS...: make grade; sets $code and $last, the last line before make's own "***" lines
    name=$1
    shift
    $make --no-print-directory -s BUILD="$build" grade "$@" >"$fixtures/$name.txt" 2>&1
    code=$?
    last=$(grep -v -E '^make(\[[0-9]+\])?: \*\*\* ' "$fixtures/$name.txt" | tail -n 1)
    show=$fixtures/$name.txt
}
status_and_line() { # CODE zero|nonzero LINE REGEX
    if [ "$2" = zero ]; then [ "$1" -eq 0 ]; else [ "$1" -ne 0 ]; fi && printf '%s\n' "$3" | grep -q -E -e "$4"
}
make_grade make-grade SUBMISSION=tests/grading/fixtures/undeclared LESSON=2
check "make grade LESSON=2: 0 of 11, exit 0, and the last line is the score, saying what the status means" \
    status_and_line "$code" zero "$(tail -n 1 "$fixtures/make-grade.txt")" '^score: 0 / 11 \(graded: exit status 0; with STRICT=1 it is 1 unless'
make_grade make-grade-strict SUBMISSION=tests/grading/fixtures/undeclared EXERCISE=2.1 STRICT=1
check "make grade STRICT=1: fails short of full marks, its own last line the score" \
    status_and_line "$code" nonzero "$last" '^score: 0 / 2 \(not every graded exercise passed: exit status 1\)$'
make_grade make-grade-none SUBMISSION="$fixtures/correct" EXERCISE=9.9
check "make grade: could not grade (an unknown exercise): fails, its own last line saying why and that it did not grade" \
    status_and_line "$code" nonzero "$last" "^grade.sh: no exercise '9.9' in this course; .*: not graded \\(exit status 2\\)$"
check "grade.sh itself: the last line is the score, and its exit status 1 short of full marks" \
    sh -c "tail -n 1 '$fixtures/grader-mixed.txt' | grep -q -E '^score: 6 / [0-9]+ \(not every graded exercise passed: exit status 1\)$'"

# ---- one exercise at a time ------------------------------------------------------------------
grade grader-one-ok "$fixtures/correct" --exercise 3.2
check "one exercise: 3.2 right, exit 0" test $? -eq 0
check "one exercise: only 3.2 in the table" sh -c "[ \$(grep -c -E '^  [0-9]+\.[0-9]+ ' '$fixtures/grader-one-ok.txt') -eq 1 ]"
grade grader-one-wrong tests/grading/fixtures/mixed --exercise 1.2
check "one exercise: 1.2 wrong, exit 1" test $? -eq 1
grade grader-one-none "$fixtures/correct" --exercise 9.9
check "one exercise: an unknown id is a usage error (exit 2)" test $? -eq 2
check "one exercise: ... which lists the exercises" has "$fixtures/grader-one-none.txt" "no exercise '9.9' in this course; its exercises are: 1.1 1.2"
grade grader-one-2.10 "$fixtures/correct" --exercise 2.10
check "one exercise: 2.10 is not 2.1 (exit 2)" test $? -eq 2
grade grader-one-space "$fixtures/correct" --exercise "1.1 "
check "one exercise: \"1.1 \" is not 1.1 (exit 2)" test $? -eq 2

# ---- where the lessons are -------------------------------------------------------------------
mkdir -p "$fixtures/nested/course"
cp -R "$fixtures/correct/lessons" "$fixtures/nested/course/"
grade grader-nested "$fixtures/nested" --exercise 1.2
check "nested: DIR/course/lessons is found and graded (exit 0)" test $? -eq 0
check "nested: the report says where the lessons were found" has "$fixtures/grader-nested.txt" "lessons/ is at .*nested/course/lessons"
mkdir -p "$fixtures/nested/other"
cp -R "$fixtures/correct/lessons" "$fixtures/nested/other/"
grade grader-nested-two "$fixtures/nested" --exercise 1.2
check "nested: two lessons/ below DIR is a usage error, naming both" \
    sh -c "grep -q 'course/lessons' '$fixtures/grader-nested-two.txt' && grep -q 'other/lessons' '$fixtures/grader-nested-two.txt'"

# ---- time -----------------------------------------------------------------------------------
began=$(date +%s)
grade grader-loop tests/grading/fixtures/mixed --exercise 1.4
took=$(elapsed "$began")
check "time: a stub that loops forever costs one probe (3 s), not a time limit per test (took ${took} s)" test "$took" -le 9
GRADE_TIME_BUDGET=2 BUILD=$build MAKE=$make sh tests/grade.sh --submission tests/grading/fixtures/mixed --name grader-budget \
    >"$fixtures/grader-budget.txt" 2>&1
check "time: past GRADE_TIME_BUDGET, the remaining exercises are not run" \
    sh -c "grep -q -E '^  1.5 .* not run$' '$fixtures/grader-budget.txt' && grep -q -E '^  2.4 .* not run$' '$fixtures/grader-budget.txt'"
# an exercise that answers the first try and then loops in a test: stopped by that test's limit
ex1_2_submission test-loop <<'EOF'
    if (a_rank == 2 && b_rank == 1 && a[0] == 2 && a[1] == 3 && b[0] == 3) { /* the first try: (2,3) and (3,) */
        out[0] = 2, out[1] = 3, *out_rank = 2;
        return 0;
    }
    for (volatile int spin = 1; spin;) {
    }
    return 0;
EOF
began=$(date +%s)
grade grader-test-loop "$fixtures/test-loop" --exercise 1.2
took=$(elapsed "$began")
show=$fixtures/grader-test-loop.txt
check "time: past the first try, a test that loops is stopped at 5 s, and the exercise at 3 + 5 per test (took $took s)" \
    sh -c "grep -q -E '^  1.2 .* timed out$' '$fixtures/grader-test-loop.txt' && grep -q 'did not finish within 5 s' '$fixtures/grader-test-loop.txt' &&
        [ $took -ge 5 ] && [ $took -le 25 ]"
# a runner that prints one line of 300 KB shaped like a failed assert, then aborts: the grader
# reads a bounded piece of it (the shell's ${x#*runner: } on the whole line, where the pattern
# is nowhere, took over a minute)
ex1_2_submission long-line stdio.h stdlib.h <<'EOF'
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    for (int i = 0; i < 300000; i++) fputc(i % 64 ? 65 + i % 26 : 58, stderr);
    fputs(" Assertion 1 failed.\n", stderr);
    abort();
EOF
began=$(date +%s)
grade grader-long-line "$fixtures/long-line" --exercise 1.2
took=$(elapsed "$began")
show=$fixtures/grader-long-line.txt
check "time: a runner that prints a 300 KB assert line crashes, reported in a bounded message, in 10 s (took $took s; 21 s before)" \
    sh -c "grep -q -E '^  1.2 .* crashed' '$show' && grep -q 'Here an assert failed' '$show' && [ $took -le 10 ] &&
        [ \$(wc -c <'$show') -lt 20000 ]"
# ---- output: bounded per runner, per exercise and per submission, whatever its shape -----------
# 1.2's programs (its first try, and a runner per test) each print once, under the 1 MB a runner
# may: 600 KB of short lines, one 900 KB line of bytes of every value, or 600 KB of lines shaped
# like failed asserts. In all, over the 2 MiB an exercise may: too much output, and in no more
# time than 1.2's limit (3 s, and 5 s for each of its 3 tests) plus 5 s, in each mode.
for shape in lines bytes asserts; do
    case $shape in
    lines) print="for (int i = 0; i < 600000; i++) fputc(i % 100 ? 'x' : 10, stderr);" ;;
    bytes) print='for (int i = 0; i < 900000; i++) fputc(i * 7 % 256, i % 2 ? stderr : stdout);' ;;
    asserts) print='for (int i = 0; i < 12000; i++) fprintf(stderr, "runner: exercises.c:%d: f: Assertion `x%d'"'"' failed.\n", i, i);' ;;
    esac
    ex1_2_submission "print-$shape" stdio.h <<EOF
    static int once;
    if (!once) { $print }
    once = 1;
    out[0] = 2, out[1] = 3, *out_rank = 2; (void)a, (void)a_rank, (void)b, (void)b_rank;
    return 0;
EOF
done
for mode in auto uid; do
    [ $mode = uid ] && [ "$(id -u)" != 0 ] && continue
    sandbox_env=
    [ $mode = uid ] && sandbox_env=GRADE_SANDBOX=uid course_mode=$(stat -c %a "$course") && chmod o-rwx "$course"
    for shape in lines bytes asserts; do
        began=$(date +%s)
        env $sandbox_env BUILD="$build" MAKE="$make" sh tests/grade.sh --submission "$fixtures/print-$shape" \
            --name "grader-print-$shape-$mode" --exercise 1.2 >"$fixtures/grader-print-$shape-$mode.txt" 2>&1
        took=$(elapsed "$began")
        show=$fixtures/grader-print-$shape-$mode.txt
        check "output ($mode): 1.2's programs print $shape, under a runner's 1 MB each, over an exercise's 2 MiB in all: too much output, in $took s (limit 18 + 5)" \
            sh -c "grep -q -E '^  1.2 .* too much output$' '$show' && grep -q 'more than the 2097152 an exercise may' '$show' &&
                [ $took -le 23 ] && [ \$(wc -c <'$show') -lt 20000 ] && [ \$(wc -c <'$build/grade/grader-print-$shape-$mode/lesson1/1.2.log') -le 270000 ]"
    done
    [ $mode = uid ] && chmod "$course_mode" "$course"
done
# every exercise of every lesson prints 600 KB in its first try (then is TODO): past the 8 MiB a
# submission may print in all, the rest are not run; what is kept stays bounded
for dir in lessons/*/; do
    dir=${dir%/}
    mkdir -p "$fixtures/print-all/$dir"
    { echo '#include <stdio.h>'; sh tests/stubs.sh "$dir/exercises.h" |
        sed 's/EXERCISE_TODO();/for (int i = 0; i < 600000; i++) fputc(i % 100 ? 120 : 10, stderr); EXERCISE_TODO();/'; } \
        >"$fixtures/print-all/$dir/exercises.c"
done
began=$(date +%s)
grade grader-print-all "$fixtures/print-all"
code=$?
took=$(elapsed "$began")
kept=$(du -s -k "$build/grade/grader-print-all" | cut -f 1)
show=$fixtures/grader-print-all.txt
check "output: every exercise prints 600 KB: past the submission's 8 MiB the rest are not run, exit 1, in $took s; $kept KB kept (at most 16 MB)" \
    sh -c "[ $code = 1 ] && grep -q -E '^  1.1 .* TODO$' '$show' && grep -q -E '^  7.4 .* too much output$' '$show' &&
        grep -q 'not run: this submission.s programs printed [0-9]* bytes before it, past the 8388608' '$show' &&
        [ $took -le 120 ] && [ $kept -le 16384 ]"

# staging holds one lesson's object and runner at a time: two lessons, each an object and a
# runner of 40 MB, never take the staging directory past about one lesson's 80 MB (its size is
# polled while grade.sh runs; kept to the end, the two lessons' stages made 160 MB)
for dir in lessons/1-broadcast lessons/2-reduce; do
    mkdir -p "$fixtures/big-lessons/$dir"
    { printf '__asm__(".section .rodata\\n.fill 40000000, 1, 0\\n.previous");\n'; sh tests/stubs.sh "$dir/exercises.h"; } \
        >"$fixtures/big-lessons/$dir/exercises.c"
done
staging=$(mktemp -d "${TMPDIR:-/tmp}/grader-staging.XXXXXX") && chmod 755 "$staging"
( while :; do du -s -k "$staging" 2>/dev/null | cut -f 1; sleep 0.1; done ) >"$fixtures/staging-sizes.txt" &
poll=$!
TMPDIR=$staging BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/big-lessons" --name grader-big-lessons \
    >"$fixtures/grader-big-lessons.txt" 2>&1
kill $poll
largest=$(sort -n "$fixtures/staging-sizes.txt" | tail -n 1)
rm -rf "$staging"
show=$fixtures/grader-big-lessons.txt
check "files: two lessons of a 40 MB object and runner each: staging peaked at ${largest:-?} KB, one lesson's (under 120 MB)" \
    sh -c "grep -q -E '^  2.4 .* TODO$' '$show' && [ '${largest:-999999}' -lt 122880 ]"
# a compile that writes a 300 MB object: over the 256 MiB a file may have
mkdir -p "$fixtures/big-object/lessons/1-broadcast"
{ printf '__asm__(".section .rodata\\n.fill 300000000, 1, 0\\n.previous");\n'; sh tests/stubs.sh lessons/1-broadcast/exercises.h; } \
    >"$fixtures/big-object/lessons/1-broadcast/exercises.c"
grade grader-big-object "$fixtures/big-object" --exercise 1.1
show=$fixtures/grader-big-object.txt
check "files: a compile that writes 300 MB (over 256 MiB a file) does not compile" \
    sh -c "grep -q -E '^  1.1 .* did not compile$' '$fixtures/grader-big-object.txt' &&
        grep -q -E 'File size limit exceeded|the compiler stopped' '$fixtures/grader-big-object.txt'"
# a compile that would never end (2^32 tokens of macro expansion) is cut at the budget
mkdir -p "$fixtures/slow-compile/lessons/1-broadcast"
{ echo '#define A0(x) x x'; for k in 1 2 3 4 5; do echo "#define A$k(x) A$((k - 1))(A$((k - 1))(x))"; done
  echo 'int slow = 0 A5(+1);'; } >"$fixtures/slow-compile/lessons/1-broadcast/exercises.c"
began=$(date +%s)
GRADE_TIME_BUDGET=4 BUILD=$build MAKE=$make sh tests/grade.sh --submission "$fixtures/slow-compile" --name grader-slow-compile \
    >"$fixtures/grader-slow-compile.txt" 2>&1
took=$(elapsed "$began")
show=$fixtures/grader-slow-compile.txt
check "time: a compile that does not end is stopped at the budget (took $took s, budget 4 s), and the rest not run" \
    sh -c "[ $took -lt 20 ] && grep -q 'the compiler did not finish within [1-4] s' '$fixtures/grader-slow-compile.txt' &&
        grep -q -E '^  2.1 .* not run$' '$fixtures/grader-slow-compile.txt'"

# ---- a staging place the sandbox cannot reach: not graded, before anyone is -------------------
# (TMPDIR inside a directory only the grader may enter: the sandbox's user cannot reach the stage)
mkdir -p "$fixtures/private/tmp" "$fixtures/private-many/alice"
chmod 700 "$fixtures/private"
cp -R "$fixtures/correct/lessons" "$fixtures/private-many/alice/"
(TMPDIR=$fixtures/private/tmp && export TMPDIR && grade grader-private "$fixtures/correct" --lesson 1)
code=$?
show=$fixtures/grader-private.txt
check "private TMPDIR: honest work is not graded 0 but not graded at all (exit 2), naming the cause and the fix" \
    sh -c "[ $code -eq 2 ] && grep -q 'the sandbox cannot reach the staging directory' '$show' && grep -q 'set TMPDIR to' '$show' &&
        ! grep -q -e 'did not compile' -e 'total' '$show'"
TMPDIR=$fixtures/private/tmp BUILD=$build MAKE=$make sh tests/grade-all.sh --submissions "$fixtures/private-many" \
    --out "$fixtures/gradebook-private" >"$fixtures/grade-all-private.txt" 2>&1
code=$?
show=$fixtures/grade-all-private.txt
check "private TMPDIR: grade-all stops (exit 2) and writes no gradebook, no zero" \
    sh -c "[ $code -eq 2 ] && grep -q 'the sandbox cannot reach the staging directory' '$show' &&
        [ ! -e '$fixtures/gradebook-private/gradebook.csv' ]"
chmod 755 "$fixtures/private"

# ---- many submissions ------------------------------------------------------------------------
many=$fixtures/many
mkdir -p "$many"
cp -R "$fixtures/correct" "$many/alice"
cp -R tests/grading/fixtures/mixed "$many/bob"
mkdir -p "$many/carol" "$many/lee, ann" "$many/.hidden"
BUILD=$build MAKE=$make sh tests/grade-all.sh --submissions "$many" --out "$fixtures/gradebook" >"$fixtures/grade-all.txt" 2>&1
check "grade-all: exit status 0" test $? -eq 0
book=$fixtures/gradebook/gradebook.csv
last=$(grep -E '^  [0-9]+\.[0-9]+ ' "$fixtures/grader-correct.txt" | tail -n 1 | awk '{ print $1 }') # the course's last exercise
check "grade-all: a header with every exercise and the total" has "$book" "^student,1.1,1.2,.*,$last,total$"
check "grade-all: alice full marks, bob 6, carol 0" \
    sh -c "grep -q '^alice,.*,$total\$' '$book' && grep -q '^bob,.*,6\$' '$book' && grep -q '^carol,.*,0\$' '$book'"
check "grade-all: the row after the header is the most points there are, labelled Points Possible (not a student)" \
    sh -c "sed -n 2p '$book' | grep -q '^Points Possible,2,3,.*,$total\$' && [ \"\$(sed -n 2p '$book' | cut -d, -f2-)\" = \"\$(grep '^alice,' '$book' | cut -d, -f2-)\" ]"
states=$fixtures/gradebook/statuses.csv
show=$states
check "grade-all: statuses.csv tells TODO, wrong, crashed and passed apart, in the gradebook's columns" \
    sh -c "grep -q '^bob,TODO,wrong,crashed: signal 11 (Segmentation fault),timed out,exited early,' '$states' &&
        grep -q '^alice,passed,passed,' '$states' && ! grep '^alice,' '$states' | grep -q -v -E '^alice(,passed)+\$' &&
        [ \"\$(head -n 1 '$states'),total\" = \"\$(head -n 1 '$book')\" ]"
check "grade-all: a name with a comma is quoted (RFC 4180)" has "$book" '^"lee, ann",0,.*,0$'
check "grade-all: every row has as many fields as the header" \
    sh -c "[ \$(sed 's/\"[^\"]*\"/x/g' '$book' | awk -F, '{ print NF }' | sort -u | wc -l) -eq 1 ]"
check "grade-all: each student's results.json" test -s "$fixtures/gradebook/bob/results.json"
check "grade-all: a hidden directory is skipped, and the output says so" has "$fixtures/grade-all.txt" "skipped .hidden"
check "grade-all: the gradebook directory it made is the grader's alone (700)" test "$(stat -c %a "$fixtures/gradebook")" = 700
grade grader-results-dir "$fixtures/correct" --exercise 1.2 --results "$fixtures/results-made-here/r.json"
check "a results directory that grade.sh made is the grader's alone (700)" test "$(stat -c %a "$fixtures/results-made-here")" = 700
later=$fixtures/later
mkdir -p "$later/dave"
BUILD=$build MAKE=$make sh tests/grade-all.sh --submissions "$later" --out "$fixtures/gradebook" >"$fixtures/grade-all-later.txt" 2>&1
check "grade-all: a later run into the same directory lists only its own students" \
    sh -c "grep -q '^dave,' '$book' && ! grep -q -e '^alice,' -e '^bob,' '$book' && [ \$(wc -l <'$book') -eq 3 ] &&
        [ \$(wc -l <'$states') -eq 2 ]"
# one lesson: its exercises are the gradebook's columns
mkdir -p "$fixtures/one-lesson"
cp -R tests/grading/fixtures/undeclared "$fixtures/one-lesson/erin"
$make --no-print-directory -s BUILD="$build" grade-all SUBMISSIONS="$fixtures/one-lesson" GRADEBOOK="$fixtures/gradebook-2" LESSON=2 \
    >"$fixtures/grade-all-lesson.txt" 2>&1
show=$fixtures/grade-all-lesson.txt
check "grade-all LESSON=2: lesson 2's columns only, its points, erin's statuses" \
    sh -c "[ $? -eq 0 ] && printf 'student,2.1,2.2,2.3,2.4,total\nPoints Possible,2,3,4,2,11\nerin,0,0,0,0,0\n' | cmp -s - '$fixtures/gradebook-2/gradebook.csv' &&
        grep -q '^erin,did not compile,did not compile,did not compile,did not compile$' '$fixtures/gradebook-2/statuses.csv'"

# ---- SANITIZE=1: out-of-bounds writes that give the right numbers ------------------------------
if [ "${GRADER_SKIP_SANITIZE:-0}" = 1 ]; then
    echo "skip - SANITIZE=1 grading (GRADER_SKIP_SANITIZE=1)"
else
    BUILD=$build-sanitize MAKE=$make SANITIZE=1 sh tests/grade.sh --submission tests/grading/fixtures/mixed \
        --name grader-sanitize --exercise 2.3 >"$fixtures/grader-sanitize.txt" 2>&1
    check "SANITIZE=1: exit 1" test $? -eq 1
    check "SANITIZE=1: 2.3 (past a malloc'd array) is a memory error" row "$fixtures/grader-sanitize.txt" 2.3 "memory error$"
    BUILD=$build-sanitize MAKE=$make SANITIZE=1 sh tests/grade.sh --submission tests/grading/fixtures/sneaky \
        --name grader-sanitize-arena --exercise 2.4 >"$fixtures/grader-sanitize-arena.txt" 2>&1
    check "SANITIZE=1: 2.4 (past a tensor's data, in the arena) is a memory error" \
        row "$fixtures/grader-sanitize-arena.txt" 2.4 "memory error$"
    # stores through NULL: a memory error, and the message is the sanitizer's line, naming the
    # store's line of the file (UBSan's "store to null pointer"; ASan's SEGV, for one past NULL)
    BUILD=$build-sanitize MAKE=$make SANITIZE=1 sh tests/grade.sh --submission tests/grading/fixtures/sneaky \
        --name grader-sanitize-null --lesson 5 >"$fixtures/grader-sanitize-null.txt" 2>&1
    null_store=$(grep -n 'the NULL store' tests/grading/fixtures/sneaky/lessons/5-gather/exercises.c | cut -d: -f1)
    past_null=$(grep -n 'the store past NULL' tests/grading/fixtures/sneaky/lessons/5-gather/exercises.c | cut -d: -f1)
    show=$fixtures/grader-sanitize-null.txt
    # (clang's UBSan leaves a volatile store to ASan, whose stack has no lines in the sandbox)
    check "SANITIZE=1: 5.3's store through NULL is a memory error, quoting the sanitizer: null pointer, exercises.c:$null_store" \
        sh -c "grep -A 1 -E '^  5.3 .* memory error$' '$fixtures/grader-sanitize-null.txt' | tail -n 1 | grep -q -E \
            '^ *(lessons/5-gather/exercises.c:$null_store:[0-9]+: runtime error: store to null pointer|SEGV on unknown address 0x0+ \(a WRITE\)( in ex5_3_gather_rows_checked lessons/5-gather/exercises.c:$null_store)?) '"
    show=$fixtures/grader-sanitize-null.txt
    check "SANITIZE=1: 5.4's store past NULL too: SEGV on unknown address 0x...40 (a WRITE), exercises.c:$past_null" \
        sh -c "grep -A 1 -E '^  5.4 .* memory error$' '$fixtures/grader-sanitize-null.txt' | tail -n 1 |
            grep -q -E 'SEGV on unknown address 0x0*40 \(a WRITE\) in ex5_4_sentence_vector lessons/5-gather/exercises.c:$past_null|exercises.c:$past_null:[0-9]+: runtime error: .*null pointer'"
fi

# ---- the handout -----------------------------------------------------------------------------
# Made from a commit of this working tree, in a repository of its own: the handout packs
# commits only, and the one under test is the one here, committed or not.
if command -v git >/dev/null 2>&1; then
    repo=$fixtures/handout-repo
    mkdir -p "$repo"
    { git ls-files -c -o --exclude-standard 2>/dev/null || find . -type f ! -path './.git/*' ! -path './build*'; } |
        while IFS= read -r file; do [ -f "$file" ] && echo "$file"; done | tar -cf - -T - | tar -xf - -C "$repo"
    (cd "$repo" && git init -q && git add -A &&
        git -c user.name=grader -c user.email=grader@example.invalid commit -q -m "the handout's test") >/dev/null 2>&1
    commit=$(cd "$repo" && git rev-parse --short HEAD)
    (cd "$repo" && sh tests/handout.sh build/handout) >"$fixtures/handout.txt" 2>&1
    check "handout: the archive exists" test -s "$repo/build/handout/course-handout.tar.gz"
    check "handout: it says which commit it packed" has "$fixtures/handout.txt" "commit $commit"
    check "handout: no warning when the working tree is clean" sh -c "! grep -q warning '$fixtures/handout.txt'"
    unpacked=$fixtures/unpacked
    mkdir -p "$unpacked"
    tar -xzf "$repo/build/handout/course-handout.tar.gz" -C "$unpacked"
    check "handout: no solutions.c in it" sh -c "! find '$unpacked' -name solutions.c | grep -q ."
    check "handout: no grader fixtures in it" test ! -d "$unpacked/course/tests/grading"
    check "handout: none of the course's CI (.ci/, .github/), which a student's repository would run on every push" \
        sh -c "[ ! -e '$unpacked/course/.ci' ] && [ ! -e '$unpacked/course/.github' ]"
    echo "uncommitted-0x7f3a" >"$repo/lessons/1-broadcast/uncommitted.txt"
    echo "/* uncommitted-0x7f3a */" >>"$repo/lessons/1-broadcast/exercises.c"
    (cd "$repo" && sh tests/handout.sh build/handout-dirty) >"$fixtures/handout-dirty.txt" 2>&1
    check "handout: uncommitted changes get a warning ..." has "$fixtures/handout-dirty.txt" "warning: the working tree has changes"
    check "handout: ... and stay out of it" sh -c "! tar -xzOf '$repo/build/handout-dirty/course-handout.tar.gz' | grep -q uncommitted-0x7f3a"
    # as a student would run it: none of this make's variables (BUILD, CC, ...) passed down
    (cd "$unpacked/course" && env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKE make test) \
        >"$fixtures/handout-test.txt" 2>&1
    check "handout: make test passes in the unpacked handout" test $? -eq 0
    check "handout: make test there says nothing of reference solutions (it has none)" \
        sh -c "! grep -q -i 'solutions' '$fixtures/handout-test.txt'"
    # grading needs no solutions: an autograder can be made from the handout
    correct=$(cd "$fixtures/correct" && pwd)
    (cd "$unpacked/course" && env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKE \
        make grade SUBMISSION="$correct" EXERCISE=1.2) >"$fixtures/handout-grade.txt" 2>&1
    check "handout: make grade works in it (no solutions needed)" test $? -eq 0
else
    echo "skip - the handout (no git)"
fi

exit $failed
