/*
 * bench.c - lesson 6's benchmark (`make lesson6 bench`): square matrix products, from the
 * chapter's triple loop to the library's kernel, against OpenBLAS; then a batched product and
 * the library's product through views. docs/6-bmm.md (section 7.7) walks through the steps.
 *
 * The kernels, each a step on the way (all single-threaded, float32, row-major):
 *   naive i,j,p    the textbook loop: each out[i, j] is a dot product down a column of b
 *   loop order     the same sums in the order i, p, j: the inner loop walks rows of b and out
 *   blocked        i, p, j over blocks of b small enough to stay in the cache
 *   library        tensor_matmul, with bmm_fast.c's micro-kernel as each build has it: plain C
 *                  (COURSE_KERNELS=portable), AVX2+FMA (avx2) and, where the CPU runs it,
 *                  AVX-512 (native)
 *   OpenBLAS       cblas_sgemm, one thread, when the Makefile found OpenBLAS (HAVE_OPENBLAS)
 *
 * OpenBLAS picks its kernels ("core") for the CPU when it loads, and OPENBLAS_CORETYPE
 * overrides that. Debian's 0.3.21 does not know some newer CPUs and may pick a core that is
 * not the fastest one for them. So the benchmark runs itself again in a child process per
 * candidate core with OPENBLAS_CORETYPE set (the variable is read only when the library
 * loads), measures OpenBLAS alone there (--openblas-only), and compares the library with the
 * fastest core: "tuned" OpenBLAS. When the library runs without AVX-512 on a CPU that has it
 * (COURSE_KERNELS=avx2), tuned is the fastest core without it (Haswell, Zen): each side runs
 * what a CPU without AVX-512 would. The rate is GFLOP/s: 2*m*k*n floating-point operations.
 * tensor_matmul is timed as a training loop calls it, each result in reused memory; the
 * batched table shows once what a result in new memory costs (time_library; then bench_warm_heap).
 */
#define _POSIX_C_SOURCE 200809L /* setenv, fork */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "bmm.h"
#include "kernels.h"

#ifdef HAVE_OPENBLAS
#include <cblas.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#define MAX_SIZES 16
static const int64_t default_sizes[] = {64, 128, 256, 512, 1024};
static const int64_t quick_sizes[] = {64, 128};

/* The batched shape: [B, M, K] @ [B, K, N] */
enum { BATCH = 64, BM = 128, BK = 64, BN = 128 };

static void *checked_malloc(size_t bytes) {
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    return p;
}

static float *random_values(int64_t n, uint64_t seed) {
    float *v = checked_malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        v[i] = (float)((double)(seed >> 40) / (double)(1 << 24) * 2.0 - 1.0); /* [-1, 1) */
    }
    return v;
}

/* ==== the plain C kernels: out = a @ b, all (n, n), row-major ============================= */

typedef struct {
    int64_t n;
    float *a, *b, *out;
} Square;

/* The textbook loop: out[i, j] is the dot product of row i of a and column j of b. Walking
 * down a column of b touches a new cache line (64 bytes, 16 floats) for every multiply. */
static void naive_ijp(void *arg) {
    Square *s = arg;
    int64_t n = s->n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            float sum = 0.0f;
            for (int64_t p = 0; p < n; p++) sum += s->a[i * n + p] * s->b[p * n + j];
            s->out[i * n + j] = sum;
        }
    bench_keep(s->out);
}

/* out_row[j] += x * b_row[j] for every j < n: the inner loop of the next two kernels. It is one
 * function that neither may inline, starting on a 64-byte boundary, so that both kernels run
 * the very same machine code and differ only in the order they call it: inlined, each copy of
 * the loop would land wherever the compiler put it, and one that straddles a 64-byte boundary
 * can run slower (docs/6-bmm.md). */
#if defined(__GNUC__)
__attribute__((noinline, aligned(64)))
#endif
static void
add_scaled_row(float *out_row, const float *b_row, float x, int64_t n) {
    for (int64_t j = 0; j < n; j++) out_row[j] += x * b_row[j];
}

/* The same sums in the order i, p, j (lesson 6's matmul_reference): one a[i, p] times a whole
 * row of b, added into a whole row of out. Both rows are walked in order, so every float of
 * each cache line fetched is used, and there is no dependency from one j to the next. */
static void loop_order_ipj(void *arg) {
    Square *s = arg;
    int64_t n = s->n;
    memset(s->out, 0, (size_t)(n * n) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = 0; p < n; p++) add_scaled_row(s->out + i * n, s->b + p * n, s->a[i * n + p], n);
    bench_keep(s->out);
}

/* i, p, j again, one block of b at a time: BLOCK_P rows by BLOCK_J columns of b (128 KB) are
 * used by every row of a while they sit in the L2 cache, and the BLOCK_J floats of out's row
 * (1 KB) stay in L1 over BLOCK_P steps. Without blocking, each row of a walks all of b, which
 * for n = 1024 (4 MB) no longer fits in L2. */
enum { BLOCK_P = 128, BLOCK_J = 256 };
static void blocked_ipj(void *arg) {
    Square *s = arg;
    int64_t n = s->n;
    memset(s->out, 0, (size_t)(n * n) * sizeof(float));
    for (int64_t j0 = 0; j0 < n; j0 += BLOCK_J) {
        int64_t width = n - j0 < BLOCK_J ? n - j0 : BLOCK_J;
        for (int64_t p0 = 0; p0 < n; p0 += BLOCK_P) {
            int64_t p1 = p0 + BLOCK_P < n ? p0 + BLOCK_P : n;
            for (int64_t i = 0; i < n; i++)
                for (int64_t p = p0; p < p1; p++)
                    add_scaled_row(s->out + i * n + j0, s->b + p * n + j0, s->a[i * n + p], width);
        }
    }
    bench_keep(s->out);
}

/* ==== the library: tensor_matmul ========================================================== */

/* A product of the library: the operands are views (tensor_as_strided) of two arrays. */
typedef struct {
    const float *a_values, *b_values;
    int64_t a_len, b_len; /* floats behind each view */
    int rank;
    int64_t a_shape[3], b_shape[3], a_strides[3], b_strides[3], a_offset, b_offset;
    /* for library_in_new_memory: */
    Ctx *ctx;
    Tensor *a, *b;
} LibraryCase;

/* A new context holding the case's operands. */
static Ctx *library_operands(const LibraryCase *c, Tensor **a, Tensor **b) {
    Ctx *ctx = ctx_new();
    Tensor *a_base = tensor_from(ctx, (const int64_t[]){c->a_len}, 1, c->a_values, c->a_len);
    Tensor *b_base = tensor_from(ctx, (const int64_t[]){c->b_len}, 1, c->b_values, c->b_len);
    *a = a_base ? tensor_as_strided(a_base, c->a_shape, c->rank, c->a_strides, c->a_offset) : NULL;
    *b = b_base ? tensor_as_strided(b_base, c->b_shape, c->rank, c->b_strides, c->b_offset) : NULL;
    if (!*a || !*b) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
    return ctx;
}

static void keep_result(Tensor *out) {
    if (!out) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
    bench_keep(tensor_data(out));
}

/* tensor_matmul as a training loop runs it, one step per context: each call gets a context
 * of its own, made (the operands copied in) and freed outside the timed part. The result is a
 * new tensor every time, zeroed by calloc, in the memory of the context freed before (see
 * bench_warm_heap). The same warm-ups and repeats as bench_default. */
static BenchTime time_library(const BenchOptions *o, const LibraryCase *c) {
    enum { MAX_REPS = 1000 };
    static double times[MAX_REPS];
    int warmups = o->quick ? 1 : 2, min_reps = o->quick ? 2 : 5, reps = 0;
    double min_seconds = o->quick ? 0.0 : 0.2, start = 0.0;
    for (int call = 0; reps < MAX_REPS; call++) {
        if (call == warmups) start = bench_now();
        if (call >= warmups && reps >= min_reps && bench_now() - start >= min_seconds) break;
        Tensor *a, *b;
        Ctx *ctx = library_operands(c, &a, &b);
        double t0 = bench_now();
        keep_result(tensor_matmul(a, b));
        double t = bench_now() - t0;
        ctx_free(ctx);
        if (call >= warmups) times[reps++] = t;
    }
    double best = times[0];
    for (int r = 1; r < reps; r++) best = times[r] < best ? times[r] : best;
    return (BenchTime){best, best, reps};
}

/* tensor_matmul with every result in memory never used before: all the results stay in one
 * context (a new one once it holds 256 MB), so each call's result is pages the kernel must
 * map and zero as they are first written. */
static void library_in_new_memory(void *arg) {
    LibraryCase *c = arg;
    if (ctx_bytes(c->ctx) > ((size_t)256 << 20)) {
        ctx_free(c->ctx);
        c->ctx = library_operands(c, &c->a, &c->b);
    }
    keep_result(tensor_matmul(c->a, c->b));
}

/* A (rows, cols) matrix view of rows*cols floats: row-major, transposed (stored column-major),
 * or walked backwards (both strides negative: the view starts at the last float). */
enum { ROW_MAJOR, TRANSPOSED, REVERSED };
static void matrix_view(int64_t rows, int64_t cols, int layout, int64_t *shape, int64_t *strides, int64_t *offset) {
    shape[0] = rows, shape[1] = cols;
    strides[0] = layout == TRANSPOSED ? 1 : cols;
    strides[1] = layout == TRANSPOSED ? rows : 1;
    *offset = 0;
    if (layout == REVERSED) {
        strides[0] = -cols, strides[1] = -1;
        *offset = rows * cols - 1;
    }
}

/* A square product of the library, each operand in the given layout. */
static LibraryCase square_case(int64_t n, const float *a, const float *b, int a_layout, int b_layout) {
    LibraryCase c = {.a_values = a, .b_values = b, .a_len = n * n, .b_len = n * n, .rank = 2};
    matrix_view(n, n, a_layout, c.a_shape, c.a_strides, &c.a_offset);
    matrix_view(n, n, b_layout, c.b_shape, c.b_strides, &c.b_offset);
    return c;
}

static BenchTime time_library_square(const BenchOptions *o, int64_t n, const float *a, const float *b, int a_layout,
                                     int b_layout) {
    LibraryCase c = square_case(n, a, b, a_layout, b_layout);
    return time_library(o, &c);
}

/* The targets, as fractions of tuned OpenBLAS's speed (issue 27): the batched shape's products
 * are the library's own loop over the batch against a loop of cblas_sgemm calls, so the
 * library should not lose there; at 512^3 it met 0.91 on an Intel Xeon and 1.01 on an AMD EPYC
 * (docs/6-bmm.md). */
#define TARGET_SQUARE 0.80
#define TARGET_BATCHED 0.95

/* The library's side of a target against OpenBLAS (base, in seconds), which was timed in a
 * process of its own and so not in turns with it, as bench_pair would: when the speed ratio
 * misses `need`, the library is timed up to twice more, each after half a second idle (a busy
 * spell can last seconds), keeping its best time. */
static BenchTime time_library_against(const BenchOptions *o, const LibraryCase *c, double base, double need) {
    BenchTime t = time_library(o, c);
    for (int spell = 1; spell < 3 && !o->quick && base / t.best < need; spell++) {
        nanosleep(&(struct timespec){0, 500000000}, NULL);
        BenchTime again = time_library(o, c);
        if (again.best < t.best) t = again;
    }
    return t;
}

/* The same with the table filled for mode: "portable" (the plain C micro-kernel), "avx2". */
static BenchTime time_library_square_with(const BenchOptions *o, const char *mode, int64_t n, const float *a,
                                          const float *b) {
    const char *was = kernels_setting();
    kernels_use(mode);
    BenchTime t = time_library_square(o, n, a, b, ROW_MAJOR, ROW_MAJOR);
    kernels_use(was);
    return t;
}

/* Slow kernels: one untimed call to see how slow. Above a tenth of a second per call, the best
 * of two more calls (above half a second, one) instead of bench_default's five or more. */
static BenchTime time_slow(const BenchOptions *o, void (*fn)(void *), void *arg) {
    double t0 = bench_now();
    fn(arg);
    double once = bench_now() - t0;
    if (once > 0.1) return bench_time(fn, arg, 0, o->quick || once > 0.5 ? 1 : 2, 0.0);
    return bench_default(o, fn, arg);
}

/* ==== OpenBLAS ============================================================================ */

/* The arrays every kernel reads and writes: square operands of the largest size, and the
 * batched shape's. */
typedef struct {
    float *a, *b, *out;
    float *batch_a, *batch_b, *batch_out;
} Arrays;

static Arrays make_arrays(int64_t largest) {
    return (Arrays){random_values(largest * largest, 1), random_values(largest * largest, 2),
                    random_values(largest * largest, 3), random_values(BATCH * BM * BK, 4),
                    random_values(BATCH * BK * BN, 5),   random_values(BATCH * BM * BN, 6)};
}

static void free_arrays(Arrays *x) {
    free(x->a), free(x->b), free(x->out), free(x->batch_a), free(x->batch_b), free(x->batch_out);
}

static int parse_sizes(const BenchOptions *o, int64_t *sizes, int64_t *largest) {
    int n = bench_option_list(o, "sizes", o->quick ? quick_sizes : default_sizes, o->quick ? 2 : 5, sizes, MAX_SIZES);
    *largest = 0;
    for (int s = 0; s < n; s++) {
        if (sizes[s] < 1 || sizes[s] > 8192) {
            fprintf(stderr, "bench: sizes must be 1..8192\n");
            exit(2);
        }
        *largest = sizes[s] > *largest ? sizes[s] : *largest;
    }
    return n;
}

/* What OpenBLAS measured with one core: the best seconds for each square size, then for the
 * three batched variants. */
enum { BATCHED_CONTIGUOUS, BATCHED_B_EXPANDED, BATCHED_A_EXPANDED, N_BATCHED };
static const char *const batched_name[N_BATCHED] = {"contiguous", "b expanded (batch stride 0)",
                                                    "a expanded (batch stride 0)"};

typedef struct {
    char core[64];
    double square[MAX_SIZES];
    double batched[N_BATCHED];
} BlasTimes;

#ifdef HAVE_OPENBLAS
typedef struct {
    int64_t n;
    const Arrays *x;
    int variant; /* -1: the square product; else a batched variant */
} BlasCase;

/* out = a @ b (beta = 0: out is overwritten, as tensor_matmul makes a fresh result) */
static void blas_run(void *arg) {
    const BlasCase *c = arg;
    const Arrays *x = c->x;
    if (c->variant < 0) {
        int n = (int)c->n;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, x->a, n, x->b, n, 0.0f, x->out, n);
    } else if (c->variant == BATCHED_B_EXPANDED) {
        /* one b for every batch and a contiguous a: one (B*M, K) @ (K, N) product, the fold
         * the library makes too (section 7.6) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, BATCH * BM, BN, BK, 1.0f, x->batch_a, BK, x->batch_b, BN,
                    0.0f, x->batch_out, BN);
    } else {
        /* a loop over the batch, as a user of cblas writes it; an expanded a is the same a each time */
        for (int i = 0; i < BATCH; i++) {
            const float *a = x->batch_a + (c->variant == BATCHED_A_EXPANDED ? 0 : (size_t)i * BM * BK);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, BM, BN, BK, 1.0f, a, BK,
                        x->batch_b + (size_t)i * BK * BN, BN, 0.0f, x->batch_out + (size_t)i * BM * BN, BN);
        }
    }
    bench_keep(c->variant < 0 ? x->out : x->batch_out);
}

/* OpenBLAS alone, in this process, with whatever core it loaded. */
static BlasTimes measure_blas(const BenchOptions *o, const int64_t *sizes, int n_sizes, const Arrays *x) {
    BlasTimes r = {{0}, {0}, {0}};
    openblas_set_num_threads(1);
    snprintf(r.core, sizeof r.core, "%s", openblas_get_corename());
    for (int s = 0; s < n_sizes; s++) r.square[s] = bench_default(o, blas_run, &(BlasCase){sizes[s], x, -1}).best;
    for (int v = 0; v < N_BATCHED; v++) r.batched[v] = bench_default(o, blas_run, &(BlasCase){0, x, v}).best;
    return r;
}

/* --openblas-only: a child process measures OpenBLAS and prints the times for its parent. */
static int blas_child_main(int argc, char **argv) {
    BenchOptions o = {false, NULL, argc, argv};
    for (int i = 1; i < argc; i++) o.quick |= strcmp(argv[i], "--quick") == 0;
    int64_t sizes[MAX_SIZES], largest;
    int n_sizes = parse_sizes(&o, sizes, &largest);
    Arrays x = make_arrays(largest);
    BlasTimes r = measure_blas(&o, sizes, n_sizes, &x);
    printf("core %s\n", r.core);
    for (int s = 0; s < n_sizes; s++) printf("square %d %.9g\n", s, r.square[s]);
    for (int v = 0; v < N_BATCHED; v++) printf("batched %d %.9g\n", v, r.batched[v]);
    free_arrays(&x);
    return 0;
}

/* Runs this program again with OPENBLAS_CORETYPE=core and --openblas-only, and reads back what
 * it measured. False if it could not run or failed (a core this CPU cannot run, say). */
static bool blas_in_child(const char *core, int argc, char **argv, BlasTimes *r) {
    char self[4096];
    snprintf(self, sizeof self, "%s", argv[0]); /* make runs it by its path */
    static char only[] = "--openblas-only";
    char *args[64];
    int n = 0;
    args[n++] = self;
    args[n++] = only;
    for (int i = 1; i < argc && n < 62; i++)
        if (strcmp(argv[i], "--data") == 0) i++; /* the parent writes the data file */
        else args[n++] = argv[i];
    args[n] = NULL;
    int fds[2];
    if (pipe(fds) != 0) return false;
    /* the child inherits the variable; OpenBLAS in this process read it when it loaded */
    const char *was = getenv("OPENBLAS_CORETYPE");
    char saved[64];
    snprintf(saved, sizeof saved, "%s", was ? was : "");
    setenv("OPENBLAS_CORETYPE", core, 1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execv(self, args);
        _exit(127);
    }
    if (was) setenv("OPENBLAS_CORETYPE", saved, 1);
    else unsetenv("OPENBLAS_CORETYPE");
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return false;
    }
    FILE *from = fdopen(fds[0], "r");
    char line[256];
    bool got_core = false;
    *r = (BlasTimes){{0}, {0}, {0}};
    while (from && fgets(line, sizeof line, from)) {
        int i;
        double seconds;
        if (sscanf(line, "core %63s", r->core) == 1) got_core = true;
        else if (sscanf(line, "square %d %lf", &i, &seconds) == 2 && i >= 0 && i < MAX_SIZES) r->square[i] = seconds;
        else if (sscanf(line, "batched %d %lf", &i, &seconds) == 2 && i >= 0 && i < N_BATCHED) r->batched[i] = seconds;
    }
    if (from) fclose(from);
    else close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return got_core && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Do the core's kernels use AVX-512? */
static bool uses_avx512(const char *core) { return strcmp(core, "SkylakeX") == 0 || strcmp(core, "Cooperlake") == 0; }

/* Can this CPU run the core's kernels? (Forcing one it cannot run would crash the child.) The
 * cores' instructions are those of the library's builds of the same names. */
static bool cpu_can_run(const char *core) { return kernels_cpu_runs(uses_avx512(core) ? "avx512" : "avx2"); }

/* The geometric mean of OpenBLAS's speed over every shape measured (higher is faster). */
static double blas_score(const BlasTimes *r, int n_sizes) {
    double log_sum = 0.0;
    for (int s = 0; s < n_sizes; s++) log_sum -= log(r->square[s]);
    for (int v = 0; v < N_BATCHED; v++) log_sum -= log(r->batched[v]);
    return log_sum / (n_sizes + N_BATCHED);
}

/* The index of the fastest core in blas[], leaving out those that use AVX-512 if without_avx512
 * (-1 if that leaves none). */
static int fastest_core(const BlasTimes *blas, int n_blas, int n_sizes, bool without_avx512) {
    int best = -1;
    for (int c = 0; c < n_blas; c++)
        if (!(without_avx512 && uses_avx512(blas[c].core)) &&
            (best < 0 || blas_score(&blas[c], n_sizes) > blas_score(&blas[best], n_sizes)))
            best = c;
    return best;
}

/* OpenBLAS with the core it detected, in this process, and with every other candidate core
 * this CPU can run, each in a child process. Prints what each measured. Returns the index of
 * the fastest, "tuned", in blas[] (blas[0] is the detected core's). */
static int openblas_cores(const BenchOptions *o, int argc, char **argv, const int64_t *sizes, int n_sizes,
                          const Arrays *x, BlasTimes *blas, int *n_blas) {
    const char *env_core = getenv("OPENBLAS_CORETYPE");
    printf("OpenBLAS: %s\n", openblas_get_config());
    printf("OpenBLAS core detected for this CPU: %s%s; one thread\n", openblas_get_corename(),
           env_core && *env_core ? " (chosen by OPENBLAS_CORETYPE in the environment)" : "");
    *n_blas = 0;
    blas[(*n_blas)++] = measure_blas(o, sizes, n_sizes, x);
    const char *const candidates[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake"};
    for (int c = 0; c < 4; c++) {
        if (strcmp(candidates[c], blas[0].core) == 0) continue; /* measured above */
        if (!cpu_can_run(candidates[c])) {
            printf("OpenBLAS core %s: not tried (this CPU lacks its instructions)\n", candidates[c]);
            continue;
        }
        if (blas_in_child(candidates[c], argc, argv, &blas[*n_blas])) (*n_blas)++;
        else printf("OpenBLAS core %s: its process failed; left out\n", candidates[c]);
    }
    /* When the library runs without AVX-512 on a CPU that has it (COURSE_KERNELS=avx2, or portable
     * or reference), the OpenBLAS it is held to runs without it too: a core without its
     * instructions, where one ran. */
    bool same_isa = strcmp(kernels_name(), "avx512") != 0 && cpu_can_run("SkylakeX");
    int tuned = fastest_core(blas, *n_blas, n_sizes, same_isa);
    if (tuned < 0) same_isa = false, tuned = fastest_core(blas, *n_blas, n_sizes, false); /* only AVX-512 cores ran */
    printf("\nOpenBLAS cores, GFLOP/s (OPENBLAS_CORETYPE=core, each in a process of its own)\n  %-38s", "shape");
    for (int c = 0; c < *n_blas; c++) printf(" %11s", blas[c].core);
    printf("\n");
    for (int s = 0; s < n_sizes; s++) {
        char what[64];
        snprintf(what, sizeof what, "%lldx%lldx%lld", (long long)sizes[s], (long long)sizes[s], (long long)sizes[s]);
        printf("  %-38s", what);
        for (int c = 0; c < *n_blas; c++) printf(" %11.2f", 2.0 * pow((double)sizes[s], 3) / blas[c].square[s] * 1e-9);
        printf("\n");
    }
    for (int v = 0; v < N_BATCHED; v++) {
        printf("  batched, %-29s", batched_name[v]);
        for (int c = 0; c < *n_blas; c++) printf(" %11.2f", 2.0 * BATCH * BM * BK * BN / blas[c].batched[v] * 1e-9);
        printf("\n");
    }
    printf("tuned OpenBLAS: the %s core, the fastest over all these shapes (geometric mean)%s; detected: %s\n",
           blas[tuned].core, same_isa ? " of the cores without AVX-512, as the library runs none" : "", blas[0].core);
    return tuned;
}
#else
static int blas_child_main(int argc, char **argv) { return (void)argc, (void)argv, 1; }

static int openblas_cores(const BenchOptions *o, int argc, char **argv, const int64_t *sizes, int n_sizes,
                          const Arrays *x, BlasTimes *blas, int *n_blas) {
    (void)o, (void)argc, (void)argv, (void)sizes, (void)n_sizes, (void)x, (void)blas;
    printf(
        "OpenBLAS: not found when this benchmark was built (tests/ensure-deps.sh openblas installs it): the library is "
        "the baseline, and OpenBLAS's rows and targets are left out\n");
    *n_blas = 0;
    return -1;
}
#endif /* HAVE_OPENBLAS */

/* ==== main ================================================================================ */

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--openblas-only") == 0) return blas_child_main(argc, argv);

    BenchOptions o =
        bench_start(argc, argv, "lesson 6: matrix multiplication, float32",
                    "[--sizes N,N,...] [--slow-max N]   (default sizes 64,128,256,512,1024; the naive kernel "
                    "skips sizes above --slow-max, default 512, loop order and blocked above twice that)");
    int64_t sizes[MAX_SIZES], largest;
    int n_sizes = parse_sizes(&o, sizes, &largest);
    int64_t slow_max = bench_option_int(&o, "slow-max", 512);
    Arrays x = make_arrays(largest);

    /* The batched product with its result in new memory, once: a page fault per 4 KB the first
     * time it is written, which on a virtual machine takes longer than the product itself. That
     * cost is memory management's, not matmul's, and cblas_sgemm is timed writing into the same
     * warm buffer every call; so, after this row, the heap is kept warm (bench_warm_heap) and
     * every library call's result comes from memory written before. */
    LibraryCase batched[N_BATCHED];
    for (int v = 0; v < N_BATCHED; v++) /* expanded: one matrix behind a batch stride of 0 */
        batched[v] = (LibraryCase){.a_values = x.batch_a,
                                   .b_values = x.batch_b,
                                   .a_len = BATCH * BM * BK,
                                   .b_len = BATCH * BK * BN,
                                   .rank = 3,
                                   .a_shape = {BATCH, BM, BK},
                                   .b_shape = {BATCH, BK, BN},
                                   .a_strides = {v == BATCHED_A_EXPANDED ? 0 : BM * BK, BK, 1},
                                   .b_strides = {v == BATCHED_B_EXPANDED ? 0 : BK * BN, BN, 1}};
    LibraryCase fresh = batched[BATCHED_CONTIGUOUS];
    fresh.ctx = library_operands(&fresh, &fresh.a, &fresh.b);
    BenchTime new_memory = bench_default(&o, library_in_new_memory, &fresh);
    ctx_free(fresh.ctx);
    bench_warm_heap(256u << 20); /* more than every operand, result and packing buffer here */

    BlasTimes blas[8];
    int n_blas, tuned = openblas_cores(&o, argc, argv, sizes, n_sizes, &x, blas, &n_blas);
    bool have_blas = tuned >= 0;

    /* ---- square products ---------------------------------------------------------------- */
    FILE *data = bench_data_open(&o, "n naive_ijp loop_order_ipj blocked_ipj library_portable library_avx2 library "
                                     "openblas_detected openblas_tuned (GFLOP/s; - not measured)");
    if (largest > slow_max)
        printf("\nThe naive kernel skips sizes above %lld, loop order and blocked above %lld (--slow-max): they would "
               "take seconds per call.\n",
               (long long)slow_max, 2 * (long long)slow_max);
    double ratio_at_512 = NAN;
    for (int s = 0; s < n_sizes; s++) {
        int64_t n = sizes[s];
        double flop = 2.0 * (double)n * (double)n * (double)n, rate[8];
        for (int q = 0; q < 8; q++) rate[q] = NAN;
        LibraryCase square = square_case(n, x.a, x.b, ROW_MAJOR, ROW_MAJOR);
        BenchTime library = have_blas && n == 512
                                ? time_library_against(&o, &square, blas[tuned].square[s], TARGET_SQUARE)
                                : time_library(&o, &square);
        double base = have_blas ? blas[tuned].square[s] : library.best;
        char what[160];
        snprintf(what, sizeof what, "matmul %lldx%lldx%lld", (long long)n, (long long)n, (long long)n);
        bench_table_header(what, "GFLOP/s", have_blas ? "tuned OpenBLAS" : "the library");
        Square sq = {n, x.a, x.b, x.out};
        if (n <= slow_max) {
            BenchTime t = time_slow(&o, naive_ijp, &sq);
            bench_table_row("naive i,j,p (dot products down b's columns)", t, rate[0] = flop / t.best * 1e-9, base);
        }
        if (n <= 2 * slow_max) {
            BenchTime t = time_slow(&o, loop_order_ipj, &sq);
            bench_table_row("loop order i,p,j (rows of b and out)", t, rate[1] = flop / t.best * 1e-9, base);
            t = time_slow(&o, blocked_ipj, &sq);
            bench_table_row("blocked i,p,j (128x256 blocks of b)", t, rate[2] = flop / t.best * 1e-9, base);
        }
        BenchTime t = time_library_square_with(&o, "portable", n, x.a, x.b);
        bench_table_row("library, plain C micro-kernel (portable)", t, rate[3] = flop / t.best * 1e-9, base);
        if (strcmp(kernels_name(), "avx512") == 0) { /* the AVX2 micro-kernel too, where the native one is AVX-512 */
            t = time_library_square_with(&o, "avx2", n, x.a, x.b);
            bench_table_row("library, AVX2+FMA micro-kernel (avx2)", t, rate[4] = flop / t.best * 1e-9, base);
        }
        snprintf(what, sizeof what, "library tensor_matmul (%s)", kernels_name());
        bench_table_row(what, library, rate[5] = flop / library.best * 1e-9, base);
        if (have_blas) {
            BenchTime bt = {blas[0].square[s], blas[0].square[s], 0};
            snprintf(what, sizeof what, "OpenBLAS, detected core (%s)", blas[0].core);
            bench_table_row(what, bt, rate[6] = flop / bt.best * 1e-9, base);
            bt = (BenchTime){blas[tuned].square[s], blas[tuned].square[s], 0};
            snprintf(what, sizeof what, "OpenBLAS, tuned core (%s)", blas[tuned].core);
            bench_table_row(what, bt, rate[7] = flop / bt.best * 1e-9, base);
            if (n == 512) ratio_at_512 = base / library.best;
        }
        if (data) {
            fprintf(data, "%lld", (long long)n);
            for (int q = 0; q < 8; q++)
                if (isnan(rate[q])) fprintf(data, " -");
                else fprintf(data, " %.3f", rate[q]);
            fprintf(data, "\n");
        }
    }
    if (data) fclose(data);

    /* ---- the batched shape ----------------------------------------------------------------- */
    double batched_ratio[N_BATCHED], flop = 2.0 * BATCH * BM * BK * BN;
    char what[160];
    snprintf(what, sizeof what, "batched matmul [%d,%d,%d] @ [%d,%d,%d]", BATCH, BM, BK, BATCH, BK, BN);
    bench_table_header(what, "GFLOP/s", have_blas ? "tuned OpenBLAS on the same variant" : "the library");
    BenchTime contiguous_batched = {0, 0, 0};
    for (int v = 0; v < N_BATCHED; v++) {
        BenchTime t = have_blas ? time_library_against(&o, &batched[v], blas[tuned].batched[v], TARGET_BATCHED)
                                : time_library(&o, &batched[v]);
        double base = have_blas ? blas[tuned].batched[v] : t.best;
        snprintf(what, sizeof what, "library, %s", batched_name[v]);
        bench_table_row(what, t, flop / t.best * 1e-9, base);
        if (have_blas) {
            snprintf(what, sizeof what, "OpenBLAS, %s", batched_name[v]);
            bench_table_row(what, (BenchTime){base, base, 0}, flop / base * 1e-9, base);
        }
        batched_ratio[v] = base / t.best;
        if (v == BATCHED_CONTIGUOUS) contiguous_batched = t;
    }
    bench_table_row("library, contiguous, result in new memory", new_memory, flop / new_memory.best * 1e-9,
                    have_blas ? blas[tuned].batched[0] : contiguous_batched.best);
    if (have_blas)
        printf("  (OpenBLAS: the %s core, a loop of %d cblas_sgemm calls, or one call when b is expanded)\n",
               blas[tuned].core, BATCH);
    printf("  (mapping the pages of a new %.0f MB result cost %.2f ms more; the rows above reuse freed memory)\n",
           4.0 * BATCH * BM * BN / (1 << 20), (new_memory.best - contiguous_batched.best) * 1e3);

    /* ---- views: the backward multiplies transposed operands -------------------------------- */
    int64_t nv = 0;
    for (int s = 0; s < n_sizes; s++) nv = sizes[s] <= 512 && sizes[s] > nv ? sizes[s] : nv; /* 512, or below */
    if (nv == 0) nv = sizes[0];
    snprintf(what, sizeof what, "library matmul %lldx%lldx%lld through views", (long long)nv, (long long)nv,
             (long long)nv);
    bench_table_header(what, "GFLOP/s", "contiguous operands");
    flop = 2.0 * (double)nv * (double)nv * (double)nv;
    BenchTime contiguous = time_library_square(&o, nv, x.a, x.b, ROW_MAJOR, ROW_MAJOR);
    bench_table_row("a @ b, both contiguous", contiguous, flop / contiguous.best * 1e-9, contiguous.best);
    const struct {
        const char *name;
        int a, b;
    } views[] = {{"a^T @ b (a transposed, as in a^T @ g)", TRANSPOSED, ROW_MAJOR},
                 {"a @ b^T (b transposed, as in g @ b^T)", ROW_MAJOR, TRANSPOSED},
                 {"a^T @ b^T", TRANSPOSED, TRANSPOSED},
                 {"both walked backwards (negative strides)", REVERSED, REVERSED}};
    double worst_view = 0.0;
    for (int v = 0; v < 4; v++) {
        BenchTime t = time_library_square(&o, nv, x.a, x.b, views[v].a, views[v].b);
        bench_table_row(views[v].name, t, flop / t.best * 1e-9, contiguous.best);
        worst_view = t.best / contiguous.best > worst_view ? t.best / contiguous.best : worst_view;
    }

    /* ---- the targets ---------------------------------------------------------------- */
    printf("\n");
    if (!have_blas)
        printf("target: library matmul >= %.2f of tuned OpenBLAS: not measured (no OpenBLAS)\n", TARGET_SQUARE);
    else if (isnan(ratio_at_512))
        printf("target: library matmul at 512x512x512 vs tuned OpenBLAS: not measured (512 is not in --sizes)\n");
    else
        bench_target_at_least("library matmul at 512x512x512, speed relative to tuned OpenBLAS", ratio_at_512,
                              TARGET_SQUARE);
    for (int v = 0; v < N_BATCHED && have_blas; v++) {
        snprintf(what, sizeof what, "library batched matmul, %s, speed relative to tuned OpenBLAS", batched_name[v]);
        bench_target_at_least(what, batched_ratio[v], TARGET_BATCHED);
    }
    snprintf(what, sizeof what, "slowest view at %lld^3 within 2x of contiguous operands (time / contiguous's)",
             (long long)nv);
    bench_target_at_most(what, worst_view, 2.0);
    free_arrays(&x);
    return 0;
}
