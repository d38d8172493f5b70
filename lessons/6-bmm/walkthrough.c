/*
 * walkthrough.c - lesson 6, run with `make lesson6`. Prints every worked example of the
 * lesson, computed by the library as it runs. Read it beside docs/6-bmm.md: the section
 * numbers match.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bmm.h"
#include "broadcast.h"
#include "permute.h"

static void heading(const char *title) { printf("\n%s\n", title); }

static Tensor *arange(Ctx *ctx, const int64_t *shape, int rank, float scale) {
    Tensor *t = tensor_zeros(ctx, shape, rank);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_data(t)[i] = (float)i * scale;
    return t;
}

static void section_chapter(Ctx *ctx) {
    heading("7.2 The chapter's test_matmul_3d: one 2-D product per batch");
    Tensor *a = tensor_from(ctx, DIMS(2, 1, 2), VALUES(1, 2, 3, 4));
    Tensor *b = tensor_from(ctx, DIMS(2, 2, 1), VALUES(5, 6, 7, 8));
    Tensor *c = tensor_matmul(a, b);
    tensor_print("  A (2,1,2)", a);
    tensor_print("  B (2,2,1)", b);
    tensor_print("  A @ B", c);
    const float *av = tensor_data(a), *bv = tensor_data(b);
    for (int bi = 0; bi < 2; bi++)
        printf("  batch %d: %g*%g + %g*%g = %g\n", bi, (double)av[2 * bi], (double)bv[2 * bi], (double)av[2 * bi + 1],
               (double)bv[2 * bi + 1], (double)tensor_data(c)[bi]);
    /* the chapter's forward: batch bi of each contiguous operand starts bi matrices in */
    const long long m = 1, k = 2, n = 1;
    printf("  batch bi starts at bi*m*k in A, bi*k*n in B, bi*m*n in A @ B (m = %lld, k = %lld, n = %lld):\n", m, k, n);
    for (long long bi = 0; bi < 2; bi++)
        printf("    batch %lld: A from %lld, B from %lld, A @ B from %lld\n", bi, bi * m * k, bi * k * n, bi * m * n);
}

static void section_loop(Ctx *ctx) {
    heading("7.4 N-D: only the last two dims multiply; (2,3,4) @ (2,4,5) is a loop over 2 batches");
    Tensor *a = arange(ctx, DIMS(2, 3, 4), 0.1f), *b = arange(ctx, DIMS(2, 4, 5), 0.01f);
    Tensor *c = tensor_matmul(a, b);
    char s[SHAPE_STR_MAX];
    printf("  (2,3,4) @ (2,4,5) -> %s\n", shape_format(c->shape, c->rank, s, sizeof s));
    float worst = 0.0f;
    for (int64_t bi = 0; bi < 2; bi++) {
        /* the same batch as a 2-D product of its own */
        Tensor *ai = tensor_as_strided(a, DIMS(3, 4), STRIDES(4, 1), bi * 12);
        Tensor *bb = tensor_as_strided(b, DIMS(4, 5), STRIDES(5, 1), bi * 20);
        Tensor *ci = tensor_matmul(ai, bb);
        for (int64_t t = 0; t < 15; t++) worst = fmaxf(worst, fabsf(tensor_data(ci)[t] - tensor_data(c)[bi * 15 + t]));
    }
    printf("  largest difference from a loop of two 2-D products: %g\n", (double)worst);
}

static void shape_row(Ctx *ctx, const int64_t *a_shape, int a_rank, const int64_t *b_shape, int b_rank) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], so[SHAPE_STR_MAX];
    Tensor *c = tensor_matmul(tensor_zeros(ctx, a_shape, a_rank), tensor_zeros(ctx, b_shape, b_rank));
    printf("  %-10s @ %-10s -> ", shape_format(a_shape, a_rank, sa, sizeof sa),
           shape_format(b_shape, b_rank, sb, sizeof sb));
    if (c) printf("%s\n", shape_format(c->shape, c->rank, so, sizeof so));
    else printf("error:\n      %s\n", tensor_error());
    tensor_clear_error();
}

static void section_from_2d(Ctx *ctx) {
    heading("7.1 From 2-D to 3-D: a batch dim in front, one 2-D product per batch");
    shape_row(ctx, DIMS(1, 2), DIMS(2, 1));
    shape_row(ctx, DIMS(2, 1, 2), DIMS(2, 2, 1));
    printf("  the inner dim k must agree:\n");
    shape_row(ctx, DIMS(2, 1, 2), DIMS(2, 3, 1));
    printf("  and, in the chapter's 3-D version, so must the batch sizes (section 7.4 lets them broadcast):\n");
    shape_row(ctx, DIMS(2, 1, 2), DIMS(3, 2, 1));
}

static Tensor *ones(Ctx *ctx, const int64_t *shape, int rank) {
    return tensor_add_scalar(tensor_zeros(ctx, shape, rank), 1.0f);
}

/* A weight used by every batch collects every batch's gradient: dw = sum over bi of x[bi]^T @ g[bi]. */
static void section_shared_weight(Ctx *ctx) {
    heading("7.5 A weight shared by every batch: its gradient is the sum of every batch's");
    Tensor *x = tensor_requires_grad(tensor_from(ctx, DIMS(2, 1, 2), VALUES(1, 2, 3, 4)));
    Tensor *w = tensor_requires_grad(tensor_from(ctx, DIMS(2, 1), VALUES(5, 6)));
    tensor_print("  x (2,1,2)", x);
    tensor_print("  w (2,1), one for both batches", w);
    tensor_backward(tensor_sum(tensor_matmul(x, w)));
    printf("  loss = sum(x @ w), so every batch's upstream gradient g[bi] is ones (1,1)\n");
    Tensor *g = ones(ctx, DIMS(1, 1)), *total = NULL;
    for (int64_t bi = 0; bi < 2; bi++) {
        Tensor *xi = tensor_as_strided(x, DIMS(1, 2), STRIDES(2, 1), bi * 2); /* batch bi, as a (1,2) matrix */
        Tensor *part = tensor_matmul(tensor_transpose(xi, 0, 1), g);
        char label[64];
        snprintf(label, sizeof label, "  batch %lld: x[%lld]^T @ g[%lld]", (long long)bi, (long long)bi, (long long)bi);
        tensor_print(label, part);
        total = total ? tensor_add(total, part) : part;
    }
    tensor_print("  their sum", total);
    tensor_print("  dw from the backward", tensor_grad(w));
    /* the same sum as one product: x's batch and rows merge into X (2,2), as the fold of 7.6 does */
    Tensor *rows = tensor_reshape(x, DIMS(2, 2));
    tensor_print("  folded into rows, X^T @ G with X = x as (2,2), G = ones (2,1)",
                 tensor_matmul(tensor_transpose(rows, 0, 1), ones(ctx, DIMS(2, 1))));
}

static void section_shapes(Ctx *ctx) {
    heading(
        "7.4 Batch dims broadcast by lesson 1's rule, dim by dim (the notes' fifth scenario first); vectors are promoted");
    shape_row(ctx, DIMS(3, 1, 4, 2), DIMS(4, 2, 5));
    shape_row(ctx, DIMS(3, 4, 2), DIMS(4, 2, 5));
    shape_row(ctx, DIMS(2, 3), DIMS(4, 5));
    shape_row(ctx, DIMS(5, 3, 4), DIMS(4, 2));
    shape_row(ctx, DIMS(4), DIMS(4));
    shape_row(ctx, DIMS(4), DIMS(2, 4, 3));
    shape_row(ctx, DIMS(2, 3, 4), DIMS(4));
}

static void section_backward(Ctx *ctx) {
    heading("7.3 Backward, per batch: dA = g @ B^T and dB = A^T @ g");
    Tensor *a = tensor_requires_grad(tensor_from(ctx, DIMS(2, 1, 2), VALUES(1, 2, 3, 4)));
    Tensor *b = tensor_requires_grad(tensor_from(ctx, DIMS(2, 2, 1), VALUES(5, 6, 7, 8)));
    tensor_backward(tensor_sum(tensor_matmul(a, b)));
    tensor_print("  dA for loss = sum(A @ B)", tensor_grad(a));
    tensor_print("  dB", tensor_grad(b));
    /* the same tensor on both sides: both lines of the backward add into its gradient */
    Tensor *sq = tensor_requires_grad(tensor_from(ctx, DIMS(2, 2), VALUES(1, 2, 3, 4)));
    tensor_backward(tensor_sum(tensor_matmul(sq, sq)));
    tensor_print("  s", sq);
    tensor_print("  d sum(s @ s) / ds = ones @ s^T + s^T @ ones", tensor_grad(sq));
}

/* Prints row 0 of every batch of a (b, m, n) result. */
static void print_batches(const char *label, const float *c, int64_t b, int64_t m, int64_t n) {
    printf("  %s\n", label);
    for (int64_t bi = 0; bi < b; bi++) {
        printf("    batch %lld row 0: [", (long long)bi);
        for (int64_t j = 0; j < n; j++) printf(j ? ", %.4g" : "%.4g", (double)c[bi * m * n + j]);
        printf("]\n");
    }
}

static void section_case_study(Ctx *ctx) {
    heading("7.6 Seed 002's case: shared queries expanded to 4 batches, then @ per-batch keys");
    const int64_t b = 4, m = 2, k = 3, n = 5;
    Tensor *queries = arange(ctx, DIMS(1, m, k), 1.0f); /* 0..5 */
    Tensor *keys = arange(ctx, DIMS(b, k, n), 0.01f);   /* 0..59 times 0.01 */
    Tensor *q = tensor_expand(queries, DIMS(b, m, k));  /* batch stride 0 */
    char st[SHAPE_STR_MAX];
    printf("  q = expand(queries, (4,2,3)): strides %s\n", shape_format(q->strides, q->rank, st, sizeof st));
    Tensor *scores = tensor_matmul(q, keys);
    Tensor *reference = tensor_matmul(tensor_contiguous(q), keys);
    float diff = 0.0f;
    for (int64_t t = 0; t < b * m * n; t++)
        diff = fmaxf(diff, fabsf(tensor_data(scores)[t] - tensor_data(reference)[t]));
    print_batches("the library, q @ keys:", tensor_data(scores), b, m, n);
    printf("  max |difference| from contiguous(q) @ keys: %g\n", (double)diff);
    /* the case study's fix: no expand at all, matmul broadcasts the batch dim itself */
    Tensor *broadcast = tensor_matmul(queries, keys);
    float broadcast_diff = 0.0f;
    for (int64_t t = 0; t < b * m * n; t++)
        broadcast_diff = fmaxf(broadcast_diff, fabsf(tensor_data(broadcast)[t] - tensor_data(reference)[t]));
    printf("  queries (1,2,3) unexpanded @ keys (4,3,5), the batch broadcast by matmul: %s, max |difference| %g\n",
           shape_format(broadcast->shape, broadcast->rank, st, sizeof st), (double)broadcast_diff);

    /* what folding the batch into the columns computes instead */
    float wrong[40];
    int64_t written = matmul_wrong_column_fold(tensor_data(queries), tensor_data(keys), b, m, k, n, wrong);
    print_batches("the invalid fold into columns, one (2,3) @ (3,20) product:", wrong, b, m, n);
    float worst = 0.0f;
    for (int64_t t = 0; t < b * m * n; t++) worst = fmaxf(worst, fabsf(wrong[t] - tensor_data(reference)[t]));
    printf("  it writes (m-1)*n + b*n = %lld of the %lld elements; max |difference| %.8g\n", (long long)written,
           (long long)b * m * n, (double)worst);
    const float *paths[3] = {tensor_data(scores), tensor_data(broadcast), wrong};
    const char *names[3] = {"expand, then @", "broadcast @", "the column fold"};
    printf("  of the %lld elements, against contiguous(q) @ keys:\n", (long long)b * m * n);
    for (int p = 0; p < 3; p++) {
        int zeros = 0, bad = 0;
        for (int64_t t = 0; t < b * m * n; t++) {
            zeros += paths[p][t] == 0.0f;
            bad += fabsf(paths[p][t] - tensor_data(reference)[t]) > 1e-5f;
        }
        printf("    %-16s exact zeros %2d, wrong %2d\n", names[p], zeros, bad);
    }

    /* the valid fold, into rows: b shared across the batch, a's batch and rows merge */
    Tensor *xs = arange(ctx, DIMS(b, m, k), 1.0f),
           *shared = tensor_expand(arange(ctx, DIMS(k, n), 0.01f), DIMS(b, k, n));
    Tensor *xt = tensor_as_strided(xs, DIMS(b, m, k), STRIDES(m * k, 1, m), 0); /* each batch transposed */
    printf("  the fold into rows applies to contiguous x (4,2,3) @ a shared (3,5): %s\n",
           matmul_folds_into_rows(1, (const int64_t[]){b}, xs->strides, shared->strides, m, xs->strides[1]) ? "yes"
                                                                                                            : "no");
    printf("  ... and to a transposed x, whose batch and rows do not merge: %s\n",
           matmul_folds_into_rows(1, (const int64_t[]){b}, xt->strides, shared->strides, m, xt->strides[1]) ? "yes"
                                                                                                            : "no");
    printf("  ... and to shared queries @ per-batch keys: %s\n",
           matmul_folds_into_rows(1, (const int64_t[]){b}, q->strides, keys->strides, m, q->strides[1]) ? "yes" : "no");
}

/* Each section gets a context of its own. */
static int run_section(void (*section)(Ctx *)) {
    Ctx *ctx = ctx_new();
    if (!ctx) {
        printf("out of memory: %s\n", tensor_error());
        return -1;
    }
    section(ctx);
    ctx_free(ctx);
    return 0;
}

int main(void) {
    printf("Lesson 6: batched matmul\n========================\n");
    void (*sections[])(Ctx *) = {section_from_2d, section_chapter,       section_backward,  section_loop,
                                 section_shapes,  section_shared_weight, section_case_study};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (run_section(sections[i]) < 0) return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
