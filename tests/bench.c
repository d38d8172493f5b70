/*
 * bench.c - timing and reporting for the lessons' benchmarks. See bench.h.
 */
#define _DARWIN_C_SOURCE /* _SC_NPROCESSORS_ONLN, which macOS hides under _POSIX_C_SOURCE alone */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include "kernels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_CFLAGS
#define BENCH_CFLAGS "(unknown)"
#endif

double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static bool quick_mode;

/* "AMD EPYC 9R14" from Linux's /proc/cpuinfo, its first "model name"; elsewhere, and where
 * there is none (ARM's cpuinfo has none), the machine's architecture ("arm64"). */
static void cpu_name(char *buf, size_t size) {
    snprintf(buf, size, "unknown CPU");
#ifdef __linux__
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon++;
            while (*colon == ' ') colon++;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(buf, size, "%s", colon);
            break;
        }
    }
    if (f) fclose(f);
#endif
    struct utsname u;
    if (strcmp(buf, "unknown CPU") == 0 && uname(&u) == 0) snprintf(buf, size, "%s", u.machine);
}

/* Whether the usage text lists arg as an option taking a value ("[--rows R]"), so that a
 * mistyped option (--sizes=512, --row) stops the run instead of being ignored. */
static bool usage_names(const char *usage, const char *arg) {
    size_t len = strlen(arg);
    if (len < 3 || strncmp(arg, "--", 2) != 0) return false;
    for (const char *at = strstr(usage, arg); at; at = strstr(at + 1, arg))
        if (at > usage && at[-1] == '[' && at[len] == ' ') return true;
    return false;
}

BenchOptions bench_start(int argc, char **argv, const char *title, const char *usage) {
    BenchOptions o = {false, NULL, argc, argv};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) o.quick = true;
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) o.data = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s [--quick] [--data FILE] %s\n", argv[0], usage);
            exit(0);
        } else if (usage_names(usage, argv[i]) && i + 1 < argc) i++; /* its value, read later */
        else {
            fprintf(stderr, "bench: unknown option or missing value: '%s'\nusage: %s [--quick] [--data FILE] %s\n",
                    argv[i], argv[0], usage);
            exit(2);
        }
    }
    quick_mode = o.quick;
    char cpu[128], date[32];
    cpu_name(cpu, sizeof cpu);
    time_t now = time(NULL);
    struct tm utc;
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime_r(&now, &utc));
    long cores = 0;
#ifdef _SC_NPROCESSORS_ONLN
    cores = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    printf("==== %s\n", title);
    printf("machine: %s, %ld cores online; single thread\n", cpu, cores);
    printf("compiler: %s, flags: %s; %s%s\n", __VERSION__, BENCH_CFLAGS, date,
           o.quick ? "; --quick (a smoke run)" : "");
    printf("kernels: %s, %s (COURSE_KERNELS=%s; rows marked with another setting run with the table filled for "
           "it)\n",
           kernels_name(), kernels_instructions(), kernels_setting());
    return o;
}

BenchTime bench_with_kernels(const BenchOptions *o, const char *mode, void (*fn)(void *), void *arg) {
    const char *was = kernels_setting();
    kernels_use(mode);
    BenchTime t = bench_default(o, fn, arg);
    kernels_use(was);
    return t;
}

/* The text after --NAME, or NULL when the option is not given. */
static const char *option_text(const BenchOptions *o, const char *name) {
    for (int i = 1; i + 1 < o->argc; i++)
        if (strncmp(o->argv[i], "--", 2) == 0 && strcmp(o->argv[i] + 2, name) == 0) return o->argv[i + 1];
    return NULL;
}

/* One value of --NAME, from text up to a comma or the end (*end is set past it); exits on a
 * value that is not a whole number from 1 to BENCH_OPTION_MAX. */
static int64_t option_value(const char *name, const char *text, const char **end) {
    char *stop;
    errno = 0;
    long long v = strtoll(text, &stop, 10);
    if (stop == text || (*stop != '\0' && *stop != ',') || errno != 0 || v < 1 || v > BENCH_OPTION_MAX) {
        fprintf(stderr, "bench: --%s takes whole numbers from 1 to %d, got '%s'\n", name, BENCH_OPTION_MAX, text);
        exit(2);
    }
    *end = *stop == ',' ? stop + 1 : stop;
    return v;
}

int64_t bench_option_int(const BenchOptions *o, const char *name, int64_t fallback) {
    const char *text = option_text(o, name), *end;
    if (!text) return fallback;
    int64_t v = option_value(name, text, &end);
    if (*end != '\0' || end[-1] == ',') {
        fprintf(stderr, "bench: --%s takes one number, got '%s'\n", name, text);
        exit(2);
    }
    return v;
}

int bench_option_list(const BenchOptions *o, const char *name, const int64_t *fallback, int n_fallback, int64_t *out,
                      int max) {
    const char *text = option_text(o, name);
    if (text) {
        int n = 0;
        for (const char *p = text; n < max && (n == 0 || *p != '\0');) out[n++] = option_value(name, p, &p);
        return n;
    }
    int n = n_fallback < max ? n_fallback : max;
    for (int i = 0; i < n; i++) out[i] = fallback[i];
    return n;
}

static int compare_doubles(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

BenchTime bench_time(void (*fn)(void *), void *arg, int warmups, int min_reps, double min_seconds) {
    enum { MAX_REPS = 1000 };
    static double times[MAX_REPS];
    for (int i = 0; i < warmups; i++) fn(arg);
    int reps = 0;
    double start = bench_now();
    while (reps < MAX_REPS && (reps < min_reps || bench_now() - start < min_seconds)) {
        double t0 = bench_now();
        fn(arg);
        times[reps++] = bench_now() - t0;
    }
    qsort(times, (size_t)reps, sizeof times[0], compare_doubles);
    return (BenchTime){times[0], times[reps / 2], reps};
}

BenchTime bench_default(const BenchOptions *o, void (*fn)(void *), void *arg) {
    return o->quick ? bench_time(fn, arg, 1, 2, 0.0) : bench_time(fn, arg, 2, 5, 0.2);
}

/* One spell of bench_pair, folded into p: each side's best time and the median of this spell. */
static void pair_spell(const BenchOptions *o, BenchPair *p, void (*fa)(void *), void *a, void (*fb)(void *), void *b) {
    enum { MAX_REPS = 500 };
    static double times[2][MAX_REPS];
    int warmups = o->quick ? 1 : 2, min_reps = o->quick ? 2 : 5;
    double min_seconds = o->quick ? 0.0 : 0.25;
    for (int i = 0; i < warmups; i++) fa(a), fb(b);
    int reps = 0;
    double start = bench_now();
    while (reps < MAX_REPS && (reps < min_reps || bench_now() - start < min_seconds)) {
        double t0 = bench_now();
        fa(a);
        double t1 = bench_now();
        fb(b);
        times[0][reps] = t1 - t0;
        times[1][reps++] = bench_now() - t1;
    }
    BenchTime *out[2] = {&p->a, &p->b};
    for (int k = 0; k < 2; k++) {
        qsort(times[k], (size_t)reps, sizeof times[k][0], compare_doubles);
        double best = p->spells > 0 && out[k]->best < times[k][0] ? out[k]->best : times[k][0];
        *out[k] = (BenchTime){best, times[k][reps / 2], out[k]->reps + reps};
    }
    p->spells++;
}

BenchPair bench_pair(const BenchOptions *o, void (*fa)(void *), void *a, void (*fb)(void *), void *b,
                     double retry_above) {
    BenchPair p = {{0, 0, 0}, {0, 0, 0}, 0};
    pair_spell(o, &p, fa, a, fb, b);
    while (!o->quick && retry_above > 0 && p.b.best > retry_above * p.a.best && p.spells < 3) {
        /* a busy spell can last seconds: half a second idle, then another spell */
        nanosleep(&(struct timespec){0, 500000000}, NULL);
        pair_spell(o, &p, fa, a, fb, b);
    }
    return p;
}

void bench_table_header(const char *what, const char *rate_unit, const char *baseline) {
    printf("\n%s (speed: the baseline's time / this time; baseline: %s)\n", what, baseline);
    printf("  %-44s %12s %12s %8s\n", "", "best time", rate_unit, "speed");
}

void bench_table_row(const char *name, BenchTime t, double rate, double baseline_seconds) {
    double ms = t.best * 1e3;
    printf("  %-44s %9.3f ms %12.2f %7.2fx\n", name, ms, rate, baseline_seconds / t.best);
    fflush(stdout);
}

static bool target(const char *description, double value, const char *relation, double bound, bool met,
                   const BenchPair *p) {
    printf("target: %s: %.2f (needs %s %.2f): %s", description, value, relation, bound,
           met          ? "met"
           : quick_mode ? "MISSED (a --quick run: too short to judge)"
                        : "MISSED");
    if (p)
        printf(" [timed in turns: %.3f ms vs %.3f ms%s]", p->b.best * 1e3, p->a.best * 1e3,
               p->spells == 1   ? ""
               : p->spells == 2 ? ", best of 2 spells"
                                : ", best of 3 spells");
    printf("\n");
    return met;
}

bool bench_target_at_least(const char *description, double value, double need) {
    return target(description, value, ">=", need, value >= need, NULL);
}

bool bench_target_at_most(const char *description, double value, double limit) {
    return target(description, value, "<=", limit, value <= limit, NULL);
}

bool bench_target_pair_at_most(const char *description, BenchPair p, double limit) {
    double value = p.b.best / p.a.best;
    return target(description, value, "<=", limit, value <= limit, &p);
}

bool bench_target_pair_at_least(const char *description, BenchPair p, double need) {
    double value = p.a.best / p.b.best;
    return target(description, value, ">=", need, value >= need, &p);
}

FILE *bench_data_open(const BenchOptions *o, const char *columns) {
    if (!o->data) return NULL;
    FILE *f = fopen(o->data, "w");
    if (!f) {
        fprintf(stderr, "bench: cannot write %s\n", o->data);
        exit(2);
    }
    fprintf(f, "# %s\n", columns);
    return f;
}

void bench_warm_heap(size_t bytes) {
#ifdef __GLIBC__
    mallopt(M_MMAP_MAX, 0);        /* never map a large block on its own: take it from the heap */
    mallopt(M_TRIM_THRESHOLD, -1); /* never hand freed heap back to the system */
#endif
    /* One write per 4 KB page maps every page in. Through a volatile pointer: a plain memset
     * right before free is a dead store, and gcc drops it (it did, and nothing was warmed). */
    volatile char *p = malloc(bytes);
    for (size_t i = 0; p && i < bytes; i += 4096) p[i] = 1;
    free((void *)p);
}

const void *volatile bench_sink;

void bench_keep(const void *p) { bench_sink = p; }
