/*
 * harness.h - what every test program of the course shares: a main for core tests, a main
 * for exercise tests (TODO detection, crash and timeout containment, one report line per
 * exercise), a fresh context per test, seeds, and assertions whose messages say what was
 * expected and what came back.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <check.h>

#include "exercise.h"
#include "gradcheck.h"
#include "rng.h"
#include "tensor.h"

/* ---- running ---------------------------------------------------------------------- */

/* Runs a suite of core tests in forked processes and prints each failure (file, line, message)
 * and "N/M tests passed"; with $CK_VERBOSITY set, Check's own report instead. Options:
 * --results FILE appends "core PASSED TOTAL" to FILE. Returns the process exit status. */
int run_core_tests(int argc, char **argv, Suite *suite);

#define MAX_TESTS_PER_EXERCISE 8

typedef struct {
    const char *id;                             /* "1.2": the same id in the stub, the docs and the report */
    const char *title;                          /* what the student implements */
    int points;                                 /* points are declared here and nowhere else */
    void (*probe)(void);                        /* calls the exercise once on a typical input, to detect TODO */
    const TTest *tests[MAX_TESTS_PER_EXERCISE]; /* NULL-terminated */
} Exercise;

/* Runs the exercises' tests. An exercise whose probe reaches EXERCISE_TODO() is TODO and its
 * tests are skipped; so are the tests of one whose probe does not finish within 3 s (an endless
 * loop: it fails as a timeout). The others run in forked processes with a time limit and a
 * memory limit, so a crash, an endless loop or a call to exit() fails that exercise only; a
 * test passes only if it runs to its end.
 *
 * In-process (make lessonN test), the student's functions are linked into this program. In
 * the judge (the grader, tests/grade.sh), the exercise functions linked here are the lesson's
 * test_calls.c stand-ins, which make each call in the runner, a program of the student's
 * functions run in the sandbox (--runner, --sandbox): the tests, their expected values and
 * their verdicts stay in the judge. Options:
 *   --label TEXT       names the exercise file in the report
 *   --results FILE     appends a line per exercise to FILE, tab-separated:
 *                      exercise ID POINTS STATUS KIND TITLE MESSAGE, where STATUS is done, TODO
 *                      or FAILED and KIND is passed, todo, wrong, crashed, timeout, exited
 *                      (exit() in the test), output (too much output) or memory (a sanitizer)
 *   --only ID          runs that exercise alone
 *   --max-output BYTES stops (and fails) a test that writes more than BYTES into a file
 *   --max-memory BYTES the memory each test may take (default 1 GiB; 0: no limit)
 *   --require-all      a TODO counts as a failure (used for the reference solutions)
 *   --list             prints "ID<TAB>POINTS<TAB>TITLE" per exercise and runs nothing
 *   --runner PATH      the judge: each test's calls go to a fresh runner, PATH, started by
 *   --sandbox PATH     the sandbox program PATH (tests/sandbox.c) with
 *   --profile NAME     its profile, runner or runner-asan (default runner); --max-output and
 *                      --max-memory are then the runner's limits
 * Exit status: 0 unless an attempted exercise failed (or, with --require-all, one is TODO). */
int run_exercise_tests(int argc, char **argv, const Exercise *all, int n_all);

/* ---- inside a test ---------------------------------------------------------------- */

/* A fresh context for each test (made by the fixture, freed after the test). */
extern Ctx *test_ctx;
/* A test case with that fixture, added to the suite. */
TCase *add_test_case(Suite *suite, const char *name);
/* The same, for a case whose worth is in its sizes and its many random trials (tagged "large"):
 * make memcheck leaves such cases out (CK_EXCLUDE_TAGS=large), as valgrind runs them some 30
 * times slower and test_kernels already runs every fast kernel on its edge sizes under it. */
TCase *add_large_test_case(Suite *suite, const char *name);

/* The exit status of a test process that ran its test to the end (see test_teardown). */
#define TEST_FINISHED 90
/* Adds a test to a case made by add_test_case. The test passes only if it runs to its end,
 * so a test cut short by a call to exit() or _exit() fails. Use it instead of tcase_add_test. */
#define add_test(tc, test) tcase_add_exit_test((tc), (test), TEST_FINISHED)

/* The settings of COURSE_KERNELS (kernels.h) that run something different on this machine,
 * NULL-terminated: "reference" and "portable", then "avx2" where the CPU has AVX2 and FMA and
 * "native" where it has AVX-512 too. A test of a fast path runs its cases under each and holds
 * every result to the reference's. */
const char *const *test_kernel_modes(void);
/* Fills the table of kernels as COURSE_KERNELS=mode would, for the rest of the test (each
 * test runs in a process of its own), and returns kernels_name(): what now runs, for
 * messages. */
const char *use_kernels(const char *mode);

/* The seed for random tests: $COURSE_SEED if set, else a fixed default. Failures print it so
 * a case can be replayed: COURSE_SEED=<seed> make test. */
uint64_t test_seed(void);

/* Assertions. They fail the test with a message that says what was checked, what was
 * expected and what came back, located at the caller's file and line. */

/* Fails (with the op's error message) if t is NULL; returns t. */
#define EXPECT_OK(t) expect_ok_((t), #t, __FILE__, __LINE__)
/* Fails unless t has the given shape: EXPECT_SHAPE(t, DIMS(2, 3), "what"), or with the shape
 * as an array and a rank: EXPECT_SHAPE(t, other->shape, other->rank, "what"). */
#define EXPECT_SHAPE(t, ...) expect_shape_((t), __VA_ARGS__, __FILE__, __LINE__)
/* Fails unless t's values (row-major, any view) are within tol of the expected ones:
 * EXPECT_VALUES(t, VALUES(1, 2, 3), 1e-6, "what"). The message names the first element that
 * differs (with its index) and prints both arrays. */
#define EXPECT_VALUES(t, ...) expect_values_((t), __VA_ARGS__, __FILE__, __LINE__)
/* The same with the expected values in an array of n floats. */
#define EXPECT_VALUES_ARRAY(t, expected, n, tol, what) \
    expect_values_((t), (expected), (n), (tol), (what), __FILE__, __LINE__)
/* The same for a plain array. */
#define EXPECT_ARRAY(got, expected, n, tol, what) \
    expect_array_((got), (expected), (n), (tol), (what), __FILE__, __LINE__)
/* Fails unless the last recorded error message contains `needle`. */
#define EXPECT_ERROR(needle, what) expect_error_((needle), (what), __FILE__, __LINE__)

Tensor *expect_ok_(Tensor *t, const char *expr, const char *file, int line);
void expect_shape_(const Tensor *t, const int64_t *shape, int rank, const char *what, const char *file, int line);
void expect_values_(const Tensor *t, const float *expected, int64_t n, float tol, const char *what, const char *file,
                    int line);
void expect_array_(const float *got, const float *expected, int64_t n, float tol, const char *what, const char *file,
                   int line);
void expect_error_(const char *needle, const char *what, const char *file, int line);

/* Fails unless gradcheck (common/gradcheck.h) passes fn at inputs, with the course's default
 * step and tolerances (eps 1e-3, atol and rtol 1e-2) and this run's seed; the message is
 * `what` and gradcheck's report. */
#define EXPECT_GRADCHECK(...) expect_gradcheck_(__VA_ARGS__, __FILE__, __LINE__) /* fn, arg, inputs, n, what */
void expect_gradcheck_(GradcheckFn fn, void *arg, Tensor *const *inputs, int n, const char *what, const char *file,
                       int line);

/* Buffers that an exercise writes into. guarded_buffer(n, marker) mallocs n floats plus
 * OUTPUT_GUARD more behind them, all set to `marker` (a value no answer has). After the
 * exercise ran, EXPECT_OUTPUT(buf, n, marker, expected, tol, what) fails if any guard slot
 * changed ("wrote past the end"), or if the n floats differ from expected; when a wrong value
 * is the marker plus the expected one, the message says the buffer was added to instead of
 * overwritten. It frees buf. */
#define OUTPUT_GUARD 16
float *guarded_buffer(int64_t n, float marker);
#define EXPECT_OUTPUT(buf, n, marker, expected, tol, what) \
    expect_output_((buf), (n), (marker), (expected), (tol), (what), __FILE__, __LINE__)
void expect_output_(float *buf, int64_t n, float marker, const float *expected, float tol, const char *what,
                    const char *file, int line);
/* The harness's rule for "close", element by element (nan matches nan, inf the same inf): for
 * tests that try the usual mistakes on a wrong answer. */
bool values_close(const float *got, const float *want, int64_t n, float tol);
/* For sums an exercise wrote into a guarded buffer that held `fill` (each of `terms` values):
 * at the first wrong element, fails naming the usual mistakes (never written, a sum started
 * from the garbage, a sum kept in an int, which loses less than 1 per term). A write past the
 * end, or any other difference, is left to EXPECT_OUTPUT. */
void expect_sums(const float *got, const float *want, int64_t n, int64_t terms, float fill, float tol,
                 const char *what);

/* For an output computed from guarded_input()s that hold no nan: at the first nan where a
 * number was expected, fails saying that the code read outside its inputs (their guards' nan). */
void expect_read_inside(const float *got, const float *want, int64_t n, const char *what);
/* Marks p as a buffer of `bytes` bytes, guard region included, for the next exercise call:
 * when graded, the call's stand-in (tests/remote.h) sends and copies back the whole of it, so
 * that a write past the end, or a read of the guard's nan, shows as it does in-process. For a
 * buffer with a guard of its own, marked right before the call; guarded_buffer() marks its
 * buffers itself. The marks go with the next call. */
void guard_hint(const void *p, size_t bytes);
/* An input an exercise reads, in memory the grader hands over whole: n floats copied between
 * two runs of INPUT_GUARD nans, in test_ctx; returns the first of the n. A read outside the
 * view (before it, past it, or any read of an empty one) gives nan, in-process and graded
 * alike, where a plain array would give its neighbours in-process and other bytes in the
 * runner. guarded_storage() does the same for a tensor view's whole storage and returns its
 * start, to go with the view's offset and strides. Both stay marked until the test ends. */
#define INPUT_GUARD 16
const float *guarded_input(const float *values, int64_t n);
const float *guarded_storage(const Tensor *view);
/* For the stand-ins: the marked buffer that holds the `bytes` bytes at p (its start in *base,
 * its size in *size, and true), or false, when p is not in one. */
bool guard_region(const void *p, size_t bytes, const void **base, size_t *size);
void guard_hints_clear(void);
/* For the stand-ins: is this process a probe, and how long may a test take (seconds)? */
bool harness_probing(void);
unsigned harness_test_seconds(void);

/* True if an op named `op` made t or any tensor t was computed from (a walk of the tape). For
 * exercises that must be built from particular library ops. */
bool tape_has_op(const Tensor *t, const char *op);

/* Writes "[1, 2, 3]" (at most the first 24 values) into buf. */
char *format_floats(const float *v, int64_t n, char *buf, size_t size);
/* Writes v, row-major values of the given shape, as the nested literal numpy would print,
 * "[[1, 2, 3], [4, 5, 6]]" (at most the first 24 values, then "..."; "[]" when empty). */
char *format_literal(const float *v, const int64_t *shape, int rank, char *buf, size_t size);
char *format_ints(const int64_t *v, int64_t n, char *buf, size_t size);

/* A random shape of the given rank with dims in [lo, hi]. */
void random_shape(Rng *rng, int rank, int64_t lo, int64_t hi, int64_t *shape);
/* A contiguous tensor of random values in [lo, hi). */
Tensor *random_tensor(Ctx *ctx, Rng *rng, const int64_t *shape, int rank, float lo, float hi);

#endif /* HARNESS_H */
