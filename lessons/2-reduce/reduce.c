/*
 * reduce.c - lesson 2: reductions, forward and backward.
 *
 * Read top to bottom: the reduction kernel that every sum here runs (a loop that walks the
 * input in its memory order), the chapter's row sum (sum_last_dim), the sum over any axis,
 * then mean and the MSE loss as compositions that need no backward of their own.
 * docs/2-reduce.md explains every step, and its section 3.6 what the kernel's loop order buys.
 *
 * Names: x is the input, out the result, g the result's gradient, gx the input's gradient.
 * (..., D) is any number of leading dims, then the last dim of size D; `rows` is the number of
 * such rows, the product of the leading dims.
 */
#include "reduce.h"

#include <stdlib.h>

#include "broadcast.h"

/* ==== the reduction kernel: walk the input in memory order ================================ */

/* The sum of n floats, x[0], x[step], ... With step 1, eight running sums side by side: one
 * running sum must wait for each add to finish before it can start the next (a few cycles
 * each), eight can be added at once, and the compiler turns the eight into vector adds. They
 * run over chunks of 1024 floats, and each chunk's total goes into a double: a float running
 * sum loses more digits the larger it grows (eight of them over 16M floats were off by 5e-4),
 * so the chunks keep each running sum small. */
static float row_sum(const float *x, int64_t n, int64_t step) {
    double total = 0.0;
    int64_t j = 0;
    if (step == 1)
        while (n - j >= 8) {
            float acc[8] = {0};
            int64_t end = n - j > 1024 ? j + 1024 : j + (n - j) / 8 * 8;
            for (; j < end; j += 8)
                for (int k = 0; k < 8; k++) acc[k] += x[j + k];
            total += ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        }
    for (; j < n; j++) total += x[j * step];
    return (float)total;
}

/* out[i] += x_0[i] + ... + x_{k-1}[i] for n floats and k <= 4 rows, eight floats at a time
 * (vector adds, as above). Adding four rows per pass loads and stores out a quarter as often. */
static void add_rows(float *restrict out, const float *const *x, int k, int64_t n) {
    if (k < 4) {
        for (int r = 0; r < k; r++) {
            const float *restrict a = x[r];
            int64_t i = 0;
            for (; i + 8 <= n; i += 8)
                for (int m = 0; m < 8; m++) out[i + m] += a[i + m];
            for (; i < n; i++) out[i] += a[i];
        }
        return;
    }
    const float *restrict a = x[0], *restrict b = x[1], *restrict c = x[2], *restrict d = x[3];
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int m = 0; m < 8; m++) out[i + m] += (a[i + m] + b[i + m]) + (c[i + m] + d[i + m]);
    for (; i < n; i++) out[i] += (a[i] + b[i]) + (c[i] + d[i]);
}

/* out[n - 1 - i] += x[i] for i < n: a row added onto a row that runs the other way (a reversed
 * view summed over its first axis), eight at a time as in add_rows; the compiler loads eight of
 * out at once and reverses them in a register. */
static void add_row_reversed(float *restrict out, const float *restrict x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) out[n - 1 - (i + k)] += x[i + k];
    for (; i < n; i++) out[n - 1 - i] += x[i];
}

/* Adds every element of x into out, which has x's rank and is addressed with out_strides:
 * stride 0 along each summed dim, so every element of a summed dim lands in the same place.
 *
 * The order of the loops decides the speed. Memory arrives in cache lines of 16 floats; a
 * loop whose innermost index walks x with a large stride (the rows of a transposed view)
 * uses one float of each line it fetches. So the dims are first sorted by x's strides, the
 * largest outermost: the innermost loop then walks x's smallest stride, the order in which x
 * lies in memory, whatever view it is. nditer_init_inner merges the dims that can be walked as
 * one and leaves the innermost to one of three plain loops: a row summed into one element
 * (out's stride 0), a row added onto a row (both strides 1), or any other strides. */
static void sum_into(const Tensor *x, float *out, const int64_t *out_strides) {
    int rank = x->rank, order[TENSOR_MAX_RANK];
    for (int k = 0; k < rank; k++) { /* insertion sort of the dims, by |stride|, largest first */
        int m = k;
        while (m > 0 && llabs(x->strides[order[m - 1]]) < llabs(x->strides[k])) {
            order[m] = order[m - 1];
            m--;
        }
        order[m] = k;
    }
    int64_t shape[TENSOR_MAX_RANK], x_strides[TENSOR_MAX_RANK], o_strides[TENSOR_MAX_RANK];
    const float *xs = tensor_data(x);
    for (int k = 0; k < rank; k++) {
        shape[k] = x->shape[order[k]];
        x_strides[k] = x->strides[order[k]];
        o_strides[k] = out_strides[order[k]];
        /* a dim that x walks backwards (a reversed view) is walked forwards from its other end
         * instead, and out's stride turned round with it: the same pairs of elements, and x,
         * which is most of the memory read, is read front to back */
        if (shape[k] > 1 && x_strides[k] < 0) {
            xs += (shape[k] - 1) * x_strides[k];
            out += (shape[k] - 1) * o_strides[k];
            x_strides[k] = -x_strides[k];
            o_strides[k] = -o_strides[k];
        }
    }
    NdIter it;
    int64_t n, step[2];
    nditer_init_inner(&it, rank, shape, 2, (const int64_t *[]){o_strides, x_strides}, &n, step);
    const float *pending[4]; /* rows waiting to be added onto the same row of out */
    float *pending_out = NULL;
    int n_pending = 0;
    while (nditer_next(&it)) {
        float *o = out + it.offset[0];
        const float *row = xs + it.offset[1];
        if (step[0] == 0) {
            o[0] += row_sum(row, n, step[1]);
        } else if (step[0] == 1 && step[1] == 1) {
            if (n_pending == 4 || (n_pending > 0 && o != pending_out)) {
                add_rows(pending_out, pending, n_pending, n);
                n_pending = 0;
            }
            pending[n_pending++] = row;
            pending_out = o;
        } else if (step[0] == -1 && step[1] == 1) { /* a reversed view summed over its first axis */
            add_row_reversed(o - (n - 1), row, n);
        } else {
            for (int64_t i = 0; i < n; i++) o[i * step[0]] += row[i * step[1]];
        }
    }
    if (n_pending > 0) add_rows(pending_out, pending, n_pending, n);
}

/* A contiguous output for summing x over its dims where `summed` is true, keeping them as
 * size 1, and the strides that address it from x's shape (0 along the summed dims). */
static Tensor *reduced_output(Tensor *x, const bool *summed, int64_t *out_strides) {
    int64_t shape[TENSOR_MAX_RANK];
    for (int k = 0; k < x->rank; k++) shape[k] = summed[k] ? 1 : x->shape[k];
    Tensor *out = tensor_zeros(x->ctx, shape, x->rank);
    if (!out) return NULL;
    for (int k = 0; k < x->rank; k++) out_strides[k] = summed[k] ? 0 : out->strides[k];
    return out;
}

/* ==== sum_last_dim: the chapter's row sum ================================================= */

/* out[p] = sum over j of x[p, j], so d out[p] / d x[p, j] = 1: the gradient of row p's sum
 * goes, whole, to every element of row p. */
static void sum_last_dim_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t d = x->shape[x->rank - 1], rows = tensor_numel(out);
    float *gx = tensor_grad_data(x); /* contiguous, (..., D): row p starts at p * d */
    const float *g = tensor_data(out->grad);
    for (int64_t p = 0; p < rows; p++)
        for (int64_t j = 0; j < d; j++) gx[p * d + j] += g[p]; /* broadcast g[p] back over the row */
}

Tensor *tensor_sum_last_dim(Tensor *x) {
    if (!x) return tensor_null_input("sum_last_dim", "x"), NULL;
    if (x->rank == 0) {
        tensor_set_error("sum_last_dim: a rank-0 tensor (a scalar) has no last dim to sum over");
        return NULL;
    }
    /* Keep the dim: (..., D) -> (..., 1), not (...). The chapter reads row p at x[p * d + j];
     * sum_into reads through x's strides instead, so any view works, and in memory order. */
    bool summed[TENSOR_MAX_RANK] = {false};
    summed[x->rank - 1] = true;
    int64_t out_strides[TENSOR_MAX_RANK];
    Tensor *out = reduced_output(x, summed, out_strides);
    if (!out) return NULL;
    sum_into(x, tensor_data(out), out_strides);
    return tensor_record(out, "sum_last_dim", sum_last_dim_backward, 1, &x);
}

/* ==== sum over any axis ==================================================================  */

/* numpy's axis convention: -1 is the last axis, -rank the first. */
static bool normalize_axis(const char *op, const Tensor *x, int axis, int *out) {
    int a = axis < 0 ? axis + x->rank : axis;
    if (a < 0 || a >= x->rank) {
        tensor_set_error("%s: axis %d is out of bounds for array of dimension %d", op, axis, x->rank);
        return false;
    }
    *out = a;
    return true;
}

/* The view of x without its axis a, which has size 1. The elements and their row-major
 * order do not change, so the gradients line up one to one. */
static void squeeze_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    float *gx = tensor_grad_data(x);
    const float *g = tensor_data(out->grad);
    for (int64_t i = 0; i < tensor_numel(out); i++) gx[i] += g[i];
}

static Tensor *squeeze(Tensor *x, int a) {
    int64_t shape[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
    for (int k = 0, m = 0; k < x->rank; k++) {
        if (k == a) continue;
        shape[m] = x->shape[k];
        strides[m++] = x->strides[k];
    }
    Tensor *view = tensor_as_strided(x, shape, x->rank - 1, strides, x->offset);
    return tensor_record(view, "squeeze", squeeze_backward, 1, &x);
}

/* A reduction's backward is a broadcast: each element of x gets the gradient of the output
 * element it was summed into. Reading g with stride 0 along the summed dims (out has size 1
 * there) hands the same g to all of them: lesson 1's mechanism, strided_accumulate. */
static void sum_axis_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t g_strides[TENSOR_MAX_RANK], gx_strides[TENSOR_MAX_RANK];
    for (int k = 0; k < x->rank; k++) g_strides[k] = out->shape[k] == 1 ? 0 : out->grad->strides[k];
    contiguous_strides(x->shape, x->rank, gx_strides);
    strided_accumulate(x->rank, x->shape, tensor_grad_data(x), gx_strides, tensor_data(out->grad), g_strides);
}

Tensor *tensor_sum_axis(Tensor *x, int axis, bool keepdim) {
    if (!x) return tensor_null_input("sum_axis", "x"), NULL;
    int a;
    if (!normalize_axis("sum_axis", x, axis, &a)) return NULL;
    /* Summing over axis a is summing x onto its own shape with that axis set to 1: what lesson
     * 1's sum_to_shape computes, here with the kernel that walks x in memory order. */
    bool summed[TENSOR_MAX_RANK] = {false};
    summed[a] = true;
    int64_t out_strides[TENSOR_MAX_RANK];
    Tensor *out = reduced_output(x, summed, out_strides);
    if (!out) return NULL;
    sum_into(x, tensor_data(out), out_strides);
    out = tensor_record(out, "sum_axis", sum_axis_backward, 1, &x);
    return keepdim || !out ? out : squeeze(out, a);
}

/* ==== compositions: no new kernel, no new backward ======================================== */

Tensor *tensor_mean(Tensor *x) {
    if (!x) return tensor_null_input("mean", "x"), NULL;
    return tensor_mul_scalar(tensor_sum(x), 1.0f / (float)tensor_numel(x));
}

Tensor *tensor_mean_axis(Tensor *x, int axis, bool keepdim) {
    if (!x) return tensor_null_input("mean_axis", "x"), NULL;
    int a;
    if (!normalize_axis("mean_axis", x, axis, &a)) return NULL;
    return tensor_mul_scalar(tensor_sum_axis(x, a, keepdim), 1.0f / (float)x->shape[a]);
}

Tensor *tensor_mse_loss(Tensor *pred, Tensor *target) {
    if (!pred) return tensor_null_input("mse_loss", "pred"), NULL;
    if (!target) return tensor_null_input("mse_loss", "target"), NULL;
    if (pred->ctx != target->ctx) {
        tensor_set_error("mse_loss: pred and target belong to different contexts");
        return NULL;
    }
    if (!shape_equal(pred->shape, pred->rank, target->shape, target->rank)) {
        char sp[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
        tensor_set_error("mse_loss: pred has shape %s but target has shape %s; they must be the same",
                         shape_format(pred->shape, pred->rank, sp, sizeof sp),
                         shape_format(target->shape, target->rank, st, sizeof st));
        return NULL;
    }
    /* sum((pred - target)^2) / N, op by op as the chapter writes it */
    Tensor *squared = tensor_pow_scalar(tensor_sub(pred, target), 2.0f);
    return tensor_mul_scalar(tensor_sum(squared), 1.0f / (float)tensor_numel(pred));
}
