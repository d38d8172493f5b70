#!/bin/sh
# grade-all.sh - grades every submission in a directory and writes a gradebook.
#
#   tests/grade-all.sh --submissions DIR [--out DIR] [--lesson N]
#
# DIR holds one subdirectory per student, each mirroring the course layout. For each student
# it runs tests/grade.sh (each in sandboxes of its own, which can read neither DIR nor OUT) and
# keeps OUT/STUDENT/results.json (Gradescope format), summary.tsv and report.txt (the table).
# Then it writes, with a column per exercise graded (every exercise, or lesson N's), in the
# course's order, and a row per student of this run, in the order graded:
#   OUT/gradebook.csv  student, the points earned per exercise, total; its first row after the
#                      header is the most points there are, named "Points Possible" (no student)
#   OUT/statuses.csv   student, each exercise's status as the table says it (passed, TODO,
#                      wrong, crashed: signal 11 (...), timed out, did not compile, ...)
# A field with a comma, a quote or a line break is quoted as RFC 4180 says (lines end in LF).
# A submission that cannot be graded at all gets "error" in its rows and never stops the
# others. Hidden directories (.name) are skipped, and the output says so. Exit status 0 if
# every student was graded, whatever their scores.
set -u
submissions=
out=${BUILD:-build}/gradebook
lesson=
while [ $# -gt 0 ]; do
    case $1 in
    --submissions) submissions=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --lesson) lesson=$2; shift 2 ;;
    *) echo "grade-all.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
sh tests/ensure-deps.sh linux || exit 2
[ -d "$submissions" ] || { echo "grade-all.sh: $submissions is not a directory" >&2; exit 2; }
lessons=$(printf '%s ' lessons/[1-9]-*) # the lessons graded: their exercises are the gradebook's columns
if [ -n "$lesson" ]; then
    lessons=
    case $lesson in *[!0-9]*) ;; *) for dir in lessons/"$lesson"-*; do [ -d "$dir" ] && lessons=$dir; done ;; esac
    [ -n "$lessons" ] || { echo "grade-all.sh: no lesson '$lesson' in this course; its lessons are:" \
        "$(for dir in lessons/[1-9]-*; do n=${dir#lessons/}; printf '%s ' "${n%%-*}"; done)" >&2; exit 2; }
fi
# a gradebook directory made here is yours alone (and hidden from the sandbox, which refuses
# to grade under a uid of its own while it can read it)
[ -d "$out" ] || { mkdir -p "$out" && chmod go= "$out"; }
# Each student is graded by a grade.sh of their own, in sandboxes of their own; none of them may
# read the other submissions or the gradebook (grade.sh checks the sandbox cannot).
GRADE_HIDDEN="$(cd "$submissions" && pwd -P):$(cd "$out" && pwd -P)${GRADE_HIDDEN:+:$GRADE_HIDDEN}"
export GRADE_HIDDEN
newline='
'
status=0
students=$out/students.txt # this run's students, one per line, in order: only they go in the gradebook
: >"$students"
for sub in "$submissions"/.*/; do
    case $sub in */./ | */../) continue ;; esac
    [ -d "$sub" ] && echo "skipped $(basename "$sub"): a hidden directory (rename it without the leading . to grade it)"
done
for sub in "$submissions"/*/; do
    [ -d "$sub" ] || continue
    student=$(basename "$sub")
    case $student in *"$newline"*)
        echo "skipped a directory whose name holds a line break: rename it to grade it"
        status=1
        continue ;;
    esac
    echo "$student" >>"$students"
    rm -rf "${out:?}/${student:?}"
    mkdir -p "$out/$student"
    sh tests/grade.sh --submission "$sub" --name "$student" --results "$out/$student/results.json" \
        ${lesson:+--lesson "$lesson"} >"$out/$student/report.txt" 2>&1
    code=$?
    if [ $code -eq 2 ] && grep -q -e "refusing to grade for credit" -e "the sandbox cannot reach the staging" "$out/$student/report.txt"; then
        cat "$out/$student/report.txt" >&2 # no isolation, or no stage it can reach: the same for every student
        rm -rf "${out:?}/${student:?}"
        exit 2
    fi
    if [ $code -ge 2 ] || [ ! -s "$out/$student/summary.tsv" ]; then
        echo "$student: could not be graded (see $out/$student/report.txt)"
        rm -f "$out/$student/summary.tsv"
        status=1
    else
        printf '%s: %s\n' "$student" "$(grep -E '^  total' "$out/$student/report.txt" | awk '{ print $2, $3, $4 }')"
    fi
done
[ -s "$students" ] || { echo "grade-all.sh: no submissions in $submissions" >&2; exit 2; }

# The gradebook: a column per exercise graded, in the course's order, with its points.
build=${BUILD:-build}
for dir in $lessons; do
    n=${dir#lessons/}
    "$build/lesson${n%%-*}/list_exercises" --list | cut -f 1,2
done >"$out/exercises.tsv"
OUT=$out awk -F '\t' '
    function csv(s) { # RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled
        if (s ~ /[",\r\n]/) { gsub(/"/, "\"\"", s); s = "\"" s "\"" }
        return s
    }
    FNR == NR { ids[++m] = $1; most[m] = $2; possible += $2; next }
    {
        student = $0
        file = ENVIRON["OUT"] "/" student "/summary.tsv"
        delete earned
        delete status
        total = 0; graded = 0
        while ((getline line < file) > 0) {
            split(line, f, "\t"); earned[f[1]] = f[2]; status[f[1]] = f[4]; total += f[2]; graded = 1
        }
        close(file)
        n++
        points[n] = statuses[n] = csv(student)
        if (!graded) { points[n] = points[n] ",error"; statuses[n] = statuses[n] ",error"; next }
        for (j = 1; j <= m; j++) {
            points[n] = points[n] "," ((ids[j] in earned) ? earned[ids[j]] : "")
            statuses[n] = statuses[n] "," ((ids[j] in status) ? csv(status[ids[j]]) : "")
        }
        points[n] = points[n] "," total
    }
    END {
        header = "student"
        for (j = 1; j <= m; j++) { header = header "," csv(ids[j]); most_row = most_row "," most[j] }
        book = ENVIRON["OUT"] "/gradebook.csv"; states = ENVIRON["OUT"] "/statuses.csv"
        print header ",total" > book
        print "Points Possible" most_row "," possible > book
        print header > states
        for (i = 1; i <= n; i++) { print points[i] > book; print statuses[i] > states }
    }' "$out/exercises.tsv" "$students" || { echo "grade-all.sh: could not write the gradebook in $out" >&2; exit 2; }
echo "gradebook: $out/gradebook.csv, statuses: $out/statuses.csv ($(wc -l <"$students" | tr -d ' ') students)"
exit $status
