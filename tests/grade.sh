#!/bin/sh
# grade.sh - grades the exercises of one submission. `make grade` and `make grade-all` call it.
#
#   tests/grade.sh [--submission DIR] [--lesson N] [--exercise ID] [--results FILE] [--name NAME]
#                  [--unsandboxed] [--exit-zero-if-graded]
#
# DIR mirrors the course layout (DIR/lessons/N-topic/exercises.c), or holds exactly one such
# lessons/ directory deeper down; only the exercises.c files are taken from it. Everything the
# student wrote runs in the sandbox (tests/sandbox.c, docs/instructors.md): the compiler and the
# linker on their file, which see the course's headers and library and that file only, and the
# runner, the program their functions run in, which may compute and answer the judge but open
# no file, start no process and signal no one. The judge, the lesson's tests built from the
# course alone, sends each call to the runner and compares what comes back with the expected
# values itself: the verdict is made where the student's code never ran. Each exercise is
# judged in a process of its own (--only ID), each test with a fresh runner.
#
# The first line of the report says what isolation is in effect. Without isolation (no user
# namespaces and not root, or the grader's files readable from the sandbox) it refuses to grade,
# unless --unsandboxed (or GRADE_UNSANDBOXED=1) says the grades are not for credit.
#
# Prints a table (id, title, points, status) and the total; writes a Gradescope results.json
# to FILE and a tab-separated summary next to it (summary.tsv: id, earned, possible, status).
# --lesson N grades lesson N's exercises only, --exercise ID one exercise.
# Exit status: 0 only if every graded exercise passed; 1 otherwise; 2 if it could not grade.
# With --exit-zero-if-graded (make grade, unless STRICT=1), 0 whenever it graded. The last
# line is the score and what the exit status means, or why it could not grade.
#
# Environment: GRADE_MAX_OUTPUT (bytes a test's runner may print, default 1000000),
# GRADE_MAX_EXERCISE_OUTPUT (bytes an exercise's runners may print in all, default 2 MiB),
# GRADE_MAX_SUBMISSION_OUTPUT (bytes every runner of the submission may, default 8 MiB: the
# exercises after it are "not run"), GRADE_MAX_MEMORY (bytes it may take, default 1 GiB), GRADE_TIME_BUDGET (seconds for the whole
# submission, default 300: the exercises not started by then are "not run"), GRADE_SANDBOX
# (namespaces, uid or none: a mode other than the strongest), GRADE_HIDDEN (more paths, separated
# by ':', that the sandbox must not be able to read; grade-all adds the other submissions).
set -u
submission=.
only=
lesson=
results=
name=
unsandboxed=${GRADE_UNSANDBOXED:-0}
zero_if_graded=0
# Why it could not grade, as the last line, with the status that says so (make adds its own
# "Error 2" line after it).
not_graded() { printf 'grade.sh: %s: not graded (exit status 2)\n' "$1" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --submission) submission=$2; shift 2 ;;
    --lesson) lesson=$2; shift 2 ;;
    --exercise) only=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --unsandboxed) unsandboxed=1; shift ;;
    --exit-zero-if-graded) zero_if_graded=1; shift ;;
    *) not_graded "unknown option $1" ;;
    esac
done
platform=$(sh tests/ensure-deps.sh linux 2>&1) || not_graded "$platform"
build=${BUILD:-build}
make=${MAKE:-make}
# The calling make's jobserver is not handed to this script (its recipe has no "+"), so a make
# run here that is told of one warns "jobserver unavailable" at the top of the report.
[ -n "${MAKEFLAGS:-}" ] && MAKEFLAGS=$(printf '%s\n' "$MAKEFLAGS" | sed 's/--jobserver-[a-z]*=[^ ]*//g')
max_output=${GRADE_MAX_OUTPUT:-1000000}
max_exercise_output=${GRADE_MAX_EXERCISE_OUTPUT:-2097152}
max_submission_output=${GRADE_MAX_SUBMISSION_OUTPUT:-8388608}
written=0 # bytes the submission's runners have printed so far
max_memory=${GRADE_MAX_MEMORY:-1073741824}
budget=${GRADE_TIME_BUDGET:-300}
course=$(pwd -P)
tab=$(printf '\t')
[ -d "$submission" ] || not_graded "submission $submission is not a directory"
[ -n "$name" ] || name=$(basename "$(cd "$submission" && pwd)")
[ -n "$results" ] || results=$build/grade/$name/results.json
work=$build/grade/$name
rm -rf "$work"
mkdir -p "$work"
# a results directory made here is yours alone (one that exists must be hidden already)
[ -d "$(dirname "$results")" ] || { mkdir -p "$(dirname "$results")" && chmod go= "$(dirname "$results")"; }
chmod go= "$build/grade" # grades are no one else's business, and not the sandbox's (uid mode)

abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$course" "$1" ;; esac; }
canon() ( # PATH: the absolute path with every symbolic link resolved
    realpath -- "$1" 2>/dev/null && exit 0
    cd -P -- "$(dirname -- "$1")" 2>/dev/null && printf '%s/%s\n' "$(pwd -P)" "$(basename -- "$1")"
)
first_error() { # LOG: the compiler's, the assembler's or the linker's first error (not a warning about a variable named error)
    grep -a -m 1 -E '(^|: )((fatal )?error|Error|internal compiler error): |undefined reference|multiple definition' "$1" |
        tr '\t' ' ' | cut -c 1-400
}

# ---- the course's side: the library, the judges, the runner's objects, the sandbox ------------
# BUILD and SANITIZE go on make's command line: they must win over whatever the calling make
# passed down in MAKEFLAGS
if ! $make --no-print-directory -s BUILD="$build" SANITIZE="${SANITIZE:-}" grade-prereqs >"$work/prereqs.log" 2>&1; then
    tail -n 20 "$work/prereqs.log" >&2
    not_graded "the course itself does not build (the end of its output is above; all of it in $work/prereqs.log)"
fi
eval "$($make --no-print-directory -s BUILD="$build" SANITIZE="${SANITIZE:-}" grade-env)" # CC, STUDENT_FLAGS, HEADERS, LINK_FLAGS, LIBS, SANDBOX, RUNNER_OBJ, GRADER
sandbox=$(abs "$SANDBOX")
profile=runner
[ "${SANITIZE:-0}" = 1 ] && profile=runner-asan

# ---- the isolation, checked before anything of the student's runs ----------------------------
# What the sandbox must not be able to read: the course's directory (its solutions.c, its .git,
# every build directory with objects made from them, every grade), the results, the grader's
# home, and what the caller adds (grade-all: the other students). The sandbox needs none of it:
# what it reads is staged in a directory of its own.
set --
for f in "$course" "$(dirname "$results")" "${HOME:-}"; do
    [ -n "$f" ] && [ -e "$f" ] && set -- "$@" --hidden "$(abs "$f")"
done
old_ifs=$IFS
IFS=:
for f in ${GRADE_HIDDEN:-}; do [ -n "$f" ] && [ -e "$f" ] && set -- "$@" --hidden "$(abs "$f")"; done
IFS=$old_ifs
isolation=$("$sandbox" describe "$@" 2>&1)
isolated=$?
if [ $isolated -ne 0 ] && [ "$unsandboxed" != 1 ]; then
    echo "grade.sh: $isolation" >&2
    not_graded "refusing to grade for credit without isolation; --unsandboxed (GRADE_UNSANDBOXED=1) grades anyway, for practice only"
fi
[ $isolated -ne 0 ] && isolation="$isolation (graded with --unsandboxed: not for credit)"

# The exercises: id, points, title, lesson directory (the course's own list, from its tests).
: >"$work/exercises.tsv"
for dir in lessons/[1-9]-*; do
    n=${dir#lessons/}
    n=${n%%-*}
    "$build/lesson$n/list_exercises" --list | awk -v dir="$dir" '{ print $0 "\t" dir }' >>"$work/exercises.tsv" ||
        not_graded "cannot list lesson $n's exercises"
done
# --lesson N: lessons/N-*; --exercise ID, compared as a string: 2.10 is not 2.1, "1.1 " not 1.1
lesson_dir=
if [ -n "$lesson" ]; then
    case $lesson in *[!0-9]*) ;; *) for dir in lessons/"$lesson"-*; do [ -d "$dir" ] && lesson_dir=$dir; done ;; esac
    [ -n "$lesson_dir" ] || not_graded "no lesson '$lesson' in this course; its lessons are: $(for dir in lessons/[1-9]-*; do
        n=${dir#lessons/}; printf '%s ' "${n%%-*}"; done)"
fi
DIR=$lesson_dir ONLY=$only awk -F "$tab" '(ENVIRON["DIR"] == "" || $4 == ENVIRON["DIR"]) && (ENVIRON["ONLY"] == "" || $1 == ENVIRON["ONLY"] "")' \
    "$work/exercises.tsv" >"$work/selected.tsv"
if [ ! -s "$work/selected.tsv" ]; then
    DIR=$lesson_dir awk -F "$tab" 'ENVIRON["DIR"] == "" || $4 == ENVIRON["DIR"] { printf "%s%s", n++ ? " " : "", $1 }' "$work/exercises.tsv" >"$work/ids.txt"
    not_graded "no exercise '$only' in ${lesson_dir:-this course}; its exercises are: $(cat "$work/ids.txt")"
fi

# ---- where the submission's lessons are ------------------------------------------------------
# DIR/lessons, or else the one lessons/ directory below DIR that holds an exercises.c (a zip of
# the whole course folder); several are an error, none means every exercise is TODO.
root=$submission
layout_note=
no_lessons= # why a lesson file is missing, beyond its absence
if [ ! -d "$submission/lessons" ]; then
    (cd "$submission" && find . -path '*/lessons/[1-9]-*/exercises.c' ! -path '*/__MACOSX/*' ! -path '*/.*/*' 2>/dev/null) |
        sed 's,^\./,,; s,/*lessons/[^/]*/exercises\.c$,,' | sort -u >"$work/roots.txt"
    count=$(wc -l <"$work/roots.txt")
    if [ "$count" -gt 1 ]; then
        not_graded "$submission has no lessons/ directory but several below it: $(sed 's,$,/lessons,' "$work/roots.txt" |
            tr '\n' ' ')- pass SUBMISSION=<the one to grade>"
    elif [ "$count" -eq 1 ]; then
        root=$submission/$(cat "$work/roots.txt")
        layout_note="the submission's lessons/ is at $root/lessons, not $submission/lessons: graded from there"
    else
        no_lessons=" (it has no lessons/ directory)"
    fi
fi

# ---- the stage: what the sandbox sees, outside the course directory --------------------------
# Copies of the course's headers and library objects, and of the student's file; in it, each
# lesson's scratch directory (a size-capped tmpfs under namespaces) and the runner built there.
stage=$(mktemp -d "${TMPDIR:-/tmp}/course-grade.XXXXXX") || not_graded "cannot make a staging directory"
stage=$(abs "$stage")
trap 'rm -rf "$stage"' EXIT
trap 'exit 2' INT TERM
chmod 755 "$stage"
mkdir -p "$stage/lib"
cp "$build/libcourse.a" "$RUNNER_OBJ" "$stage/lib/"
# Before anyone is graded: the sandbox starts here and reads the stage. It runs as a user of its
# own (uid 65534), who cannot reach a stage below a directory only the grader may enter (TMPDIR
# inside a mode-700 directory); every exercise would then read "did not compile", the grader's
# failure reported as the student's.
mkdir -p "$stage/src" "$stage/check"
if ! "$sandbox" run --profile compile --ro "$stage/src" --ro "$stage/lib" --scratch "$stage/check" \
    --scratch-size 1048576 --chdir "$stage/src" --time 10 --memory 268435456 --output 65536 \
    -- /bin/sh -c 'test -r "$0"' "$stage/lib/libcourse.a" </dev/null >"$work/sandbox-check.log" 2>&1; then
    not_graded "the sandbox cannot reach the staging directory $stage ($(tr '\n' ' ' <"$work/sandbox-check.log" |
        cut -c1-200)): its user must be able to enter every directory above it; set TMPDIR to a directory that is (TMPDIR=/tmp)"
fi

# For the instructor: which functions of the course's library each exercise calls, directly or
# through the file's own helpers. Some exercises are compositions of library ops (2.1, 2.4,
# 5.4); others ask for the function to be written by hand. Accessors, errors, printing and
# constructors are not listed.
plumbing=" ctx_new ctx_free ctx_alloc ctx_bytes tensor_numel tensor_data tensor_get tensor_item tensor_error
    tensor_set_error tensor_clear_error tensor_zeros tensor_from tensor_scalar shape_format shape_numel shape_equal
    shape_is_valid tensor_print tensor_fprint tensor_describe tensor_fdescribe "
nm --defined-only -g "$build/libcourse.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u |
    while IFS= read -r symbol; do case $plumbing in *" $symbol "* | *"$tab$symbol "*) ;; *) echo "$symbol" ;; esac; done \
    >"$work/library.txt"
# OBJDUMP -rt: the file's data as pseudo-functions for library_calls: each data section (and each
# object defined in one) "calls" what its relocations point at, so that a library function
# reached through a pointer stored in data (a variable, a table) is found as a call is: the
# code's reference to the section or the object, then the section's reference to the function.
data_references() {
    LC_ALL=C awk '
        /^SYMBOL TABLE:/ { mode = "symbols"; next }
        /^RELOCATION RECORDS FOR \[/ {
            section = $4; sub(/^\[/, "", section); sub(/\]:?$/, "", section)
            mode = section ~ /^\.(data|rodata|bss|tbss|tdata)/ ? "data" : ""
            if (mode == "data") printf "0000000000000000 <%s>:\n", section
            next
        }
        mode == "symbols" && NF >= 5 && $(NF - 2) ~ /^\.(data|rodata|bss|tbss|tdata)/ && $NF !~ /^\./ {
            printf "0000000000000000 <%s>:\n   0: R_X86_64_NONE %s\n", $NF, $(NF - 2)
        }
        mode == "data" && $2 ~ /^R_/ { printf "   0: %s %s\n", $2, $3 }' "$1"
}
library_calls() { # DISASSEMBLY: "ID<TAB>FUNCTION<TAB>calls..." per exercise function that calls the library
    LIBRARY="$work/library.txt" awk '
        BEGIN { while ((getline s < ENVIRON["LIBRARY"]) > 0) library[s] = 1 }
        function edge(from, to) { sub(/[+-]0x[0-9a-fA-F]+$/, "", to); sub(/@.*/, "", to); if ((from, to) in calls) return; calls[from, to] = 1; targets[from] = targets[from] " " to }
        /^[0-9a-f]+ <[^>]+>:$/ { if (pending != "") edge(f, pending); pending = ""; f = $2; gsub(/[<>:]/, "", f); defined[f] = 1; order[++nf] = f; next }
        f == "" { next }
        /^[ \t]*[0-9a-f]+: R_[A-Z0-9_]+[ \t]/ { pending = ""; edge(f, $3); next }
        {   # an instruction: its <target>, unless a relocation follows (then the target is a placeholder)
            if (pending != "") edge(f, pending)
            pending = ""
            if (match($0, /<[^>]+>/)) pending = substr($0, RSTART + 1, RLENGTH - 2)
        }
        END {
            if (pending != "") edge(f, pending)
            for (i = 1; i <= nf; i++) {
                start = order[i]
                if (start !~ /^ex[0-9]+_[0-9]+_[A-Za-z0-9_]*$/) continue
                # every function reachable from the exercise through functions of the file itself
                delete seen; delete found; list = ""; queue[1] = start; head = 1; tail = 1; seen[start] = 1
                while (head <= tail) {
                    g = queue[head++]
                    reached[g] = 1
                    n = split(targets[g], t, " ")
                    for (j = 1; j <= n; j++) {
                        if (t[j] in library) { if (!(t[j] in found)) { found[t[j]] = 1; list = list (list == "" ? "" : ", ") t[j] } }
                        else if ((t[j] in defined) && !(t[j] in seen)) { seen[t[j]] = 1; queue[++tail] = t[j] }
                    }
                }
                if (list == "") continue
                id = start; sub(/^ex/, "", id); split(id, p, "_")
                printf "%s.%s\t%s\t%s\n", p[1], p[2], start, list
            }
            # code no exercise reaches may still hand the library to one: a constructor that
            # stores a library function in a variable an exercise then calls through (its name,
            # which an assembler label can fill with any byte, printed as a C name or with "?")
            for (i = 1; i <= nf; i++) {
                g = order[i]
                if (g in reached) continue
                list = ""
                n = split(targets[g], t, " ") # (each once: edge keeps one of each)
                for (j = 1; j <= n; j++) if (t[j] in library) list = list (list == "" ? "" : ", ") t[j]
                gsub(/[^A-Za-z0-9_.$]/, "?", g)
                if (list != "") printf "-\t%s\t%s\n", g, list
            }
        }' "$1"
}

# LOG: the sanitizers' first report, in a line: what went wrong, and where, in the student's
# file where a frame of the stack is there ("SEGV on unknown address 0x000000000000 (a WRITE)
# in ex5_3_gather_rows_checked lessons/5-gather/exercises.c:42"). UBSan's line names the place
# itself ("exercises.c:42:9: runtime error: store to null pointer ..."); gcc's prints no SUMMARY.
sanitizer_report() {
    LC_ALL=C awk '
        what == "" && /ERROR: (Address|Leak)Sanitizer: / {
            what = $0; sub(/.*ERROR: [A-Za-z]+Sanitizer: /, "", what)
            sub(/ \(pc 0x[0-9a-f]+.*| at pc 0x[0-9a-f]+.*| in thread T[0-9]+:?$/, "", what); next
        }
        what == "" && / runtime error: / { what = $0; ubsan = 1; next }
        what == "" { next }
        access == "" && match($0, /(READ|WRITE) of size [0-9]+/) { access = substr($0, RSTART, RLENGTH) }
        access == "" && match($0, /caused by a (READ|WRITE) memory access/) { access = substr($0, RSTART + 12, 5); sub(/ $/, "", access) }
        /^ *#[0-9]+ 0x[0-9a-f]+ in [^ ]+ [^ ]+:[0-9]+/ {
            frame = $4 " " $5
            if (frame ~ /:[0-9]+:[0-9]+$/) sub(/:[0-9]+$/, "", frame) # the line, not the column
            if (first == "") first = frame
            if (mine == "" && $5 ~ /exercises\.c:/) mine = frame
        }
        /^SUMMARY: |^$/ && first != "" { exit }
        END {
            if (what == "") exit 1
            where = mine != "" ? mine : first
            if (ubsan) { split(where, w, " "); printf "%s%s\n", what, w[1] != "" ? " (in " w[1] ")" : "" }
            else printf "%s%s%s\n", what, access != "" ? " (a " access ")" : "", where != "" ? " in " where : ""
        }' "$1"
}

elapsed() { echo $(($(date +%s) - start)); } # seconds since grading began (start: below)
# FILE: what is kept on disk of a log the student's code wrote (a test's output, the compiler's
# and linker's messages, the disassembly): once the grader has read it, at most 256 KB, its
# first 192 KB and its last 64 KB, and a line in between saying how much was cut. A runner's
# output is capped at 1 MB, but an exercise's log holds one runner per test.
trim_log() {
    [ -f "$1" ] || return 0 # (link.log and the rest exist only past the compile)
    size=$(wc -c <"$1")
    [ "$size" -le 262144 ] && return 0
    { head -c 196608 "$1"
      printf '\n[... grade.sh kept 256 KB of this log: %s bytes cut here ...]\n' $((size - 262144))
      tail -c 65536 "$1"; } >"$1.kept" && mv "$1.kept" "$1"
}
in_sandbox() { # SECONDS OUTPUT-LIMIT COMMAND...: the compile profile, seeing the stage read-only and LESSON_DIR/work
    seconds=$1 limit=$2
    shift 2
    left=$((budget - $(elapsed))) # never past the submission's budget
    [ "$left" -lt "$seconds" ] && seconds=$left
    [ "$seconds" -lt 1 ] && seconds=1
    "$sandbox" run --profile compile --ro "$stage/src" --ro "$stage/lib" --ro "$lesson_stage" \
        --scratch "$lesson_stage/work" --scratch-size 268435456 --chdir "$stage/src" --time "$seconds" \
        --memory 4294967296 --output "$limit" -- "$@" </dev/null
    sandbox_status=$? # 124: out of time
    return $sandbox_status
}

# ---- each lesson: stage, compile, link (in the sandbox); then each exercise judged ------------
rows=$work/rows.tsv # id, points, kind, title, message, log
: >"$rows"
: >"$work/notes.tsv"
root_real=$(cd "$root" && pwd -P)
start=$(date +%s)
for dir in $(cut -f 4 "$work/selected.tsv" | uniq); do
    n=${dir#lessons/}
    n=${n%%-*}
    out=$work/lesson$n
    lesson_stage=$stage/lesson$n
    mkdir -p "$out" "$lesson_stage/include" "$lesson_stage/work" "$stage/src/$dir"
    awk -F "$tab" -v OFS="$tab" -v dir="$dir" '$4 == dir { print $1, $2, $3 }' "$work/selected.tsv" >"$out/list.tsv"

    src=$root/$dir/exercises.c
    verdict= # empty, or the kind, message and log that every exercise of this lesson gets
    if [ "$(elapsed)" -ge "$budget" ]; then
        verdict= # each exercise is "not run", below
    elif [ ! -f "$src" ]; then
        verdict="todo${tab}no $dir/exercises.c in the submission$no_lessons${tab}"
    elif real=$(canon "$src") && case $real in "$root_real"/*) false ;; *) true ;; esac; then
        # a symbolic link (of the file or of a directory above it) out of the submission: the
        # grader, not the sandbox, reads the submission, so it follows no link out of it
        verdict="rejected${tab}$dir/exercises.c is a link to a file outside the submission ($real): not graded${tab}"
    elif [ "$(wc -c <"$src")" -gt 1048576 ]; then
        verdict="rejected${tab}$dir/exercises.c is larger than 1 MB: not graded${tab}"
    else
        cp "$src" "$stage/src/$dir/exercises.c"
        # only the course's headers, never the student's exercises.h, and none of a later
        # lesson's: lesson n builds on lessons 1..n, as under make (Makefile: LESSON_RULES)
        for header in $HEADERS "$dir/exercises.h"; do
            case $header in lessons/*) m=${header#lessons/} && [ "${m%%-*}" -gt "$n" ] && continue ;; esac
            cp "$header" "$lesson_stage/include/"
        done
        cp "$GRADER/lesson$n/calls.o" "$lesson_stage/calls.o"
        chmod -R a+rX "$stage"
        # shellcheck disable=SC2086 # CC and the flags are lists of words
        if ! in_sandbox 120 67108864 /bin/sh -c '"$@" >&2 && exec cat "$0"' "$lesson_stage/work/exercises.o" \
            $CC $STUDENT_FLAGS -I"$lesson_stage/include" -c "$dir/exercises.c" -o "$lesson_stage/work/exercises.o" \
            >"$lesson_stage/exercises.o" 2>"$out/compile.log"; then
            error=$(first_error "$out/compile.log") # (grep -m 1: it stops at the first)
            trim_log "$out/compile.log" # before anything else reads it: a compile may print megabytes of warnings
            # shellcheck disable=SC2086 # HEADERS is a list of paths
            hint=$(sh "$(dirname "$0")/undeclared.sh" "$out/compile.log" $HEADERS "$dir/exercises.h")
            # (the compiler's own line, less its suggestion and its flag, so that the hint fits the table)
            [ -n "$hint" ] && error="$(printf '%s' "$error" | sed "s/; did you mean '[^']*'?//; s/ \[-W[^]]*\]\$//" | cut -c 1-200). $hint"
            [ "$sandbox_status" = 124 ] && error="the compiler did not finish within $seconds s"
            verdict="compile${tab}${error:-the compiler stopped (see its output)}${tab}compiler's output: $out/compile.log"
        elif ! in_sandbox 120 268435456 /bin/sh -c '"$@" >&2 && exec cat "$0"' "$lesson_stage/work/runner" \
            $CC $LINK_FLAGS "$lesson_stage/exercises.o" "$lesson_stage/calls.o" "$stage/lib/runner.o" \
            "$stage/lib/libcourse.a" $LIBS -o "$lesson_stage/work/runner" >"$lesson_stage/runner" 2>"$out/link.log"; then
            error=$(first_error "$out/link.log")
            trim_log "$out/link.log"
            [ "$sandbox_status" = 124 ] && error="the linker did not finish within $seconds s"
            verdict="compile${tab}${error:-the link failed (see its output)}${tab}linker's output: $out/link.log"
        else
            chmod 755 "$lesson_stage/runner"
            in_sandbox 60 67108864 /usr/bin/objdump -dr "$lesson_stage/exercises.o" 2>/dev/null >"$out/disassembly.txt"
            in_sandbox 60 67108864 /usr/bin/objdump -rt "$lesson_stage/exercises.o" 2>/dev/null >"$out/relocations.txt"
            data_references "$out/relocations.txt" >>"$out/disassembly.txt"
            # an exercise's object disassembles to kilobytes; one padded with megabytes of
            # references would only keep the grader busy for minutes, outside any time limit
            size=$(wc -c <"$out/disassembly.txt")
            if [ "$size" -le 8388608 ]; then
                library_calls "$out/disassembly.txt" >>"$work/notes.tsv"
            else
                echo "  note: lesson $n's object was not checked for calls of the course's library: it disassembles to $size bytes, past the 8 MiB an exercise's would need" >>"$work/unchecked.txt"
            fi
        fi
        for kept in compile.log link.log disassembly.txt relocations.txt; do trim_log "$out/$kept"; done
    fi

    while IFS="$tab" read -r id points title; do
        if [ -n "$verdict" ]; then
            kind=${verdict%%"$tab"*} rest=${verdict#*"$tab"}
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$points" "$kind" "$title" "${rest%%"$tab"*}" "${rest#*"$tab"}" >>"$rows"
            continue
        fi
        if [ "$(elapsed)" -ge "$budget" ]; then
            printf '%s\t%s\tbudget\t%s\tnot run: grading this submission took more than its %s s (GRADE_TIME_BUDGET)\t\n' \
                "$id" "$points" "$title" "$budget" >>"$rows"
            continue
        fi
        if [ "$written" -ge "$max_submission_output" ]; then
            printf '%s\t%s\toutput\t%s\tnot run: this submission'"'"'s programs printed %s bytes before it, past the %s a submission may print in all (GRADE_MAX_SUBMISSION_OUTPUT)\t\n' \
                "$id" "$points" "$title" "$written" "$max_submission_output" >>"$rows"
            continue
        fi
        : >"$out/$id.tsv"
        # the judge is the course's; only the runner holds the student's code
        "$GRADER/lesson$n/judge" --only "$id" --runner "$lesson_stage/runner" --sandbox "$sandbox" --profile "$profile" \
            --max-output "$max_output" --max-memory "$max_memory" --results "$out/$id.tsv" --label "exercise $id" \
            >"$out/$id.log" 2>&1 </dev/null
        line=$(awk -F "$tab" '$1 == "exercise"' "$out/$id.tsv")
        if [ -z "$line" ]; then
            printf '%s\t%s\tcrashed\t%s\tthe judge stopped before reporting (a fault of the grader)\tthe test'"'"'s output: %s\n' \
                "$id" "$points" "$title" "$out/$id.log" >>"$rows"
            continue
        fi
        IFS=$tab read -r _ _ _ _ kind _ message <<EOF
$line
EOF
        # what the runner's output says about a crash or a memory error
        case $kind in
        # (each line taken from the log is cut to 1000 bytes first: the runner writes the log, and
        # the shell's ${x#*pattern} on a line of 200 KB took over a minute)
        crashed)
            assertion=$(grep -a -m 1 "Assertion .* failed" "$out/$id.log" | cut -c 1-1000)
            corruption=$(grep -a -m 1 -E '^(free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|_int_[a-z]+)\(\): |^double free|^corrupted ' "$out/$id.log" | cut -c 1-1000)
            if [ -n "$assertion" ]; then
                message="$message. Here an assert failed: ${assertion#*runner: }"
            elif [ -n "$corruption" ]; then
                message="$message. Here the C library found the heap corrupted: $corruption"
            fi ;;
        memory)
            summary=$(grep -a -m 1 '^SUMMARY: ' "$out/$id.log" | cut -c 1-1000)
            if report=$(sanitizer_report "$out/$id.log"); then
                message="$(printf '%s' "$report" | cut -c 1-1000) (found by the sanitizers; their whole report is in the test's output)"
            elif [ -n "$summary" ]; then
                message="$message: ${summary#SUMMARY: }"
            fi ;;
        esac
        # what its runners printed in all: the probe's and every test's (each under GRADE_MAX_OUTPUT)
        size=$(wc -c <"$out/$id.log")
        written=$((written + size))
        if [ "$size" -gt "$max_exercise_output" ]; then
            cap="its programs printed $size bytes in all (the first try and each test), more than the $max_exercise_output an exercise may (GRADE_MAX_EXERCISE_OUTPUT)"
            case $kind in passed | wrong | todo) kind=output message=$cap ;; *) message="$message; and $cap" ;; esac
        fi
        log=
        case $kind in passed | todo | wrong) ;; *) log="the test's output: $out/$id.log" ;; esac
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$points" "$kind" "$title" "$(printf '%s' "$message" | tr '\t\n' '  ' |
            cut -c 1-600)" "$log" >>"$rows"
        trim_log "$out/$id.log"
    done <"$out/list.tsv"
    rm -rf "$lesson_stage" # its object and runner (each up to 256 MiB): one lesson's at a time
done
[ -s "$rows" ] || not_graded "no exercise could be graded (see $work)"

# ---- the report ---------------------------------------------------------------------------
# Run in the C locale, so that awk sees bytes: results.json must be valid JSON whatever a
# message holds (a backslash, a byte of Latin-1 from a student's error message).
scope= # a part of the course only: said beside the name, so that its score is not taken for the course's
[ -n "$lesson" ] && scope=" (lesson $lesson only)"
[ -n "$only" ] && scope=" (exercise $only only)"
LC_ALL=C RESULTS=$results SUMMARY=$(dirname "$results")/summary.tsv WHO=$name$scope NOTE=$layout_note ISOLATION=$isolation \
    STAGE=$stage/ COURSE=$course awk -F "$tab" '
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
        if (kind == "budget") return "not run"
        return kind
    }
    # A JSON string: backslash, quote and control characters escaped, and every byte that is not
    # part of a well-formed UTF-8 sequence replaced with "?". Built a character at a time, as
    # gsub treats backslashes in its replacement differently from one awk to the next.
    function json(s,    out, i, j, n, c, b, need, ok, second) {
        out = ""
        n = length(s)
        for (i = 1; i <= n; i++) {
            c = substr(s, i, 1)
            b = ord[c]
            if (c == "\\") out = out "\\\\"
            else if (c == "\"") out = out "\\\""
            else if (b < 32) out = out sprintf("\\u%04x", b)
            else if (b < 128) out = out c
            else {
                need = b >= 194 && b <= 223 ? 1 : b >= 224 && b <= 239 ? 2 : b >= 240 && b <= 244 ? 3 : 0
                ok = need > 0 && i + need <= n
                for (j = 1; ok && j <= need; j++) if (ord[substr(s, i + j, 1)] < 128 || ord[substr(s, i + j, 1)] > 191) ok = 0
                if (ok) {
                    second = ord[substr(s, i + 1, 1)]
                    if ((b == 224 && second < 160) || (b == 237 && second > 159) || (b == 240 && second < 144) || (b == 244 && second > 143)) ok = 0
                }
                if (ok) { out = out substr(s, i, need + 1); i += need } else out = out "?"
            }
        }
        return "\"" out "\""
    }
    # Text for the terminal: no student-written byte may drive it (escape sequences could clear
    # the screen, hide the real score or write the clipboard), so control characters, ASCII and
    # UTF-8 C1 alike, become "?".
    function plain(s) { gsub(controls, "?", s); gsub(c1, "?", s); return s }
    function detail(kind, message,    test) { # the message, less what the status says already ("crashed: signal 11 (...)")
        test = "" # "in TEST (FILE:LINE): ", the test the crash happened in, stays
        if (match(message, /^in [A-Za-z0-9_]+ \([^)]*\): /)) { test = substr(message, 1, RLENGTH); message = substr(message, RLENGTH + 1) }
        if (kind == "crashed") sub(/^crashed: [Rr]eceived signal [0-9]+( \([^)]*\))?\.? */, "", message)
        return test message
    }
    function unstaged(s,    k, rest, m) { # staged paths as the student knows them: lessons/N-topic/exercises.c, tensor.h
        while ((k = index(s, stage)) > 0) {
            rest = substr(s, k + length(stage))
            if (substr(rest, 1, 4) == "src/") rest = substr(rest, 5)
            else if ((m = index(rest, "/include/")) > 0) rest = substr(rest, m + 9)
            s = substr(s, 1, k - 1) rest
        }
        while ((k = index(s, course)) > 0) s = substr(s, 1, k - 1) substr(s, k + length(course)) # files of the course itself
        return s
    }
    BEGIN {
        for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
        controls = "[" sprintf("%c", 1) "-" sprintf("%c", 31) sprintf("%c", 127) "]"
        c1 = sprintf("%c", 194) "[" sprintf("%c", 128) "-" sprintf("%c", 159) "]"
        results = ENVIRON["RESULTS"]; summary = ENVIRON["SUMMARY"]; note = plain(ENVIRON["NOTE"]); isolation = ENVIRON["ISOLATION"]
        stage = ENVIRON["STAGE"]; course = ENVIRON["COURSE"] "/"
    }
    {
        id[NR] = $1; points[NR] = $2; kind[NR] = $3; title[NR] = $4; message[NR] = plain($5); logfile[NR] = plain($6)
        earned[NR] = $3 == "passed" ? $2 : 0
        total += earned[NR]; possible += $2
        if ($3 != "passed") failed = 1
    }
    END {
        printf "%s\n", isolation
        printf "grading %s\n\n", plain(ENVIRON["WHO"])
        if (note != "") printf "  note: %s\n\n", note
        printf "  %-5s %-46s %-9s %s\n", "id", "title", "points", "status"
        for (i = 1; i <= NR; i++) {
            s = status(kind[i], message[i])
            printf "  %-5s %-46s %2d / %-3d %s\n", id[i], title[i], earned[i], points[i], s
            if (kind[i] SUBSEP message[i] SUBSEP logfile[i] == shown) continue # the verdict of a whole lesson: shown once
            shown = kind[i] SUBSEP message[i] SUBSEP logfile[i]
            if (kind[i] != "passed" && detail(kind[i], message[i]) != "")
                printf "        %s\n", substr(unstaged(detail(kind[i], message[i])), 1, 400)
            if (kind[i] != "passed" && logfile[i] != "")
                printf "        (%s)\n", logfile[i]
        }
        printf "\n  %-52s %2d / %d\n", "total", total, possible
        printf "{\n  \"score\": %d,\n  \"max_score\": %d,\n", total, possible > results
        printf "  \"output\": %s,\n", json(isolation (note != "" ? "\n" note : "")) > results
        printf "  \"tests\": [\n" > results
        for (i = 1; i <= NR; i++) {
            out = status(kind[i], message[i]) (detail(kind[i], message[i]) != "" ? ": " unstaged(detail(kind[i], message[i])) : "")
            printf "    {\"name\": %s, \"score\": %d, \"max_score\": %d, \"status\": \"%s\", \"output\": %s}%s\n",
                json(id[i] " " title[i]), earned[i], points[i], kind[i] == "passed" ? "passed" : "failed", json(out),
                i < NR ? "," : "" > results
            printf "%s\t%d\t%d\t%s\n", id[i], earned[i], points[i], status(kind[i], message[i]) > summary
        }
        printf "  ]\n}\n" > results
        exit failed
    }' "$rows"
status=$?
[ $status -le 1 ] || not_graded "could not write $results and the summary beside it"
if [ -s "$work/unchecked.txt" ]; then
    echo
    cat "$work/unchecked.txt"
fi
if [ -s "$work/notes.tsv" ]; then
    echo
    while IFS="$tab" read -r id function calls; do
        case $id in
        -) echo "  note: $function, which no exercise calls (a constructor?), refers to the course's library: $calls" ;;
        *) echo "  note: $id ($function) calls the course's library: $calls" ;;
        esac
    done <"$work/notes.tsv"
    echo "  (fine where an exercise composes library ops, not where it asks for one written by hand)"
fi
echo "  results: $results"
# the last line: the score, and what the exit status says
score=$(awk -F "$tab" '{ earned += $2; possible += $3 } END { printf "%d / %d", earned, possible }' "$(dirname "$results")/summary.tsv")
if [ $status -eq 0 ]; then
    echo "score: $score (every graded exercise passed: exit status 0)"
elif [ "$zero_if_graded" = 1 ]; then
    echo "score: $score (graded: exit status 0; with STRICT=1 it is 1 unless every graded exercise passed)"
    status=0
else
    echo "score: $score (not every graded exercise passed: exit status 1)"
fi
exit $status
