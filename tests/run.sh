#!/bin/sh
# run.sh - runs the course's test programs and ends with a summary: Check's summary line of
# each program, then one line per lesson. Called by `make test` and `make lessonN test`.
#
#   tests/run.sh all     N:topic:dir ...   the library's tests (tests/test_*.c: the tensor core,
#                                          conformance, bad inputs, random testing), each run
#                                          twice: with the fast paths, then with
#                                          COURSE_KERNELS=reference (kernels.h); and per
#                                          lesson: core tests, the student's exercises, the
#                                          reference solutions
#   tests/run.sh student N:topic:dir ...   per lesson: core tests and the student's exercises
#
# Exit status 1 if a core test fails, a reference solution fails, or an attempted exercise
# fails or does not compile. Exercises still marked TODO do not fail the run.
mode=$1
shift
build=${BUILD:-build}
make=${MAKE:-make}
results=$build/results
rm -rf "$results"
mkdir -p "$results"
status=0
tab=$(printf '\t')

banner() { printf '\n==== %s\n' "$1"; }

# run NAME LABEL PROGRAM ARGS...: runs a test program, keeping its results under NAME.
run() {
    name=$1 label=$2
    shift 2
    banner "$label"
    "$@" --results "$results/$name" || status=1
    [ -s "$results/$name" ] || echo "(the test program stopped before writing its results)"
}

# field FILE KEY N: field N of the first line of FILE that starts with KEY.
field() { awk -F "$tab" -v key="$2" -v n="$3" '$1 == key { print $n; exit }' "$1" 2>/dev/null; }

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
    run "$name" "$(title "$name"): tests/$name.c" "$build/tests/$name"
    run "$name.reference" "$(title "$name") with COURSE_KERNELS=reference: tests/$name.c" \
        env COURSE_KERNELS=reference "$build/tests/$name"
done

for spec in "$@"; do
    n=${spec%%:*} rest=${spec#*:}
    topic=${rest%%:*} dir=${rest#*:}
    run "lesson$n.core" "lesson $n ($topic) core tests: $dir/test_$topic.c" "$build/lesson$n/test_core"

    banner "lesson $n ($topic) exercises, your file: $dir/exercises.c"
    if $make --no-print-directory -s "$build/lesson$n/test_exercises" >"$results/lesson$n.build" 2>&1; then
        # the compiler's warnings, without make's own chatter (build lines, jobserver notes)
        grep -v -E '^  (CC|AR|LINK) |^make(\[[0-9]+\])?: ' "$results/lesson$n.build" >"$results/lesson$n.warnings"
        if grep -q 'warning:' "$results/lesson$n.warnings"; then
            echo "the compiler warns about $dir/exercises.c (worth fixing: warnings often point at the bug):"
            grep -A 3 'warning:' "$results/lesson$n.warnings" | head -n 20 | sed 's/^/    /'
        fi
        "$build/lesson$n/test_exercises" --label "lesson $n exercises ($dir/exercises.c)" \
            --results "$results/lesson$n.student" || status=1
    else
        echo "$dir/exercises.c did not compile:"
        grep -m 8 -E 'error|undefined reference|multiple definition' "$results/lesson$n.build" | sed 's/^/    /'
        echo "compile" >"$results/lesson$n.student"
        status=1
    fi

    if [ "$mode" = all ] && [ -f "$dir/solutions.c" ]; then
        run "lesson$n.reference" "lesson $n ($topic) exercises, reference solutions: $dir/solutions.c" \
            "$build/lesson$n/test_solutions" --label "lesson $n reference solutions ($dir/solutions.c)" --require-all
    fi
done

# The grader's own tests, where the course ships them (not in the student handout). They
# expect plain builds (they make their own sanitized one), so SANITIZE=1 skips them.
if [ "$mode" = all ] && [ -f tests/grading/test_grader.sh ] && [ "${SANITIZE:-}" = 1 ]; then
    banner "the grader: not tested under SANITIZE=1 (its tests build their own sanitized copy)"
elif [ "$mode" = all ] && [ -f tests/grading/test_grader.sh ]; then
    banner "the grader: tests/grading/test_grader.sh"
    BUILD=$build MAKE=$make sh tests/grading/test_grader.sh >"$results/grader.log" 2>&1
    grader=$?
    grep -E '^(ok|FAIL|skip)' "$results/grader.log"
    if [ $grader -ne 0 ]; then
        status=1
        echo "(the grader's tests failed; full log: $results/grader.log)"
    fi
    echo "grader	$grader" >"$results/grader"
fi

# ---- summary ----------------------------------------------------------------------------
banner summary
checks() { # LABEL FILE KEY COLUMN
    line=$(field "$2" "$3" "$4")
    printf '%-40s %s\n' "$1" "${line:-no results: the program did not finish}"
}
for name in $(library_tests); do
    checks "$(title "$name")" "$results/$name" core 4
    checks "$(title "$name"), reference" "$results/$name.reference" core 4
done
for spec in "$@"; do
    n=${spec%%:*}
    checks "lesson $n core tests" "$results/lesson$n.core" core 4
    if [ "$(cat "$results/lesson$n.student" 2>/dev/null)" = compile ]; then
        printf '%-40s %s\n' "lesson $n your exercises" "did not compile"
    else
        checks "lesson $n your exercises" "$results/lesson$n.student" checks 2
    fi
    [ "$mode" = all ] && [ -f "$(echo "$spec" | cut -d: -f3)/solutions.c" ] &&
        checks "lesson $n reference solutions" "$results/lesson$n.reference" checks 2
done
echo

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
        line="$line; reference solutions: not in this handout (skipped)"
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
if [ -f "$results/grader" ]; then
    if [ "$(cut -f2 "$results/grader")" = 0 ]; then echo "grader: its tests passed"; else echo "grader: its tests FAILED"; fi
fi
exit $status
