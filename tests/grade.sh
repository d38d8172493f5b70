#!/bin/sh
# grade.sh - grades the exercises of one submission. `make grade` and `make grade-all` call it.
#
#   tests/grade.sh [--submission DIR] [--exercise ID] [--results FILE] [--name NAME]
#
# DIR mirrors the course layout (DIR/lessons/N-topic/exercises.c), or holds exactly one such
# lessons/ directory deeper down; only the exercises.c files are taken from it. Each is copied
# alone into a staging directory and compiled against copies of the course's headers: the
# student's own exercises.h is never read, solutions.c is on no include path, and a file that
# includes anything but the course's headers and the C library's is rejected. The library, the
# tests and the points are the course's, built here. Each exercise runs in its own process
# (--only ID) in a scratch working directory, with the harness's time, memory and output limits,
# so a crash, a hang, exit(), a flood of output or (with SANITIZE=1) a memory error marks that
# exercise only. A lesson whose file does not compile or link costs that lesson only.
#
# Prints a table (id, title, points, status) and the total; writes a Gradescope results.json
# to FILE and a tab-separated summary next to it (summary.tsv: id, earned, possible, status).
# Exit status: 0 only if every graded exercise passed; 1 otherwise; 2 on a usage error.
#
# Environment: GRADE_MAX_OUTPUT (bytes a test may print, default 1000000), GRADE_MAX_MEMORY
# (bytes a test may take, default 1 GiB), GRADE_TIME_BUDGET (seconds for the whole submission,
# default 300: the exercises not started by then are "not run").
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
max_output=${GRADE_MAX_OUTPUT:-1000000}
max_memory=${GRADE_MAX_MEMORY:-1073741824}
budget=${GRADE_TIME_BUDGET:-300}
course=$(pwd -P)
tab=$(printf '\t')
[ -d "$submission" ] || { echo "grade.sh: submission $submission is not a directory" >&2; exit 2; }
[ -n "$name" ] || name=$(basename "$(cd "$submission" && pwd)")
[ -n "$results" ] || results=$build/grade/$name/results.json
work=$build/grade/$name
rm -rf "$work"
mkdir -p "$work" "$(dirname "$results")"

abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$course" "$1" ;; esac; }
canon() ( # PATH: the absolute path with every symbolic link resolved
    realpath -- "$1" 2>/dev/null && exit 0
    cd -P -- "$(dirname -- "$1")" 2>/dev/null && printf '%s/%s\n' "$(pwd -P)" "$(basename -- "$1")"
)
limit_time() { # SECONDS COMMAND...: a compiler fed /dev/zero must not hang the grading
    if command -v timeout >/dev/null 2>&1; then timeout "$@"; else shift; "$@"; fi
}
first_error() { # LOG: the compiler's or the linker's first error (not a warning about a variable named error)
    grep -m 1 -E '(^|: )(fatal )?error: |undefined reference|multiple definition' "$1" | tr '\t' ' ' | cut -c 1-400
}

# ---- the course's side: the library, the harness and each lesson's test object -----------
# BUILD and SANITIZE go on make's command line: they must win over whatever the calling make
# passed down in MAKEFLAGS
if ! $make --no-print-directory -s BUILD="$build" SANITIZE="${SANITIZE:-}" grade-prereqs >"$work/prereqs.log" 2>&1; then
    echo "grade.sh: the course itself does not build:" >&2
    tail -n 20 "$work/prereqs.log" >&2
    exit 2
fi
eval "$($make --no-print-directory -s BUILD="$build" SANITIZE="${SANITIZE:-}" grade-env)" # CC, STUDENT_FLAGS, HEADERS, LINK_FLAGS, LIBS, OBJ
sanitized=0
if [ "${SANITIZE:-0}" = 1 ]; then
    sanitized=1
    # a sanitizer report makes the test exit with 87, which the harness calls a memory error
    export ASAN_OPTIONS=exitcode=87:detect_leaks=0 UBSAN_OPTIONS=exitcode=87:halt_on_error=1:print_stacktrace=1
fi
export LIBC_FATAL_STDERR_=1 # glibc's "free(): invalid pointer" into the test's output, never a terminal

# The exercises: id, points, title, lesson directory (the course's own list, from its tests).
: >"$work/exercises.tsv"
for dir in lessons/[1-9]-*; do
    n=${dir#lessons/}
    n=${n%%-*}
    "$build/lesson$n/list_exercises" --list | awk -v dir="$dir" '{ print $0 "\t" dir }' >>"$work/exercises.tsv" ||
        { echo "grade.sh: cannot list lesson $n's exercises" >&2; exit 2; }
done
if [ -n "$only" ]; then # compared as strings: 2.10 is not 2.1, and "1.1 " is not 1.1
    ONLY=$only awk -F "$tab" '$1 == ENVIRON["ONLY"] ""' "$work/exercises.tsv" >"$work/selected.tsv"
    if [ ! -s "$work/selected.tsv" ]; then
        echo "grade.sh: no exercise '$only' in this course; its exercises are:" \
            "$(cut -f 1 "$work/exercises.tsv" | tr '\n' ' ')" >&2
        exit 2
    fi
else
    cp "$work/exercises.tsv" "$work/selected.tsv"
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
        echo "grade.sh: $submission has no lessons/ directory but several below it: $(sed 's,$,/lessons,' "$work/roots.txt" |
            tr '\n' ' ')- pass SUBMISSION=<the one to grade>" >&2
        exit 2
    elif [ "$count" -eq 1 ]; then
        root=$submission/$(cat "$work/roots.txt")
        layout_note="the submission's lessons/ is at $root/lessons, not $submission/lessons: graded from there"
    else
        no_lessons=" (it has no lessons/ directory)"
    fi
fi

# ---- what is allowed into a student's file ---------------------------------------------------
# The course's headers (and their staged copies, below) and the system's headers, by real path.
allowed=$work/allowed-headers.txt
for header in $HEADERS lessons/[1-9]-*/exercises.h; do canon "$header"; done >"$allowed"
$CC $LINK_FLAGS -E -v -x c /dev/null 2>&1 </dev/null |
    awk '/search starts here:/ { p = 1; next } /^End of search list/ { p = 0 } p { sub(/^ +/, ""); sub(/ \(framework directory\)$/, ""); print }' |
    while IFS= read -r d; do canon "$d"; done >"$work/system-dirs.txt"
# The compiler's -MD output lists what it read: its own inputs (clang's sanitizer ignore list),
# then the source, then every file the source included.
forbidden_include() { # DEPFILE DIR SOURCE: the first file the source included that is not allowed
    awk '{ line = line $0; if (sub(/\\$/, "", line)) next; print line; line = "" } END { if (line != "") print line }' "$1" |
        SOURCE=$3 awk 'BEGIN { sp = sprintf("%c", 1) }
            { sub(/^[^:]*: */, ""); gsub(/\\ /, sp); n = split($0, f, /[ \t]+/)
              for (i = 1; i <= n; i++) if (f[i] != "") {
                  gsub(sp, " ", f[i])
                  if (source_seen) print f[i]
                  else if (f[i] == ENVIRON["SOURCE"]) source_seen = 1
              } }' |
        while IFS= read -r file; do
            case $file in /*) path=$file ;; *) path=$2/$file ;; esac
            real=$(canon "$path") || real=$path
            grep -Fqx -- "$real" "$allowed" && continue
            system=no
            case $real in "$course"/*) ;; *)
                while IFS= read -r sys; do case $real in "$sys"/*) system=yes; break ;; esac; done <"$work/system-dirs.txt" ;;
            esac
            [ $system = yes ] && continue
            case $real in "$course"/*) echo "${real#"$course"/}" ;; *) echo "$real" ;; esac
            break
        done
}

# Code in an object that would run outside the tests, in the process that reports their
# results: a constructor or destructor (any section the loader runs: .preinit_array,
# .init_array, .fini_array, .ctors, .dtors, .init, .fini, by name or by type) or an ifunc
# resolver. Under SANITIZE=1 the sanitizers' own constructor and destructor (one of each) are
# allowed. Prints what it found, if anything.
startup_code() { # OBJECT
    {
        readelf -S -W "$1" | sed -n 's/^ *\[ *[0-9]*\] //p' | awk '{ print "S", $1, $2, $5 }'
        objdump -r "$1" | awk '/^RELOCATION RECORDS FOR \[/ { s = $4; sub(/^\[/, "", s); sub(/\]:$/, "", s); next }
            NF == 3 && $1 != "OFFSET" && s != "" { print "R", s, $3 }'
        objdump -t "$1" | awk -F "$tab" 'NF >= 2 { n = split($1, a, " "); m = split($2, b, " ")
            print "T", a[n], a[1], b[m], ($1 ~ / F /) ? "F" : "-" }'
        nm "$1" | awk '$2 == "i" { print "I", $3 }'
    } 2>/dev/null | awk -v sanitized="$sanitized" '
        function hex(h) { sub(/^0x/, "", h); sub(/^0+/, "", h); return h == "" ? "0" : tolower(h) }
        function kind(s) {
            if (s ~ /^\.preinit_array/) return "preinit"
            if (s ~ /^\.init_array/ || s ~ /^\.ctors/) return "init"
            if (s ~ /^\.fini_array/ || s ~ /^\.dtors/) return "fini"
            return ""
        }
        function hexval(h,    v, i) { v = 0; h = tolower(hex(h)); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
        $1 == "S" { type[$2] = $3; size[$2] = hexval($4); section[$2] = 1; next }
        $1 == "R" { reloc[++r] = $2 SUBSEP $3; relocs[$2]++; next }
        $1 == "T" { if ($5 == "F") function_at[$2, hex($3)] = $4; next }
        $1 == "I" { if (found == "") found = "an ifunc resolver for " $2 " (it runs when the program is loaded)"; next }
        END {
            for (s in section) {
                t = type[s]
                if (s == ".init" || s == ".fini") what = "code in the " s " section (it runs before main or after exit)"
                else if (s ~ /^\.preinit_array/ || t == "PREINIT_ARRAY") what = "a " s " entry (it runs before main)"
                else if (s ~ /^\.(ctors|dtors)/) what = "a constructor or destructor (" s ")"
                else if (!sanitized && (s ~ /^\.(init|fini)_array/ || t == "INIT_ARRAY" || t == "FINI_ARRAY"))
                    what = "a constructor or destructor (" s ")"
                else if (sanitized && t ~ /^(INIT|FINI)_ARRAY$/ && s !~ /^\.(init|fini)_array/)
                    what = "a constructor or destructor (" s ")"
                else if (sanitized && kind(s) != "" && (size[s] > 8 || 8 * relocs[s] < size[s]))
                    what = "a constructor or destructor (" s ")"
                else what = ""
                if (what != "" && found == "") found = what
            }
            # under the sanitizers: each entry must be their own constructor or destructor
            for (i = 1; i <= r; i++) {
                split(reloc[i], f, SUBSEP)
                k = kind(f[1]); if (k == "") continue
                target = f[2]; offset = "0"
                if (match(target, /[+-]0x[0-9a-fA-F]+$/)) { offset = hex(substr(target, RSTART + 1)); target = substr(target, 1, RSTART - 1) }
                name = (target in section) ? function_at[target, offset] : target
                entries[k]++
                if (name !~ /^(asan\.module_(ctor|dtor)|_sub_[ID]_00099_[0-9]+)$/ || entries[k] > 1)
                    if (found == "") found = "a constructor or destructor (" (name != "" ? name : target) ", in " f[1] ")"
            }
            if (found != "") print found
        }'
}

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
library_calls() { # OBJECT: "ID<TAB>FUNCTION<TAB>calls..." per exercise function that calls the library
    objdump -dr "$1" 2>/dev/null | LIBRARY="$work/library.txt" awk '
        BEGIN { while ((getline s < ENVIRON["LIBRARY"]) > 0) library[s] = 1 }
        function edge(from, to) { sub(/[+-]0x[0-9a-fA-F]+$/, "", to); sub(/@.*/, "", to); if (to != from) calls[from, to] = 1; targets[from] = targets[from] " " to }
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
                if (start !~ /^ex[0-9]+_[0-9]+_/) continue
                # every function reachable from the exercise through functions of the file itself
                delete seen; delete found; list = ""; queue[1] = start; head = 1; tail = 1; seen[start] = 1
                while (head <= tail) {
                    g = queue[head++]
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
        }'
}

# ---- each lesson: stage, compile, check, link; then each exercise in its own process ----------
rows=$work/rows.tsv # id, points, kind, title, message, log
: >"$rows"
: >"$work/notes.tsv"
root_real=$(cd "$root" && pwd -P)
scratch=$(abs "$work")/scratch # the tests' working directory: whatever a submission writes lands here
mkdir -p "$scratch"
start=$(date +%s)
for dir in $(cut -f 4 "$work/selected.tsv" | uniq); do
    n=${dir#lessons/}
    n=${n%%-*}
    out=$work/lesson$n
    out_abs=$(abs "$out")
    stage=$out_abs/src # exercises.c alone, at lessons/N-topic/ so that messages name it as the student knows it
    mkdir -p "$stage/$dir" "$out/include"
    awk -F "$tab" -v OFS="$tab" -v dir="$dir" '$4 == dir { print $1, $2, $3 }' "$work/selected.tsv" >"$out/list.tsv"

    src=$root/$dir/exercises.c
    verdict= # empty, or the kind, message and log that every exercise of this lesson gets
    if [ ! -f "$src" ]; then
        verdict="todo${tab}no $dir/exercises.c in the submission$no_lessons${tab}"
    elif real=$(canon "$src") && case $real in "$root_real"/*) false ;; *) true ;; esac; then
        # a symbolic link (of the file or of a directory above it) out of the submission
        verdict="rejected${tab}$dir/exercises.c is a link to a file outside the submission ($real): not graded${tab}"
    else
        cp "$src" "$stage/$dir/exercises.c"
        # only the course's headers: never the student's exercises.h, never a path to solutions.c
        for header in $HEADERS "$dir/exercises.h"; do cp "$header" "$out/include/"; done
        for header in "$out"/include/*.h; do canon "$header"; done >>"$allowed"
        if ! (cd "$stage" && limit_time 120 $CC $STUDENT_FLAGS -I"$out_abs/include" -MD -MT exercises.o -MF "$out_abs/deps.d" \
            -c "$dir/exercises.c" -o "$out_abs/exercises.o") >"$out/compile.log" 2>&1 </dev/null; then
            error=$(first_error "$out/compile.log")
            verdict="compile${tab}${error:-the compiler stopped (see its output)}${tab}compiler's output: $out/compile.log"
        elif bad=$(forbidden_include "$out_abs/deps.d" "$stage" "$dir/exercises.c") && [ -n "$bad" ]; then
            verdict="rejected${tab}$dir/exercises.c includes $bad, which is not one of the course's headers (a submission may include only those and the C library's): not graded${tab}"
        elif found=$(startup_code "$out/exercises.o") && [ -n "$found" ]; then
            verdict="rejected${tab}$dir/exercises.c defines $found: code that runs outside the tests, in the process that reports their results: not graded${tab}"
        else
            # Only the exercise functions stay global: a helper named like a function of the C
            # library, Check or the course (fprintf, waitpid, srunner_run_all) cannot replace it.
            nm -u "$OBJ/$dir/test_exercises.o" | awk '$2 ~ /^ex[0-9]+_[0-9]+_/ { print $2 }' >"$out/keep.txt"
            if ! objcopy --keep-global-symbols="$out/keep.txt" "$out/exercises.o" "$out/graded.o" >"$out/link.log" 2>&1 ||
                ! $CC $LINK_FLAGS "$OBJ/$dir/test_exercises.o" "$out/graded.o" "$OBJ/tests/harness.o" \
                    "$build/libcourse.a" $LIBS -o "$out/test_exercises" >>"$out/link.log" 2>&1; then
                error=$(first_error "$out/link.log")
                verdict="compile${tab}${error:-the link failed (see its output)}${tab}linker's output: $out/link.log"
            else
                library_calls "$out/exercises.o" >>"$work/notes.tsv"
            fi
        fi
    fi

    while IFS="$tab" read -r id points title; do
        if [ -n "$verdict" ]; then
            kind=${verdict%%"$tab"*} rest=${verdict#*"$tab"}
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$points" "$kind" "$title" "${rest%%"$tab"*}" "${rest#*"$tab"}" >>"$rows"
            continue
        fi
        if [ $(($(date +%s) - start)) -ge "$budget" ]; then
            printf '%s\t%s\tbudget\t%s\tnot run: grading this submission took more than its %s s (GRADE_TIME_BUDGET)\t\n' \
                "$id" "$points" "$title" "$budget" >>"$rows"
            continue
        fi
        : >"$out/$id.tsv"
        (cd "$scratch" && exec "$out_abs/test_exercises" --only "$id" --max-output "$max_output" \
            --max-memory "$max_memory" --results "$out_abs/$id.tsv" --label "exercise $id") >"$out/$id.log" 2>&1 </dev/null
        line=$(awk -F "$tab" '$1 == "exercise"' "$out/$id.tsv")
        if [ -z "$line" ]; then
            printf '%s\t%s\tcrashed\t%s\tthe test program stopped before reporting\tthe test'"'"'s output: %s\n' "$id" "$points" \
                "$title" "$out/$id.log" >>"$rows"
            continue
        fi
        IFS=$tab read -r _ _ _ _ kind _ message <<EOF
$line
EOF
        # what the test's output says about a crash or a memory error
        case $kind in
        crashed)
            if assertion=$(grep -m 1 "Assertion .* failed" "$out/$id.log"); then
                message="$message. Here an assert failed: ${assertion#*test_exercises: }"
            elif corruption=$(grep -m 1 -E '^(free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate|_int_[a-z]+)\(\): |^double free|^corrupted ' "$out/$id.log"); then
                message="$message. Here the C library found the heap corrupted: $corruption"
            fi ;;
        memory)
            summary=$(grep -m 1 '^SUMMARY: ' "$out/$id.log") && message="$message: ${summary#SUMMARY: }" ;;
        esac
        log=
        case $kind in passed | todo | wrong) ;; *) log="the test's output: $out/$id.log" ;; esac
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$points" "$kind" "$title" "$(printf '%s' "$message" | tr '\t\n' '  ' |
            cut -c 1-600)" "$log" >>"$rows"
    done <"$out/list.tsv"
done
[ -s "$rows" ] || { echo "grade.sh: no exercise could be graded (see $work)" >&2; exit 2; }

# ---- the report ---------------------------------------------------------------------------
# Run in the C locale, so that awk sees bytes: results.json must be valid JSON whatever a
# message holds (a backslash, a byte of Latin-1 from a student's error message).
LC_ALL=C RESULTS=$results SUMMARY=$(dirname "$results")/summary.tsv WHO=$name NOTE=$layout_note STAGE=$(abs "$work")/ COURSE=$course awk -F "$tab" '
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
    function unstaged(s,    k, rest, m) { # a staged copy is named lessons/N-topic/exercises.c, as the student knows it
        while ((k = index(s, stage)) > 0) {
            rest = substr(s, k + length(stage))
            m = index(rest, "/src/")
            s = substr(s, 1, k - 1) (m > 0 ? substr(rest, m + 5) : rest)
        }
        while ((k = index(s, course)) > 0) s = substr(s, 1, k - 1) substr(s, k + length(course)) # files of the course itself
        return s
    }
    BEGIN {
        for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
        results = ENVIRON["RESULTS"]; summary = ENVIRON["SUMMARY"]; note = ENVIRON["NOTE"]
        stage = ENVIRON["STAGE"]; sub(/\/$/, "", stage); stage = stage "/"; course = ENVIRON["COURSE"] "/"
    }
    {
        id[NR] = $1; points[NR] = $2; kind[NR] = $3; title[NR] = $4; message[NR] = $5; logfile[NR] = $6
        earned[NR] = $3 == "passed" ? $2 : 0
        total += earned[NR]; possible += $2
        if ($3 != "passed") failed = 1
    }
    END {
        printf "grading %s\n\n", ENVIRON["WHO"]
        if (note != "") printf "  note: %s\n\n", note
        printf "  %-5s %-46s %-9s %s\n", "id", "title", "points", "status"
        for (i = 1; i <= NR; i++) {
            s = status(kind[i], message[i])
            printf "  %-5s %-46s %2d / %-3d %s\n", id[i], title[i], earned[i], points[i], s
            if (kind[i] SUBSEP message[i] SUBSEP logfile[i] == shown) continue # the verdict of a whole lesson: shown once
            shown = kind[i] SUBSEP message[i] SUBSEP logfile[i]
            if (kind[i] != "passed" && message[i] != "")
                printf "        %s\n", substr(unstaged(message[i]), 1, 400)
            if (kind[i] != "passed" && logfile[i] != "")
                printf "        (%s)\n", logfile[i]
        }
        printf "\n  %-52s %2d / %d\n", "total", total, possible
        printf "{\n  \"score\": %d,\n  \"max_score\": %d,\n", total, possible > results
        if (note != "") printf "  \"output\": %s,\n", json(note) > results
        printf "  \"tests\": [\n" > results
        for (i = 1; i <= NR; i++) {
            out = status(kind[i], message[i]) (message[i] != "" ? ": " unstaged(message[i]) : "")
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
    while IFS="$tab" read -r id function calls; do
        echo "  note: $id ($function) calls the course's library: $calls"
    done <"$work/notes.tsv"
    echo "  (fine where an exercise composes library ops, not where it asks for one written by hand)"
fi
echo "  results: $results"
exit $status
