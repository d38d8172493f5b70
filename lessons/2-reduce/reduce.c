/*
 * reduce.c - lesson 2: reductions, forward and backward.
 *
 * Read top to bottom: the one loop every sum here runs (the core's odometer, adding each
 * element of x into the output element it belongs to), the chapter's row sum (sum_last_dim),
 * the sum over any axis, then mean and the MSE loss as compositions that need no backward of
 * their own. docs/2-reduce.md explains every step; its "How fast" section measures the core's
 * fast kernel (common/tensor_fast.c), which the table (kernels.h) hands the core's loop to.
 *
 * Names: x is the input, out the result, g the result's gradient, gx the input's gradient.
 * (..., D) is any number of leading dims, then the last dim of size D; `rows` is the number of
 * such rows, the product of the leading dims.
 */
#include "reduce.h"

#include "broadcast.h"

/* ==== the loop: every element of x added into its place in out ============================ */

/* out is addressed with out_strides from x's shape: stride 0 along each summed dim, so every
 * element of a summed dim lands in the same place. The core's strided_accumulate walks x with
 * the odometer and does out[...] += x[...] (lesson 1's mechanism, turned around). */
static void sum_into(const Tensor *x, float *out, const int64_t *out_strides) {
    strided_accumulate(x->rank, x->shape, out, out_strides, tensor_data(x), x->strides);
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
    if (x->rank == 0)
        return tensor_set_error("sum_last_dim: a rank-0 tensor (a scalar) has no last dim to sum over"), NULL;
    /* Keep the dim: (..., D) -> (..., 1), not (...). The chapter reads row p at x[p * d + j];
     * sum_into reads through x's strides instead, so any view works. */
    bool summed[TENSOR_MAX_RANK] = {false};
    summed[x->rank - 1] = true;
    int64_t out_strides[TENSOR_MAX_RANK];
    Tensor *out = reduced_output(x, summed, out_strides);
    if (!out) return NULL;
    sum_into(x, tensor_data(out), out_strides);
    return tensor_record(out, "sum_last_dim", sum_last_dim_backward, 1, &x);
}

/* ==== sum over any axis ==================================================================  */

/* The view of x without its axis a, which has size 1. The elements and their row-major
 * order do not change, so the gradients line up one to one. */
static void squeeze_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    float *gx = tensor_grad_data(x);
    const float *g = tensor_data(out->grad);
    for (int64_t i = 0, n = tensor_numel(out); i < n; i++) gx[i] += g[i]; /* n hoisted: the stores may alias */
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
    if (!axis_normalize("sum_axis", axis, x->rank, &a)) return NULL;
    /* Summing over axis a is summing x onto its own shape with that axis set to 1: what lesson
     * 1's sum_to_shape computes, through the same loop. */
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
    if (!axis_normalize("mean_axis", axis, x->rank, &a)) return NULL;
    return tensor_mul_scalar(tensor_sum_axis(x, a, keepdim), 1.0f / (float)x->shape[a]);
}

Tensor *tensor_mse_loss(Tensor *pred, Tensor *target) {
    char sp[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
    if (!inputs_valid("mse_loss", INPUTS(pred, target))) return NULL;
    if (!shape_equal(pred->shape, pred->rank, target->shape, target->rank))
        return tensor_set_error("mse_loss: pred has shape %s but target has shape %s; they must be the same",
                                shape_format(pred->shape, pred->rank, sp, sizeof sp),
                                shape_format(target->shape, target->rank, st, sizeof st)),
               NULL;
    /* sum((pred - target)^2) / N, op by op as the chapter writes it */
    Tensor *squared = tensor_pow_scalar(tensor_sub(pred, target), 2.0f);
    return tensor_mul_scalar(tensor_sum(squared), 1.0f / (float)tensor_numel(pred));
}
