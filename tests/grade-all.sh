#!/bin/sh
# grade-all.sh - grades every submission in a directory and writes a gradebook.
#
#   tests/grade-all.sh --submissions DIR [--out DIR]
#
# DIR holds one subdirectory per student, each mirroring the course layout. For each student
# it runs tests/grade.sh and keeps OUT/STUDENT/results.json (Gradescope format), summary.tsv
# and report.txt (the table). Then it writes OUT/gradebook.csv: student, one column per
# exercise (points earned), total. A submission that cannot be graded at all gets "error" in
# its row and never stops the others. Exit status 0 if every student was graded.
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
mkdir -p "$out"
tab=$(printf '\t')
status=0
students=0
for sub in "$submissions"/*/; do
    [ -d "$sub" ] || continue
    student=$(basename "$sub")
    students=$((students + 1))
    mkdir -p "$out/$student"
    rm -f "$out/$student/summary.tsv"
    sh tests/grade.sh --submission "$sub" --name "$student" --results "$out/$student/results.json" \
        >"$out/$student/report.txt" 2>&1
    code=$?
    if [ $code -ge 2 ] || [ ! -s "$out/$student/summary.tsv" ]; then
        echo "$student: could not be graded (see $out/$student/report.txt)"
        status=1
    else
        printf '%s: %s\n' "$student" "$(grep -E '^  total' "$out/$student/report.txt" | awk '{ print $2, $3, $4 }')"
    fi
done
[ $students -gt 0 ] || { echo "grade-all.sh: no submissions in $submissions" >&2; exit 2; }

# The gradebook: the exercise columns come from the first complete summary.
awk -F "$tab" -v out="$out" '
    FNR == 1 { student = FILENAME; sub(/\/summary\.tsv$/, "", student); sub(/.*\//, "", student); students[++n] = student }
    {
        if (!($1 in seen)) { seen[$1] = 1; ids[++m] = $1 }
        earned[student, $1] = $2; total[student] += $2
    }
    END {
        printf "student"
        for (j = 1; j <= m; j++) printf ",%s", ids[j]
        printf ",total\n"
        for (i = 1; i <= n; i++) {
            printf "%s", students[i]
            for (j = 1; j <= m; j++) printf ",%s", earned[students[i], ids[j]]
            printf ",%d\n", total[students[i]]
        }
    }' "$out"/*/summary.tsv >"$out/gradebook.csv" 2>/dev/null
for sub in "$submissions"/*/; do # students that could not be graded still get a row
    student=$(basename "$sub")
    [ -s "$out/$student/summary.tsv" ] || echo "$student,error" >>"$out/gradebook.csv"
done
echo "gradebook: $out/gradebook.csv"
exit $status
