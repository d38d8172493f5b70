/*
 * bench.c - lesson 2's benchmark (`make lesson2 bench`): the reductions of a [rows, cols]
 * tensor (default [4096,4096]), each on a contiguous tensor and on a transposed view of the
 * same values, against a plain C loop that sums the contiguous array.
 *
 * A sum reads every element once and writes almost nothing, so its floor is the speed at which
 * memory can be read. The transposed view holds the same values, stored column by column: its
 * rows are strided. The rule is that no strided path may be more than 2x slower than
 * the contiguous one on the same shape; the targets at the end check it op by op. Every sum
 * here runs the core's strided_accumulate, whose fast kernel (common/tensor_fast.c) walks the input
 * in memory order.
 */
#include <stdlib.h>

#include "bench.h"
#include "broadcast.h"
#include "reduce.h"

typedef struct {
    int64_t rows, cols;
    float *values;
    Tensor *x, *xt, *xr; /* contiguous (rows, cols); the same values as a transposed view; x reversed */
    Tensor *(*op)(Tensor *);
} Setup;

typedef struct {
    Setup *s;
    Tensor *(*op)(Tensor *);
    int view; /* 0: x, 1: xt, 2: xr */
} Run;

static void run(void *arg) {
    Run *r = arg;
    Tensor *out = r->op(r->view == 1 ? r->s->xt : r->view == 2 ? r->s->xr : r->s->x);
    if (!out) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
    bench_keep(tensor_data(out));
}

/* The floor: one pass over the contiguous array, 8 running sums side by side (a single one
 * would wait for each add to finish before starting the next). */
static void run_plain(void *arg) {
    Setup *s = arg;
    int64_t n = s->rows * s->cols, i = 0;
    float acc[8] = {0}, total = 0.0f;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += s->values[i + k];
    for (; i < n; i++) total += s->values[i];
    for (int k = 0; k < 8; k++) total += acc[k];
    static float sink;
    sink = total;
    bench_keep(&sink);
}

static Tensor *op_sum(Tensor *x) { return tensor_sum(x); }
static Tensor *op_mean(Tensor *x) { return tensor_mean(x); }
static Tensor *op_sum_last_dim(Tensor *x) { return tensor_sum_last_dim(x); }
static Tensor *op_sum_last_axis(Tensor *x) { return tensor_sum_axis(x, -1, false); }
static Tensor *op_sum_first_axis(Tensor *x) { return tensor_sum_axis(x, 0, false); }
static Tensor *op_mean_first_axis(Tensor *x) { return tensor_mean_axis(x, 0, false); }

int main(int argc, char **argv) {
    BenchOptions o = bench_start(argc, argv, "lesson 2: reductions, contiguous and transposed",
                                 "[--rows R] [--cols C]   (default 4096 x 4096; --quick: 512 x 512)");
    Setup s = {0};
    s.rows = bench_option_int(&o, "rows", o.quick ? 512 : 4096);
    s.cols = bench_option_int(&o, "cols", o.quick ? 512 : 4096);
    int64_t n = s.rows * s.cols;
    Ctx *ctx = ctx_new();
    s.x = tensor_zeros(ctx, (const int64_t[]){s.rows, s.cols}, 2);
    Tensor *base = tensor_zeros(ctx, (const int64_t[]){s.cols, s.rows}, 2);
    if (!s.x || !base) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        return 2;
    }
    s.values = tensor_data(s.x);
    uint64_t state = 12345;
    for (int64_t i = 0; i < s.rows; i++) {
        for (int64_t j = 0; j < s.cols; j++) {
            state = state * 6364136223846793005u + 1442695040888963407u;
            float v = (float)((double)(state >> 40) / (double)(1 << 24) * 2.0 - 1.0);
            s.values[i * s.cols + j] = v;
            tensor_data(base)[j * s.rows + i] = v;
        }
    }
    s.xt = tensor_as_strided(base, (const int64_t[]){s.rows, s.cols}, 2, (const int64_t[]){1, s.rows}, 0);
    /* x walked backwards along both dims: the same storage, read from its end (negative strides) */
    s.xr = tensor_as_strided(s.x, (const int64_t[]){s.rows, s.cols}, 2, (const int64_t[]){-s.cols, -1}, n - 1);

    static const struct {
        const char *name;
        Tensor *(*op)(Tensor *);
    } ops[] = {
        {"tensor_sum (lesson 1's sum_to_shape)", op_sum},
        {"tensor_mean (that sum, times 1/N)", op_mean},
        {"tensor_sum_last_dim", op_sum_last_dim},
        {"tensor_sum_axis(x, -1) (the last axis)", op_sum_last_axis},
        {"tensor_sum_axis(x, 0) (the first axis)", op_sum_first_axis},
        {"tensor_mean_axis(x, 0)", op_mean_first_axis},
    };
    enum { N_OPS = sizeof ops / sizeof ops[0] };

    double bytes = 4.0 * (double)n;
    char what[160];
    snprintf(what, sizeof what, "[%lld,%lld] float32, rate: bytes read", (long long)s.rows, (long long)s.cols);
    bench_table_header(what, "GB/s", "a plain C loop summing the contiguous array");
    BenchTime plain = bench_default(&o, run_plain, &s);
    bench_table_row("plain C loop, 8 running sums (baseline)", plain, bytes / plain.best * 1e-9, plain.best);
    /* Each view is timed in turns with the contiguous tensor (bench_pair), and the targets are
     * the ratios of those pairs; the contiguous row shows its best time from both pairs. */
    BenchPair pairs[N_OPS][2];
    for (int k = 0; k < N_OPS; k++) {
        Run contiguous = {&s, ops[k].op, 0}, transposed = {&s, ops[k].op, 1}, reversed = {&s, ops[k].op, 2};
        pairs[k][0] = bench_pair(&o, run, &contiguous, run, &transposed, 2.0);
        pairs[k][1] = bench_pair(&o, run, &contiguous, run, &reversed, 2.0);
        BenchTime alone = pairs[k][0].a.best < pairs[k][1].a.best ? pairs[k][0].a : pairs[k][1].a;
        bench_table_row(ops[k].name, alone, bytes / alone.best * 1e-9, plain.best);
        bench_table_row("  the same, transposed view", pairs[k][0].b, bytes / pairs[k][0].b.best * 1e-9, plain.best);
        bench_table_row("  the same, reversed (negative strides)", pairs[k][1].b, bytes / pairs[k][1].b.best * 1e-9,
                        plain.best);
    }

    printf("\n");
    static const char *const view_names[2] = {"a transposed view", "a reversed view"};
    for (int view = 0; view < 2; view++)
        for (int k = 0; k < N_OPS; k++) {
            char description[160];
            snprintf(description, sizeof description, "%s of %s within 2x of the contiguous one", ops[k].name,
                     view_names[view]);
            bench_target_pair_at_most(description, pairs[k][view], 2.0);
        }
    ctx_free(ctx);
    return 0;
}
