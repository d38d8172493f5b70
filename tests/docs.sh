#!/bin/sh
# docs.sh - keeps the walk-through output quoted in docs/ identical to what the code prints.
#
#   tests/docs.sh check    fails if a quoted block differs from the program's output, or if a
#                          walk-through's section numbers and its page's headings disagree
#   tests/docs.sh update   rewrites the quoted blocks from the program's output (and checks the
#                          section numbers too: those it cannot rewrite), and the benchmark runs
#                          the pages quote after "<!-- bench: lessonN -->" (DOCS_BENCH=none: not those;
#                          DOCS_BENCH="4 7": lessons 4 and 7's alone)
#   tests/docs.sh readme LOG [update]   compares (or rewrites) the summary of `make test`
#                          that README.md quotes after "<!-- output: make test summary -->"
#                          with the end of LOG, the output of `make test` on a clean checkout
#                          (CI runs it; on a checkout with exercises done the summary differs)
#
# A quoted block in docs/*.md is a marker line followed by a fenced block:
#
#   <!-- output: lesson1 "2.4 Approach 2" -->
#   ```text
#   ... (kept equal to the section of `make lesson1` whose heading starts with "2.4 Approach 2")
#   ```
#
# A section of a walk-through's output runs from its heading line (which starts in column 0) to
# the next heading: its lines are indented, and a blank line inside it (between the batches of
# a 3-D tensor, say) is followed by another indented line.
mode=${1:-check}
build=${BUILD:-build}
docs=${DOCS:-docs} # the pages: English in docs/, their Chinese twins in docs/zh/
status=0

# The two editions. Each lesson page N-*.md in docs/ has a twin of the same name in docs/zh/,
# and the two have the same skeleton: the same headings at the same levels with the same
# section numbers, the same quoted output blocks byte for byte, the same pictures, in the same
# order. Every relative link of either edition must name a file that exists.
skeleton() {
    awk '
        fenced { if ($0 ~ /^```/) fenced = 0; if (quoting) print "  " $0; if (!fenced) quoting = 0; next }
        /^```/ { fenced = 1; next }
        /^<!-- (output|bench): .* -->$/ { print "quoted " $0; quoting = 1; next }
        /^#+ / { level = $0; sub(/ .*/, "", level); num = substr($0, length(level) + 2)
                 if (match(num, /^[0-9]+(\.[0-9]+)*\.?( |$)/)) num = substr(num, 1, RLENGTH); else num = ""
                 sub(/ $/, "", num); print "heading " level " " num; next }
        /!\[/ { line = $0 # an image: ![alt](path), whose alt may hold brackets of its own
          while (match(line, /\]\([^) ]*\.(png|jpg|svg|gif)\)/)) {
              image = substr(line, RSTART + 2, RLENGTH - 3); line = substr(line, RSTART + RLENGTH)
              sub(/.*\//, "", image); print "picture " image
          } }
    ' "$1"
}
links() { # prints each relative link of page $1 whose file does not exist
    dir=$(dirname "$1")
    awk '/^```/ { fenced = !fenced; next } !fenced {
            line = $0
            while (match(line, /\]\([^) ]+\)/)) {
                target = substr(line, RSTART + 2, RLENGTH - 3); line = substr(line, RSTART + RLENGTH)
                if (target !~ /^(https?:|mailto:|#)/) { sub(/#.*/, "", target); print target }
            } }' "$1" | while IFS= read -r target; do
        [ -e "$dir/$target" ] || echo "$1: a link to $target, which does not exist (from $dir/)"
    done
}
parity() {
    found=0
    for page in "$docs"/[0-9]-*.md; do
        [ -f "$page" ] || continue
        found=1
        twin=$docs/zh/${page##*/}
        if [ ! -f "$twin" ]; then
            echo "$page has no Chinese twin: $twin is missing" >&2
            status=1
            continue
        fi
        skeleton "$page" >"$build/skeleton.en"
        skeleton "$twin" >"$build/skeleton.zh"
        if ! cmp -s "$build/skeleton.en" "$build/skeleton.zh"; then
            echo "$page and $twin differ in their headings, quoted output or pictures (< English, > Chinese):" >&2
            diff "$build/skeleton.en" "$build/skeleton.zh" | grep '^[<>]' | head -20 >&2
            echo "(a change to one page changes its twin in the same commit)" >&2
            status=1
        fi
    done
    for page in "$docs"/zh/*.md; do
        [ -f "$page" ] && [ ! -f "$docs/${page##*/}" ] && { echo "$page has no English twin in $docs/" >&2; status=1; }
    done
    [ $found = 1 ] || { echo "docs.sh parity: no lesson page in $docs/" >&2; status=1; }
    bad=$(for page in "$docs"/*.md "$docs"/zh/*.md README.md; do [ -f "$page" ] && links "$page"; done)
    [ -z "$bad" ] || { echo "$bad" >&2; status=1; }
    rm -f "$build/skeleton.en" "$build/skeleton.zh"
}

if [ "$mode" = parity ]; then
    mkdir -p "$build"
    parity
    [ $status = 0 ] && echo "docs: each lesson page and its Chinese twin have the same sections, quoted output and pictures; every link resolves"
    exit $status
fi

if [ "$mode" = readme ]; then
    log=$2
    [ -s "$log" ] || { echo "docs.sh readme: no make test output in '$log'" >&2; exit 2; }
    # the summary: the lines after the last blank line of the log
    summary=$(awk '/^$/ { text = ""; next } { text = text $0 "\n" } END { printf "%s", text }' "$log")
    awk -v summary="$summary" '
        skipping && /^```$/ { skipping = 0; next }
        skipping { next }
        /^<!-- output: make test summary -->$/ {
            print; printf "```text\n%s\n```\n", summary; found = 1
            if ((getline line) > 0 && line == "```text") skipping = 1
            else if (line != "") print line
            next
        }
        { print }
        END { if (!found) { print "README.md: no <!-- output: make test summary --> marker" > "/dev/stderr"; exit 1 } }
    ' README.md >"$build/README.tmp" || exit 1
    if cmp -s README.md "$build/README.tmp"; then
        echo "README.md quotes make test's summary as a clean checkout prints it"
    elif [ "${3:-}" = update ]; then
        cp "$build/README.tmp" README.md
        echo "updated README.md"
    else
        echo "README.md quotes a make test summary that a clean checkout no longer prints:" >&2
        diff README.md "$build/README.tmp" >&2
        echo "(fix: make test > log on a clean checkout, then sh tests/docs.sh readme log update)" >&2
        status=1
    fi
    rm -f "$build/README.tmp"
    exit $status
fi
outputs=$build/docs-outputs
mkdir -p "$outputs"

for doc in "$docs"/*.md "$docs"/zh/*.md; do
    [ -f "$doc" ] || continue
    lessons=$(sed -n 's/^<!-- output: lesson\([0-9]*\) .*/\1/p' "$doc" | sort -u)
    for n in $lessons; do
        program=$build/lesson$n/walkthrough
        if [ ! -x "$program" ]; then
            echo "docs.sh: $program is not built (run make first)" >&2
            exit 2
        fi
        # Lesson 7 trains for a minute; the sections the docs quote come before the training,
        # so 200 steps give them as the full run does (it prints its own numbers for the rest).
        COURSE_STEPS=200 ${EMULATOR:-} "$program" >"$outputs/lesson$n.txt" 2>/dev/null || { echo "docs.sh: $program failed" >&2; exit 2; }
    done
    [ -n "$lessons" ] || continue

    awk -v outputs="$outputs" -v doc="$doc" '
        # the section of lesson n'"'"'s output whose heading starts with `heading`
        function section(n, heading,    file, line, inside, text, blanks) {
            file = outputs "/lesson" n ".txt"
            inside = 0; text = ""; blanks = ""
            while ((getline line < file) > 0) {
                if (!inside) {
                    if (index(line, heading) == 1) { inside = 1; text = line "\n" }
                    continue
                }
                if (line == "") { blanks = blanks "\n"; continue }
                if (line !~ /^ /) break            # the next heading
                text = text blanks line "\n"; blanks = ""
            }
            close(file)
            if (!inside) {
                printf "%s: no section \"%s\" in the output of lesson %s\n", doc, heading, n > "/dev/stderr"
                missing = 1
            }
            return text
        }
        skipping && /^```$/ { skipping = 0; next }
        skipping { next }
        /^<!-- output: lesson[0-9]+ ".*" -->$/ {
            print
            n = $0; sub(/^<!-- output: lesson/, "", n); sub(/ .*/, "", n)
            heading = $0; sub(/^[^"]*"/, "", heading); sub(/" -->$/, "", heading)
            printf "```text\n%s```\n", section(n, heading)
            if ((getline line) > 0 && line == "```text") skipping = 1
            else if (line != "") print line
            next
        }
        { print }
        END { exit missing }
    ' "$doc" >"$outputs/doc.tmp" || { status=1; continue; }

    if ! cmp -s "$doc" "$outputs/doc.tmp"; then
        if [ "$mode" = update ]; then
            cp "$outputs/doc.tmp" "$doc"
            echo "updated $doc"
        else
            echo "$doc quotes output that the code no longer prints; run make docs:" >&2
            diff "$doc" "$outputs/doc.tmp" | head -20 >&2
            status=1
        fi
    fi
done
rm -f "$outputs/doc.tmp"

# Benchmark runs. A block after "<!-- bench: lessonN -->" is the whole output of lesson N's
# benchmark, the run a page's "How fast" section reads. `update` runs each such benchmark once
# (minutes, on a machine that should be quiet) and rewrites the blocks: DOCS_BENCH unset or
# "all", every one; "none", none; "4 7", lessons 4 and 7's. `check` only makes sure that each
# block is that benchmark's output, since its numbers change from run to run; a page's prose
# quotes ranges over runs, not the block's numbers.
bench_lessons=$(cat "$docs"/*.md "$docs"/zh/*.md 2>/dev/null | sed -n 's/^<!-- bench: lesson\([0-9]*\) -->$/\1/p' | sort -u)
case "${DOCS_BENCH:-all}" in
    all) rerun=$bench_lessons ;;
    none) rerun= ;;
    *) rerun=$DOCS_BENCH ;;
esac
[ "$mode" = update ] || rerun=
for n in $rerun; do
    case " $(echo $bench_lessons) " in
        *" $n "*) ;;
        *) echo "docs.sh: DOCS_BENCH=$DOCS_BENCH: no page quotes the benchmark of lesson '$n' (the pages quote lessons $(echo $bench_lessons); or all, none)" >&2; exit 2 ;;
    esac
    program=$build/lesson$n/bench
    [ -x "$program" ] || { echo "docs.sh: $program is not built (run make first)" >&2; exit 2; }
    echo "docs.sh: running lesson $n's benchmark for the docs (make sure the machine is quiet)"
    # stdout alone: what the benchmark prints as its report (warnings go to the terminal)
    ${EMULATOR:-} "$program" >"$outputs/bench$n.txt" || { echo "docs.sh: $program failed" >&2; exit 2; }
done
for doc in "$docs"/*.md "$docs"/zh/*.md; do
    [ -f "$doc" ] || continue
    grep -q '^<!-- bench: lesson[0-9]* -->$' "$doc" || continue
    awk -v outputs="$outputs" -v doc="$doc" -v rerun=" $(echo $rerun) " '
        function fail(message) { printf "%s: %s\n", doc, message > "/dev/stderr"; bad = 1 }
        skipping && /^```$/ { skipping = 0; if (!rewrite) print; next }
        skipping { if (!rewrite) print; next }
        /^<!-- bench: lesson[0-9]+ -->$/ {
            print
            n = $0; sub(/^<!-- bench: lesson/, "", n); sub(/ -->$/, "", n)
            rewrite = index(rerun, " " n " ") > 0
            if ((getline line) <= 0 || line != "```text") { fail("no ```text block after " $0); print line; next }
            skipping = 1
            if (rewrite) {
                file = outputs "/bench" n ".txt"
                printf "```text\n"
                while ((getline out < file) > 0) printf "%s\n", out
                close(file)
                printf "```\n"
            } else {
                print line
                if ((getline line) <= 0 || index(line, "==== lesson " n ": ") != 1)
                    fail("the block after <!-- bench: lesson" n " --> is not lesson " n "'"'"'s benchmark output (it starts with ==== lesson " n ":)")
                print line
            }
            next
        }
        { print }
        END { exit bad }
    ' "$doc" >"$outputs/doc.tmp" || { status=1; continue; }
    if [ "$mode" = update ] && ! cmp -s "$doc" "$outputs/doc.tmp"; then
        cp "$outputs/doc.tmp" "$doc"
        echo "updated $doc (benchmark output)"
    fi
done
rm -f "$outputs/doc.tmp"

# Section numbers. Lessons 1-6 are the source chapter's sections 2-7 and number theirs as it
# does (lesson 3: 4.1, 4.2, ...; numbers past the chapter's last are the course's own); lesson 7
# has no chapter section and numbers its own 1, 2, 3, .... A page's numbered headings (besides
# the chapter's section 1, the questions) run from the first without a gap, and every heading
# the walk-through prints carries one of them, in order, again without a gap.
for out in "$outputs"/lesson*.txt; do
    [ -f "$out" ] || continue
    n=${out##*/lesson}; n=${n%.txt}
    for page in "$docs"/"$n"-*.md "$docs"/zh/"$n"-*.md; do
        [ -f "$page" ] || continue
        awk -v n="$n" -v page="$page" -v out="$out" '
            function fail(message) { printf "%s\n", message > "/dev/stderr"; bad = 1 }
            # the position of a section number in its sequence: k of x.k in the chapter, n itself otherwise
            function position(num) { return chapter ? substr(num, index(num, ".") + 1) + 0 : num + 0 }
            BEGIN {
                chapter = n >= 1 && n <= 6 ? n + 1 : 0
                last = 0; previous = "the start"
                while ((getline line < page) > 0) {
                    if (!match(line, /^## [0-9]+(\.[0-9]+)?/)) continue
                    num = substr(line, 4, RLENGTH - 3)
                    if (chapter && num == "1") continue
                    if (chapter ? num !~ ("^" chapter "\\.[0-9]+$") : num !~ /^[0-9]+$/) {
                        fail(sprintf("%s: heading %s: lesson %s numbers its sections %s", page, num, n,
                                     chapter ? "as the chapter, " chapter ".1, " chapter ".2, ..." : "1, 2, 3, ..."))
                        continue
                    }
                    if (position(num) != last + 1)
                        fail(sprintf("%s: heading %s comes after %s: a gap, or out of order", page, num, previous))
                    last = position(num); previous = num; numbered[num] = 1
                }
                close(page)
                last = 0; previous = "the start"
                while ((getline line < out) > 0) {
                    if (!match(line, /^[0-9]+(\.[0-9]+)? /)) continue
                    num = substr(line, 1, RLENGTH - 1)
                    if (!(num in numbered)) {
                        fail(sprintf("lesson %s'"'"'s walk-through prints section %s, which %s has no heading for",
                                     n, num, page))
                        continue
                    }
                    if (position(num) != last && position(num) != last + 1)
                        fail(sprintf("lesson %s'"'"'s walk-through prints section %s after %s: a gap, or out of order (%s)",
                                     n, num, previous, page))
                    last = position(num); previous = num
                }
                exit bad
            }' || status=1
    done
done
[ "$mode" = check ] && parity
[ "$mode" = check ] && [ $status = 0 ] && echo "docs: every quoted walk-through output matches the code, and its section numbers the page's"
exit $status
