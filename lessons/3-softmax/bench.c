/*
 * bench.c - lesson 3's benchmark (`make lesson3 bench`): softmax over the last dim of a
 * [rows, cols] tensor (default [4096,4096]) against the cheapest op that reads and writes the
 * same bytes, an elementwise add.
 *
 * The baseline is the library's tensor_add of two contiguous tensors of the same size: it
 * reads two tensors and writes one, in a single pass, with no arithmetic to speak of. On a
 * tensor this large (67 MB each) it runs at the speed of memory, the floor for any op that
 * must touch every element. Softmax reads one tensor and writes one, but per element it needs
 * an exp, and per row a max and a sum: three passes over each row.
 *
 * Memory is warm, as in a long-running program and as in the other lessons' benchmarks: glibc
 * is asked to keep what is freed and to reuse it, and the heap is written once before anything
 * is timed, so every output (the library's, allocated in its context, and the plain loops'
 * buffers) is memory that was used before. (Memory new from the operating system costs a page
 * fault per 4 KB on first touch: lesson 4 measures it.)
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "broadcast.h"
#include "kernels.h"
#include "softmax.h"

typedef struct {
    int64_t rows, cols;
    float *x_values, *y_values; /* the inputs, kept to rebuild a context */
    Ctx *ctx;
    Tensor *x, *y, *xt; /* x, y contiguous (rows, cols); xt: x's values as a transposed view */
    size_t input_bytes; /* what the context holds before any op ran */
    float *out;         /* a warm output for the plain loops */
} Setup;

/* A new context holding the inputs. */
static void fresh_context(Setup *s) {
    ctx_free(s->ctx);
    s->ctx = ctx_new();
    int64_t n = s->rows * s->cols;
    s->x = tensor_from(s->ctx, (const int64_t[]){s->rows, s->cols}, 2, s->x_values, n);
    s->y = tensor_from(s->ctx, (const int64_t[]){s->rows, s->cols}, 2, s->y_values, n);
    /* xt holds x's rows as columns: the storage is x transposed, read back through strides (1, rows) */
    Tensor *base = tensor_zeros(s->ctx, (const int64_t[]){s->cols, s->rows}, 2);
    if (!s->x || !s->y || !base) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
    float *b = tensor_data(base);
    for (int64_t i0 = 0; i0 < s->rows; i0 += 64) /* in tiles of 64 x 64: a transpose a row at a time is slow */
        for (int64_t j0 = 0; j0 < s->cols; j0 += 64)
            for (int64_t i = i0; i < s->rows && i < i0 + 64; i++)
                /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign): main fills all rows * cols values (both >= 1) */
                for (int64_t j = j0; j < s->cols && j < j0 + 64; j++) b[j * s->rows + i] = s->x_values[i * s->cols + j];
    s->xt = tensor_as_strided(base, (const int64_t[]){s->rows, s->cols}, 2, (const int64_t[]){1, s->rows}, 0);
    s->input_bytes = ctx_bytes(s->ctx);
}

/* Every op allocates its output in the context, which is freed only as a whole: once it holds
 * three outputs, it is made again (see time_op). */
static void keep_context_small(Setup *s) {
    if (ctx_bytes(s->ctx) >= s->input_bytes + 3 * (size_t)(s->rows * s->cols) * sizeof(float)) fresh_context(s);
}

/* bench_default's loop (warm-ups, then at least 5 calls and 0.2 s; --quick: 1, then 2), for a
 * library op, with one untimed step before each call. Every op allocates its output in the
 * context, which is freed only as a whole, so once the context holds three outputs it is
 * rebuilt, untimed. That keeps memory bounded, as in a program that frees its context after each step:
 * a process that keeps growing pays more for each page it touches first, and on a virtual
 * machine much more. */
static BenchTime time_op(const BenchOptions *o, Tensor *(*op)(Setup *), Setup *s) {
    enum { MAX_REPS = 1000 };
    static double times[MAX_REPS];
    int warmups = o->quick ? 1 : 2, min_reps = o->quick ? 2 : 5, reps = 0;
    double min_seconds = o->quick ? 0.0 : 0.2, start = 0.0;
    for (int call = 0; reps < MAX_REPS && (reps < min_reps || bench_now() - start < min_seconds); call++) {
        keep_context_small(s);
        if (call == warmups) start = bench_now();
        double t0 = bench_now();
        Tensor *out = op(s);
        double t = bench_now() - t0;
        if (!out) {
            fprintf(stderr, "bench: %s\n", tensor_error());
            exit(2);
        }
        bench_keep(tensor_data(out));
        if (call >= warmups) times[reps++] = t;
    }
    double best = times[0];
    for (int i = 1; i < reps; i++) best = times[i] < best ? times[i] : best;
    return (BenchTime){best, best, reps}; /* only the best time is reported */
}

/* One op as bench_pair times it: the context is rebuilt inside the call when it is full, so
 * a few of the calls are slow, but the best time is one of the others. */
typedef struct {
    Setup *s;
    Tensor *(*op)(Setup *);
} Call;

static void run_op(void *arg) {
    Call *c = arg;
    Setup *s = c->s;
    keep_context_small(s);
    Tensor *out = c->op(s);
    if (!out) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
    bench_keep(tensor_data(out));
}

static Tensor *op_add(Setup *s) { return tensor_add(s->x, s->y); }
static Tensor *op_softmax(Setup *s) { return tensor_softmax_last_dim(s->x); }
static Tensor *op_log_softmax(Setup *s) { return tensor_log_softmax_last_dim(s->x); }
static Tensor *op_softmax_transposed(Setup *s) { return tensor_softmax_last_dim(s->xt); }

/* The plain C loop over raw arrays, into the buffer s->out */
static void run_plain_add(void *arg) {
    const Setup *s = arg;
    const float *restrict a = s->x_values, *restrict b = s->y_values;
    float *restrict out = s->out;
    int64_t n = s->rows * s->cols;
    for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i];
    bench_keep(out);
}
/* The textbook formula, row by row, into a buffer of its own (the inputs are small: it does
 * not overflow) */
static void run_naive(void *arg) {
    Setup *s = arg;
    float *out = malloc((size_t)(s->rows * s->cols) * sizeof *out);
    for (int64_t i = 0; i < s->rows; i++) softmax_naive_row(s->x_values + i * s->cols, s->cols, out + i * s->cols);
    bench_keep(out);
    free(out);
}

/* exp of every input value: expf one at a time, or the table's exp (the fast kernels' vector
 * exp, unless COURSE_KERNELS=reference) */
static void run_expf(void *arg) {
    Setup *s = arg;
    int64_t n = s->rows * s->cols;
    for (int64_t i = 0; i < n; i++) s->out[i] = expf(s->x_values[i]);
    bench_keep(s->out);
}
static void run_table_exp(void *arg) {
    Setup *s = arg;
    kernels()->exp(s->x_values, s->rows * s->cols, s->out);
    bench_keep(s->out);
}

/* The table's exp's largest error, in units in the last place of the float nearest to exp
 * in double, over every `stride`-th float (by bit pattern: every binade, both signs). */
static double exp_max_ulp(uint64_t stride, uint64_t *count) {
    enum { CHUNK = 4096 };
    float x[CHUNK], y[CHUNK];
    double worst = 0.0;
    *count = 0;
    for (uint64_t bits = 0; bits < ((uint64_t)1 << 32);) {
        int n = 0;
        for (; n < CHUNK && bits < ((uint64_t)1 << 32); n++, bits += stride) {
            uint32_t b = (uint32_t)bits;
            memcpy(&x[n], &b, sizeof b);
        }
        kernels()->exp(x, n, y);
        for (int i = 0; i < n; i++, (*count)++) {
            double want = exp((double)x[i]);
            float nearest = (float)want;
            if (isnan(x[i]) || isinf(nearest) || isinf(y[i])) {
                if (isnan(x[i]) ? !isnan(y[i]) : y[i] != nearest) return INFINITY;
                continue;
            }
            int e;
            double ulp = fabsf(nearest) < FLT_MIN ? ldexp(1.0, -149) : (frexpf(nearest, &e), ldexp(1.0, e - 24));
            double error = fabs((double)y[i] - want) / ulp;
            worst = error > worst ? error : worst;
        }
    }
    return worst;
}

/* The same op on the same input under the reference: its plain C rows, with expf */
static BenchTime time_reference(const BenchOptions *o, Tensor *(*op)(Setup *), Setup *s) {
    const char *was = kernels_setting();
    kernels_use("reference");
    BenchTime t = time_op(o, op, s);
    kernels_use(was);
    return t;
}

int main(int argc, char **argv) {
    BenchOptions o = bench_start(argc, argv, "lesson 3: softmax over the last dim",
                                 "[--rows R] [--cols C]   (default 4096 x 4096; --quick: 512 x 512)");
    Setup s = {0};
    s.rows = bench_option_int(&o, "rows", o.quick ? 512 : 4096);
    s.cols = bench_option_int(&o, "cols", o.quick ? 512 : 4096);
    int64_t n = s.rows * s.cols;
    bench_warm_heap((size_t)n * sizeof(float) * 16);
    printf("memory: warm (glibc keeps and reuses freed memory; the heap was written once before timing)\n");
    s.x_values = malloc((size_t)n * sizeof(float));
    s.y_values = malloc((size_t)n * sizeof(float));
    s.out = malloc((size_t)n * sizeof(float));
    if (!s.x_values || !s.y_values || !s.out) {
        fprintf(stderr, "bench: out of memory\n");
        free(s.x_values), free(s.y_values), free(s.out);
        return 2;
    }
    /* logits in [-8, 8): ordinary scores, small enough for the naive formula too */
    uint64_t state = 12345;
    for (int64_t i = 0; i < n; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        s.x_values[i] = (float)((double)(state >> 40) / (double)(1 << 24) * 16.0 - 8.0);
        s.y_values[i] = (float)(i % 7) - 3.0f;
        s.out[i] = 0.0f;
    }
    fresh_context(&s);

    double bytes2 = 2.0 * 4.0 * (double)n,
           bytes3 = 3.0 * 4.0 * (double)n; /* read one + write one; read two + write one */
    char what[160];
    snprintf(what, sizeof what, "[%lld,%lld] float32, rate: bytes read and written", (long long)s.rows,
             (long long)s.cols);
    bench_table_header(what, "GB/s", "the library's add of two contiguous tensors");
    BenchTime add = time_op(&o, op_add, &s);
    bench_table_row("tensor_add, contiguous (baseline)", add, bytes3 / add.best * 1e-9, add.best);
    BenchTime t = bench_default(&o, run_plain_add, &s);
    bench_table_row("plain C loop add", t, bytes3 / t.best * 1e-9, add.best);
    BenchTime softmax = time_op(&o, op_softmax, &s);
    bench_table_row("tensor_softmax_last_dim (stable)", softmax, bytes2 / softmax.best * 1e-9, add.best);
    t = time_op(&o, op_log_softmax, &s);
    bench_table_row("tensor_log_softmax_last_dim", t, bytes2 / t.best * 1e-9, add.best);
    BenchTime transposed = time_op(&o, op_softmax_transposed, &s);
    bench_table_row("tensor_softmax_last_dim, transposed view", transposed, bytes2 / transposed.best * 1e-9, add.best);
    t = time_reference(&o, op_softmax, &s);
    bench_table_row("softmax, reference: plain C rows (expf)", t, bytes2 / t.best * 1e-9, add.best);
    t = time_reference(&o, op_log_softmax, &s);
    bench_table_row("log_softmax, reference", t, bytes2 / t.best * 1e-9, add.best);
    t = time_reference(&o, op_softmax_transposed, &s);
    bench_table_row("softmax, transposed view, reference", t, bytes2 / t.best * 1e-9, add.best);
    t = bench_default(&o, run_naive, &s);
    bench_table_row("softmax_naive_row (unstable)", t, bytes2 / t.best * 1e-9, add.best);

    snprintf(what, sizeof what, "exp of %lld floats in [-8, 8), into a warm buffer", (long long)n);
    bench_table_header(what, "Gexp/s", "expf, one float at a time");
    BenchTime e = bench_default(&o, run_expf, &s);
    bench_table_row("expf (glibc), one at a time (baseline)", e, (double)n / e.best * 1e-9, e.best);
    t = bench_default(&o, run_table_exp, &s);
    snprintf(what, sizeof what, "the table's exp: polynomial, in vectors (%s: %s)", kernels_name(),
             kernels_instructions());
    bench_table_row(what, t, (double)n / t.best * 1e-9, e.best);
    uint64_t count;
    double worst = exp_max_ulp(o.quick ? 65537 : 4099, &count);
    printf("exp's largest error (the table's, %s) over %llu floats from the whole float range: %.3f units in the "
           "last place\n",
           kernels_name(), (unsigned long long)count, worst);

    /* the targets: each ratio from two times taken in turns (bench_pair) */
    printf("\n");
    Call add_call = {&s, op_add}, softmax_call = {&s, op_softmax}, transposed_call = {&s, op_softmax_transposed};
    bench_target_pair_at_most("stable softmax forward within 4x of the same-size contiguous add (time / add's)",
                              bench_pair(&o, run_op, &add_call, run_op, &softmax_call, 4.0), 4.0);
    bench_target_pair_at_most("softmax of a transposed view within 2x of the contiguous one (time / contiguous's)",
                              bench_pair(&o, run_op, &softmax_call, run_op, &transposed_call, 2.0), 2.0);
    ctx_free(s.ctx);
    free(s.x_values);
    free(s.y_values);
    free(s.out);
    return 0;
}
