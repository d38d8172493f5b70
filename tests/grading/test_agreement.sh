#!/bin/sh
# test_agreement.sh - the grader and `make test` give every known-wrong answer the same verdict,
# with a message that names the mistake (make test-grader runs it).
#
# tests/grading/wrong/N-topic.c holds wrong versions of lesson N's exercises. Each is a whole
# function (with any helper it needs before it) after a line of the form
#     /* wrong ID: the mistake | expect: TEXT */
# The file's #include lines go at the top of every round. Round r answers each exercise with
# its r-th wrong version and every other one with solutions.c. That file runs
# in-process, linked into the lesson's tests as `make lessonN test` links a student's file, and
# through the grader (tests/grade.sh, sandboxed); for every exercise both must give the same
# verdict (passed, wrong, crashed, ...), each wrong version must fail, and both messages must
# contain TEXT: what a student needs to read to find the mistake.
#
#   sh tests/grading/test_agreement.sh [N...]     lessons N only (default: every corpus file)
# Prints "ok - ..." or "FAIL - ..." per wrong version; exit status 1 if any check failed.
set -u
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
make=${MAKE:-make}
[ -n "${MAKEFLAGS:-}" ] && MAKEFLAGS=$(printf '%s\n' "$MAKEFLAGS" | sed 's/--jobserver-[a-z]*=[^ ]*//g')
tab=$(printf '\t')
pkg_config=${PKG_CONFIG:-pkg-config}

BUILD=$build $make -s grade-prereqs >/dev/null || { echo "FAIL - could not build the grader"; exit 1; }
eval "$(BUILD=$build $make -s --no-print-directory grade-env)"
check_cflags=$($pkg_config --cflags check) check_libs=$($pkg_config --libs check)
work=$build/agreement # lessonN-roundR: each round's files, made afresh
failed=0
fail() { echo "FAIL - $*"; failed=1; }

# CORPUS ROUND OUT LIST: writes solutions.c with round ROUND's wrong versions to OUT, and
# "ID<TAB>TEXT<TAB>MISTAKE" per wrong version used to LIST
make_round() {
    { grep '^#include' "$1"; echo; } >"$3" # what the wrong versions need
    awk -v round="$2" -v list="$4" '
        FNR == 1 { file++ }
        file == 1 && /^#include/ { next }
        file == 1 {
            if (match($0, /^\/\* wrong [0-9]+\.[0-9]+: /)) {
                head = substr($0, RLENGTH + 1)
                id = substr($0, 10, RLENGTH - 11)
                cur = ++count[id] == round ? id : ""
                if (cur != "") {
                    sub(/ *\*\/ *$/, "", head)
                    k = index(head, " | expect: ")
                    printf "%s\t%s\t%s\n", id, k ? substr(head, k + 11) : "", k ? substr(head, 1, k - 1) : head > list
                }
            }
            if (cur != "") text[cur] = text[cur] $0 "\n"
            next
        }
        skipping { if ($0 == "}") skipping = 0; next }
        /^[A-Za-z].*ex[0-9]+_[0-9]+_[A-Za-z0-9_]*\(/ && $0 !~ /;[ \t]*$/ {
            match($0, /ex[0-9]+_[0-9]+_/)
            id = substr($0, RSTART + 2, RLENGTH - 3)
            sub(/_/, ".", id)
            if (id in text) {
                printf "%s", text[id]
                skipping = $0 !~ /}[ \t]*$/
                next
            }
        }
        { print }' "$1" "$5" >>"$3"
}

lessons=${*:-$(ls tests/grading/wrong | sed -n 's/^\([0-9]*\)-.*\.c$/\1/p')}
for n in $lessons; do
    corpus=$(ls tests/grading/wrong/"$n"-*.c 2>/dev/null)
    [ -f "$corpus" ] || { fail "lesson $n: no tests/grading/wrong/$n-*.c"; continue; }
    dir=lessons/$(basename "$corpus" .c)
    includes="-I$dir -Icommon -Itests" # the lesson's own exercises.h first, as beside lessons/N/exercises.c
    for d in lessons/*/; do # lesson N and the ones before it, as make compiles lesson N
        d=${d%/} number=${d#lessons/}
        [ "${number%%-*}" -le "$n" ] && includes="$includes -I$d"
    done
    rounds=$(sed -n 's/^\/\* wrong \([0-9]*\.[0-9]*\): .*/\1/p' "$corpus" | sort | uniq -c | awk '$1 > m { m = $1 } END { print m + 0 }')
    r=1
    while [ "$r" -le "$rounds" ]; do
        at=$work/lesson$n-round$r
        rm -rf "$at"
        mkdir -p "$at/submission/$dir"
        file=$at/submission/$dir/exercises.c
        make_round "$corpus" "$r" "$file" "$at/list.tsv" "$dir/solutions.c"
        # in-process, as make lessonN test runs a student's file
        if ! $CC $STUDENT_FLAGS $check_cflags $includes -c "$file" -o "$at/exercises.o" >"$at/compile.log" 2>&1 ||
            ! $CC $STUDENT_FLAGS "$build/obj/$dir/test_exercises.o" "$at/exercises.o" "$build/obj/tests/harness.o" \
                "$build/obj/tests/remote.o" "$build/libcourse.a" $check_libs $LIBS -o "$at/test_exercises" >>"$at/compile.log" 2>&1; then
            fail "lesson $n round $r: the wrong versions do not compile ($at/compile.log)"
            r=$((r + 1))
            continue
        fi
        "$at/test_exercises" --results "$at/in-process.tsv" >"$at/in-process.log" 2>&1
        # graded
        BUILD=$build MAKE=$make sh tests/grade.sh --submission "$at/submission" --lesson "$n" --name "agreement-$n-$r" \
            --results "$at/results/results.json" >"$at/graded.txt" 2>&1
        # the grader's verdict and message per exercise, from results.json (one test a line)
        sed -n 's/^ *{"name": "\([0-9.]*\) .*"status": "\([a-z]*\)", "output": "\(.*\)"}[,]*$/\1\t\2\t\3/p' \
            "$at/results/results.json" >"$at/graded.tsv" 2>/dev/null
        while IFS=$tab read -r line id _ _ kind _ message; do
            [ "$line" = exercise ] || continue
            graded=$(awk -F "$tab" -v id="$id" '$1 == id { print $3 }' "$at/graded.tsv")
            wrong=$(awk -F "$tab" -v id="$id" '$1 == id' "$at/list.tsv")
            expect=$(printf '%s' "$wrong" | cut -f 2) mistake=$(printf '%s' "$wrong" | cut -f 3)
            case $kind in
            passed) want=passed ;; wrong) want=wrong ;; crashed) want=crashed ;; timeout) want="timed out" ;;
            exited) want="exited early" ;; output) want="too much output" ;; memory) want="memory error" ;; *) want=$kind ;;
            esac
            what="$id ${mistake:-(solutions.c)}"
            if [ -z "$graded" ]; then
                fail "$what: make test says $kind, the grader says nothing ($at/graded.txt)"
            elif [ "${graded#"$want"}" = "$graded" ]; then
                fail "$what: make test says $kind, the grader: $(printf '%s' "$graded" | cut -c 1-300)"
            elif [ -n "$wrong" ] && [ "$kind" = passed ]; then
                fail "$what: passes, in make test and in the grader"
            elif [ -z "$wrong" ] && [ "$kind" != passed ]; then
                fail "$what: solutions.c's answer fails, in make test and in the grader: $(printf '%s' "$message" | cut -c 1-300)"
            elif [ -n "$expect" ] && { [ "${message#*"$expect"}" = "$message" ] || [ "${graded#*"$expect"}" = "$graded" ]; }; then
                fail "$what: the message does not say \"$expect\": $(printf '%s' "$message" | cut -c 1-400)"
            elif [ -n "$wrong" ]; then
                echo "ok - $what: $kind, in make test and in the grader"
            fi
        done <"$at/in-process.tsv"
        # every wrong version was reported on (a round that lost one says nothing of it above)
        while IFS=$tab read -r id _ mistake; do
            awk -F "$tab" -v id="$id" '$1 == "exercise" && $2 == id { found = 1 } END { exit !found }' "$at/in-process.tsv" ||
                fail "$id $mistake: make test reported nothing on it ($at/in-process.log)"
        done <"$at/list.tsv"
        r=$((r + 1))
    done
done
# A right answer left under its EXERCISE_TODO(); line: TODO in both, and make test says to delete
# the line (solutions.c's 3.2 with the line put back at the top of its body)
case " $lessons " in *" 3 "*)
    at=$work/todo-left-in
    rm -rf "$at"
    mkdir -p "$at/submission/lessons/3-softmax"
    file=$at/submission/lessons/3-softmax/exercises.c
    awk '{ print } /^void ex3_2_softmax_row\(/ { print "    EXERCISE_TODO();" }' lessons/3-softmax/solutions.c >"$file"
    includes="-Ilessons/3-softmax -Icommon -Itests -Ilessons/1-broadcast -Ilessons/2-reduce"
    if $CC $STUDENT_FLAGS $check_cflags $includes -c "$file" -o "$at/exercises.o" >"$at/compile.log" 2>&1 &&
        $CC $STUDENT_FLAGS "$build/obj/lessons/3-softmax/test_exercises.o" "$at/exercises.o" "$build/obj/tests/harness.o" \
            "$build/obj/tests/remote.o" "$build/libcourse.a" $check_libs $LIBS -o "$at/test_exercises" >>"$at/compile.log" 2>&1; then
        "$at/test_exercises" --results "$at/in-process.tsv" >"$at/in-process.log" 2>&1
        BUILD=$build MAKE=$make sh tests/grade.sh --submission "$at/submission" --lesson 3 --name todo-left-in \
            --results "$at/results/results.json" >"$at/graded.txt" 2>&1
        row=$(awk -F "$tab" '$1 == "exercise" && $2 == "3.2"' "$at/in-process.tsv")
        if [ "$(printf '%s' "$row" | cut -f 4)" != TODO ] || [ "${row#*Delete the line}" = "$row" ]; then
            fail "3.2 answered under its EXERCISE_TODO(); line: make test says: $(printf '%s' "$row" | cut -f 4,7)"
        elif ! grep -q '"name": "3.2 [^"]*", "score": 0, .*"status": "failed", "output": "TODO' "$at/results/results.json"; then
            fail "3.2 answered under its EXERCISE_TODO(); line: the grader does not give it 0 points as TODO ($at/results/results.json)"
        else
            echo "ok - 3.2 answered under its EXERCISE_TODO(); line: TODO in both, and make test says to delete the line"
        fi
    else
        fail "3.2 answered under its EXERCISE_TODO(); line: does not compile ($at/compile.log)"
    fi
    ;;
esac
exit $failed
