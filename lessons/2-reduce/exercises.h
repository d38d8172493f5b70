/*
 * exercises.h - lesson 2's exercises: what each function must do. You edit exercises.c;
 * this file, the tests and the points stay as the course ships them.
 *
 * Check your work with `make lesson2 test`. The "Exercises" section of docs/2-reduce.md lists
 * them with their points.
 */
#ifndef LESSON2_EXERCISES_H
#define LESSON2_EXERCISES_H

#include <stdint.h>

#include "exercise.h"
#include "tensor.h"

/* 2.1 (the chapter's exercise 2): the mean of each row, (B, D) -> (B, 1), built from
 * tensor_sum_last_dim and tensor_mul_scalar only (docs/2-reduce.md 3.2-3.3). Like
 * sum_last_dim, it must work for any rank from 1 up: (..., D) -> (..., 1), where D is the
 * last dim, x->shape[x->rank - 1]. Return the result, or NULL if an op failed. Its gradient
 * then comes for free; the docs ask you to derive it on paper too. */
Tensor *ex2_1_row_mean(Tensor *x);

/* 2.2: the backward of sum_last_dim (docs/2-reduce.md 3.2). x had `rows` rows of d elements
 * (row-major), and out = sum_last_dim(x) had one element per row; g[p] is the gradient of
 * out[p]. ADD (+=, do not overwrite: gx may already hold gradients from elsewhere) the
 * gradient of every x[p, j] into gx[p * d + j]. rows or d may be 0 (then there is nothing to
 * do, and g may be NULL when rows is 0). */
void ex2_2_sum_last_dim_backward(const float *g, int64_t rows, int64_t d, float *gx);

/* 2.3: a reduction over any axis (docs/2-reduce.md 3.4). x is contiguous with shape
 * `shape` (rank dims, 1 to 8); 0 <= axis < rank. Overwrite out (which may hold garbage) with x
 * summed over that axis, the axis removed: out has the shape of x without dim `axis`, in
 * row-major order. Dims may be 0: an axis of length 0 sums nothing, so out is all zeros. */
void ex2_3_sum_axis(const float *x, const int64_t *shape, int rank, int axis, float *out);

/* 2.4: the mean squared error, the chapter's way (docs/2-reduce.md 3.3): from tensor_sub,
 * tensor_pow_scalar, tensor_sum and tensor_mul_scalar, mean((pred - target)^2) over all
 * elements. pred and target have the same shape. Return the rank-0 loss, or NULL. */
Tensor *ex2_4_mse_loss(Tensor *pred, Tensor *target);

#endif /* LESSON2_EXERCISES_H */
