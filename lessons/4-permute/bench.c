/*
 * bench.c - lesson 4's benchmark (make lesson4 bench): how fast is the copy that moves data?
 *
 * permute is free (a view); tensor_contiguous pays for it, by copying. A copy can go no
 * faster than memcpy of the same bytes, so memcpy is the baseline. The copies measured:
 *   - a transposed (N,N) matrix, the worst case for a row-major walk: each read lands in a
 *     different cache line (and page), so the core's fast path copies it in tiles;
 *   - attention's head split, (B,T,H,D) permuted by (0,2,1,3): rows of D floats move whole;
 *   - attention's K transposed per head, (B,H,T,D) permuted by (0,1,3,2): many small
 *     transposes.
 * Memory is warm, as in a long-running program: glibc is asked to keep what is freed and to
 * reuse it (bench_warm_heap), so tensor_contiguous's result and memcpy's destination are both
 * memory that was written before. One row shows what new memory from the operating system
 * costs instead: a page fault (the page is mapped and zeroed) on the first touch of every 4 KB.
 */
#define _DEFAULT_SOURCE  /* MAP_ANONYMOUS, on glibc and musl */
#define _DARWIN_C_SOURCE /* and on macOS, where _POSIX_C_SOURCE alone hides it */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "permute.h"

/* issue 27: a transposing or permuting copy moves the bytes memcpy moves, so memcpy's time is
 * its limit; each copy takes at most 1.5 times that */
#define TARGET_COPY 1.5

typedef struct {
    int rank;
    int64_t shape[4];
    int dims[4];
    const char *name;
} Layout;

typedef struct {
    const Layout *layout;
    Ctx *ctx;
    Tensor *view;      /* the permuted view of a contiguous source */
    float *src, *warm; /* plain arrays of the same size: memcpy's source, and a warm output buffer */
    size_t bytes;
} Case;

/* (Re)makes the source tensor and its view in a new context. */
static void case_source(Case *c) {
    ctx_free(c->ctx);
    c->ctx = ctx_new();
    Tensor *x = c->ctx ? tensor_from(c->ctx, c->layout->shape, c->layout->rank, c->src, (int64_t)(c->bytes / 4)) : NULL;
    c->view = tensor_permute(x, c->layout->dims, c->layout->rank);
    if (!c->view) {
        fprintf(stderr, "bench: %s\n", tensor_error());
        exit(2);
    }
}

static Case case_new(const Layout *l) {
    Case c = {l, NULL, NULL, NULL, NULL, (size_t)shape_numel(l->shape, l->rank) * sizeof(float)};
    c.src = malloc(c.bytes);
    c.warm = aligned_alloc(64, (c.bytes + 63) / 64 * 64); /* on cache lines, as the arena's large tensors are */
    if (!c.src || !c.warm) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < c.bytes / 4; i++) c.src[i] = (float)(i % 1000);
    memcpy(c.warm, c.src, c.bytes);
    case_source(&c);
    return c;
}

static void case_free(Case *c) {
    ctx_free(c->ctx);
    free(c->src);
    free(c->warm);
}

/* ---- what is timed ---- */

static void memcpy_warm(void *arg) {
    Case *c = arg;
    memcpy(c->warm, c->src, c->bytes);
    bench_keep(c->warm);
}

/* memcpy into memory just mapped from the system: every 4 KB page faults on its first touch */
static void memcpy_new_memory(void *arg) {
    Case *c = arg;
    void *out = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (out == MAP_FAILED) return;
    memcpy(out, c->src, c->bytes);
    bench_keep(out);
    munmap(out, c->bytes);
}

/* The op as called: it allocates its result in the view's context, which only grows; every
 * few calls the context is made again (from the warm heap), so that it stays small. */
static void contiguous_op(void *arg) {
    Case *c = arg;
    if (ctx_bytes(c->ctx) > 6 * c->bytes) case_source(c);
    bench_keep(tensor_contiguous(c->view));
}

static void to_array_warm(void *arg) {
    Case *c = arg;
    tensor_to_array(c->view, c->warm, (int64_t)(c->bytes / sizeof(float)));
    bench_keep(c->warm);
}

static double gbps(const Case *c, BenchTime t) { return 2.0 * (double)c->bytes / t.best / 1e9; } /* read + write */

int main(int argc, char **argv) {
    BenchOptions o = bench_start(argc, argv, "lesson 4: permute + contiguous vs memcpy of the same bytes",
                                 "[--n N] [--batch B] [--seq T] [--heads H] [--dim D]");
    int64_t n = bench_option_int(&o, "n", o.quick ? 1024 : 4096);
    int64_t b = bench_option_int(&o, "batch", o.quick ? 4 : 16), t = bench_option_int(&o, "seq", o.quick ? 256 : 1024),
            h = bench_option_int(&o, "heads", 16), d = bench_option_int(&o, "dim", 64);
    char transpose_name[64], heads_name[64], kt_name[64];
    snprintf(transpose_name, sizeof transpose_name, "(%lld,%lld) transposed", (long long)n, (long long)n);
    snprintf(heads_name, sizeof heads_name, "(%lld,%lld,%lld,%lld) permuted by (0,2,1,3)", (long long)b, (long long)t,
             (long long)h, (long long)d);
    snprintf(kt_name, sizeof kt_name, "(%lld,%lld,%lld,%lld) permuted by (0,1,3,2)", (long long)b, (long long)h,
             (long long)t, (long long)d);
    const Layout layouts[3] = {
        {2, {n, n}, {1, 0}, transpose_name},
        {4, {b, t, h, d}, {0, 2, 1, 3}, heads_name},
        {4, {b, h, t, d}, {0, 1, 3, 2}, kt_name},
    };
    size_t largest = 0;
    for (int l = 0; l < 3; l++) {
        size_t bytes = (size_t)shape_numel(layouts[l].shape, layouts[l].rank) * sizeof(float);
        if (bytes > largest) largest = bytes;
    }
    bench_warm_heap(10 * largest);
    printf("memory: warm (glibc keeps and reuses freed memory; the heap was written once before timing)\n");
    printf("GB/s counts the bytes read and written, 2 x the tensor's size\n");

    BenchPair pairs[3], to_array_pair = {0}; /* set by the first layout's row */
    for (int l = 0; l < 3; l++) {
        Case c = case_new(&layouts[l]);
        char what[160];
        snprintf(what, sizeof what, "%s, %.0f MB", layouts[l].name, (double)c.bytes / 1e6);
        bench_table_header(what, "GB/s", "memcpy of the same bytes");
        /* the copies the targets compare with memcpy are timed in turns with it (bench_pair);
         * the memcpy row shows its best time from those pairs */
        pairs[l] = bench_pair(&o, memcpy_warm, &c, contiguous_op, &c, TARGET_COPY);
        BenchTime base = pairs[l].a;
        if (l == 0) {
            to_array_pair = bench_pair(&o, memcpy_warm, &c, to_array_warm, &c, TARGET_COPY);
            if (to_array_pair.a.best < base.best) base = to_array_pair.a;
        }
        bench_table_row("memcpy of the same bytes", base, gbps(&c, base), base.best);
        if (l == 0) {
            BenchTime fresh = bench_default(&o, memcpy_new_memory, &c);
            bench_table_row("  the same into new memory (page faults)", fresh, gbps(&c, fresh), base.best);
        }
        bench_table_row("tensor_contiguous(permuted)", pairs[l].b, gbps(&c, pairs[l].b), base.best);
        BenchTime copy = l == 0 ? to_array_pair.b : bench_default(&o, to_array_warm, &c);
        bench_table_row("tensor_to_array(permuted, warm buffer)", copy, gbps(&c, copy), base.best);
        if (l != 1) { /* the head split moves whole rows: no transposing kernel is involved */
            BenchTime portable = bench_with_kernels(&o, "portable", contiguous_op, &c);
            bench_table_row("tensor_contiguous, portable kernels", portable, gbps(&c, portable), base.best);
        }
        BenchTime reference = bench_with_kernels(&o, "reference", contiguous_op, &c);
        bench_table_row("tensor_contiguous, reference: the odometer", reference, gbps(&c, reference), base.best);
        case_free(&c);
    }
    printf("\n");
    bench_target_pair_at_most("contiguous() of the transpose, time / memcpy's", pairs[0], TARGET_COPY);
    bench_target_pair_at_most("contiguous() of the head split, time / memcpy's", pairs[1], TARGET_COPY);
    bench_target_pair_at_most("contiguous() of K transposed per head, time / memcpy's", pairs[2], TARGET_COPY);
    bench_target_pair_at_most("to_array() of the transpose, time / memcpy's", to_array_pair, TARGET_COPY);
    return 0;
}
