/*
 * exercises.c - lesson 2's exercises. This is the file you edit.
 *
 * Each function below is a stub: it says what to do, where the lesson explains it, and calls
 * EXERCISE_TODO() so the tests report it as TODO rather than wrong. Delete that line (and the
 * (void) casts) when you start, then run `make lesson2 test` to check your answer.
 * 2.1 and 2.4 are compositions of library ops (tensor.h, broadcast.h, reduce.h); 2.2 and 2.3
 * are plain C loops.
 */
#include "broadcast.h"
#include "exercises.h"
#include "reduce.h"

/* 2.1: the mean of each row, (B, D) -> (B, 1), from tensor_sum_last_dim and tensor_mul_scalar
 * (docs/2-reduce.md 3.2-3.3). D is x->shape[x->rank - 1]. */
Tensor *ex2_1_row_mean(Tensor *x) {
    EXERCISE_TODO();
    (void)x;
    return NULL;
}

/* 2.2: sum_last_dim's backward (docs/2-reduce.md 3.2): every element of row p gets g[p].
 * Add into gx; never overwrite it. */
void ex2_2_sum_last_dim_backward(const float *g, int64_t rows, int64_t d, float *gx) {
    EXERCISE_TODO();
    (void)g, (void)rows, (void)d, (void)gx;
}

/* 2.3: sum a contiguous x over one axis (docs/2-reduce.md 3.4). Hint: split the shape into
 * the dims before the axis (`outer` rows), the axis (`n` long) and the dims after it (`inner`
 * consecutive floats); then out[o * inner + i] = sum over k of x[(o * n + k) * inner + i]. */
void ex2_3_sum_axis(const float *x, const int64_t *shape, int rank, int axis, float *out) {
    EXERCISE_TODO();
    (void)x, (void)shape, (void)rank, (void)axis, (void)out;
}

/* 2.4: mean((pred - target)^2), op by op: tensor_sub, tensor_pow_scalar, tensor_sum,
 * tensor_mul_scalar (docs/2-reduce.md 3.3). */
Tensor *ex2_4_mse_loss(Tensor *pred, Tensor *target) {
    EXERCISE_TODO();
    (void)pred, (void)target;
    return NULL;
}
