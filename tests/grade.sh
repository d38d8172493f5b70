#!/bin/sh
# grade.sh - grades the exercises of one submission. `make grade` and `make grade-all` call it.
#
#   tests/grade.sh [--submission DIR] [--exercise ID] [--results FILE] [--name NAME]
#
# DIR mirrors the course layout (DIR/lessons/N-topic/exercises.c); only those files are taken
# from it. The library, the tests and the points are the course's, built here. Each exercise
# runs in its own process (--only ID), with the harness's time limit and an output cap, so a
# crash, a hang, exit(), a flood of output or (with SANITIZE=1) a memory error marks that
# exercise only. A lesson whose file does not compile or link costs that lesson only.
#
# Prints a table (id, title, points, status) and the total; writes a Gradescope results.json
# to FILE and a tab-separated summary next to it (summary.tsv: id, earned, possible, status).
# Exit status: 0 only if every graded exercise passed; 1 otherwise; 2 on a usage error.
set -u
submission=.
only=
results=
name=
while [ $# -gt 0 ]; do
    case $1 in
    --submission) submission=$2; shift 2 ;;
    --exercise) only=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    *) echo "grade.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
build=${BUILD:-build}
make=${MAKE:-make}
max_output=${GRADE_MAX_OUTPUT:-1000000} # bytes a single exercise may print
[ -d "$submission" ] || { echo "grade.sh: submission $submission is not a directory" >&2; exit 2; }
[ -n "$name" ] || name=$(basename "$(cd "$submission" && pwd)")
[ -n "$results" ] || results=$build/grade/$name/results.json
work=$build/grade/$name
rm -rf "$work"
mkdir -p "$work" "$(dirname "$results")"
tab=$(printf '\t')

# The course's side: the library, the harness and each lesson's test object.
# BUILD and SANITIZE go on make's command line: they must win over whatever the calling make
# passed down in MAKEFLAGS
if ! $make --no-print-directory -s BUILD="$build" SANITIZE="${SANITIZE:-}" grade-prereqs >"$work/prereqs.log" 2>&1; then
    echo "grade.sh: the course itself does not build:" >&2
    tail -n 20 "$work/prereqs.log" >&2
    exit 2
fi
eval "$($make --no-print-directory -s BUILD="$build" SANITIZE="${SANITIZE:-}" grade-env)" # CC, COMPILE_FLAGS, PLAIN_FLAGS, LINK_FLAGS, LIBS, OBJ
if [ "${SANITIZE:-0}" = 1 ]; then
    # a sanitizer report makes the test exit with 87, which the harness calls a memory error
    export ASAN_OPTIONS=exitcode=87:detect_leaks=0 UBSAN_OPTIONS=exitcode=87:halt_on_error=1:print_stacktrace=1
fi

rows=$work/rows.tsv # id, points, kind, title, message
: >"$rows"
: >"$work/notes.tsv"
found=
for dir in lessons/[1-9]-*; do
    lesson=${dir#lessons/}
    n=${lesson%%-*}
    case $only in "" | "$n".*) ;; *) continue ;; esac
    out=$work/lesson$n
    mkdir -p "$out"
    # the exercise list and points come from the course's own tests (linked against stubs)
    "$build/lesson$n/list_exercises" --list >"$out/list.tsv" ||
        { echo "grade.sh: cannot list lesson $n's exercises" >&2; exit 2; }
    if [ -n "$only" ]; then
        awk -F "$tab" -v id="$only" '$1 == id' "$out/list.tsv" >"$out/only.tsv"
        mv "$out/only.tsv" "$out/list.tsv"
        [ -s "$out/list.tsv" ] || continue
    fi
    found=1

    src=$submission/$dir/exercises.c
    verdict= # empty, or the kind and message that every exercise of this lesson gets
    if [ ! -f "$src" ]; then
        verdict="todo${tab}no $dir/exercises.c in the submission"
    elif ! $CC -I"$dir" $COMPILE_FLAGS -c "$src" -o "$out/exercises.o" >"$out/compile.log" 2>&1; then  # the lesson's exercises.h first
        verdict="compile${tab}$(grep -m 1 -E 'error' "$out/compile.log" | tr '\t' ' ')"
    elif $CC -I"$dir" $PLAIN_FLAGS -c "$src" -o "$out/plain.o" >/dev/null 2>&1 && # without sanitizers, which add constructors
        objdump -h "$out/plain.o" 2>/dev/null | grep -q -E '\.(init|fini)_array|\.ctors|\.dtors'; then
        # code that runs before or after the tests, in the process that reports the results
        verdict="rejected${tab}$dir/exercises.c defines a constructor or destructor, code that runs outside the tests: not graded"
    elif ! $CC $LINK_FLAGS "$OBJ/$dir/test_exercises.o" "$out/exercises.o" "$OBJ/tests/harness.o" \
        "$build/libcourse.a" $LIBS -o "$out/test_exercises" >"$out/link.log" 2>&1; then
        verdict="compile${tab}$(grep -m 1 -E 'error|undefined reference|multiple definition' "$out/link.log" | tr '\t' ' ')"
    fi
    # For the instructor: which of the lesson's own library functions the file calls. Some
    # exercises are compositions of them; others ask for one to be written by hand.
    if [ -f "$out/exercises.o" ] && [ -z "$verdict" ]; then
        for object in "$OBJ/$dir"/*.o; do
            case ${object##*/} in test_* | walkthrough.o | exercises.o | solutions.o | plot.o) continue ;; esac
            nm --defined-only -g "$object" 2>/dev/null | awk '{ print $3 }'
        done | sort -u >"$out/library.txt"
        nm -u "$out/exercises.o" 2>/dev/null | awk '{ print $2 }' | sort -u | comm -12 - "$out/library.txt" |
            tr '\n' ' ' >"$out/calls.txt"
        [ -s "$out/calls.txt" ] && echo "$dir$tab$(cat "$out/calls.txt")" >>"$work/notes.tsv"
    fi

    while IFS="$tab" read -r id points title; do
        if [ -n "$verdict" ]; then
            printf '%s\t%s\t%s\t%s\n' "$id" "$points" "${verdict%%"$tab"*}" "$title${tab}${verdict#*"$tab"}" >>"$rows"
            continue
        fi
        : >"$out/$id.tsv"
        "$out/test_exercises" --only "$id" --max-output "$max_output" --results "$out/$id.tsv" \
            --label "exercise $id" >"$out/$id.log" 2>&1 </dev/null
        line=$(awk -F "$tab" '$1 == "exercise"' "$out/$id.tsv")
        if [ -z "$line" ]; then
            printf '%s\t%s\tcrashed\t%s\tthe test program stopped before reporting (log: %s)\n' "$id" "$points" "$title" \
                "$out/$id.log" >>"$rows"
        else # a failure that is not a plain wrong answer points at its log
            echo "$line" | awk -F "$tab" -v OFS="$tab" -v logfile="$out/$id.log" '{
                if ($5 != "passed" && $5 != "todo" && $5 != "wrong") $7 = $7 " (log: " logfile ")"
                print $2, $3, $5, $6, $7 }' >>"$rows"
        fi
    done <"$out/list.tsv"
done
[ -n "$found" ] || { echo "grade.sh: no exercise ${only:-at all} in this course" >&2; exit 2; }
[ -s "$rows" ] || { echo "grade.sh: no exercise could be graded (see $work)" >&2; exit 2; }

# ---- the report ---------------------------------------------------------------------------
awk -F "$tab" -v results="$results" -v summary="$(dirname "$results")/summary.tsv" -v who="$name" '
    function status(kind, message) {
        if (kind == "passed") return "passed"
        if (kind == "todo") return "TODO"
        if (kind == "wrong") return "wrong"
        if (kind == "crashed") { if (match(message, /signal [0-9]+( \([^)]*\))?/)) return "crashed: " substr(message, RSTART, RLENGTH); return "crashed" }
        if (kind == "timeout") return "timed out"
        if (kind == "exited") return "exited early"
        if (kind == "output") return "too much output"
        if (kind == "memory") return "memory error"
        if (kind == "compile") return "did not compile"
        if (kind == "rejected") return "rejected"
        return kind
    }
    function json(s) {
        gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, " ", s); gsub(/[\001-\037]/, " ", s)
        return "\"" s "\""
    }
    {
        id[NR] = $1; points[NR] = $2; kind[NR] = $3; title[NR] = $4; message[NR] = $5
        earned[NR] = $3 == "passed" ? $2 : 0
        total += earned[NR]; possible += $2
        if ($3 != "passed") failed = 1
    }
    END {
        printf "grading %s\n\n", who
        printf "  %-5s %-46s %-9s %s\n", "id", "title", "points", "status"
        for (i = 1; i <= NR; i++) {
            s = status(kind[i], message[i])
            printf "  %-5s %-46s %2d / %-3d %s\n", id[i], title[i], earned[i], points[i], s
            if (kind[i] != "passed" && kind[i] != "todo" && message[i] != "")
                printf "        %s\n", substr(message[i], 1, 300)
        }
        printf "\n  %-52s %2d / %d\n", "total", total, possible
        printf "{\n  \"score\": %d,\n  \"max_score\": %d,\n  \"tests\": [\n", total, possible > results
        for (i = 1; i <= NR; i++) {
            out = status(kind[i], message[i]) (message[i] != "" ? ": " message[i] : "")
            printf "    {\"name\": %s, \"score\": %d, \"max_score\": %d, \"status\": \"%s\", \"output\": %s}%s\n",
                json(id[i] " " title[i]), earned[i], points[i], kind[i] == "passed" ? "passed" : "failed", json(out),
                i < NR ? "," : "" > results
            printf "%s\t%d\t%d\t%s\n", id[i], earned[i], points[i], status(kind[i], message[i]) > summary
        }
        printf "  ]\n}\n" > results
        exit failed
    }' "$rows"
status=$?
if [ -s "$work/notes.tsv" ]; then
    echo
    while IFS="$tab" read -r dir calls; do
        echo "  note: $dir/exercises.c calls the lesson's own library: $calls"
    done <"$work/notes.tsv"
    echo "  (fine where an exercise composes library ops, not where it asks for one written by hand)"
fi
echo "  results: $results"
exit $status
