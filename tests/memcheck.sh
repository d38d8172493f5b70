#!/bin/sh
# memcheck.sh - runs programs under valgrind and fails on any memory error or leak.
#   tests/memcheck.sh PROGRAM...      (make memcheck: every walk-through and test program)
# The walk-throughs must free everything. The test programs run their tests in forked
# children (Check), which exit without freeing what Check itself still holds, so for them only
# memory lost for good (definitely or indirectly) counts as a leak. Check's timeouts are
# stretched tenfold, since valgrind runs programs some 20-50 times slower, and the test cases
# tagged "large" (add_large_test_case: sizes and random trials by the hundred) are left out.
# Lesson 7's walk-through trains for 2 steps instead of its minute's worth and evaluates on 512
# tokens (COURSE_STEPS, COURSE_EVAL_TOKENS): its vector code runs some 300 times slower under
# valgrind.
# The programs run one per core at once (MEMCHECK_JOBS=N for another number); their results
# are printed in the order given.
log_dir=${BUILD:-build}/memcheck
mkdir -p "$log_dir"

if [ "${1:-}" = --one ]; then # one program: its line goes to its .result file
    program=$2
    name=$(echo "$program" | tr / _)
    log=$log_dir/$name.log
    case $program in
    */walkthrough) leaks=all ;;
    *) leaks=definite,indirect ;;
    esac
    rm -f "$log" "$log".*
    COURSE_STEPS=${COURSE_STEPS:-2} COURSE_EVAL_TOKENS=${COURSE_EVAL_TOKENS:-512} CK_TIMEOUT_MULTIPLIER=10 CK_EXCLUDE_TAGS=large valgrind -q --trace-children=yes --leak-check=full --errors-for-leak-kinds=$leaks \
        --error-exitcode=99 --log-file="$log.%p" "$program" >"$log" 2>&1
    code=$?
    if [ $code = 0 ]; then
        echo "clean   $program" >"$log_dir/$name.result"
        rm -f "$log" "$log".*
        exit 0
    fi
    if [ $code = 99 ]; then why="valgrind found errors"; else why="the program failed (exit status $code)"; fi
    {
        echo "FAILED  $program: $why. Its output: $log; valgrind's reports: $log.PID"
        for report in "$log".*; do [ -s "$report" ] && head -n 30 "$report"; done | sed 's/^/    /'
        [ $code = 99 ] || tail -n 10 "$log" | sed 's/^/    /'
    } >"$log_dir/$name.result"
    exit 1
fi

jobs=${MEMCHECK_JOBS:-$(nproc 2>/dev/null || echo 1)}
for program in "$@"; do rm -f "$log_dir/$(echo "$program" | tr / _).result"; done
printf '%s\n' "$@" | xargs -P "$jobs" -n 1 sh "$0" --one
status=0
for program in "$@"; do
    result=$log_dir/$(echo "$program" | tr / _).result
    if [ -s "$result" ]; then cat "$result"; else echo "FAILED  $program: memcheck.sh did not finish it"; fi
    grep -q '^clean ' "$result" 2>/dev/null || status=1
done
[ $status = 0 ] && echo "memcheck: $# programs, no memory error and no leak"
exit $status
