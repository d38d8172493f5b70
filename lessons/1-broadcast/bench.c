/*
 * bench.c - lesson 1's benchmark (make lesson1 bench): a bias added to every row, (R,C) + (C,),
 * three ways:
 *   - the baseline: a plain C loop over two same-shape arrays (the bias copied into every row
 *     beforehand, untimed), o[i] = a[i] + b[i];
 *   - the library: tensor_add, which reads the bias through a stride-0 view;
 *   - the chapter's index map: broadcast_map writes, for the bias, the flat index of the
 *     element every output element reads (8 bytes per output element), then one loop reads a
 *     directly and the bias through the map. The chapter's binary builds a map only for an
 *     input whose shape differs from the result's (its map_a is None here), and so does this.
 *     Timed with the map built in the call, as the chapter's binary does, and built beforehand.
 * Then the fast path against its strided cousins on the same shape: the big operand transposed,
 * the small one a column (C = 1, broadcast along rows), and two full-size operands, the first
 * contiguous or transposed. Then the index map's cost as the
 * tensor grows, from 64x64 to RxC: memory and time per element, into --data for the plot.
 *
 * Memory is warm, as in a long-running program: glibc is asked to keep what is freed and to
 * reuse it, and the heap is written once before anything is timed. Every approach writes its
 * result into such memory: tensor_add allocates it (from the warm heap, without clearing it:
 * tensor_empty), the plain loop and the map loop write a buffer allocated the same way.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "broadcast.h"

enum { PLAIN_B, ROW_B, COLUMN_B, TRANSPOSED_A, FULL_B, FULL_B_TRANSPOSED_A };

typedef struct {
    int64_t rows, cols, n;
    float *a, *b_full, *bias, *out; /* plain arrays: a and the bias copied into every row, (R,C); the bias (C,) */
    int64_t *map_b;                 /* the chapter's map for the bias, built beforehand (a needs none) */
    /* the library's operands: a (R,C), and b as the variant asks */
    int variant;
    Ctx *ctx;
    Tensor *ta, *tb;
} Case;

static void *checked_malloc(size_t bytes) {
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

/* (Re)makes the library's operands in a new context. */
static void case_tensors(Case *c) {
    ctx_free(c->ctx);
    c->ctx = ctx_new();
    int64_t r = c->rows, k = c->cols;
    if (c->variant == TRANSPOSED_A || c->variant == FULL_B_TRANSPOSED_A) { /* a stored as (C,R), read transposed */
        Tensor *stored = tensor_from(c->ctx, (const int64_t[]){k, r}, 2, c->a, c->n);
        /* the transposed view, made from the core's views alone (lesson 4's transpose comes later) */
        c->ta = tensor_as_strided(stored, (const int64_t[]){r, k}, 2, (const int64_t[]){1, r}, 0);
    } else {
        c->ta = tensor_from(c->ctx, (const int64_t[]){r, k}, 2, c->a, c->n);
    }
    if (c->variant == COLUMN_B) c->tb = tensor_from(c->ctx, (const int64_t[]){r, 1}, 2, c->bias, r);
    else if (c->variant == FULL_B || c->variant == FULL_B_TRANSPOSED_A)
        c->tb = tensor_from(c->ctx, (const int64_t[]){r, k}, 2, c->b_full, c->n);
    else c->tb = tensor_from(c->ctx, (const int64_t[]){k}, 1, c->bias, k);
    if (!c->ta || !c->tb) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
}

static Case case_new(int64_t rows, int64_t cols, int variant, bool map) {
    Case c = {rows, cols, rows * cols, NULL, NULL, NULL, NULL, NULL, variant, NULL, NULL, NULL};
    c.a = checked_malloc((size_t)c.n * sizeof(float));
    c.b_full = checked_malloc((size_t)c.n * sizeof(float));
    c.bias = checked_malloc((size_t)(rows > cols ? rows : cols) * sizeof(float));
    c.out = checked_malloc((size_t)c.n * sizeof(float));
    for (int64_t i = 0; i < (rows > cols ? rows : cols); i++) c.bias[i] = (float)(i % 7) * 0.5f;
    for (int64_t i = 0; i < c.n; i++) {
        c.a[i] = (float)(i % 1000);
        /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign): rows, cols >= 1, so bias holds cols floats, all set above */
        c.b_full[i] = c.bias[i % cols];
        c.out[i] = 0;
    }
    if (map) {
        c.map_b = checked_malloc((size_t)c.n * sizeof(int64_t));
        broadcast_map((const int64_t[]){rows, cols}, 2, (const int64_t[]){cols}, 1, c.map_b);
    }
    case_tensors(&c);
    return c;
}

static void case_free(Case *c) {
    free(c->a);
    free(c->b_full);
    free(c->bias);
    free(c->out);
    free(c->map_b);
    ctx_free(c->ctx);
}

/* ---- the three ways ---- */

static void plain_loop(void *arg) {
    Case *c = arg;
    float *restrict o = c->out;
    const float *restrict a = c->a, *restrict b = c->b_full;
    for (int64_t i = 0; i < c->n; i++) o[i] = a[i] + b[i];
    bench_keep(o);
}

/* The op as called: its result is allocated in the operands' context, which only grows; every
 * few calls the context is made again (from the warm heap), so that it stays small. */
static void library_add(void *arg) {
    Case *c = arg;
    if (ctx_bytes(c->ctx) > (size_t)c->n * sizeof(float) * 3 + 65536) case_tensors(c);
    bench_keep(tensor_add(c->ta, c->tb));
}

/* The chapter's loop for (R,C) + (C,): a has the result's shape and is read at t, as the
 * chapter reads an input it has no map for; the bias is read through its map. */
static void gather_through_map(const Case *c, const int64_t *restrict map_b) {
    float *restrict o = c->out;
    const float *restrict a = c->a, *restrict b = c->bias;
    for (int64_t t = 0; t < c->n; t++) o[t] = a[t] + b[map_b[t]];
}

/* The chapter's binary op: the bias's map built on every call, then the gather. */
static void map_built(void *arg) {
    Case *c = arg;
    int64_t *map_b = checked_malloc((size_t)c->n * sizeof(int64_t));
    broadcast_map((const int64_t[]){c->rows, c->cols}, 2, (const int64_t[]){c->cols}, 1, map_b);
    gather_through_map(c, map_b);
    bench_keep(c->out);
    free(map_b);
}

static void map_prebuilt(void *arg) {
    Case *c = arg;
    gather_through_map(c, c->map_b);
    bench_keep(c->out);
}

/* 12 bytes per element: a and the result read and written, the bias from cache */
static double gbps(const Case *c, BenchTime t) {
    double bytes = c->variant == FULL_B || c->variant == FULL_B_TRANSPOSED_A ? 16.0 : 12.0; /* b read too */
    return bytes * (double)c->n / t.best / 1e9;
}

int main(int argc, char **argv) {
    BenchOptions o = bench_start(argc, argv, "lesson 1: broadcasting (R,C) + (C,): stride-0 views vs the index map",
                                 "[--rows R] [--cols C] [--sizes N1,N2,... (the sweep, N x N)]");
    int64_t rows = bench_option_int(&o, "rows", o.quick ? 1024 : 4096),
            cols = bench_option_int(&o, "cols", o.quick ? 1024 : 4096);
    const int64_t default_sizes[] = {64, 128, 256, 512, 1024, 2048}, quick_sizes[] = {64, 256};
    int64_t sizes[16];
    int n_sizes = bench_option_list(&o, "sizes", o.quick ? quick_sizes : default_sizes, o.quick ? 2 : 6, sizes, 16);
    bench_warm_heap((size_t)rows * (size_t)cols * 4 * 16);
    printf("memory: warm (glibc keeps and reuses freed memory; the heap was written once before timing);\n"
           "every way writes its (R,C) result into such memory. GB/s: 12 bytes per element (a read, the result\n"
           "written, and the line read before it is written; the bias stays in cache); 16 with two (R,C) operands\n");

    /* ---- the three ways, and the strided cousins of the fast path ---- */
    char what[160];
    snprintf(what, sizeof what, "(%lld,%lld) + (%lld,), %.0f MB result", (long long)rows, (long long)cols,
             (long long)cols, (double)(rows * cols * 4) / 1e6);
    bench_table_header(what, "GB/s", "plain loop over same-shape arrays");
    BenchTime transposed_portable, views_reference;
    /* The times the targets compare are taken in turns (bench_pair): the plain loop with the
     * views, the views with each strided cousin, two full operands with one of them transposed.
     * The views' row shows their best time from those pairs. */
    Case c = case_new(rows, cols, ROW_B, true);
    BenchPair plain_views = bench_pair(&o, plain_loop, &c, library_add, &c, 1.25);
    BenchTime plain = plain_views.a, views = plain_views.b;
    const int cousins[2] = {TRANSPOSED_A, COLUMN_B};
    BenchPair versus_views[2];
    for (int k = 0; k < 2; k++) {
        Case other = case_new(rows, cols, cousins[k], false);
        versus_views[k] = bench_pair(&o, library_add, &c, library_add, &other, 2.0);
        if (versus_views[k].a.best < views.best) views = versus_views[k].a;
        if (cousins[k] == TRANSPOSED_A) /* and the same with the fast path's plain C kernels */
            transposed_portable = bench_with_kernels(&o, "portable", library_add, &other);
        case_free(&other);
    }
    bench_table_row("plain C loop, same-shape arrays", plain, gbps(&c, plain), plain.best);
    bench_table_row("tensor_add: the bias through a stride-0 view", views, gbps(&c, views), plain.best);
    views_reference = bench_with_kernels(&o, "reference", library_add, &c);
    bench_table_row("  the same, reference: the odometer", views_reference, gbps(&c, views_reference), plain.best);
    BenchTime built = o.quick ? bench_time(map_built, &c, 0, 1, 0) : bench_time(map_built, &c, 1, 3, 0);
    bench_table_row("index map, built in the call (the chapter)", built, gbps(&c, built), plain.best);
    BenchTime prebuilt = bench_default(&o, map_prebuilt, &c);
    /* the map's gather must compute what tensor_add does, or its time says nothing */
    Tensor *sum = tensor_add(c.ta, c.tb);
    if (!sum) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        return 2;
    }
    for (int64_t i = 0; i < c.n; i++)
        if (c.out[i] != tensor_data(sum)[i]) {
            fprintf(stderr, "bench: the map's gather gives %g at %lld, tensor_add %g\n", (double)c.out[i], (long long)i,
                    (double)tensor_data(sum)[i]);
            return 2;
        }
    bench_table_row("index map, built beforehand", prebuilt, gbps(&c, prebuilt), plain.best);
    bench_table_row("tensor_add, a transposed", versus_views[0].b, gbps(&c, versus_views[0].b), plain.best);
    bench_table_row("tensor_add, a transposed, portable kernels", transposed_portable, gbps(&c, transposed_portable),
                    plain.best);
    bench_table_row("tensor_add, + (R,1): a column, stride 0", versus_views[1].b, gbps(&c, versus_views[1].b),
                    plain.best);
    case_free(&c);
    c = case_new(rows, cols, FULL_B, false);
    Case transposed_full = case_new(rows, cols, FULL_B_TRANSPOSED_A, false);
    BenchPair full = bench_pair(&o, library_add, &c, library_add, &transposed_full, 2.0);
    bench_table_row("tensor_add, + (R,C): two full operands", full.a, gbps(&c, full.a), plain.best);
    bench_table_row("tensor_add, + (R,C), a transposed", full.b, gbps(&c, full.b), plain.best);
    case_free(&transposed_full);
    case_free(&c);
    printf("memory: the result and a take %.0f MB each; the bias's map %.0f MB (8 bytes per element; a, of the "
           "result's shape, has none)\n",
           (double)(rows * cols * 4) / 1e6, (double)(rows * cols * 8) / 1e6);

    /* ---- the map's cost as the tensor grows ---- */
    FILE *data =
        bench_data_open(&o, "side elements data_bytes map_bytes plain_ns views_ns map_built_ns map_prebuilt_ns "
                            "(times: ns per element; data: a, the bias and the result; map: the bias's)");
    printf("\nthe index map as the tensor grows, (N,N) + (N,): time per element, and memory\n");
    printf("  %6s %10s %10s %10s %10s %10s %12s %12s\n", "N", "data MB", "map MB", "plain ns", "views ns", "map ns",
           "prebuilt ns", "map/views");
    for (int k = 0; k <= n_sizes; k++) {
        int64_t side = k < n_sizes ? sizes[k] : 0;
        double tp, tv, tb, tpre;
        int64_t n;
        if (k == n_sizes) { /* the (R,C) case measured above, as the last point */
            if (rows != cols) break;
            side = rows, n = rows * cols;
            tp = plain.best, tv = views.best, tb = built.best, tpre = prebuilt.best;
        } else {
            if (side == rows && rows == cols) continue; /* measured above */
            Case s = case_new(side, side, ROW_B, true);
            n = s.n;
            BenchTime t0 = bench_time(plain_loop, &s, 1, 3, o.quick ? 0.0 : 0.05);
            BenchTime t1 = bench_time(library_add, &s, 1, 3, o.quick ? 0.0 : 0.05);
            BenchTime t2 = bench_time(map_built, &s, 1, 3, o.quick ? 0.0 : 0.05);
            BenchTime t3 = bench_time(map_prebuilt, &s, 1, 3, o.quick ? 0.0 : 0.05);
            tp = t0.best, tv = t1.best, tb = t2.best, tpre = t3.best;
            case_free(&s);
        }
        double data_bytes = (double)n * 8 + (double)side * 4, map_bytes = (double)n * 8;
        printf("  %6lld %10.2f %10.2f %10.3f %10.3f %10.3f %12.3f %11.1fx\n", (long long)side, data_bytes / 1e6,
               map_bytes / 1e6, tp / (double)n * 1e9, tv / (double)n * 1e9, tb / (double)n * 1e9,
               tpre / (double)n * 1e9, tb / tv);
        if (data)
            fprintf(data, "%lld %lld %.0f %.0f %.4f %.4f %.4f %.4f\n", (long long)side, (long long)n, data_bytes,
                    map_bytes, tp / (double)n * 1e9, tv / (double)n * 1e9, tb / (double)n * 1e9,
                    tpre / (double)n * 1e9);
    }
    if (data) fclose(data);

    /* ---- the targets: each ratio from two times taken in turns, above ---- */
    printf("\n");
    bench_target_pair_at_most("broadcast add through views, time / the plain contiguous loop's", plain_views, 1.25);
    bench_target_pair_at_most("add with the big operand transposed, time / with it contiguous", versus_views[0], 2.0);
    bench_target_pair_at_most("add of a (R,1) column, time / of a (C,) row", versus_views[1], 2.0);
    bench_target_pair_at_most("add of two (R,C) operands, a transposed, time / both contiguous", full, 2.0);
    return 0;
}
