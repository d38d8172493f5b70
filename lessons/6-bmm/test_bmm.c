/*
 * test_bmm.c - lesson 6's core tests. They mirror the chapter's section 7 (its
 * test_matmul_3d: [2,1,2] @ [2,2,1] = [17, 53]), seed 001's rules (N-D shapes, batch
 * broadcasting, the failing pair) and seed 002's case study (an expanded left operand, every
 * batch checked, and what the invalid fold would write). Then: every combination of
 * contiguous, transposed and batch-expanded operands with size-1 and missing batch dims and
 * m, n or k of 1, element by element against a naive loop; gradient checks of all of them;
 * x @ x; the fold predicate; the errors; and seeded random shapes. Last, the fast kernel
 * (bmm_fast.c, section 7.7), in every build this CPU runs: the table's matmul itself on edge
 * sizes and every kind of view, and tensor_matmul's products and gradients large enough to run
 * on it, all against a naive loop in double.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bmm.h"
#include "bmm_fast.h"
#include "broadcast.h"
#include "gradcheck.h"
#include "harness.h"
#include "kernels.h"
#include "permute.h"

static Tensor *arange(const int64_t *shape, int rank, float scale) {
    Tensor *t = tensor_zeros(test_ctx, shape, rank);
    for (int64_t i = 0; i < tensor_numel(t); i++) tensor_data(t)[i] = (float)i * scale;
    return t;
}

/* The reference: element by element, each operand read with tensor_get at the index numpy's
 * rules give it (batch dims right-aligned, size-1 batch dims at index 0). a and b have rank >= 2. */
static void naive_matmul(const Tensor *a, const Tensor *b, const Tensor *out, float *want) {
    int r = out->rank, ra = a->rank, rb = b->rank;
    int64_t k = a->shape[ra - 1], index[TENSOR_MAX_RANK], ia[TENSOR_MAX_RANK], ib[TENSOR_MAX_RANK];
    for (int64_t t = 0; t < tensor_numel(out); t++) {
        unravel_index(t, out->shape, r, index);
        for (int d = 0; d < ra - 2; d++) ia[d] = a->shape[d] == 1 ? 0 : index[r - 2 - (ra - 2) + d];
        for (int d = 0; d < rb - 2; d++) ib[d] = b->shape[d] == 1 ? 0 : index[r - 2 - (rb - 2) + d];
        double s = 0.0;
        for (int64_t p = 0; p < k; p++) {
            ia[ra - 2] = index[r - 2], ia[ra - 1] = p;
            ib[rb - 2] = p, ib[rb - 1] = index[r - 1];
            s += (double)tensor_get(a, ia) * (double)tensor_get(b, ib);
        }
        want[t] = (float)s;
    }
}

/* ==== the chapter and the notes =========================================================== */

START_TEST(test_matmul_3d) {
    Tensor *a = tensor_from(test_ctx, DIMS(2, 1, 2), VALUES(1, 2, 3, 4));
    Tensor *b = tensor_from(test_ctx, DIMS(2, 2, 1), VALUES(5, 6, 7, 8));
    Tensor *c = EXPECT_OK(tensor_matmul(a, b));
    EXPECT_SHAPE(c, DIMS(2, 1, 1), "[2,1,2] @ [2,2,1]");
    EXPECT_VALUES(c, VALUES(17, 53), 0, "1*5 + 2*6 and 3*7 + 4*8");
}
END_TEST

/* The chapter's forward: batch bi of contiguous (B,m,k) @ (B,k,n) is the 2-D product of the
 * matrices that start at bi*m*k in a and bi*k*n in b, written from bi*m*n on. */
START_TEST(test_batch_offsets) {
    const int64_t nb = 3, m = 2, k = 4, n = 5;
    Tensor *a = arange(DIMS(nb, m, k), 0.5f), *b = arange(DIMS(nb, k, n), -0.25f);
    Tensor *c = EXPECT_OK(tensor_matmul(a, b));
    const float *av = tensor_data(a), *bv = tensor_data(b), *cv = tensor_data(c);
    for (int64_t bi = 0; bi < nb; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double want = 0.0;
                for (int64_t p = 0; p < k; p++) want += (double)av[bi * m * k + i * k + p] * bv[bi * k * n + p * n + j];
                ck_assert_msg(fabs(cv[bi * m * n + i * n + j] - want) <= 1e-4 * fabs(want) + 1e-5,
                              "batch %lld, element (%lld,%lld) at offset bi*m*n + i*n + j = %lld: got %g, want %g",
                              (long long)bi, (long long)i, (long long)j, (long long)(bi * m * n + i * n + j),
                              (double)cv[bi * m * n + i * n + j], want);
            }
}
END_TEST

START_TEST(test_nd_is_a_loop_of_2d) {
    /* seed 001: (2,3,4) @ (2,4,5) -> (2,3,5), each batch its own 2-D product */
    Tensor *a = arange(DIMS(2, 3, 4), 0.1f), *b = arange(DIMS(2, 4, 5), 0.01f);
    Tensor *c = EXPECT_OK(tensor_matmul(a, b));
    EXPECT_SHAPE(c, DIMS(2, 3, 5), "(2,3,4) @ (2,4,5)");
    for (int64_t bi = 0; bi < 2; bi++) {
        Tensor *ci = EXPECT_OK(tensor_matmul(tensor_as_strided(a, DIMS(3, 4), STRIDES(4, 1), bi * 12),
                                             tensor_as_strided(b, DIMS(4, 5), STRIDES(5, 1), bi * 20)));
        EXPECT_VALUES(tensor_as_strided(c, DIMS(3, 5), STRIDES(5, 1), bi * 15), tensor_data(ci), 15, 1e-5f,
                      "batch == 2-D product");
    }
    /* batch dims broadcast dim by dim: (3,1,4,2) @ (4,2,5) -> (3,4,4,5) */
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(3, 1, 4, 2)), tensor_zeros(test_ctx, DIMS(4, 2, 5))),
                 DIMS(3, 4, 4, 5), "(3,1,4,2) @ (4,2,5)");
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(2, 1, 3, 4)), tensor_zeros(test_ctx, DIMS(5, 4, 2))),
                 DIMS(2, 5, 3, 2), "(2,1,3,4) @ (5,4,2)");
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(6, 3, 4)), tensor_zeros(test_ctx, DIMS(4, 2))),
                 DIMS(6, 3, 2), "(6,3,4) @ (4,2)");
}
END_TEST

START_TEST(test_vectors) {
    Tensor *v = tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3));
    Tensor *m = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *dot = EXPECT_OK(tensor_matmul(v, v));
    ck_assert_int_eq(dot->rank, 0);
    ck_assert_float_eq(tensor_item(dot), 14.0f);
    EXPECT_SHAPE(tensor_matmul(v, m), DIMS(2), "(3,) @ (3,2)");
    EXPECT_VALUES(tensor_matmul(v, m), VALUES(22, 28), 0, "a row vector times a matrix");
    Tensor *mt = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    EXPECT_VALUES(tensor_matmul(mt, v), VALUES(14, 32), 0, "a matrix times a column vector");
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(4, 2, 3)), v), DIMS(4, 2), "(4,2,3) @ (3,)");
    EXPECT_SHAPE(tensor_matmul(v, tensor_zeros(test_ctx, DIMS(4, 3, 5))), DIMS(4, 5), "(3,) @ (4,3,5)");
    /* gradients flow through the promotion */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)));
    ck_assert_int_eq(tensor_backward(tensor_matmul(x, x)), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2, 4, 6), 0, "d (x . x) / dx = 2x");
}
END_TEST

START_TEST(test_errors) {
    Tensor *a = tensor_zeros(test_ctx, DIMS(3, 4, 2)), *b = tensor_zeros(test_ctx, DIMS(4, 2, 5));
    tensor_clear_error();
    ck_assert_ptr_null(tensor_matmul(a, b));
    ck_assert_str_eq(tensor_error(),
                     "matmul: operands could not be broadcast together with shapes (3,) (4,): the batch "
                     "dims of (3,4,2) and (4,2,5)");
    ck_assert_ptr_null(tensor_matmul(tensor_zeros(test_ctx, DIMS(2, 3)), tensor_zeros(test_ctx, DIMS(4, 5))));
    ck_assert_str_eq(tensor_error(),
                     "matmul: shapes (2,3) and (4,5) do not match: the last dim of the left operand (3) must "
                     "equal the second-to-last dim of the right one (4)");
    ck_assert_ptr_null(tensor_matmul(tensor_zeros(test_ctx, DIMS(2, 3)), tensor_zeros(test_ctx, DIMS(4))));
    ck_assert_str_eq(tensor_error(),
                     "matmul: shapes (2,3) and (4,) do not match: the last dim of the left operand (3) must "
                     "equal the length of the right one (4)");
    ck_assert_ptr_null(tensor_matmul(tensor_scalar(test_ctx, 2), tensor_zeros(test_ctx, DIMS(2))));
    EXPECT_ERROR("matmul: shapes () and (2,): a rank-0 operand", "a scalar operand");
    /* the largest ranks work: the result's rank is at most its operands' */
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(1, 1, 1, 1, 1, 2, 2)),
                               tensor_zeros(test_ctx, DIMS(3, 1, 1, 1, 1, 1, 2, 2))),
                 DIMS(3, 1, 1, 1, 1, 1, 2, 2), "rank 7 @ rank 8");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_matmul(NULL, b));
    ck_assert_str_eq(tensor_error(), "matmul: input a is NULL");
    Ctx *other = ctx_new();
    ck_assert_ptr_null(tensor_matmul(a, tensor_zeros(other, DIMS(2, 5))));
    EXPECT_ERROR("different contexts", "operands from two contexts");
    ctx_free(other);
}
END_TEST

/* ==== seed 002: an expanded left operand ================================================== */

START_TEST(test_expanded_queries_every_batch) {
    Tensor *queries = arange(DIMS(1, 2, 3), 1.0f), *keys = arange(DIMS(4, 3, 5), 0.01f);
    Tensor *q = tensor_expand(queries, DIMS(4, 2, 3));
    ck_assert_int_eq(q->strides[0], 0);
    Tensor *scores = EXPECT_OK(tensor_matmul(q, keys));
    float want[40];
    naive_matmul(q, keys, scores, want);
    EXPECT_VALUES(scores, want, 40, 1e-5f, "every batch of expand(queries) @ keys");
    EXPECT_VALUES(tensor_as_strided(scores, DIMS(5), STRIDES(1), 30), VALUES(1.6f, 1.63f, 1.66f, 1.69f, 1.72f), 1e-5f,
                  "batch 3 row 0, as PyTorch prints it");
    EXPECT_VALUES(tensor_matmul(tensor_contiguous(q), keys), tensor_data(scores), 40, 0,
                  "the same as contiguous(q) @ keys");
}
END_TEST

/* The case study's fix: the unexpanded (1,2,3) queries against (4,3,5) keys, the batch dim
 * broadcast by matmul itself, equal the contiguous copy exactly: no zero, no wrong value. */
START_TEST(test_broadcast_queries_as_the_fix) {
    Tensor *queries = arange(DIMS(1, 2, 3), 1.0f), *keys = arange(DIMS(4, 3, 5), 0.01f);
    Tensor *scores = EXPECT_OK(tensor_matmul(queries, keys));
    EXPECT_SHAPE(scores, DIMS(4, 2, 5), "(1,2,3) @ (4,3,5)");
    Tensor *copy = tensor_matmul(tensor_contiguous(tensor_expand(queries, DIMS(4, 2, 3))), keys);
    int zeros = 0, bad = 0;
    for (int t = 0; t < 40; t++) {
        zeros += tensor_data(scores)[t] == 0.0f;
        bad += tensor_data(scores)[t] != tensor_data(copy)[t];
    }
    ck_assert_msg(zeros == 0 && bad == 0, "broadcast queries @ keys: %d exact zeros and %d values unlike the copy's",
                  zeros, bad);
}
END_TEST

START_TEST(test_the_invalid_fold_as_the_case_study_saw_it) {
    Tensor *queries = arange(DIMS(2, 3), 1.0f), *keys = arange(DIMS(4, 3, 5), 0.01f);
    float wrong[40];
    int64_t written = matmul_wrong_column_fold(tensor_data(queries), tensor_data(keys), 4, 2, 3, 5, wrong);
    ck_assert_int_eq(written, 25); /* (m - 1) * n + b * n */
    Tensor *right = tensor_matmul(tensor_expand(queries, DIMS(4, 2, 3)), keys);
    int zeros = 0, bad = 0;
    for (int t = 0; t < 40; t++) {
        zeros += wrong[t] == 0.0f;
        bad += fabsf(wrong[t] - tensor_data(right)[t]) > 1e-5f;
    }
    ck_assert_int_eq(zeros, 15);
    ck_assert_int_eq(bad, 30);
    /* row 0 of each batch, as the case study printed them */
    EXPECT_ARRAY(wrong, ((const float[]){0.25f, 0.28f, 0.31f, 0.34f, 0.37f}), 5, 1e-5f, "batch 0 row 0 (right)");
    EXPECT_ARRAY(wrong + 10, ((const float[]){1.3f, 1.42f, 1.54f, 1.66f, 1.78f}), 5, 1e-5f, "batch 1 row 0 (wrong)");
    EXPECT_ARRAY(wrong + 20, ((const float[]){2.5f, 2.62f, 2.74f, 2.86f, 2.98f}), 5, 1e-5f, "batch 2 row 0 (wrong)");
    EXPECT_ARRAY(wrong + 30, ((const float[]){0, 0, 0, 0, 0}), 5, 0, "batch 3 row 0 (never written)");
}
END_TEST

START_TEST(test_fold_predicate) {
    const int64_t batch[1] = {4}, shared[1] = {0}, per_batch[1] = {15};
    /* a contiguous (4,2,3): batch stride 6 = 2 rows * 3 */
    ck_assert(matmul_folds_into_rows(1, batch, (const int64_t[]){6}, shared, 2, 3));
    /* each batch transposed: rows 1 apart, batches 6 apart: 6 != 2 * 1 */
    ck_assert(!matmul_folds_into_rows(1, batch, (const int64_t[]){6}, shared, 2, 1));
    /* the right operand differs per batch: no fold */
    ck_assert(!matmul_folds_into_rows(1, batch, (const int64_t[]){6}, per_batch, 2, 3));
    /* an expanded left operand (batch stride 0) does not merge with its rows */
    ck_assert(!matmul_folds_into_rows(1, batch, (const int64_t[]){0}, per_batch, 2, 3));
    ck_assert(!matmul_folds_into_rows(1, batch, (const int64_t[]){0}, shared, 2, 3));
    /* two batch dims, both merging: (2,4,2,3) contiguous @ shared */
    ck_assert(matmul_folds_into_rows(2, (const int64_t[]){2, 4}, (const int64_t[]){24, 6}, (const int64_t[]){0, 0}, 2,
                                     3));
    /* no batch dims: nothing to fold */
    ck_assert(!matmul_folds_into_rows(0, NULL, NULL, NULL, 2, 3));
    /* and the folded product is right: x (4,2,3) @ w (3,5) */
    Tensor *x = arange(DIMS(4, 2, 3), 1.0f), *w = arange(DIMS(3, 5), 0.1f);
    Tensor *c = EXPECT_OK(tensor_matmul(x, w));
    float want[40];
    naive_matmul(x, tensor_reshape(w, DIMS(1, 3, 5)), c, want);
    EXPECT_VALUES(c, want, 40, 1e-4f, "x @ a shared w, folded into one product");
}
END_TEST

/* ==== every combination of operand layouts ================================================ */

typedef enum { CONTIGUOUS, TRANSPOSED, EXPANDED } Layout;
static const char *layout_name[] = {"contiguous", "transposed", "batch-expanded"};

/* An operand of logical shape (batch..., rows, cols) in a given layout is a view of a leaf:
 * leaf_shape says what the leaf stores, as_layout makes the view. */
typedef struct {
    int64_t batch[TENSOR_MAX_RANK];
    int batch_rank;
    int64_t rows, cols;
    Layout layout;
} Operand;

static int leaf_shape(const Operand *o, int64_t *shape) {
    int rank = o->batch_rank + 2;
    for (int d = 0; d < o->batch_rank; d++) shape[d] = o->layout == EXPANDED ? 1 : o->batch[d]; /* one matrix */
    shape[o->batch_rank] = o->layout == TRANSPOSED ? o->cols : o->rows;                         /* stored transposed */
    shape[o->batch_rank + 1] = o->layout == TRANSPOSED ? o->rows : o->cols;
    return rank;
}

static Tensor *as_layout(Tensor *leaf, const Operand *o) {
    int rank = o->batch_rank + 2;
    if (o->layout == TRANSPOSED) return tensor_transpose(leaf, -1, -2);
    if (o->layout == EXPANDED) {
        int64_t shape[TENSOR_MAX_RANK];
        memcpy(shape, o->batch, (size_t)o->batch_rank * sizeof *shape);
        shape[o->batch_rank] = o->rows, shape[o->batch_rank + 1] = o->cols;
        return tensor_expand(leaf, shape, rank);
    }
    return leaf;
}

static Tensor *make_operand(Rng *rng, const Operand *o) {
    int64_t shape[TENSOR_MAX_RANK];
    int rank = leaf_shape(o, shape);
    return as_layout(tensor_requires_grad(random_tensor(test_ctx, rng, shape, rank, -2, 2)), o);
}

typedef struct {
    Operand a, b;
} Spec;

/* for gradcheck: the leaves in, the views and the product out */
static Tensor *fn_layouts(Tensor *const *in, void *arg) {
    const Spec *spec = arg;
    return tensor_matmul(as_layout(in[0], &spec->a), as_layout(in[1], &spec->b));
}

START_TEST(test_every_combination) {
    /* batch shapes for a and b: equal, a size-1 batch dim, a missing batch dim, no batch */
    const int64_t batches[5][2][2] = {
        {{3, 0}, {3, 0}}, {{3, 0}, {1, 0}}, {{2, 3}, {3, 0}}, {{0, 0}, {2, 0}}, {{0, 0}, {0, 0}}};
    const int batch_ranks[5][2] = {{1, 1}, {1, 1}, {2, 1}, {0, 1}, {0, 0}};
    const int64_t mkn[4][3] = {{2, 3, 4}, {1, 3, 4}, {2, 1, 4}, {2, 3, 1}};
    Rng rng = rng_seeded(test_seed());
    int cases = 0;
    for (int bs = 0; bs < 5; bs++)
        for (int s = 0; s < 4; s++)
            for (int la = 0; la < 3; la++)
                for (int lb = 0; lb < 3; lb++) {
                    Spec spec = {{{0}, batch_ranks[bs][0], mkn[s][0], mkn[s][1], (Layout)la},
                                 {{0}, batch_ranks[bs][1], mkn[s][1], mkn[s][2], (Layout)lb}};
                    memcpy(spec.a.batch, batches[bs][0], sizeof batches[bs][0]);
                    memcpy(spec.b.batch, batches[bs][1], sizeof batches[bs][1]);
                    Tensor *a = make_operand(&rng, &spec.a), *b = make_operand(&rng, &spec.b);
                    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], what[256];
                    snprintf(what, sizeof what, "%s %s @ %s %s", layout_name[la],
                             shape_format(a->shape, a->rank, sa, sizeof sa), layout_name[lb],
                             shape_format(b->shape, b->rank, sb, sizeof sb));
                    Tensor *c = tensor_matmul(a, b);
                    ck_assert_msg(c != NULL, "%s: %s", what, tensor_error());
                    float *want = malloc((size_t)tensor_numel(c) * sizeof(float) + 1);
                    naive_matmul(a, b, c, want);
                    EXPECT_VALUES(c, want, tensor_numel(c), 1e-5f, what);
                    free(want);
                    if (cases++ % 3 == 0) { /* the gradients of both leaves, through the views (a third: it is slow) */
                        Tensor *leaf_a = a, *leaf_b = b;
                        while (leaf_a->backward) leaf_a = leaf_a->inputs[0];
                        while (leaf_b->backward) leaf_b = leaf_b->inputs[0];
                        char report[512];
                        GradcheckOptions opt = {1e-2, 2e-2, 2e-2, test_seed()};
                        ck_assert_msg(gradcheck(fn_layouts, &spec, (Tensor *[]){leaf_a, leaf_b}, 2, &opt, report,
                                                sizeof report) == 0,
                                      "%s: %s", what, report);
                    }
                }
}
END_TEST

START_TEST(test_square_and_self) {
    /* x @ x: both operands are x, and both halves of the gradient reach it */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 2), VALUES(1, 2, 3, 4)));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_matmul(x, x))), 0);
    /* d sum(x x) / dx = ones @ x^T + x^T @ ones = [[3,7],[3,7]] + [[4,4],[6,6]] */
    EXPECT_VALUES(tensor_grad(x), VALUES(7, 11, 9, 13), 0, "d sum(x @ x) / dx");
}
END_TEST

START_TEST(test_offsets_negative_strides_and_empty) {
    /* N-D operands that are offset views with a negative stride: every other matrix of a
     * (4,2,3) block, and a (2,3,2) block read backwards along its last dim */
    Tensor *base_a = arange(DIMS(4, 2, 3), 0.5f), *base_b = arange(DIMS(2, 3, 2), 0.25f);
    Tensor *a = tensor_as_strided(base_a, DIMS(2, 2, 3), STRIDES(12, 3, 1), 6); /* matrices 1 and 3 */
    Tensor *b = tensor_as_strided(base_b, DIMS(2, 3, 2), STRIDES(6, 2, -1), 1); /* columns swapped */
    Tensor *c = EXPECT_OK(tensor_matmul(a, b));
    float want[8];
    naive_matmul(a, b, c, want);
    EXPECT_VALUES(c, want, 8, 1e-5f, "offset and negative-stride operands");
    /* zero-size dims: an empty batch, no rows, no columns, and k = 0 (a sum of nothing is 0) */
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(0, 2, 3)), tensor_zeros(test_ctx, DIMS(3, 4))),
                 DIMS(0, 2, 4), "batch 0");
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(0, 3)), tensor_zeros(test_ctx, DIMS(3, 4))), DIMS(0, 4),
                 "m = 0");
    EXPECT_SHAPE(tensor_matmul(tensor_zeros(test_ctx, DIMS(2, 3)), tensor_zeros(test_ctx, DIMS(3, 0))), DIMS(2, 0),
                 "n = 0");
    Tensor *k0 = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(2, 0)));
    Tensor *k0b = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(0, 3)));
    Tensor *zeros = EXPECT_OK(tensor_matmul(k0, k0b));
    EXPECT_VALUES(zeros, VALUES(0, 0, 0, 0, 0, 0), 0, "k = 0: every element a sum of nothing");
    ck_assert_int_eq(tensor_backward(tensor_sum(zeros)), 0);
    /* rank 8 values */
    Tensor *r8a = arange(DIMS(2, 1, 1, 1, 1, 1, 2, 2), 1.0f), *r8b = arange(DIMS(1, 1, 1, 1, 1, 2, 2, 2), 0.5f);
    Tensor *r8 = EXPECT_OK(tensor_matmul(r8a, r8b));
    float *want8 = malloc((size_t)tensor_numel(r8) * sizeof(float));
    naive_matmul(r8a, r8b, r8, want8);
    EXPECT_VALUES(r8, want8, tensor_numel(r8), 1e-5f, "rank 8");
    free(want8);
}
END_TEST

START_TEST(test_backward_twice) {
    Tensor *a = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 1, 2), VALUES(1, 2, 3, 4)));
    Tensor *b = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 1), VALUES(5, 6)));
    Tensor *loss = tensor_sum(tensor_matmul(a, b));
    ck_assert_int_eq(tensor_backward(loss), 0);
    ck_assert_int_eq(tensor_backward(loss), 0);
    EXPECT_VALUES(tensor_grad(a), VALUES(10, 12, 10, 12), 0, "a leaf's gradient after two backward calls doubles");
    EXPECT_VALUES(tensor_grad(b), VALUES(8, 12), 0, "the shared weight's, too");
}
END_TEST

/* ==== gradients of broadcast batches, through views ======================================= */

static Tensor *fn_matmul(Tensor *const *in, void *arg) { return (void)arg, tensor_matmul(in[0], in[1]); }
static Tensor *fn_expanded_left(Tensor *const *in, void *arg) {
    return (void)arg, tensor_matmul(tensor_expand(in[0], DIMS(4, 2, 3)), in[1]);
}
static Tensor *fn_transposed_both(Tensor *const *in, void *arg) {
    return (void)arg, tensor_matmul(tensor_transpose(in[0], -1, -2), tensor_transpose(in[1], 1, 2));
}

/* batch dims whose strides are not row-major: permuting two batch dims of both operands */
static Tensor *fn_permuted_batches(Tensor *const *in, void *arg) {
    return (void)arg, tensor_matmul(tensor_permute(in[0], AXES(1, 0, 2, 3)), tensor_permute(in[1], AXES(1, 0, 2, 3)));
}

/* the same tensor on both sides, with a batch */
static Tensor *fn_self(Tensor *const *in, void *arg) { return (void)arg, tensor_matmul(in[0], in[0]); }

static void expect_gradcheck(GradcheckFn fn, Tensor *const *inputs, int n, const char *what) {
    char report[512];
    GradcheckOptions opt = {1e-2, 2e-2, 2e-2, test_seed()};
    ck_assert_msg(gradcheck(fn, NULL, inputs, n, &opt, report, sizeof report) == 0, "%s: %s", what, report);
}

START_TEST(test_gradcheck_broadcast_batches) {
    Rng rng = rng_seeded(test_seed());
    Tensor *x = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(4, 2, 3), -1, 1));
    Tensor *w = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3, 5), -1, 1));
    expect_gradcheck(fn_matmul, (Tensor *[]){x, w}, 2, "x (4,2,3) @ a shared w (3,5)");
    Tensor *q = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(1, 2, 3), -1, 1));
    Tensor *keys = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(4, 3, 5), -1, 1));
    expect_gradcheck(fn_expanded_left, (Tensor *[]){q, keys}, 2, "expand(q) (4,2,3) @ keys (4,3,5)");
    Tensor *l = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3, 2), -1, 1));
    Tensor *r = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 4, 3), -1, 1));
    expect_gradcheck(fn_transposed_both, (Tensor *[]){l, r}, 2, "both operands transposed");
    Tensor *p = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3, 2, 2, 3), -1, 1));
    Tensor *pb = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3, 2, 3, 2), -1, 1));
    expect_gradcheck(fn_permuted_batches, (Tensor *[]){p, pb}, 2, "operands whose batch dims are permuted");
    Tensor *sq = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3, 3), -1, 1));
    expect_gradcheck(fn_self, (Tensor *[]){sq}, 1, "x @ x for x of shape (2,3,3)");
    Tensor *v = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3), -1, 1));
    expect_gradcheck(fn_matmul, (Tensor *[]){x, v}, 2, "(4,2,3) @ a vector (3,)");
}
END_TEST

/* ==== random shapes ======================================================================= */

START_TEST(test_random_shapes) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 150; trial++) {
        int ra = (int)rng_int(&rng, 0, 3), rb = (int)rng_int(&rng, 0, 3); /* batch ranks */
        int64_t ba[3] = {0}, bb[3] = {0}, m = rng_int(&rng, 1, 4), k = rng_int(&rng, 1, 4), n = rng_int(&rng, 1, 4);
        random_shape(&rng, ra, 1, 3, ba);
        for (int q = 1; q <= rb; q++)
            bb[rb - q] = q <= ra && rng_int(&rng, 0, 2) ? ba[ra - q] : rng_int(&rng, 0, 1) ? 1 : 2;
        for (int q = 1; q <= ra && q <= rb; q++)
            if (ba[ra - q] != bb[rb - q] && ba[ra - q] != 1 && bb[rb - q] != 1) bb[rb - q] = 1; /* keep it defined */
        Operand oa = {{0}, ra, m, k, (Layout)rng_int(&rng, 0, 2)}, ob = {{0}, rb, k, n, (Layout)rng_int(&rng, 0, 2)};
        memcpy(oa.batch, ba, sizeof ba);
        memcpy(ob.batch, bb, sizeof bb);
        Tensor *a = make_operand(&rng, &oa), *b = make_operand(&rng, &ob);
        char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], what[256];
        snprintf(what, sizeof what, "COURSE_SEED=%llu case %d: %s @ %s", (unsigned long long)seed, trial,
                 shape_format(a->shape, a->rank, sa, sizeof sa), shape_format(b->shape, b->rank, sb, sizeof sb));
        Tensor *c = tensor_matmul(a, b);
        ck_assert_msg(c != NULL, "%s: %s", what, tensor_error());
        float *want = malloc((size_t)tensor_numel(c) * sizeof(float) + 1);
        naive_matmul(a, b, c, want);
        EXPECT_VALUES(c, want, tensor_numel(c), 1e-5f, what);
        free(want);
    }
}
END_TEST

/* ==== the fast kernel (bmm_fast.c) against a naive loop in double ========================== */

/* The builds of bmm_fast.c's micro-kernel: plain C (COURSE_KERNELS=portable, on x86-64), AVX2+FMA
 * (avx2) and AVX-512 (native), those this CPU runs. The tests of tensor_matmul run the
 * reference's triple loop as well. */
#define FOR_EACH_GEMM_KERNEL(mode)                                           \
    for (const char *const *(mode) = test_kernel_modes(); *(mode); (mode)++) \
        if (strcmp(*(mode), "reference") != 0)

/* How far a float32 result may be from the exact sum. A sum of L products added onto a
 * starting value c, in float32, is within about (L + 1) * u * (|c| + the sum of |products|) of
 * the exact value, u = 2^-24, when it is added up one term at a time (Higham, Accuracy and
 * Stability of Numerical Algorithms, section 3.1: exactly gamma(L+1) = (L+1)u / (1 - (L+1)u)).
 * The fast kernel adds the terms into partial sums of KC terms that it then adds into out, so a term
 * goes through at most L + 2 roundings; FMA rounds less, not more. The tests allow twice
 * (L + 2) * u * magnitude: a bound, so no seed can make a right answer fail. A mistake (a term
 * missed, counted twice or taken from the wrong place) moves a result by a whole term, which
 * for sums of up to 600 terms is typically 20 times that tolerance or more. (The one longer
 * sum here, a gradient over n = 4100 columns, is held only to about one term.) */
static double sum_tolerance(int64_t terms, double magnitude) { return 2.0 * (double)(terms + 2) * 0x1p-24 * magnitude; }

/* ---- the table's matmul on plain arrays ------------------------------------------------------ */

/* A (rows, cols) matrix inside a buffer: row-major, column-major (a transposed view), rows
 * padded, rows expanded (row stride 0: every row the same), both strides above 1, or walked
 * backwards (negative strides). `at` is where element (0, 0) lies. */
enum { M_ROW_MAJOR, M_COL_MAJOR, M_PADDED, M_ROWS_EXPANDED, M_SPREAD, M_REVERSED, M_LAYOUTS };
static const char *const matrix_layout[M_LAYOUTS] = {"row-major",     "column-major",           "padded rows",
                                                     "rows expanded", "strides 3 and 3*cols+1", "reversed"};
typedef struct {
    float *buf;
    int64_t len, at, rs, cs;
} Matrix;

static Matrix make_matrix(Rng *rng, int64_t rows, int64_t cols, int layout) {
    Matrix x = {0};
    switch (layout) {
    case M_ROW_MAJOR: x.rs = cols, x.cs = 1; break;
    case M_COL_MAJOR: x.rs = 1, x.cs = rows; break;
    case M_PADDED: x.rs = cols + 3, x.cs = 1; break;
    case M_ROWS_EXPANDED: x.rs = 0, x.cs = 1; break;
    case M_SPREAD: x.rs = 3 * cols + 1, x.cs = 3; break;
    default: x.rs = -cols, x.cs = -1; break;
    }
    int64_t reach_r = rows > 0 ? (rows - 1) * x.rs : 0, reach_c = cols > 0 ? (cols - 1) * x.cs : 0;
    int64_t lo = (reach_r < 0 ? reach_r : 0) + (reach_c < 0 ? reach_c : 0);
    int64_t hi = (reach_r > 0 ? reach_r : 0) + (reach_c > 0 ? reach_c : 0);
    x.at = 5 - lo; /* 5 untouched floats before the lowest element, 8 after the highest */
    x.len = x.at + hi + 1 + 8;
    x.buf = malloc((size_t)x.len * sizeof(float));
    for (int64_t i = 0; i < x.len; i++) x.buf[i] = rng_float(rng, -1, 1);
    return x;
}

/* The table's matmul on one (m, k) @ (k, n) case, out a non-zero matrix it adds into (or, without
 * accumulate, stores over). Every element of out must be its old value (or 0) plus the product,
 * and no other float of out's buffer may change. Products of at most GEMM_SMALL multiply-adds
 * run the reference's triple loop. */
static void check_gemm(Rng *rng, const char *kernel, int64_t m, int64_t k, int64_t n, int la, int lb, int lo,
                       bool accumulate) {
    Matrix a = make_matrix(rng, m, k, la), b = make_matrix(rng, k, n, lb), o = make_matrix(rng, m, n, lo);
    float *before = malloc((size_t)o.len * sizeof(float));
    char *in_view = calloc((size_t)o.len, 1);
    memcpy(before, o.buf, (size_t)o.len * sizeof(float));
    kernels()->matmul(a.buf + a.at, a.rs, a.cs, b.buf + b.at, b.rs, b.cs, o.buf + o.at, o.rs, o.cs, m, k, n,
                      accumulate);
    char what[256];
    snprintf(what, sizeof what, "matmul, %s kernel, m=%lld k=%lld n=%lld, a %s, b %s, out %s, %s", kernel, (long long)m,
             (long long)k, (long long)n, matrix_layout[la], matrix_layout[lb], matrix_layout[lo],
             accumulate ? "adding" : "storing");
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t at = o.at + i * o.rs + j * o.cs;
            double want = accumulate ? before[at] : 0.0, magnitude = fabs(want);
            for (int64_t p = 0; p < k; p++) {
                double x = (double)a.buf[a.at + i * a.rs + p * a.cs] * (double)b.buf[b.at + p * b.rs + j * b.cs];
                want += x, magnitude += fabs(x);
            }
            double tol = sum_tolerance(k, magnitude);
            if (!(fabs(o.buf[at] - want) <= tol))
                ck_abort_msg("%s: out[%lld, %lld] is %.9g, the naive loop gives %.9g (tolerance %.3g)", what,
                             (long long)i, (long long)j, (double)o.buf[at], want, tol);
            in_view[at] = 1;
        }
    for (int64_t i = 0; i < o.len; i++)
        /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): bit for bit, nan payloads and -0 included */
        if (!in_view[i] && memcmp(&o.buf[i], &before[i], sizeof(float)) != 0)
            ck_abort_msg("%s: wrote outside out, %lld floats from its element (0, 0)", what, (long long)(i - o.at));
    free(before), free(in_view), free(a.buf), free(b.buf), free(o.buf);
}

START_TEST(test_gemm_edge_sizes) {
    /* every combination of sizes around the tiles (6 or 8 rows, 16 or 32 columns), 0 and 1
     * included, with the layouts of a, b and out taking turns; out is never expanded (its
     * elements must differ) */
    const int64_t small[] = {0, 1, 2, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33};
    enum { N_SMALL = sizeof small / sizeof small[0] };
    const int out_layouts[] = {M_ROW_MAJOR, M_COL_MAJOR, M_PADDED, M_SPREAD, M_REVERSED};
    Rng rng = rng_seeded(test_seed());
    FOR_EACH_GEMM_KERNEL(mode) {
        const char *name = use_kernels(*mode);
        int turn = 0;
        for (int x = 0; x < N_SMALL; x++)
            for (int y = 0; y < N_SMALL; y++)
                for (int z = 0; z < N_SMALL; z++, turn++)
                    check_gemm(&rng, name, small[x], small[y], small[z], turn % M_LAYOUTS,
                               (turn / M_LAYOUTS) % M_LAYOUTS, out_layouts[turn % 5], turn % 7 != 0);
    }
}
END_TEST

START_TEST(test_gemm_block_edges) {
    /* sizes just around the cache blocks, one dim at a time: m around MC (and 2 MC), k around
     * KC (and 2 KC), and n past NC once; then all three past their blocks at once */
    enum { MC = GEMM_MC, KC = GEMM_KC, NC = GEMM_NC };
    const int64_t cases[][3] = {{MC - 1, 7, 17}, {MC, 7, 17},         {MC + 1, 7, 17}, {2 * MC + 1, 5, 9},
                                {7, KC - 1, 17}, {7, KC, 17},         {7, KC + 1, 17}, {5, 2 * KC + 1, 9},
                                {3, 5, NC + 20}, {MC + 5, KC + 3, 33}};
    Rng rng = rng_seeded(test_seed());
    FOR_EACH_GEMM_KERNEL(mode) {
        const char *name = use_kernels(*mode);
        for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++)
            check_gemm(&rng, name, cases[c][0], cases[c][1], cases[c][2], c % M_LAYOUTS, (c + 2) % M_LAYOUTS,
                       c % 2 ? M_PADDED : M_ROW_MAJOR, c % 3 != 0);
    }
}
END_TEST

START_TEST(test_gemm_random_sizes) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    const int out_layouts[] = {M_ROW_MAJOR, M_COL_MAJOR, M_PADDED, M_SPREAD, M_REVERSED};
    FOR_EACH_GEMM_KERNEL(mode) {
        const char *name = use_kernels(*mode);
        for (int trial = 0; trial < 60; trial++) {
            int64_t big = trial % 10 == 0 ? 100 : 40;
            int64_t m = rng_int(&rng, 0, big), k = rng_int(&rng, 0, big), n = rng_int(&rng, 0, big);
            check_gemm(&rng, name, m, k, n, (int)rng_int(&rng, 0, M_LAYOUTS - 1), (int)rng_int(&rng, 0, M_LAYOUTS - 1),
                       out_layouts[rng_int(&rng, 0, 4)], trial % 4 != 0);
        }
    }
}
END_TEST

/* ---- tensor_matmul on products large enough to run the fast kernel, forward and backward ---- */

/* How an operand of tensor_matmul is laid out: a view (tensor_as_strided) of a buffer of
 * random values, marked as requiring its gradient, so the test compares the gradient that
 * matmul's backward computes for exactly this view. */
enum {
    V_CONTIGUOUS,
    V_TRANSPOSED,
    V_OFFSET_PADDED,
    V_NEGATIVE,
    V_BATCH_EXPANDED,
    V_ROWS_EXPANDED,
    V_PERMUTED_BATCH,
    V_KINDS
};
static const char *const view_kind[V_KINDS] = {"contiguous",         "transposed",     "offset, padded",
                                               "negative strides",   "batch stride 0", "row stride 0",
                                               "batch dims permuted"};

static Tensor *strided_operand(Rng *rng, const int64_t *shape, int rank, int kind) {
    int64_t rows = shape[rank - 2], cols = shape[rank - 1], strides[TENSOR_MAX_RANK];
    int64_t rs = kind == V_TRANSPOSED ? 1 : kind == V_OFFSET_PADDED ? cols + 3 : kind == V_ROWS_EXPANDED ? 0 : cols;
    int64_t cs = kind == V_TRANSPOSED ? rows : 1;
    int64_t step = kind == V_OFFSET_PADDED ? rows * rs + 5 : rows * cols; /* one matrix, with any padding */
    for (int d = rank - 3; d >= 0; d--) {
        strides[d] = kind == V_BATCH_EXPANDED ? 0 : step;
        step *= shape[d];
    }
    if (kind == V_PERMUTED_BATCH && rank >= 4) { /* the last two batch dims stored in the other order */
        strides[rank - 4] = rows * cols;
        strides[rank - 3] = rows * cols * shape[rank - 4];
    }
    strides[rank - 2] = rs, strides[rank - 1] = cs;
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < rank; d++) {
        if (kind == V_NEGATIVE) strides[d] = -strides[d]; /* every dim walked backwards */
        int64_t reach = (shape[d] - 1) * strides[d];
        if (reach < 0) lo += reach;
        else hi += reach;
    }
    Tensor *buffer = random_tensor(test_ctx, rng, DIMS(hi - lo + 1 + 7), -1, 1);
    return tensor_requires_grad(tensor_as_strided(buffer, shape, rank, strides, 3 - lo));
}

/* out = a @ b and the gradients of a and b for a random upstream gradient u, against loops in
 * double over the views' own elements (tensor_get). Batch dims are matched by numpy's rule:
 * right-aligned, a size-1 batch dim read at index 0. An element of a's gradient sums u * b
 * over every output element it contributed to (several when a was broadcast); the tolerance
 * counts those terms. */
static void check_matmul(Rng *rng, Tensor *a, Tensor *b, const char *what) {
    Tensor *c = tensor_matmul(a, b);
    ck_assert_msg(c != NULL, "%s: %s", what, tensor_error());
    Tensor *u = random_tensor(test_ctx, rng, c->shape, c->rank, -1, 1);
    ck_assert_msg(tensor_backward_from(c, u) == 0, "%s: %s", what, tensor_error());
    int r = c->rank, ra = a->rank, rb = b->rank;
    int64_t k = a->shape[ra - 1], na = tensor_numel(a), nb = tensor_numel(b), nc = tensor_numel(c);
    int64_t index[TENSOR_MAX_RANK], ia[TENSOR_MAX_RANK], ib[TENSOR_MAX_RANK], sa[TENSOR_MAX_RANK], sb[TENSOR_MAX_RANK];
    contiguous_strides(a->shape, ra, sa); /* the gradients are contiguous in a's and b's shapes */
    contiguous_strides(b->shape, rb, sb);
    double *want = calloc((size_t)(nc + na + nb) * 2, sizeof(double)), *mag = want + nc + na + nb;
    int64_t *terms = calloc((size_t)(na + nb + 1), sizeof(int64_t));
    double *want_ga = want + nc, *want_gb = want_ga + na, *mag_ga = mag + nc, *mag_gb = mag_ga + na;
    for (int64_t t = 0; t < nc; t++) {
        unravel_index(t, c->shape, r, index);
        for (int d = 0; d < ra - 2; d++) ia[d] = a->shape[d] == 1 ? 0 : index[r - 2 - (ra - 2) + d];
        for (int d = 0; d < rb - 2; d++) ib[d] = b->shape[d] == 1 ? 0 : index[r - 2 - (rb - 2) + d];
        double g = tensor_data(u)[t];
        for (int64_t p = 0; p < k; p++) {
            ia[ra - 2] = index[r - 2], ia[ra - 1] = p;
            ib[rb - 2] = p, ib[rb - 1] = index[r - 1];
            double x = tensor_get(a, ia), y = tensor_get(b, ib);
            int64_t fa = 0, fb = 0;
            for (int d = 0; d < ra; d++) fa += ia[d] * sa[d];
            for (int d = 0; d < rb; d++) fb += ib[d] * sb[d];
            want[t] += x * y, mag[t] += fabs(x * y);
            want_ga[fa] += g * y, mag_ga[fa] += fabs(g * y), terms[fa]++;
            want_gb[fb] += x * g, mag_gb[fb] += fabs(x * g), terms[na + fb]++;
        }
    }
    struct {
        const char *name;
        const float *got;
        int64_t n, first;
    } parts[3] = {{"a @ b", tensor_data(c), nc, 0},
                  {"the gradient of a", tensor_data(tensor_grad(a)), na, nc},
                  {"the gradient of b", tensor_data(tensor_grad(b)), nb, nc + na}};
    for (int q = 0; q < 3; q++)
        for (int64_t e = 0; e < parts[q].n; e++) {
            int64_t at = parts[q].first + e, count = q == 0 ? k : terms[at - nc];
            double tol = sum_tolerance(count, mag[at]);
            if (!(fabs(parts[q].got[e] - want[at]) <= tol))
                ck_abort_msg("%s: %s: element %lld is %.9g, the naive loop gives %.9g (tolerance %.3g)", what,
                             parts[q].name, (long long)e, (double)parts[q].got[e], want[at], tol);
        }
    free(want), free(terms);
}

static void describe_product(char *buf, size_t size, const char *kernel, const Tensor *a, int ka, const Tensor *b,
                             int kb) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX];
    snprintf(buf, size, "COURSE_SEED=%llu, %s kernel: %s %s @ %s %s", (unsigned long long)test_seed(), kernel,
             view_kind[ka], shape_format(a->shape, a->rank, sa, sizeof sa), view_kind[kb],
             shape_format(b->shape, b->rank, sb, sizeof sb));
}

START_TEST(test_matmul_fast_path_2d) {
    /* m * k * n above the triple loop's 512, so the fast kernel runs: sizes around the tile, a
     * row times a matrix with k past KC, m past MC, n past NC, an outer product (k = 1); every
     * view kind on either side. A dot product runs the triple loop, and its backward the fast
     * kernel. */
    const int64_t sizes[][3] = {{1, 300, 17}, {17, 1, 40},  {5, 7, 17},  {6, 16, 16}, {7, 15, 17},
                                {16, 17, 6},  {33, 20, 50}, {145, 3, 4}, {3, 260, 5}, {2, 3, 4100},
                                {40, 1, 1},   {1, 600, 2},  {1, 600, 1}};
    Rng rng = rng_seeded(test_seed());
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *name = use_kernels(*mode);
        int turn = 0;
        for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++)
            for (int v = 0; v < 3; v++, turn++) {
                int ka = turn % V_KINDS, kb = (turn * 3 + 1) % V_KINDS;
                if (ka == V_BATCH_EXPANDED || ka == V_PERMUTED_BATCH) ka = V_NEGATIVE; /* no batch dims in 2-D */
                if (kb == V_BATCH_EXPANDED || kb == V_PERMUTED_BATCH) kb = V_OFFSET_PADDED;
                Tensor *a = strided_operand(&rng, DIMS(sizes[s][0], sizes[s][1]), ka);
                Tensor *b = strided_operand(&rng, DIMS(sizes[s][1], sizes[s][2]), kb);
                char what[512];
                describe_product(what, sizeof what, name, a, ka, b, kb);
                check_matmul(&rng, a, b, what);
            }
    }
}
END_TEST

START_TEST(test_matmul_fast_path_batched) {
    /* batch dims equal, size 1 against 3, missing on either side, and two of them; each with
     * every view kind on each side (batch stride 0 on the right is the fold into rows, forward
     * and backward; on the left, seed 002's expanded queries) */
    typedef struct {
        int ra, rb;
        int64_t a[4], b[4];
    } Shapes;
    const Shapes shapes[] = {
        {3, 3, {3, 9, 20}, {3, 20, 11}}, {3, 3, {1, 9, 20}, {3, 20, 11}},   {3, 2, {4, 7, 20}, {20, 13}},
        {2, 3, {7, 20}, {4, 20, 13}},    {4, 3, {2, 3, 6, 17}, {3, 17, 9}}, {4, 4, {3, 2, 8, 10}, {3, 2, 10, 16}},
    };
    Rng rng = rng_seeded(test_seed());
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *name = use_kernels(*mode);
        for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
            for (int ka = 0; ka < V_KINDS; ka++) {
                int kb = (ka + s) % V_KINDS;
                Tensor *a = strided_operand(&rng, shapes[s].a, shapes[s].ra, ka);
                Tensor *b = strided_operand(&rng, shapes[s].b, shapes[s].rb, kb);
                char what[512];
                describe_product(what, sizeof what, name, a, ka, b, kb);
                check_matmul(&rng, a, b, what);
            }
    }
}
END_TEST

START_TEST(test_matmul_fast_path_folded) {
    /* a shared weight: x (B, m, k) @ w (k, n), or w expanded to (B, k, n). The forward folds it
     * into one (B*m, k) @ (k, n) product and the backward into two; a that is contiguous or
     * walked backwards folds, the others do not. Then m = 1 (one row per batch, where the fold
     * saves the most) and an x whose rows are all one row. */
    Rng rng = rng_seeded(test_seed());
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *name = use_kernels(*mode);
        for (int ka = 0; ka < V_KINDS; ka++) {
            int kb = ka % 2 ? V_BATCH_EXPANDED : V_CONTIGUOUS;
            Tensor *x = strided_operand(&rng, DIMS(5, 6, 19), ka);
            Tensor *w = kb == V_BATCH_EXPANDED ? strided_operand(&rng, DIMS(5, 19, 21), kb)
                                               : strided_operand(&rng, DIMS(19, 21), kb);
            char what[512];
            describe_product(what, sizeof what, name, x, ka, w, kb);
            check_matmul(&rng, x, w, what);
        }
        Tensor *rows = strided_operand(&rng, DIMS(64, 1, 24), V_CONTIGUOUS),
               *w = strided_operand(&rng, DIMS(24, 9), V_CONTIGUOUS);
        check_matmul(&rng, rows, w, "64 batches of one row @ a shared (24,9)");
        Tensor *one_row = random_tensor(test_ctx, &rng, DIMS(24), -1, 1);
        Tensor *same = tensor_requires_grad(tensor_as_strided(one_row, DIMS(8, 4, 24), STRIDES(0, 0, 1), 0));
        w = strided_operand(&rng, DIMS(24, 9), V_CONTIGUOUS); /* a fresh one: a leaf's gradient accumulates */
        check_matmul(&rng, same, w, "(1,1,24) expanded to (8,4,24): batch and row strides 0 @ a shared (24,9)");
    }
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("lesson 6: batched matmul");
    TCase *chapter = add_test_case(s, "chapter and notes");
    add_test(chapter, test_matmul_3d);
    add_test(chapter, test_batch_offsets);
    add_test(chapter, test_nd_is_a_loop_of_2d);
    add_test(chapter, test_vectors);
    add_test(chapter, test_errors);
    TCase *case_study = add_test_case(s, "seed 002's case study");
    add_test(case_study, test_expanded_queries_every_batch);
    add_test(case_study, test_broadcast_queries_as_the_fix);
    add_test(case_study, test_the_invalid_fold_as_the_case_study_saw_it);
    add_test(case_study, test_fold_predicate);
    TCase *layouts = add_large_test_case(s, "layouts and gradients");
    tcase_set_timeout(layouts, 60);
    add_test(layouts, test_every_combination);
    add_test(layouts, test_square_and_self);
    add_test(layouts, test_offsets_negative_strides_and_empty);
    add_test(layouts, test_backward_twice);
    add_test(layouts, test_gradcheck_broadcast_batches);
    add_test(layouts, test_random_shapes);
    TCase *fast = add_large_test_case(s, "the fast kernel");
    tcase_set_timeout(fast, 60);
    add_test(fast, test_gemm_edge_sizes);
    add_test(fast, test_gemm_block_edges);
    add_test(fast, test_gemm_random_sizes);
    add_test(fast, test_matmul_fast_path_2d);
    add_test(fast, test_matmul_fast_path_batched);
    add_test(fast, test_matmul_fast_path_folded);
    return run_core_tests(argc, argv, s);
}
