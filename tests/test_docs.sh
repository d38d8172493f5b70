#!/bin/sh
# test_docs.sh - shows that `tests/docs.sh parity` catches a page changed without its twin: on a
# copy of docs/, each mutation below (a section, a quoted output block or a picture removed from
# one edition only, a quoted line edited, a twin missing, a broken link) must fail the check,
# with a message that names what differs, and the unchanged copy must pass. Run by make check-docs.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# fresh: a copy of the repository's top level in $tmp/w, docs/ copied (to be mutated) and the
# rest linked, so that the pages' links to ../common/... still resolve
fresh() {
    rm -rf "$tmp/w"
    mkdir "$tmp/w"
    for f in "$repo"/*; do
        case ${f##*/} in docs | build*) ;; *) ln -s "$f" "$tmp/w/${f##*/}" ;; esac
    done
    cp -R "$repo/docs" "$tmp/w/docs"
}
parity() { (cd "$tmp/w" && BUILD="$tmp/b" sh "$repo/tests/docs.sh" parity) >"$tmp/out" 2>&1; }

# expect NAME TEXT: the check must fail, and its message must contain TEXT
expect() {
    if parity; then
        echo "FAIL $1: the parity check passed"; failures=$((failures + 1))
    elif ! grep -q -F -- "$2" "$tmp/out"; then
        echo "FAIL $1: the message does not say '$2':"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    else
        echo "ok   $1"
    fi
}
# drop FILE START [PART]: deletes the first line of FILE that starts with START (and contains
# PART), and for a quoted output marker the fenced block after it
drop() {
    awk -v start="$2" -v part="${3:-}" '
        !done && index($0, start) == 1 && index($0, part) { done = 1; if ($0 ~ /^<!-- /) block = 1; next }
        block && /^```$/ { block = 0; next }
        block { next }
        { print }' "$1" >"$tmp/page" && cp "$tmp/page" "$1"
}

fresh
if parity; then echo "ok   the pages as they are pass"; else
    echo "FAIL the pages as they are do not pass:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
fi

fresh; drop "$tmp/w/docs/zh/2-reduce.md" '## 3.2 '
expect "a numbered section removed from the Chinese page only" "heading ## 3.2"
fresh; drop "$tmp/w/docs/3-softmax.md" '## 4.3 '
expect "a numbered section removed from the English page only" "heading ## 4.3"
fresh; drop "$tmp/w/docs/zh/1-broadcast.md" '<!-- output: lesson1 "2.4 '
expect "a quoted output block removed from the Chinese page only" 'quoted <!-- output: lesson1 "2.4'
fresh; drop "$tmp/w/docs/zh/1-broadcast.md" '![' '(../img/1-broadcast-grads.png)'
expect "a picture removed from the Chinese page only" "picture 1-broadcast-grads.png"
fresh; drop "$tmp/w/docs/6-bmm.md" '!['
expect "a picture removed from the English page only" "picture "
fresh; awk 'inside && !done && /^    / { $0 = $0 " (edited)"; done = 1 } /^<!-- output: / { inside = 1 } { print }' \
    "$tmp/w/docs/zh/5-gather.md" >"$tmp/page" && cp "$tmp/page" "$tmp/w/docs/zh/5-gather.md"
expect "a line of quoted output edited in the Chinese page only" "(edited)"
fresh; rm "$tmp/w/docs/zh/7-train.md"
expect "a Chinese twin missing" "docs/zh/7-train.md is missing"
fresh; printf '\nSee [the core](../common/no-such-file.h).\n' >>"$tmp/w/docs/zh/4-permute.md"
expect "a link to a file that does not exist" "no-such-file.h, which does not exist"

[ $failures = 0 ] && echo "test_docs.sh: every mutation of one edition fails the parity check" && exit 0
echo "test_docs.sh: $failures check(s) failed"
exit 1
