#!/bin/sh
# run.sh - runs the course's test programs and ends with one line per library test program and
# per lesson. Called by `make test` and `make lessonN test`.
#
#   tests/run.sh all     N:topic:dir ...   the library's tests (tests/test_*.c: the tensor core,
#                                          conformance, bad inputs, random testing), each run
#                                          twice: with the fast paths, then with
#                                          COURSE_KERNELS=reference (kernels.h); and per
#                                          lesson: core tests, the student's exercises, the
#                                          reference solutions
#   tests/run.sh student N:topic:dir ...   per lesson: core tests and the student's exercises
#
# A program's output is shown only when something in it failed, and an exercise table only for
# a lesson the student has started (`student` mode: always). V=1 shows everything, with
# Check's own report of every test. The grader's tests are not here: `make test-grader`.
#
# Exit status 1 if a core test fails, a reference solution fails, or an attempted exercise
# fails or does not compile. Exercises still marked TODO do not fail the run.
mode=$1
shift
build=${BUILD:-build}
make=${MAKE:-make}
verbose=${V:-}
emulator=${EMULATOR:-} # a cross build's programs run under it (qemu-aarch64); unquoted, it may be empty
results=$build/results
rm -rf "$results"
mkdir -p "$results"
status=0
tab=$(printf '\t')
[ "$verbose" = 1 ] && export CK_VERBOSITY=verbose

banner() { printf '\n==== %s\n' "$1"; }

# run NAME LABEL PROGRAM ARGS...: runs a test program, keeping its results under NAME, its
# output in NAME.log and, when it fails, a mark in NAME.failed. The programs run two at a time
# (started with &, then `wait`): each is a process of its own, and the machine has the cores.
run() {
    name=$1
    printf '%s\n' "$2" >"$results/$name.label"
    shift 2
    "$@" --results "$results/$name" >"$results/$name.log" 2>&1 || : >"$results/$name.failed"
    [ -s "$results/$name" ] || { : >"$results/$name.failed"; echo "(the test program stopped before writing its results)" >>"$results/$name.log"; }
}
# show NAME...: once they have run, each program's output, where it failed (or with V=1)
show() {
    for name; do
        [ -e "$results/$name.failed" ] && status=1
        if [ -e "$results/$name.failed" ] || [ "$verbose" = 1 ]; then
            banner "$(cat "$results/$name.label")"
            cat "$results/$name.log"
        fi
    done
}

# field FILE KEY N: field N of the first line of FILE that starts with KEY.
field() { awk -F "$tab" -v key="$2" -v n="$3" '$1 == key { print $n; exit }' "$1" 2>/dev/null; }

# started FILE: has the student attempted any exercise in these results? (A TODO with a message has
# its answer written under the EXERCISE_TODO(); line.)
started() { awk -F "$tab" '$1 == "exercise" && ($4 != "TODO" || $7 != "") { found = 1 } END { exit !found }' "$1" 2>/dev/null; }

# The library's test programs, one per tests/test_NAME.c, each titled by its header comment:
# " * test_NAME.c - TITLE: ..." on its second line.
# The tensor core's tests run first: everything else builds on it.
library_tests() {
    [ "$mode" = all ] || return 0
    [ -f tests/test_tensor.c ] && echo test_tensor
    for src in tests/test_*.c; do [ "$src" = tests/test_tensor.c ] || basename "$src" .c; done
}
title() { sed -n '2s/^ \* [^ ]* - \([^:]*\):.*/\1/p' "tests/$1.c"; }
for name in $(library_tests); do
    run "$name" "$(title "$name"): tests/$name.c" $emulator "$build/tests/$name" &
    run "$name.reference" "$(title "$name") with COURSE_KERNELS=reference: tests/$name.c" \
        env COURSE_KERNELS=reference $emulator "$build/tests/$name" &
    wait
    show "$name" "$name.reference"
done

for spec in "$@"; do
    n=${spec%%:*} rest=${spec#*:}
    topic=${rest%%:*} dir=${rest#*:}
    run "lesson$n.core" "lesson $n ($topic) core tests: $dir/test_$topic.c" $emulator "$build/lesson$n/test_core" &
    if [ "$mode" = all ] && [ -f "$dir/solutions.c" ]; then
        run "lesson$n.reference" "lesson $n ($topic) exercises, reference solutions: $dir/solutions.c" \
            $emulator "$build/lesson$n/test_solutions" --label "lesson $n reference solutions ($dir/solutions.c)" --require-all &
    fi
    student=$results/lesson$n.student
    exercises=$results/lesson$n.exercises
    { # the student's exercises, built and run while the core tests run; shown after them
    if $make --no-print-directory -s "$build/lesson$n/test_exercises" >"$results/lesson$n.build" 2>&1; then
        # the compiler's warnings, without make's own chatter (build lines, jobserver notes)
        grep -v -E '^  (CC|AR|LINK) |^make(\[[0-9]+\])?: ' "$results/lesson$n.build" >"$results/lesson$n.warnings"
        $emulator "$build/lesson$n/test_exercises" --label "lesson $n exercises ($dir/exercises.c)" \
            --results "$student" >"$student.log" 2>&1 || status=1
        if [ "$mode" = student ] || [ "$verbose" = 1 ] || started "$student" || [ ! -s "$student" ]; then
            banner "lesson $n ($topic) exercises, your file: $dir/exercises.c"
            if grep -q 'warning:' "$results/lesson$n.warnings"; then
                echo "the compiler warns about $dir/exercises.c (worth fixing: warnings often point at the bug):"
                grep -A 3 'warning:' "$results/lesson$n.warnings" | head -n 20 | sed 's/^/    /'
            fi
            cat "$student.log"
            [ -s "$student" ] || echo "(the test program stopped before writing its results)"
        fi
    else
        banner "lesson $n ($topic) exercises, your file: $dir/exercises.c"
        echo "$dir/exercises.c did not compile:"
        # GNU ld's words, then macOS's ("Undefined symbols", "_name", referenced from:, "duplicate symbol")
        grep -m 8 -E 'error|undefined reference|multiple definition|Undefined symbols|duplicate symbol|^ +"_' \
            "$results/lesson$n.build" | sed 's/^/    /'
        # A call without its prototype: name the header that declares the function (the
        # compiler may quote names with the locale's quotation marks; undeclared.sh reads ' ').
        # (printf spells the two marks: macOS's sed reads no \x escapes)
        sed "s/$(printf '\342\200\230')/'/g; s/$(printf '\342\200\231')/'/g" "$results/lesson$n.build" >"$results/lesson$n.ascii"
        sh tests/undeclared.sh "$results/lesson$n.ascii" common/*.h lessons/*/*.h | sed 's/^/    /'
        echo "compile" >"$student"
        status=1
    fi
    } >"$exercises"
    wait
    show "lesson$n.core"
    cat "$exercises"
    [ "$mode" = all ] && [ -f "$dir/solutions.c" ] && show "lesson$n.reference"
done

# ---- summary: one line per library test program and per lesson ------------------------------
[ "$verbose" = 1 ] && banner summary || echo

core_line() { # FILE [NOUN] -> "25/25 core tests passed"
    passed=$(field "$1" core 2) total=$(field "$1" core 3) noun=${2:-core tests}
    if [ -n "$total" ]; then echo "$passed/$total $noun passed"; else echo "$noun did not finish"; fi
}
exercise_counts() { # FILE -> "3 done, 2 TODO, 0 failed (9/15 points)"
    awk -F "$tab" '$1 == "exercise" {
            total += $3
            if ($4 == "done") { done++; points += $3 } else if ($4 == "TODO") todo++; else failed++
        }
        END { printf "%d done, %d TODO, %d failed (%d/%d points)", done, todo, failed, points, total }' "$1"
}

for name in $(library_tests); do
    echo "$(title "$name"): $(core_line "$results/$name" tests); with COURSE_KERNELS=reference: $(core_line "$results/$name.reference" tests)"
done
for spec in "$@"; do
    n=${spec%%:*} rest=${spec#*:}
    topic=${rest%%:*}
    line="lesson $n ($topic): $(core_line "$results/lesson$n.core")"
    student=$results/lesson$n.student
    if [ "$(cat "$student" 2>/dev/null)" = compile ]; then
        line="$line; exercises: did not compile"
    elif [ -s "$student" ]; then
        line="$line; exercises: $(exercise_counts "$student")"
    else
        line="$line; exercises: the test program did not finish"
    fi
    dir=${rest#*:}
    if [ "$mode" = all ] && [ ! -f "$dir/solutions.c" ]; then
        : # the student handout has no reference solutions
    elif [ "$mode" = all ]; then
        reference=$results/lesson$n.reference
        if [ -s "$reference" ]; then
            line="$line; reference solutions: $(awk -F "$tab" '$1 == "exercise" { n++; if ($4 == "done") ok++ }
                END { printf "%d/%d passed", ok, n }' "$reference")"
        else
            line="$line; reference solutions: did not finish"
        fi
    fi
    echo "$line"
done
exit $status
