/*
 * bmm.c - lesson 6: batched matmul with broadcast batch dims, forward and backward.
 *
 * Read top to bottom: the 2-D kernel (the chapter's triple loop, through strides; the ops call
 * it through the table, kernels.h, which points at bmm_fast.c's kernel unless
 * COURSE_KERNELS=reference), the plan that splits operands into batch dims and matrix dims and
 * broadcasts the batch dims (lesson 1), the forward over
 * every batch (with the one valid fold), the backward, then 1-D operands. Last, seed 002's
 * invalid fold, kept only for the walk-through. docs/6-bmm.md explains every step.
 *
 * Letters: a is (..., m, k), b is (..., k, n), out is (..., m, n). rs and cs are a matrix's row
 * and column strides. g is out's gradient; ga and gb are a's and b's.
 */
#include "bmm.h"

#include <string.h>

#include "broadcast.h"
#include "kernels.h"
#include "permute.h"

/* ==== the 2-D kernel ====================================================================== */

/* out[i, j] += sum over p of a[i, p] * b[p, j]: the chapter's triple loop, the definition of the
 * product, with every matrix read through its strides, so any view works. Loop order i, p, j:
 * the inner loop walks a row of b and a row of out. Every 2-D product of the lesson, forward
 * and backward, is computed through the table's entry for it (kernels()->matmul): this kernel,
 * or bmm_fast.c's blocked, vectorised one. out must not overlap a or b. Without accumulate, each row
 * of out starts from 0 instead of what it held: a new result, or a gradient nothing has reached
 * yet, is written without being cleared first (tensor_grads_begin). */
void matmul_reference(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs,
                      float *out, int64_t out_rs, int64_t out_cs, int64_t m, int64_t k, int64_t n, bool accumulate) {
    for (int64_t i = 0; i < m; i++) {
        if (!accumulate)
            for (int64_t j = 0; j < n; j++) out[i * out_rs + j * out_cs] = 0.0f;
        for (int64_t p = 0; p < k; p++) {
            float x = a[i * a_rs + p * a_cs];
            for (int64_t j = 0; j < n; j++) out[i * out_rs + j * out_cs] += x * b[p * b_rs + j * b_cs];
        }
    }
}

/* ==== the plan: batch dims broadcast, matrix dims multiply ================================ */

typedef struct {
    int batch_rank;
    int64_t batch[TENSOR_MAX_RANK]; /* the broadcast batch shape */
    int64_t m, k, n;
    /* strides over the batch dims, 0 along every dim the operand was broadcast along */
    int64_t a_batch[TENSOR_MAX_RANK], b_batch[TENSOR_MAX_RANK], out_batch[TENSOR_MAX_RANK];
    int64_t a_rs, a_cs, b_rs, b_cs;
} Plan;

/* Splits a (..., m, k) and b (..., k, n), both of rank >= 2 with the same k (tensor_matmul
 * checked it), and broadcasts their batch dims. `strides_a`/`strides_b` choose which strides to
 * describe (the data's, or a gradient's). */
static int make_plan(const char *op, const Tensor *a, const int64_t *strides_a, const Tensor *b,
                     const int64_t *strides_b, Plan *plan) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], so[SHAPE_STR_MAX];
    int ra = a->rank - 2, rb = b->rank - 2;
    plan->m = a->shape[ra];
    plan->k = a->shape[ra + 1];
    plan->n = b->shape[rb + 1];
    if (broadcast_shapes(a->shape, ra, b->shape, rb, plan->batch, &plan->batch_rank) < 0)
        return tensor_error_as(op, ": the batch dims of %s and %s", shape_format(a->shape, a->rank, sa, sizeof sa),
                               shape_format(b->shape, b->rank, sb, sizeof sb)),
               -1;
    /* lesson 1's stride-0 view, applied to the batch dims only */
    broadcast_strides(a->shape, ra, strides_a, plan->batch, plan->batch_rank, plan->a_batch);
    broadcast_strides(b->shape, rb, strides_b, plan->batch, plan->batch_rank, plan->b_batch);
    plan->a_rs = strides_a[ra];
    plan->a_cs = strides_a[ra + 1];
    plan->b_rs = strides_b[rb];
    plan->b_cs = strides_b[rb + 1];
    int64_t out_shape[TENSOR_MAX_RANK], out_strides[TENSOR_MAX_RANK];
    memcpy(out_shape, plan->batch, (size_t)plan->batch_rank * sizeof(int64_t));
    out_shape[plan->batch_rank] = plan->m;
    out_shape[plan->batch_rank + 1] = plan->n;
    if (shape_numel(out_shape, plan->batch_rank + 2) < 0) /* expanded operands: (2^40,k) @ (k,2^40), say */
        return tensor_set_error("%s: shapes %s and %s give a result of shape %s, which has too many elements", op,
                                shape_format(a->shape, a->rank, sa, sizeof sa),
                                shape_format(b->shape, b->rank, sb, sizeof sb),
                                shape_format(out_shape, plan->batch_rank + 2, so, sizeof so)),
               -1;
    contiguous_strides(out_shape, plan->batch_rank + 2, out_strides);
    memcpy(plan->out_batch, out_strides, (size_t)plan->batch_rank * sizeof(int64_t));
    return 0;
}

bool matmul_folds_into_rows(int batch_rank, const int64_t *batch, const int64_t *a_batch_strides,
                            const int64_t *b_batch_strides, int64_t m, int64_t a_row_stride) {
    if (batch_rank < 1 || batch_rank > TENSOR_MAX_RANK || !batch || !a_batch_strides || !b_batch_strides)
        return false;                        /* no batch dims to fold (or none given) */
    int64_t size = m, stride = a_row_stride; /* the rows of a, as one dim so far */
    for (int d = batch_rank - 1; d >= 0; d--) {
        if (b_batch_strides[d] != 0 && batch[d] != 1) return false;                /* b differs from batch to batch */
        if (!dims_merge(batch[d], a_batch_strides[d], size, stride)) return false; /* a's batch and rows do not merge */
        size *= batch[d];
    }
    return true;
}

/* The fold, as a change of plan: where it is valid, the rows of a of every batch, and of out,
 * are one (batches*m, k) and one (batches*m, n) matrix, and b is the same for every batch, so
 * the plan becomes one product of batches*m rows with no batch dims left. Returns whether it
 * folded. */
static bool fold_into_rows(Plan *p) {
    if (!matmul_folds_into_rows(p->batch_rank, p->batch, p->a_batch, p->b_batch, p->m, p->a_rs)) return false;
    p->m *= shape_numel(p->batch, p->batch_rank);
    p->batch_rank = 0;
    return true;
}

/* ==== forward ============================================================================= */

static void matmul_backward(Tensor *out);

/* a @ b for operands of rank >= 2: one 2-D product per batch index, each operand at its own
 * offset; or, when every batch shares b, the one product of the fold. */
static Tensor *matmul_nd(const char *op, Tensor *a, Tensor *b) {
    Plan p;
    if (make_plan(op, a, a->strides, b, b->strides, &p) < 0) return NULL;
    int64_t shape[TENSOR_MAX_RANK];
    memcpy(shape, p.batch, (size_t)p.batch_rank * sizeof(int64_t));
    shape[p.batch_rank] = p.m;
    shape[p.batch_rank + 1] = p.n;
    Tensor *out = tensor_empty(a->ctx, shape, p.batch_rank + 2); /* each batch's product is stored over it */
    if (!out) return NULL;
    const float *ad = tensor_data(a), *bd = tensor_data(b);
    float *od = tensor_data(out);
    if (tensor_numel(out) > 0) { /* else nothing to compute, however many (empty) batches there are */
        fold_into_rows(&p);
        NdIter it;
        nditer_init(&it, p.batch_rank, p.batch, 3, (const int64_t *[]){p.a_batch, p.b_batch, p.out_batch});
        while (nditer_next(&it))
            kernels()->matmul(ad + it.offset[0], p.a_rs, p.a_cs, bd + it.offset[1], p.b_rs, p.b_cs, od + it.offset[2],
                              p.n, 1, p.m, p.k, p.n, false);
    }
    return tensor_record(out, op, matmul_backward, 2, (Tensor *[]){a, b});
}

/* ==== backward ============================================================================ */

/* Whether a gradient with these batch strides has its own slice for every batch (no batch dim
 * of more than 1 broadcast to it), so that each product writes a part no other one writes. */
static bool own_slice_per_batch(const Plan *p, const int64_t *grad_batch_strides) {
    for (int d = 0; d < p->batch_rank; d++)
        if (p->batch[d] > 1 && grad_batch_strides[d] == 0) return false;
    return true;
}

/* For every batch: ga += g @ b^T and gb += a^T @ g (the chapter's section 7.3):
 *   ga[i, p] += sum over j of g[i, j] * b[p, j]
 *   gb[p, j] += sum over i of a[i, p] * g[i, j]
 * ga and gb are contiguous in a's and b's own shapes and are addressed with stride 0 along
 * the batch dims that were broadcast, so the batches that shared an operand all add into the
 * same gradient: the sum over broadcast batch dims, with no extra step. When the fold holds
 * for the gradients too, the backward folds as the forward did: gb's sum over the batches
 * becomes part of one longer sum over the rows. A gradient that nothing has reached yet, and of
 * which each batch has a slice of its own, is stored over (tensor_grads_begin) rather than
 * cleared and added to; for x @ x the first line may store, and the second adds. */
static void matmul_backward(Tensor *out) {
    if (tensor_numel(out) == 0) return; /* an empty result passes no gradient on */
    Tensor *a = out->inputs[0], *b = out->inputs[1];
    int64_t ga_strides[TENSOR_MAX_RANK], gb_strides[TENSOR_MAX_RANK];
    contiguous_strides(a->shape, a->rank, ga_strides);
    contiguous_strides(b->shape, b->rank, gb_strides);
    /* the same plan over the data's strides and over the gradients' (the forward's made it) */
    Plan data, grad, folded_data, folded_grad;
    make_plan("matmul", a, a->strides, b, b->strides, &data);
    make_plan("matmul", a, ga_strides, b, gb_strides, &grad);
    folded_data = data, folded_grad = grad;
    if (fold_into_rows(&folded_data) && fold_into_rows(&folded_grad)) data = folded_data, grad = folded_grad;
    float *ga, *gb; /* NULL for an operand that takes no gradient */
    bool add_a = tensor_grads_begin(1, &a, &(const bool){own_slice_per_batch(&grad, grad.a_batch)}, &ga);
    bool add_b = tensor_grads_begin(1, &b, &(const bool){own_slice_per_batch(&grad, grad.b_batch)}, &gb);
    const float *ad = tensor_data(a), *bd = tensor_data(b), *g = tensor_data(out->grad);
    int64_t m = data.m, k = data.k, n = data.n;
    NdIter it;
    nditer_init(&it, data.batch_rank, data.batch, 5,
                (const int64_t *[]){data.a_batch, data.b_batch, data.out_batch, grad.a_batch, grad.b_batch});
    while (nditer_next(&it)) {
        const float *ab = ad + it.offset[0], *bb = bd + it.offset[1], *gbatch = g + it.offset[2];
        /* g @ b^T: b^T is b read with its row and column strides swapped */
        if (ga)
            kernels()->matmul(gbatch, n, 1, bb, data.b_cs, data.b_rs, ga + it.offset[3], grad.a_rs, grad.a_cs, m, n, k,
                              add_a);
        /* a^T @ g: a^T is a read with its strides swapped */
        if (gb)
            kernels()->matmul(ab, data.a_cs, data.a_rs, gbatch, n, 1, gb + it.offset[4], grad.b_rs, grad.b_cs, k, m, n,
                              add_b);
    }
}

/* ==== 1-D operands, and the entry point =================================================== */

Tensor *tensor_matmul(Tensor *a, Tensor *b) {
    const char *op = "matmul";
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX];
    if (!inputs_valid(op, INPUTS(a, b))) return NULL;
    if (a->rank == 0 || b->rank == 0)
        return tensor_set_error("%s: shapes %s and %s: a rank-0 operand (a scalar) has no matrix dims; use tensor_mul "
                                "to scale",
                                op, shape_format(a->shape, a->rank, sa, sizeof sa),
                                shape_format(b->shape, b->rank, sb, sizeof sb)),
               NULL;
    int64_t k_a = a->shape[a->rank - 1], k_b = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
    if (k_a != k_b)
        return tensor_set_error(
                   "%s: shapes %s and %s do not match: the last dim of the left operand (%lld) must equal the "
                   "%s of the right one (%lld)",
                   op, shape_format(a->shape, a->rank, sa, sizeof sa), shape_format(b->shape, b->rank, sb, sizeof sb),
                   (long long)k_a, b->rank == 1 ? "length" : "second-to-last dim", (long long)k_b),
               NULL;
    if (a->rank >= 2 && b->rank >= 2) return matmul_nd(op, a, b);

    /* numpy's promotion: a 1-D left operand is a row (1, k), a 1-D right one a column (k, 1);
     * the dim added is removed from the result again. Both are reshapes (views). */
    Tensor *a2 = a->rank == 1 ? tensor_reshape(a, (const int64_t[]){1, k_a}, 2) : a;
    Tensor *b2 = b->rank == 1 ? tensor_reshape(b, (const int64_t[]){k_b, 1}, 2) : b;
    Tensor *out = a2 && b2 ? matmul_nd(op, a2, b2) : NULL;
    if (!out) return NULL;
    int64_t shape[TENSOR_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < out->rank - 2; d++) shape[rank++] = out->shape[d];
    if (a->rank > 1) shape[rank++] = out->shape[out->rank - 2]; /* m, unless a was a vector */
    if (b->rank > 1) shape[rank++] = out->shape[out->rank - 1]; /* n, unless b was a vector */
    return tensor_reshape(out, shape, rank);
}

/* ==== for teaching only: the fold into columns that is never valid ======================== */

int64_t matmul_wrong_column_fold(const float *q, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out) {
    const char *op = "matmul_wrong_column_fold";
    if (b < 0 || m < 0 || k < 0 || n < 0)
        return tensor_set_error("%s: b, m, k and n must be >= 0, got %lld, %lld, %lld and %lld", op, (long long)b,
                                (long long)m, (long long)k, (long long)n),
               0;
    if (b * m * n > 0 && (!q || !keys || !out)) return tensor_set_error("%s: q, keys and out must not be NULL", op), 0;
    /* The mistake: read keys (b, k, n) as one (k, b*n) matrix with rows n apart (its rows are
     * really k*n apart per batch), and write each result row of b*n into out with a row
     * stride of n, as if out were (m, n). */
    for (int64_t i = 0; i < b * m * n; i++) out[i] = 0.0f;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < b * n; j++) {
            float s = 0.0f;
            for (int64_t p = 0; p < k; p++) s += q[i * k + p] * keys[p * n + j]; /* stays inside keys */
            out[i * n + j] = s; /* row i overwrites the end of row i - 1; stays inside out */
        }
    /* row i covers positions i*n .. i*n + b*n - 1, so together 0 .. (m-1)*n + b*n - 1: that
     * many are written (no more than b*m*n, since (b-1)(m-1) >= 0 when b, m >= 1), and the
     * rest stay 0 */
    return b > 0 && m > 0 && n > 0 ? (m - 1) * n + b * n : 0;
}

/* ==== this lesson's entries of the table of kernels (kernels.h) ============================ */

KERNELS_LESSON(bmm, .matmul = matmul_reference)
