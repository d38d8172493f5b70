/*
 * harness.c - the shared test runner. See harness.h.
 */
/* Is this build under AddressSanitizer (SANITIZE=1 builds it with UBSan)? It reserves terabytes
 * of address space, so the memory limit cannot be an address-space one there (limit_memory),
 * and its reports are caught per test (watch_sanitizers). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(UNDER_ASAN) && defined(__linux__)
#define _GNU_SOURCE /* dlopen's RTLD_NOLOAD, to find gcc's UBSan runtime (watch_sanitizers) */
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include "harness.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef UNDER_ASAN
#include <dlfcn.h>
#endif
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernels.h"
#include "remote.h"

enum {
    EXIT_TODO = 77,            /* a probe that reached EXERCISE_TODO() */
    PROBE_SECONDS = 3,         /* time a probe may take; Check's $CK_TIMEOUT_MULTIPLIER scales it */
    EXERCISE_TEST_SECONDS = 5, /* per test; Check scales it by $CK_TIMEOUT_MULTIPLIER */
};
#define DEFAULT_MAX_MEMORY (1LL << 30) /* bytes of memory an exercise's test may take (--max-memory) */

/* ==== per-test fixture ================================================================== */

Ctx *test_ctx;
static long long output_limit; /* see limit_output */
static long long memory_limit; /* see limit_memory */
static const char *probing;    /* while probing: the id of the exercise being probed, e.g. "1.2" */
static const char *tolerating; /* the TODO exercise whose tests run past its EXERCISE_TODO() line */

/* ---- sanitizer reports (SANITIZE=1) ------------------------------------------------------
 * A sanitizer's report ends the test's process. Its options are compiled in, so that it exits
 * with EXIT_SANITIZER (the grader's runner uses the same code), and in each test the report is
 * written to a file, which the death callback copies to stderr and turns into the test's
 * failure message: the line that names the error and where it happened. The options are weak
 * definitions, and the runtime's setters are named only in a sanitized build: a weak reference
 * to a function that is nowhere defined links on Linux, but not on macOS. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
/* weak: a test program may need options of its own (test_bad_input.c: malloc may return NULL) */
__attribute__((weak)) const char *__asan_default_options(void) { return "exitcode=87"; }
__attribute__((weak)) const char *__ubsan_default_options(void) {
    return "exitcode=87:halt_on_error=1:print_stacktrace=1";
}
#ifdef UNDER_ASAN
void __sanitizer_set_report_path(const char *path);
void __sanitizer_set_death_callback(void (*callback)(void));
static char report_path[64];

static void sanitizer_died(void) {
    char path[96], text[8192], line[512] = "";
    snprintf(path, sizeof path, "%s.%ld", report_path, (long)getpid());
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    unlink(path);
    text[n] = '\0';
    if (write(STDERR_FILENO, text, n) < 0) { /* the message below still says what happened */
    }
    /* UBSan's "file:line:col: runtime error: ..." or ASan's "SUMMARY: AddressSanitizer: ..." */
    const char *key = strstr(text, "runtime error:");
    if (key)
        while (key > text && key[-1] != '\n') key--;
    else if ((key = strstr(text, "SUMMARY: "))) key += strlen("SUMMARY: ");
    if (key) snprintf(line, sizeof line, "%.*s", (int)strcspn(key, "\n"), key);
    ck_abort_msg("[memory] a memory or undefined-behaviour error, found by the sanitizers: %s",
                 *line ? line : "their report, printed above, names the line");
}

static void watch_sanitizers(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(report_path, sizeof report_path, "%s/course-sanitizer", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    __sanitizer_set_report_path(report_path);
    __sanitizer_set_death_callback(sanitizer_died);
#ifdef RTLD_NOLOAD
    /* gcc's UBSan is a library of its own, with its own copy of these two settings */
    void *ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!ubsan) return;
    void (*set_path)(const char *) = (void (*)(const char *))dlsym(ubsan, "__sanitizer_set_report_path");
    void (*set_death)(void (*)(void)) = (void (*)(void (*)(void)))dlsym(ubsan, "__sanitizer_set_death_callback");
    if (set_path && set_death) set_path(report_path), set_death(sanitizer_died);
#endif
}
#else
static void watch_sanitizers(void) {}
#endif

static void guard_inputs_clear(void);

static void test_setup(void) {
    if (output_limit) signal(SIGXFSZ, SIG_DFL);
    watch_sanitizers();
    tensor_clear_error();
    guard_inputs_clear(); /* they lived in the last test's context */
    test_ctx = ctx_new();
}

/* Runs in the test's process only when the test body got to its end. Exiting with
 * TEST_FINISHED is how the test says so: Check passes a test only if its process exits with
 * that status, so one cut short by exit(0) or _exit(0) fails instead of passing silently.
 * (In-process, a student who calls _exit(TEST_FINISHED) on purpose fools only their own
 * check; when graded, the tests run in the judge, where the student's code never runs.) */
static void test_teardown(void) {
    remote_shutdown();
    ctx_free(test_ctx);
    test_ctx = NULL;
    fflush(NULL);
    _exit(TEST_FINISHED);
}

const char *const *test_kernel_modes(void) {
    /* what each setting runs on this CPU: a setting that runs the same as an earlier one is left out */
    static const char *modes[5];
    const char *was = kernels_setting();
    const char *all[] = {"reference", "portable", "avx2", "native"};
    char seen[4][16];
    int n = 0;
    for (int k = 0; k < 4; k++) {
        const char *name = use_kernels(all[k]);
        bool repeat = false;
        for (int j = 0; j < n; j++) repeat = repeat || strcmp(seen[j], name) == 0;
        if (repeat) continue;
        snprintf(seen[n], sizeof seen[n], "%s", name);
        modes[n++] = all[k];
    }
    modes[n] = NULL;
    use_kernels(was); /* back to what ran before */
    return modes;
}

const char *use_kernels(const char *mode) { return kernels_use(mode); }

uint64_t test_seed(void) {
    const char *env = getenv("COURSE_SEED");
    return env && *env ? strtoull(env, NULL, 0) : 20261130u;
}

/* The exercise tests draw new random cases on every run (so that no table of answers can
 * pass them), unless $COURSE_SEED replays a run. The seed goes into the environment, where
 * every forked test process reads it. */
static uint64_t choose_exercise_seed(void) {
    const char *env = getenv("COURSE_SEED");
    if (env && *env) return strtoull(env, NULL, 0);
    uint64_t seed = ((uint64_t)time(NULL) * 1000003u) ^ (uint64_t)getpid();
    seed %= 1000000000u; /* short enough to retype */
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
    setenv("COURSE_SEED", text, 1);
    return seed;
}

/* ==== assertions ======================================================================== */

char *format_floats(const float *v, int64_t n, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    int64_t shown = n < 24 ? n : 24;
    for (int64_t i = 0; i < shown && used < size; i++) {
        if (isnan(v[i])) used += (size_t)snprintf(buf + used, size - used, i ? ", nan" : "nan"); /* not "-nan" */
        else used += (size_t)snprintf(buf + used, size - used, i ? ", %g" : "%g", (double)v[i]);
    }
    if (used < size) snprintf(buf + used, size - used, n > shown ? ", ...]" : "]");
    return buf;
}

char *format_ints(const int64_t *v, int64_t n, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    int64_t shown = n < 24 ? n : 24;
    for (int64_t i = 0; i < shown && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ", %" PRId64 : "%" PRId64, v[i]);
    if (used < size) snprintf(buf + used, size - used, n > shown ? ", ...]" : "]");
    return buf;
}

static void append(char *buf, size_t size, size_t *used, const char *text) {
    if (*used < size) *used += (size_t)snprintf(buf + *used, size - *used, "%s", text);
}

char *format_literal(const float *v, const int64_t *shape, int rank, char *buf, size_t size) {
    size_t used = 0;
    int64_t n = shape_numel(shape, rank);
    int depth = 0;
    buf[0] = '\0';
    if (n == 0) append(buf, size, &used, "[]");
    for (int64_t i = 0; i < n; i++) {
        if (i == 24) {
            append(buf, size, &used, ", ...");
            while (depth-- > 0) append(buf, size, &used, "]");
            break;
        }
        /* a dim opens a bracket where its index (and every later one) is 0, and closes one at its end */
        int opens = 0, closes = 0;
        for (int64_t d = rank - 1, block = 1; d >= 0; d--) {
            block *= shape[d];
            opens += i % block == 0;
            closes += (i + 1) % block == 0;
        }
        char number[32];
        snprintf(number, sizeof number, isnan(v[i]) ? "nan" : "%g", (double)v[i]);
        if (i > 0) append(buf, size, &used, ", ");
        for (int k = 0; k < opens; k++) append(buf, size, &used, "[");
        append(buf, size, &used, number);
        for (int k = 0; k < closes; k++) append(buf, size, &used, "]");
        depth += opens - closes;
    }
    return buf;
}

Tensor *expect_ok_(Tensor *t, const char *expr, const char *file, int line) {
    if (!t)
        _ck_assert_failed(file, line, "Failed", "%s returned NULL: %s", expr,
                          tensor_error() ? tensor_error() : "(no error recorded)");
    return t;
}

void expect_shape_(const Tensor *t, const int64_t *shape, int rank, const char *what, const char *file, int line) {
    char got[SHAPE_STR_MAX], want[SHAPE_STR_MAX];
    if (!t) _ck_assert_failed(file, line, "Failed", "%s: got NULL (%s)", what, tensor_error() ? tensor_error() : "");
    if (!shape_equal(t->shape, t->rank, shape, rank))
        _ck_assert_failed(file, line, "Failed", "%s: shape is %s, expected %s", what,
                          shape_format(t->shape, t->rank, got, sizeof got),
                          shape_format(shape, rank, want, sizeof want));
}

static bool close_enough(float got, float want, float tol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabsf(got - want) <= tol * (1.0f + fabsf(want));
}

bool values_close(const float *got, const float *want, int64_t n, float tol) {
    for (int64_t i = 0; i < n; i++)
        if (!close_enough(got[i], want[i], tol)) return false;
    return true;
}

static bool all_whole(const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (v[i] != truncf(v[i])) return false;
    return true;
}

void expect_sums(const float *got, const float *want, int64_t n, int64_t terms, float fill, float tol,
                 const char *what) {
    for (int64_t j = n; j < n + OUTPUT_GUARD; j++)
        if (got[j] != fill) return;
    for (int64_t j = 0; j < n; j++)
        ck_assert_msg(got[j] != fill,
                      "%s: out[%lld] was never written (it still holds %g, the garbage out held before the "
                      "call)",
                      what, (long long)j, (double)fill);
    for (int64_t j = 0; j < n; j++) {
        if (close_enough(got[j], want[j], tol)) continue;
        ck_assert_msg(
            fabsf(got[j] - fill - want[j]) > 1e-3f * fabsf(fill),
            "%s: out[%lld] is %g: the %g out held before "
            "the call plus the sum, %g. out holds garbage when you get it: start each sum at 0, not at what out "
            "holds",
            what, (long long)j, (double)got[j], (double)fill, (double)want[j]);
        ck_assert_msg(!all_whole(got, n) || all_whole(want, n) || fabsf(got[j] - want[j]) >= (float)terms,
                      "%s: out[%lld] is %g, expected %g: every sum came out a whole number, but the values summed have "
                      "fractions. Is the sum kept in an int? Keep it in a float",
                      what, (long long)j, (double)got[j], (double)want[j]);
        return;
    }
}

void expect_read_inside(const float *got, const float *want, int64_t n, const char *what) {
    for (int64_t j = 0; j < n; j++)
        ck_assert_msg(!isnan(got[j]) || isnan(want[j]),
                      "%s: element %lld is nan where %g was expected. The inputs hold no "
                      "nan, but the memory around them does (in make test and in the grader alike), so the code read "
                      "outside an input: an index past its end or before its start, or a read along a dimension of "
                      "size 0, which has nothing to read",
                      what, (long long)j, (double)want[j]);
}

/* Fails at the first element that differs, naming it by its index in `shape` (or by its flat
 * index when shape is NULL) and printing both arrays, as nested literals when shape is known. */
static void expect_close(const float *got, const float *expected, int64_t n, const int64_t *shape, int rank, float tol,
                         const char *what, const char *file, int line) {
    for (int64_t i = 0; i < n; i++) {
        if (close_enough(got[i], expected[i], tol)) continue;
        char g[512], e[512], where[SHAPE_STR_MAX + 16];
        if (shape && rank == 0) {
            snprintf(where, sizeof where, "the value");
        } else if (shape) {
            int64_t index[TENSOR_MAX_RANK];
            char idx[SHAPE_STR_MAX];
            unravel_index(i, shape, rank, index);
            snprintf(where, sizeof where, "element %s", shape_format(index, rank, idx, sizeof idx));
        } else {
            snprintf(where, sizeof where, "element %" PRId64, i);
        }
        if (shape) {
            format_literal(got, shape, rank, g, sizeof g);
            format_literal(expected, shape, rank, e, sizeof e);
        } else {
            format_floats(got, n, g, sizeof g);
            format_floats(expected, n, e, sizeof e);
        }
        char value[32], want[32];
        format_floats(&got[i], 1, value, sizeof value);
        format_floats(&expected[i], 1, want, sizeof want);
        value[strlen(value) - 1] = want[strlen(want) - 1] = '\0'; /* drop the brackets */
        _ck_assert_failed(file, line, "Failed", "%s: %s is %s, expected %s\n    got      %s\n    expected %s", what,
                          where, value + 1, want + 1, g, e);
    }
}

void expect_array_(const float *got, const float *expected, int64_t n, float tol, const char *what, const char *file,
                   int line) {
    expect_close(got, expected, n, NULL, 0, tol, what, file, line);
}

void expect_values_(const Tensor *t, const float *expected, int64_t n, float tol, const char *what, const char *file,
                    int line) {
    if (!t) _ck_assert_failed(file, line, "Failed", "%s: got NULL (%s)", what, tensor_error() ? tensor_error() : "");
    int64_t numel = tensor_numel(t);
    char s[SHAPE_STR_MAX];
    if (numel != n)
        _ck_assert_failed(file, line, "Failed", "%s: shape %s holds %" PRId64 " values, expected %" PRId64, what,
                          shape_format(t->shape, t->rank, s, sizeof s), numel, n);
    float *got = malloc((size_t)(n > 0 ? n : 1) * sizeof *got);
    ck_assert_ptr_nonnull(got);
    tensor_to_array(t, got, n);
    expect_close(got, expected, n, t->shape, t->rank, tol, what, file, line); /* does not return on failure */
    free(got);
}

bool tape_has_op(const Tensor *t, const char *op) {
    if (!t) return false;
    if (!strcmp(t->op, op)) return true;
    for (int i = 0; i < t->n_inputs; i++)
        if (tape_has_op(t->inputs[i], op)) return true;
    return false;
}

float *guarded_buffer(int64_t n, float marker) {
    float *buf = malloc((size_t)(n + OUTPUT_GUARD) * sizeof *buf);
    ck_assert_ptr_nonnull(buf);
    for (int64_t i = 0; i < n + OUTPUT_GUARD; i++) buf[i] = marker;
    guard_hint(buf, (size_t)(n + OUTPUT_GUARD) * sizeof *buf);
    return buf;
}

void expect_output_(float *buf, int64_t n, float marker, const float *expected, float tol, const char *what,
                    const char *file, int line) {
    for (int64_t i = n; i < n + OUTPUT_GUARD; i++)
        if (buf[i] != marker)
            _ck_assert_failed(file, line, "Failed",
                              "%s: wrote past the end of the output: element %" PRId64
                              " was written, but the output has %" PRId64 " floats",
                              what, i, n);
    for (int64_t i = 0; i < n; i++) {
        if (close_enough(buf[i], expected[i], tol)) continue;
        /* the marker is what the output held before the call: an element that still holds it
         * was never written, one that holds it plus the answer was added to without a start */
        if (buf[i] == marker || (isnan(marker) && isnan(buf[i])))
            _ck_assert_failed(file, line, "Failed",
                              "%s: element %" PRId64 " was never written (it still holds %g, what the "
                              "output held before the call)",
                              what, i, (double)marker);
        if (marker != 0.0f && fabsf(buf[i] - expected[i] - marker) <= 1e-3f * fabsf(marker)) {
            char hinted[1024];
            snprintf(hinted, sizeof hinted,
                     "%s (the output held %g everywhere before the call, and this is that %g plus "
                     "the answer: the output is not zeroed for you, so give each element its starting value, 0 for a "
                     "sum, before adding into it)",
                     what, (double)marker, (double)marker);
            expect_close(buf, expected, n, NULL, 0, tol, hinted, file, line);
        }
        expect_close(buf, expected, n, NULL, 0, tol, what, file, line);
    }
    free(buf);
}

void expect_error_(const char *needle, const char *what, const char *file, int line) {
    const char *msg = tensor_error();
    if (!msg || !strstr(msg, needle))
        _ck_assert_failed(file, line, "Failed", "%s: expected an error containing \"%s\", got %s%s%s", what, needle,
                          msg ? "\"" : "", msg ? msg : "no error", msg ? "\"" : "");
}

void expect_gradcheck_(GradcheckFn fn, void *arg, Tensor *const *inputs, int n, const char *what, const char *file,
                       int line) {
    char report[512];
    GradcheckOptions opt = {1e-3, 1e-2, 1e-2, test_seed()};
    if (gradcheck(fn, arg, inputs, n, &opt, report, sizeof report) != 0)
        _ck_assert_failed(file, line, "Failed", "%s: %s", what, report);
}

void random_shape(Rng *rng, int rank, int64_t lo, int64_t hi, int64_t *shape) {
    for (int d = 0; d < rank; d++) shape[d] = rng_int(rng, lo, hi);
}

Tensor *random_tensor(Ctx *ctx, Rng *rng, const int64_t *shape, int rank, float lo, float hi) {
    Tensor *t = tensor_zeros(ctx, shape, rank);
    if (!t) return NULL;
    for (int64_t i = 0; i < t->storage->size; i++) t->storage->data[i] = rng_float(rng, lo, hi);
    return t;
}

/* ==== options =========================================================================== */

typedef struct {
    const char *label, *results, *only;
    bool require_all, list;
    long long max_output, max_memory;
    const char *runner, *sandbox, *profile; /* the judge's (see run_exercise_tests) */
} Options;

static Options parse_options(int argc, char **argv) {
    Options o = {"exercises", NULL, NULL, false, false, 0, DEFAULT_MAX_MEMORY, NULL, NULL, "runner"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--label") && i + 1 < argc) o.label = argv[++i];
        else if (!strcmp(argv[i], "--results") && i + 1 < argc) o.results = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) o.only = argv[++i];
        else if (!strcmp(argv[i], "--max-output") && i + 1 < argc) o.max_output = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--max-memory") && i + 1 < argc) o.max_memory = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--require-all")) o.require_all = true;
        else if (!strcmp(argv[i], "--list")) o.list = true;
        else if (!strcmp(argv[i], "--runner") && i + 1 < argc) o.runner = argv[++i];
        else if (!strcmp(argv[i], "--sandbox") && i + 1 < argc) o.sandbox = argv[++i];
        else if (!strcmp(argv[i], "--profile") && i + 1 < argc) o.profile = argv[++i];
        else fprintf(stderr, "%s: ignoring unknown option %s\n", argv[0], argv[i]);
    }
    return o;
}

/* --max-output: a test that writes more than output_limit bytes into a file (its log, when the
 * grader redirects it) is stopped by SIGXFSZ and marked, instead of filling the disk. The
 * runner itself ignores the signal; the forked tests restore it (test_setup, is_todo). */

static void limit_output(long long bytes) {
    if (bytes <= 0) return;
    struct rlimit limit = {(rlim_t)bytes, (rlim_t)bytes};
    if (setrlimit(RLIMIT_FSIZE, &limit) == 0) {
        output_limit = bytes;
        signal(SIGXFSZ, SIG_IGN);
    }
}

/* --max-memory: an exercise's tests (and its probe) get at most `bytes` of memory, so an
 * allocating endless loop fails its test instead of taking the machine's memory: malloc returns
 * NULL past it. The runner sets the limit before it forks, so it holds in every test process.
 * Under AddressSanitizer, which reserves terabytes of address space up front, the limit is on
 * the data segment instead (RLIMIT_DATA, Linux), counted from what the sanitizer has mapped;
 * gcc's sanitizer allocates within it, clang's can allocate from space it mapped earlier. */
static void limit_memory(long long bytes) {
    if (bytes <= 0) return;
#ifdef UNDER_ASAN
    int resource = RLIMIT_DATA;
    long long mapped_kb = -1; /* what is mapped is read from /proc: where there is none, no limit */
#ifdef __linux__
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    while (status && fgets(line, sizeof line, status))
        if (sscanf(line, "VmData: %lld kB", &mapped_kb) == 1) break;
    if (status) fclose(status);
#endif
    if (mapped_kb < 0) return;
    rlim_t wanted = (rlim_t)(mapped_kb * 1024 + bytes);
#else
    int resource = RLIMIT_AS;
    rlim_t wanted = (rlim_t)bytes;
#endif
    /* the hard limit too, so that the code under test cannot raise it again */
    struct rlimit limit;
    if (getrlimit(resource, &limit) != 0) return;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < wanted) wanted = limit.rlim_max;
    limit.rlim_cur = limit.rlim_max = wanted;
    if (setrlimit(resource, &limit) == 0) memory_limit = bytes;
}

static FILE *open_results(const char *path) {
    if (!path) return NULL;
    FILE *f = fopen(path, "a");
    if (!f) fprintf(stderr, "cannot write results to %s\n", path);
    return f;
}

/* Check's own summary line, for the results file ("100%: Checks: 3, Failures: 0, Errors: 0"). */
static void summary_line(SRunner *sr, char *buf, size_t size) {
    int run = srunner_ntests_run(sr), failures = 0, errors = 0;
    TestResult **results = srunner_results(sr);
    for (int i = 0; i < run; i++) {
        if (tr_rtype(results[i]) == CK_FAILURE) failures++;
        if (tr_rtype(results[i]) == CK_ERROR) errors++;
    }
    free(results);
    int percent = run ? (int)((run - failures - errors) * 100.0 / run) : 100;
    snprintf(buf, size, "%d%%: Checks: %d, Failures: %d, Errors: %d", percent, run, failures, errors);
}

static void add_fixture(TCase *tc) { tcase_add_checked_fixture(tc, test_setup, test_teardown); }

/* Check's own report (a line per test and its summary) is printed only when CK_VERBOSITY asks
 * for it (make test V=1); otherwise the course prints its lines, and what failed. */
static bool check_verbose(void) {
    const char *env = getenv("CK_VERBOSITY");
    return env && *env && strcmp(env, "silent") != 0;
}

static void run_suite(SRunner *sr) {
    srunner_set_fork_status(sr, CK_FORK); /* a crashing test must not take the run with it */
    srunner_run_all(sr, check_verbose() ? CK_ENV : CK_SILENT);
}

TCase *add_test_case(Suite *suite, const char *name) {
    TCase *tc = tcase_create(name);
    add_fixture(tc);
    suite_add_tcase(suite, tc);
    return tc;
}

TCase *add_large_test_case(Suite *suite, const char *name) {
    TCase *tc = add_test_case(suite, name);
    tcase_set_tags(tc, "large");
    return tc;
}

/* ==== core tests ======================================================================== */

int run_core_tests(int argc, char **argv, Suite *suite) {
    Options o = parse_options(argc, argv);
    SRunner *sr = srunner_create(suite);
    run_suite(sr);
    int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    if (failed && !check_verbose()) {
        TestResult **results = srunner_results(sr);
        for (int i = 0; i < run; i++) {
            if (tr_rtype(results[i]) == CK_PASS) continue;
            /* the line is the last one Check saw the test reach, for a crash too */
            printf("  FAILED  %s (%s:%d): %s\n", tr_tcname(results[i]), tr_lfile(results[i]), tr_lno(results[i]),
                   tr_msg(results[i]));
        }
        free(results);
    }
    if (!check_verbose()) printf("%d/%d tests passed\n", run - failed, run);
    FILE *f = open_results(o.results);
    if (f) {
        char summary[128];
        summary_line(sr, summary, sizeof summary);
        fprintf(f, "core\t%d\t%d\t%s\n", run - failed, run, summary);
        fclose(f);
    }
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ==== exercises ========================================================================= */

bool harness_probing(void) { return probing != NULL; }

/* Check's time limits are scaled by $CK_TIMEOUT_MULTIPLIER (slow machines, valgrind); the
 * probe's is scaled the same way. */
static unsigned scaled_seconds(unsigned seconds) {
    const char *env = getenv("CK_TIMEOUT_MULTIPLIER");
    double factor = env && *env ? atof(env) : 1.0;
    return factor > 1.0 ? (unsigned)(seconds * factor + 0.5) : seconds;
}

unsigned harness_test_seconds(void) { return scaled_seconds(EXERCISE_TEST_SECONDS); }

/* Does `function` belong to exercise `id`? Exercise 1.2's function is named ex1_2_something. */
static bool function_of(const char *function, const char *id) {
    char prefix[32];
    size_t n = (size_t)snprintf(prefix, sizeof prefix, "ex%s_", id);
    for (char *c = prefix; *c; c++)
        if (*c == '.') *c = '_';
    return strncmp(function, prefix, n) == 0;
}

void exercise_todo(const char *function) {
    /* A probe that reaches its own exercise's stub: TODO. One that reaches another exercise's
     * stub (1.5 calling an unfinished 1.4) is an attempt; its test will say what it reached. */
    if (probing) _exit(function_of(function, probing) ? EXIT_TODO : 0);
    if (tolerating && function_of(function, tolerating)) return; /* is the code below the line right? */
    ck_abort_msg("%s() still calls EXERCISE_TODO(); delete that line once you implement it", function);
}

/* ---- guard regions, for the grader's stand-ins ------------------------------------------ */

enum { MAX_HINTS = 16, MAX_INPUTS = 256 };
typedef struct {
    const void *p;
    size_t bytes;
} Hint;
static Hint hints[MAX_HINTS]; /* for the next call */
static int n_hints;
static Hint inputs[MAX_INPUTS]; /* for the rest of the test: its newest MAX_INPUTS inputs */
static int n_inputs;

void guard_hint(const void *p, size_t bytes) {
    if (!p) return;
    for (int i = 0; i < n_hints; i++)
        if (hints[i].p == p) {
            hints[i].bytes = bytes;
            return;
        }
    if (n_hints < MAX_HINTS) hints[n_hints].p = p, hints[n_hints++].bytes = bytes;
}

static const float *guarded_copy(const float *values, int64_t n) {
    size_t floats = (size_t)n + 2 * INPUT_GUARD;
    float *buf = ctx_alloc(test_ctx, floats * sizeof *buf);
    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i < floats; i++) buf[i] = NAN;
    if (n > 0) memcpy(buf + INPUT_GUARD, values, (size_t)n * sizeof *buf);
    inputs[n_inputs++ % MAX_INPUTS] = (Hint){buf, floats * sizeof *buf};
    return buf + INPUT_GUARD;
}

const float *guarded_input(const float *values, int64_t n) { return guarded_copy(values, n > 0 ? n : 0); }

const float *guarded_storage(const Tensor *view) { return guarded_copy(view->storage->data, view->storage->size); }

static bool holds(const Hint *h, uintptr_t at, size_t bytes) {
    uintptr_t start = (uintptr_t)h->p;
    return at >= start && at - start <= h->bytes && bytes <= h->bytes - (at - start);
}

bool guard_region(const void *p, size_t bytes, const void **base, size_t *size) {
    uintptr_t at = (uintptr_t)p;
    const Hint *found = NULL;
    for (int i = 0; i < n_hints && !found; i++)
        if (holds(&hints[i], at, bytes)) found = &hints[i];
    for (int i = 0; i < n_inputs && i < MAX_INPUTS && !found; i++)
        if (holds(&inputs[i], at, bytes)) found = &inputs[i];
    if (!found) return false;
    *base = found->p, *size = found->bytes;
    return true;
}

void guard_hints_clear(void) { n_hints = 0; }

static void guard_inputs_clear(void) { n_inputs = 0; }

typedef enum { PROBE_TODO, PROBE_ATTEMPTED, PROBE_TIMEOUT } Probe;

/* Runs the exercise's probe in a child process: does it reach EXERCISE_TODO()? A crash in the
 * probe means the student has started, so it counts as attempted. A probe that does not finish
 * within PROBE_SECONDS on its small input is an endless loop: its tests are not run, so that
 * a loop costs one short wait and not one time limit per test. In the judge, the clock is the
 * judge's: the student's functions run in the runner, which cannot reach this alarm. */
static Probe probe(const Exercise *ex) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return PROBE_ATTEMPTED;
    if (pid == 0) {
        if (output_limit) signal(SIGXFSZ, SIG_DFL);
        signal(SIGALRM, SIG_DFL);
        probing = ex->id;
        alarm(scaled_seconds(PROBE_SECONDS));
        Ctx *ctx = ctx_new();
        test_ctx = ctx;
        ex->probe();
        remote_shutdown();
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_TODO) return PROBE_TODO;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return PROBE_TIMEOUT;
    return PROBE_ATTEMPTED;
}

typedef enum { DONE, TODO, FAILED } Status;
static const char *const status_name[] = {"done", "TODO", "FAILED"};

/* What kind of failure, for graders: wrong, crashed, timeout, exited, output, memory. */
enum { EXIT_SANITIZER = 87 }; /* the exit code the grader asks the sanitizers to use */

/* Check's message for a test that did not finish, in the words a student needs; *kind names
 * the kind of failure. In the judge, what went wrong in the runner comes as "[kind] message"
 * (tests/remote.c). */
static void explain(const char *msg, char *buf, size_t size, const char **kind) {
    static const char *const kinds[] = {"crashed", "exited", "output", "memory", "timeout"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t n = strlen(kinds[k]);
        if (msg[0] == '[' && !strncmp(msg + 1, kinds[k], n) && msg[n + 1] == ']' && msg[n + 2] == ' ') {
            *kind = kinds[k];
            snprintf(buf, size, "%s", msg + n + 3);
            return;
        }
    }
    int code, sig;
    if (sscanf(msg, "Early exit with return value %d", &code) == 1 && code == EXIT_SANITIZER) {
        *kind = "memory";
        snprintf(buf, size,
                 "a memory or undefined-behaviour error, found by the sanitizers: their report, printed "
                 "above, names the line");
    } else if (sscanf(msg, "Early exit with return value %d", &code) == 1) {
        *kind = "exited";
        snprintf(buf, size,
                 "stopped the test before it finished, exiting with status %d (a call to exit() or "
                 "_exit()? Under SANITIZE=1, a sanitizer report in the test's output says what went wrong)",
                 code);
    } else if (sscanf(msg, "Received signal %d", &sig) == 1 && sig == SIGXFSZ) {
        *kind = "output";
        snprintf(buf, size, "wrote more than %lld bytes of output and was stopped", output_limit);
    } else if (sscanf(msg, "Received signal %d", &sig) == 1 && sig == SIGABRT) {
        *kind = "crashed";
        snprintf(buf, size,
                 "crashed: %s. abort() was called: an assert() failed, or the C library found the heap "
                 "corrupted (a write outside a malloc'd array, a pointer freed twice); the test's output says which",
                 msg);
    } else if (sscanf(msg, "Received signal %d", &sig) == 1) {
        *kind = "crashed";
        char limit[96] = "";
        if (memory_limit)
            snprintf(limit, sizeof limit, " (malloc returns NULL once a test has %lld MB)", memory_limit >> 20);
        snprintf(buf, size,
                 "crashed: %s. A crash in an exercise is most often a read or a write outside an array, or "
                 "through a NULL pointer%s; make lessonN test SANITIZE=1 points at the line",
                 msg, limit);
    } else if (strstr(msg, "timeout")) {
        *kind = "timeout";
        snprintf(buf, size, "did not finish within %u s (an endless loop?)", scaled_seconds(EXERCISE_TEST_SECONDS));
    } else {
        *kind = "wrong";
        snprintf(buf, size, "%s", msg);
    }
}

int run_exercise_tests(int argc, char **argv, const Exercise *all, int n_all) {
    Options o = parse_options(argc, argv);
    if (o.list) {
        for (int i = 0; i < n_all; i++) printf("%s\t%d\t%s\n", all[i].id, all[i].points, all[i].title);
        return EXIT_SUCCESS;
    }
    /* --only ID: that exercise alone */
    const Exercise *exercises = all;
    int n = n_all;
    if (o.only) {
        n = 0;
        for (int i = 0; i < n_all; i++)
            if (!strcmp(all[i].id, o.only)) exercises = &all[i], n = 1;
        if (n == 0) {
            fprintf(stderr, "%s: no exercise %s here (--list shows them)\n", argv[0], o.only);
            return EXIT_FAILURE;
        }
    }
    if (o.runner || o.sandbox) {
        /* the judge: the exercise functions linked here are test_calls.c's stand-ins, and the
         * limits are the runner's, set by the sandbox; the judge itself runs course code only */
        if (!o.runner || !o.sandbox) {
            fprintf(stderr, "%s: --runner and --sandbox go together\n", argv[0]);
            return EXIT_FAILURE;
        }
        remote_configure(o.runner, o.sandbox, o.profile, o.max_output > 0 ? o.max_output : 1000000, o.max_memory);
    } else {
        limit_output(o.max_output);
        limit_memory(o.max_memory);
    }
    uint64_t seed = choose_exercise_seed();
    Status *status = calloc((size_t)n, sizeof *status);
    const char **kind = calloc((size_t)n, sizeof *kind);
    int *failures = calloc((size_t)n, sizeof *failures);
    typedef char Message[1024], More[2048], Names[128]; /* one of each per exercise */
    Message *message = calloc((size_t)n, sizeof *message);
    enum { MORE_SHOWN = 2 }; /* further failures shown under the first, one line each */
    More *more = calloc((size_t)n, sizeof *more);
    Names *names = calloc((size_t)n, sizeof *names);
    int *exercise_of = calloc((size_t)n * MAX_TESTS_PER_EXERCISE + 1, sizeof *exercise_of);
    const TTest **test_of = calloc((size_t)n * MAX_TESTS_PER_EXERCISE + 1, sizeof(const TTest *));
    if (!status || !kind || !failures || !message || !more || !names || !exercise_of || !test_of) {
        free(status), free(kind), free(failures), free(message), free(more), free(names), free(exercise_of);
        free(test_of);
        return EXIT_FAILURE;
    }

    Suite *suite = suite_create(o.label);
    int n_tests = 0;
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "%s %s", exercises[i].id, exercises[i].title);
        Probe p = probe(&exercises[i]);
        if (p == PROBE_TODO) {
            status[i] = TODO;
            continue;
        }
        if (p == PROBE_TIMEOUT) {
            status[i] = FAILED;
            failures[i] = 1;
            kind[i] = "timeout";
            snprintf(message[i], sizeof message[i],
                     "did not finish within %u s on a small input (an endless loop?); "
                     "its tests were not run",
                     scaled_seconds(PROBE_SECONDS));
            continue;
        }
        TCase *tc = tcase_create(names[i]); /* Check prints this name beside each failure */
        tcase_set_timeout(tc, EXERCISE_TEST_SECONDS);
        add_fixture(tc);
        for (int k = 0; k < MAX_TESTS_PER_EXERCISE && exercises[i].tests[k]; k++) {
            test_of[n_tests] = exercises[i].tests[k];
            exercise_of[n_tests++] = i;
            tcase_add_exit_test(tc, exercises[i].tests[k], TEST_FINISHED);
        }
        suite_add_tcase(suite, tc);
    }
    SRunner *sr = srunner_create(suite);
    run_suite(sr);

    /* Check runs the tests in the order they were added and reports them in that order, so
     * result r is test number r. */
    TestResult **results = srunner_results(sr);
    for (int r = 0; r < srunner_ntests_run(sr) && r < n_tests; r++) {
        if (tr_rtype(results[r]) == CK_PASS) continue;
        int i = exercise_of[r];
        char explained[1024];
        const char *why;
        explain(tr_msg(results[r]), explained, sizeof explained, &why);
        if (strcmp(why, "wrong") != 0) { /* a wrong answer's message names its case; a crash's names the test */
            char in_test[256];
            int len = snprintf(in_test, sizeof in_test, "in %s (%s:%d): ", test_of[r]->name, test_of[r]->file,
                               test_of[r]->line);
            size_t head = len < 0 ? 0 : (size_t)len < sizeof in_test ? (size_t)len : sizeof in_test - 1;
            size_t tail = strlen(explained);
            if (head + tail >= sizeof explained) tail = sizeof explained - 1 - head;
            memmove(explained + head, explained, tail);
            memcpy(explained, in_test, head);
            explained[head + tail] = '\0';
        }
        if (failures[i]++ == 0) { /* the first failure's message, and its kind */
            status[i] = FAILED;
            kind[i] = why;
            snprintf(message[i], sizeof message[i], "%s", explained);
        } else if (failures[i] <= 1 + MORE_SHOWN && strcmp(explained, message[i]) != 0 && !strstr(more[i], explained)) {
            size_t used = strlen(more[i]);
            snprintf(more[i] + used, sizeof more[i] - used, "\nalso: %s", explained);
        }
    }
    free(results);

    /* A TODO exercise whose tests pass when its EXERCISE_TODO() line does nothing: the answer is
     * written, under a line the student forgot to delete. (Not in the judge: there the student's
     * functions run in the runner, and a TODO exercise scores 0 either way.) */
    for (int i = 0; i < n && !o.runner; i++) {
        if (status[i] != TODO) continue;
        Suite *again = suite_create(o.label);
        TCase *tc = tcase_create(names[i]);
        tcase_set_timeout(tc, EXERCISE_TEST_SECONDS);
        add_fixture(tc);
        int k = 0;
        for (; k < MAX_TESTS_PER_EXERCISE && exercises[i].tests[k]; k++)
            tcase_add_exit_test(tc, exercises[i].tests[k], TEST_FINISHED);
        suite_add_tcase(again, tc);
        SRunner *runner = srunner_create(again);
        tolerating = exercises[i].id;
        run_suite(runner);
        tolerating = NULL;
        if (k > 0 && srunner_ntests_run(runner) == k && srunner_ntests_failed(runner) == 0)
            snprintf(message[i], sizeof message[i],
                     "its tests pass when the EXERCISE_TODO(); line is skipped: your answer is below that line. "
                     "Delete the line (in exercises.c) to get the points");
        srunner_free(runner);
    }

    int todo = 0, failed = 0;
    printf("\n%s (random cases: COURSE_SEED=%llu):\n", o.label, (unsigned long long)seed);
    for (int i = 0; i < n; i++) {
        const Exercise *ex = &exercises[i];
        printf("  %-5s %-6s %2d pt%s  %s", ex->id, status_name[status[i]], ex->points, ex->points == 1 ? " " : "s",
               ex->title);
        if (status[i] == TODO && message[i][0]) printf("\n        %s", message[i]);
        if (status[i] == FAILED) {
            /* indent the message's continuation lines under the exercise */
            printf("\n        ");
            for (const char *c = message[i]; *c; c++) printf(*c == '\n' ? "\n        " : "%c", *c);
            for (const char *c = more[i]; *c; c++) printf(*c == '\n' ? "\n        " : "%c", *c);
            int shown = 1;
            for (const char *c = more[i]; (c = strstr(c, "\nalso: ")); c++) shown++;
            if (failures[i] > shown) printf("\n        (%d of its tests failed in all)", failures[i]);
        }
        printf("\n");
        todo += status[i] == TODO;
        failed += status[i] == FAILED;
    }

    FILE *f = open_results(o.results);
    if (f) {
        char summary[128];
        summary_line(sr, summary, sizeof summary);
        fprintf(f, "checks\t%s\n", summary);
        for (int i = 0; i < n; i++) {
            for (char *c = message[i]; *c; c++)
                if (*c == '\n' || *c == '\t') *c = ' ';
            const char *k = status[i] == DONE ? "passed" : status[i] == TODO ? "todo" : kind[i];
            fprintf(f, "exercise\t%s\t%d\t%s\t%s\t%s\t%s\n", exercises[i].id, exercises[i].points,
                    status_name[status[i]], k, exercises[i].title, message[i]);
        }
        fclose(f);
    }
    srunner_free(sr);
    free(status);
    free(kind);
    free(failures);
    free(message);
    free(more);
    free(names);
    free(exercise_of);
    free(test_of);
    return failed || (o.require_all && todo) ? EXIT_FAILURE : EXIT_SUCCESS;
}
