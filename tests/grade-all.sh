#!/bin/sh
# grade-all.sh - grades every submission in a directory and writes a gradebook.
#
#   tests/grade-all.sh --submissions DIR [--out DIR]
#
# DIR holds one subdirectory per student, each mirroring the course layout. For each student
# it runs tests/grade.sh (each in sandboxes of its own, which can read neither DIR nor OUT) and
# keeps OUT/STUDENT/results.json (Gradescope format), summary.tsv and report.txt (the table). Then it writes OUT/gradebook.csv: student, one column
# per exercise (points earned), total; one row per student of this run, in the order graded;
# a field with a comma, a quote or a line break is quoted as RFC 4180 says (lines end in LF).
# A submission that cannot be graded at all gets "error" in its row and never stops the
# others. Hidden directories (.name) are skipped, and the output says so. Exit status 0 if
# every student was graded.
set -u
submissions=
out=${BUILD:-build}/gradebook
while [ $# -gt 0 ]; do
    case $1 in
    --submissions) submissions=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "grade-all.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -d "$submissions" ] || { echo "grade-all.sh: $submissions is not a directory" >&2; exit 2; }
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
        >"$out/$student/report.txt" 2>&1
    code=$?
    if [ $code -eq 2 ] && grep -q "refusing to grade for credit" "$out/$student/report.txt"; then
        cat "$out/$student/report.txt" >&2 # no isolation here: the same for every student
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

# The gradebook: a column per exercise of the course, in the course's order.
build=${BUILD:-build}
for dir in lessons/[1-9]-*; do
    n=${dir#lessons/}
    "$build/lesson${n%%-*}/list_exercises" --list | cut -f 1
done >"$out/exercises.txt"
OUT=$out awk '
    function csv(s) { # RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled
        if (s ~ /[",\r\n]/) { gsub(/"/, "\"\"", s); s = "\"" s "\"" }
        return s
    }
    FNR == NR { ids[++m] = $0; next }
    {
        student = $0
        file = ENVIRON["OUT"] "/" student "/summary.tsv"
        delete earned
        total = 0; graded = 0
        while ((getline line < file) > 0) {
            split(line, f, "\t"); earned[f[1]] = f[2]; total += f[2]; graded = 1
        }
        close(file)
        rows[++n] = csv(student)
        if (!graded) { rows[n] = rows[n] ",error"; next }
        for (j = 1; j <= m; j++) rows[n] = rows[n] "," ((ids[j] in earned) ? earned[ids[j]] : "")
        rows[n] = rows[n] "," total
    }
    END {
        printf "student"
        for (j = 1; j <= m; j++) printf ",%s", csv(ids[j])
        printf ",total\n"
        for (i = 1; i <= n; i++) print rows[i]
    }' "$out/exercises.txt" "$students" >"$out/gradebook.csv"
echo "gradebook: $out/gradebook.csv ($(wc -l <"$students" | tr -d ' ') students)"
exit $status
