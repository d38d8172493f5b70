/*
 * bench.c - lesson 5's benchmark (make lesson5 bench): gather_rows against memcpy.
 *
 * Gathering N rows of D floats moves the same bytes as one memcpy of N * D floats, so memcpy is
 * the baseline. The table, (V, D), is read in four layouts:
 *   - contiguous: each row is one memcpy (the fast path);
 *   - expanded from (1, D): every row is the same row, stride 0 apart (a row is still contiguous);
 *   - transposed (a (D, V) tensor permuted): a row's floats are V apart, one per cache line.
 *     With many indices (V/16 or more), gather_rows first copies the table into row-major order
 *     (the core's tiled transpose) and then copies rows; with few, it reads through the strides;
 *   - gather_rows with COURSE_KERNELS=reference: gather.c's loop, element by element through the
 *     strides, with no fast path.
 * Memory is warm, as in a long-running program: glibc is asked to keep what is freed and to
 * reuse it, and the heap is written once before anything is timed. gather_rows allocates its
 * result from that memory (without clearing it: tensor_empty); memcpy writes a buffer that was
 * allocated the same way.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "broadcast.h"
#include "gather.h"
#include "permute.h"
#include "rng.h"

typedef struct {
    int layout;
    int64_t v;
    Ctx *ctx;
    Tensor *table; /* the view gathered from */
    int64_t *indices;
    int64_t n, d;
    float *src, *dst; /* n * d floats each, for memcpy */
} Case;

enum { CONTIGUOUS, EXPANDED, TRANSPOSED, ELEMENTWISE };

/* (Re)makes the table in a new context. */
static void case_table(Case *c) {
    ctx_free(c->ctx);
    c->ctx = ctx_new();
    int64_t v = c->v, d = c->d;
    int64_t stored_shape[2] = {c->layout == TRANSPOSED ? d
                               : c->layout == EXPANDED ? 1
                                                       : v,
                               c->layout == TRANSPOSED ? v : d};
    Tensor *stored = c->ctx ? tensor_zeros(c->ctx, stored_shape, 2) : NULL;
    if (!stored) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
    float *data = tensor_data(stored);
    for (int64_t i = 0, n = tensor_numel(stored); i < n; i++) data[i] = (float)(i % 1000);
    c->table = c->layout == TRANSPOSED ? tensor_permute(stored, AXES(1, 0))
               : c->layout == EXPANDED ? tensor_expand(stored, (const int64_t[]){v, d}, 2)
                                       : stored;
}

static Case case_new(int layout, int64_t v, int64_t d, int64_t n, uint64_t seed) {
    Case c = {layout,
              v,
              NULL,
              NULL,
              malloc((size_t)n * sizeof(int64_t)),
              n,
              d,
              malloc((size_t)(n * d) * sizeof(float)),
              malloc((size_t)(n * d) * sizeof(float))};
    if (!c.indices || !c.src || !c.dst) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    Rng rng = rng_seeded(seed);
    for (int64_t i = 0; i < n; i++) c.indices[i] = rng_int(&rng, 0, v - 1);
    for (int64_t i = 0; i < n * d; i++) c.src[i] = c.dst[i] = (float)(i % 1000);
    case_table(&c);
    return c;
}

static void case_free(Case *c) {
    ctx_free(c->ctx);
    free(c->indices);
    free(c->src);
    free(c->dst);
}

static void memcpy_warm(void *arg) {
    Case *c = arg;
    memcpy(c->dst, c->src, (size_t)(c->n * c->d) * sizeof(float));
    bench_keep(c->dst);
}

/* The op as called: its result is allocated in the table's context, which only grows; every few
 * calls the context is made again (from the warm heap), so that it stays small. */
static void gather(void *arg) {
    Case *c = arg;
    if (ctx_bytes(c->ctx) > (size_t)(c->n * c->d) * sizeof(float) * 6 + ((size_t)c->v * (size_t)c->d + 16384) * 4)
        case_table(c);
    bench_keep(tensor_gather_rows(c->table, c->indices, c->n));
}

/* Lesson 5's loop before the fast paths: every element through the table's strides, into a
 * result allocated the same way (tensor_empty, as gather_rows does). */
static double gbps(const Case *c, BenchTime t) { return 2.0 * (double)(c->n * c->d) * sizeof(float) / t.best / 1e9; }

int main(int argc, char **argv) {
    BenchOptions o = bench_start(argc, argv, "lesson 5: gather_rows vs memcpy of the same bytes",
                                 "[--v ROWS] [--n INDICES] [--d D1,D2,...]");
    int64_t v = bench_option_int(&o, "v", o.quick ? 1024 : 8192), n = bench_option_int(&o, "n", o.quick ? 2048 : 16384);
    const int64_t default_d[] = {64, 256, 1024}, quick_d[] = {64, 256};
    int64_t ds[8];
    int n_d = bench_option_list(&o, "d", o.quick ? quick_d : default_d, o.quick ? 2 : 3, ds, 8);
    bench_warm_heap((size_t)(n * 1024 * 4) * 10 + (size_t)(v * 1024 * 4) * 4);
    printf("memory: warm (glibc keeps and reuses freed memory; the heap was written once before timing)\n");
    printf("table (V, D) with V = %lld rows; %lld random indices (seeded)\n", (long long)v, (long long)n);
    printf("GB/s counts the rows read and written: 2 x N x D x 4 bytes\n");

    BenchPair worst_transposed = {{0, 0, 0}, {0, 0, 0}, 0}, worst_expanded = worst_transposed;
    double few_ratio = 0;
    for (int k = 0; k < n_d; k++) {
        int64_t d = ds[k];
        char what[160];
        snprintf(what, sizeof what, "%lld rows of %lld floats (%.1f MB) from a (%lld,%lld) table", (long long)n,
                 (long long)d, (double)(n * d * 4) / 1e6, (long long)v, (long long)d);
        bench_table_header(what, "GB/s", "memcpy of the same bytes");
        const char *names[4] = {"gather_rows, contiguous table", "gather_rows, table expanded from (1,D)",
                                "gather_rows, transposed table", "gather_rows, contiguous table, reference"};
        Case c = case_new(CONTIGUOUS, v, d, n, 1);
        BenchTime base = bench_default(&o, memcpy_warm, &c);
        bench_table_row("memcpy of the same bytes", base, gbps(&c, base), base.best);
        case_free(&c);
        for (int layout = CONTIGUOUS; layout <= ELEMENTWISE; layout++) {
            c = case_new(layout == ELEMENTWISE ? CONTIGUOUS : layout, v, d, n, 1);
            BenchTime t =
                layout == ELEMENTWISE ? bench_with_kernels(&o, "reference", gather, &c) : bench_default(&o, gather, &c);
            bench_table_row(names[layout], t, gbps(&c, t), base.best);
            case_free(&c);
        }
        /* the targets' ratios: each from two times taken in turns (bench_pair); the worst D counts */
        c = case_new(CONTIGUOUS, v, d, n, 1);
        for (int layout = EXPANDED; layout <= TRANSPOSED; layout++) {
            Case other = case_new(layout, v, d, n, 1);
            BenchPair p = bench_pair(&o, gather, &c, gather, &other, 2.0);
            BenchPair *worst = layout == EXPANDED ? &worst_expanded : &worst_transposed;
            if (k == 0 || p.b.best / p.a.best > worst->b.best / worst->a.best) *worst = p;
            case_free(&other);
        }
        case_free(&c);
        if (k == n_d - 1) { /* few indices from a transposed table: read through the strides */
            int64_t few = v / 64;
            snprintf(what, sizeof what, "%lld rows of %lld floats: few indices (V/64), read through the strides",
                     (long long)few, (long long)d);
            bench_table_header(what, "GB/s", "gather_rows from the contiguous table");
            c = case_new(CONTIGUOUS, v, d, few, 2);
            BenchTime t0 = bench_default(&o, gather, &c);
            bench_table_row("gather_rows, contiguous table", t0, gbps(&c, t0), t0.best);
            case_free(&c);
            c = case_new(TRANSPOSED, v, d, few, 2);
            BenchTime t1 = bench_default(&o, gather, &c);
            bench_table_row("gather_rows, transposed table", t1, gbps(&c, t1), t0.best);
            case_free(&c);
            few_ratio = t1.best / t0.best;
        }
    }
    printf("\n");
    bench_target_pair_at_most("gather_rows from a transposed table, time / from a contiguous one (worst D)",
                              worst_transposed, 2.0);
    bench_target_pair_at_most("gather_rows from an expanded table, time / from a contiguous one (worst D)",
                              worst_expanded, 2.0);
    printf("not a target: few indices (V/64) from a transposed table, time / from a contiguous one: %.2f\n", few_ratio);
    return 0;
}
