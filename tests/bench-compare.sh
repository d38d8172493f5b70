#!/bin/sh
# bench-compare.sh - two runs of the benchmarks side by side, row by row, as a markdown table:
#
#   make bench > native.txt; COURSE_KERNELS=portable make bench > portable.txt
#   sh tests/bench-compare.sh native.txt portable.txt
#
# A row is a table line of a benchmark ("  name   1.234 ms ..."), matched by its section (the
# line above the table) and its name; a name that ends with the kernels the run used, "(avx512)"
# or "(portable)", is matched without it. The last column is the second run's time over the
# first's. Rows that only one run has are left out.
set -eu
[ $# -eq 2 ] || { echo "usage: sh tests/bench-compare.sh FIRST SECOND (two outputs of make bench)" >&2; exit 2; }

rows() {
    awk '
        /^kernels: / { kernels = $2 }
        /^==== / { program = substr($0, 6) }
        /^[^ =]/ && !/^(machine|compiler|kernels|memory|target|OpenBLAS|tuned|simd_exp|exp.s)/ { section = $0 }
        /^  / && / ms / {
            line = $0; sub(/^  /, "", line)
            n = split(line, w, /  +/)
            name = w[1]
            for (i = 2; i <= n; i++) if (w[i] ~ / ms$/) { t = w[i]; sub(/ ms$/, "", t) }
            tail = "(" kernels ")"
            if (length(name) > length(tail) && substr(name, length(name) - length(tail) + 1) == tail)
                name = substr(name, 1, length(name) - length(tail) - 1)
            key = program " | " section " | " name
            if (!(key in seen)) { seen[key] = 1; print key "\t" t }
        }' "$1"
}

rows "$1" >"${TMPDIR:-/tmp}/bench-compare.$$.a"
rows "$2" >"${TMPDIR:-/tmp}/bench-compare.$$.b"
trap 'rm -f "${TMPDIR:-/tmp}/bench-compare.$$".*' EXIT
echo "| benchmark | row | $(basename "$1") (ms) | $(basename "$2") (ms) | ratio |"
echo "|---|---|---:|---:|---:|"
awk -F '\t' 'NR == FNR { first[$1] = $2; next }
    ($1 in first) {
        split($1, k, / \| /)
        printf "| %s | %s | %s | %s | %.2f |\n", k[1], k[3], first[$1], $2, $2 / first[$1]
    }' "${TMPDIR:-/tmp}/bench-compare.$$.a" "${TMPDIR:-/tmp}/bench-compare.$$.b"
