/*
 * bench.h - what every lesson's benchmark (lessons/N-topic/bench.c, `make bench`) shares:
 * timing with warm-ups and repeats, the options, the header that says where the numbers were
 * measured, and the table whose last column is each row's ratio to a baseline measured in the
 * same run.
 *
 * A benchmark is not a test: it fails only when it cannot run. Targets are printed as "met"
 * or "MISSED" next to the ratio they are about, because on a shared, noisy machine a single
 * slow run is not a bug. Ratios, measured seconds apart in one run, are what to compare
 * across machines, not times.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    bool quick;       /* --quick: the smallest sizes and fewest repeats (a smoke test, for CI) */
    const char *data; /* --data FILE: also write the measurements for the plots there */
    int argc;
    char **argv;
} BenchOptions;

/* Parses --quick, --data FILE and --help (which prints `usage` and exits); the benchmark's
 * own options stay in argv for bench_option_int/bench_option_list. Prints the header, with
 * the kernels that run (kernels.h): those COURSE_KERNELS names, the fast paths when it is
 * unset. */
BenchOptions bench_start(int argc, char **argv, const char *title, const char *usage);

/* Every benchmark option is a size or a count: a whole number from 1 to BENCH_OPTION_MAX. A
 * value outside that, or not a number, ends the program with a message naming the option
 * (exit status 2), before anything is allocated. */
#define BENCH_OPTION_MAX (1 << 20)
/* The value of --NAME N, or fallback. */
int64_t bench_option_int(const BenchOptions *o, const char *name, int64_t fallback);
/* --NAME A,B,C into out (at most max values): the count, or the fallback's count. */
int bench_option_list(const BenchOptions *o, const char *name, const int64_t *fallback, int n_fallback, int64_t *out,
                      int max);

/* Seconds on a monotonic clock. */
double bench_now(void);

typedef struct {
    double best, median; /* seconds per call */
    int reps;
} BenchTime;

/* Calls fn(arg) `warmups` times untimed, then times it until both min_reps calls and
 * min_seconds have passed (at most max_reps calls). The best time is the one to compare: noise
 * only ever adds time. */
BenchTime bench_time(void (*fn)(void *), void *arg, int warmups, int min_reps, double min_seconds);
/* bench_time with the defaults (2 warm-ups, 5 repeats, 0.2 s; --quick: 1, 2, 0). */
BenchTime bench_default(const BenchOptions *o, void (*fn)(void *), void *arg);

/* bench_default with the table of kernels filled for mode ("reference", "portable"), for the
 * rows that show what the fast path buys; filled as before again after. */
BenchTime bench_with_kernels(const BenchOptions *o, const char *mode, void (*fn)(void *), void *arg);

/* The two times a target compares, taken in turns: fa(a) and fb(b) are each called twice
 * untimed, then timed alternately (a, b, a, b, ...) for a spell of at least 5 calls each and
 * 0.25 s (--quick: one untimed call each, then 2 timed). When b's time is more than
 * `retry_above` times a's (0: never), up to two more spells follow, each after half a second
 * idle, and each side keeps its best time over all of them: noise only ever adds time.
 *
 * Why: on a shared machine another program's busy spell slows whatever runs during it, and
 * two times taken seconds apart also measure that (lesson 1's benchmark printed 1.88 and 4.83
 * for the same ratio a minute apart). Taken in turns, both see the same spells. Such spells
 * slow reads that jump around memory (a transposed operand) far more than reads in order, so
 * a ratio that misses gets another chance in a later spell. Lesson 6's OpenBLAS times are not
 * taken this way: they come from another process (its core type is fixed when it loads). */
typedef struct {
    BenchTime a, b;
    int spells;
} BenchPair;
BenchPair bench_pair(const BenchOptions *o, void (*fa)(void *), void *a, void (*fb)(void *), void *b,
                     double retry_above);

/* A table: a header line, then rows of a name, the best time, a rate (unit "GFLOP/s",
 * "GB/s", ...) and the ratio of the baseline's time to this row's (1.00 for the baseline,
 * above 1 is faster than it). */
void bench_table_header(const char *what, const char *rate_unit, const char *baseline);
void bench_table_row(const char *name, BenchTime t, double rate, double baseline_seconds);
/* A line "target: DESCRIPTION: 0.97 (needs >= 0.50): met" (or MISSED). Returns whether met.
 * at_least for speeds relative to a baseline, at_most for times relative to one. */
bool bench_target_at_least(const char *description, double value, double need);
bool bench_target_at_most(const char *description, double value, double limit);

/* The same, for the two times of a BenchPair, which the line also shows: at_most compares b's
 * time to a's (b / a: a the baseline), at_least b's speed to a's (a / b). */
bool bench_target_pair_at_most(const char *description, BenchPair p, double limit);
bool bench_target_pair_at_least(const char *description, BenchPair p, double need);

/* The data file (--data), opened for writing with a comment line naming the columns; NULL when
 * the option was not given. */
FILE *bench_data_open(const BenchOptions *o, const char *columns);

/* Warm memory, as a long-running program has it: glibc's malloc is told to serve every
 * allocation from its heap (none mapped fresh from the system) and to keep what is freed (no
 * trimming), and `bytes` of heap are written once, now, before anything is timed. Without it,
 * every large result is new memory, and the first write to each 4 KB page of it costs a page
 * fault: on a virtual machine, often more than the op itself. Elsewhere than glibc it only
 * writes the bytes. */
void bench_warm_heap(size_t bytes);

/* Keeps the compiler from dropping a computation whose result is never used: the pointer is
 * stored where the compiler must assume someone reads it. */
extern const void *volatile bench_sink;
void bench_keep(const void *p);

#endif /* BENCH_H */
