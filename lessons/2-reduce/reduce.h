/*
 * reduce.h - lesson 2: reductions (归约), forward and backward (docs/2-reduce.md).
 *
 * A reduction merges many numbers into fewer. Its backward is a broadcast: each input element
 * gets the gradient of the output element it was summed into. The whole-tensor sum,
 * tensor_sum, and the general tensor_sum_to_shape come from lesson 1 (broadcast.h): the
 * backward of broadcasting is a reduction, and the two share one mechanism.
 *
 * Shapes: (B, D) is B rows of D; (..., D) is any number of leading dims, then D.
 */
#ifndef REDUCE_H
#define REDUCE_H

#include <stdbool.h>

#include "tensor.h"

/* Sum over the last dim, keeping it: (..., D) -> (..., 1). Backward: each row's gradient is
 * added to every element of that row. An error for a rank-0 input, which has no last dim. */
Tensor *tensor_sum_last_dim(Tensor *x);

/* Sum over one axis, as numpy's x.sum(axis, keepdims): axis may be negative (-1 is the last).
 * keepdim keeps the summed axis as size 1; otherwise a view (op "squeeze") drops it. Built on
 * lesson 1's tensor_sum_to_shape, so its backward is the broadcast back. */
Tensor *tensor_sum_axis(Tensor *x, int axis, bool keepdim);

/* Means, by composition: a sum, then a multiply by 1/N. No kernel and no backward of their
 * own. The mean of an empty tensor is nan (0 * 1/0), as in numpy and PyTorch. */
Tensor *tensor_mean(Tensor *x);
Tensor *tensor_mean_axis(Tensor *x, int axis, bool keepdim);

/* The mean squared error, the chapter's way: mean((pred - target)^2) from sub, pow, sum and
 * the scalar multiply. pred and target must have the same shape. */
Tensor *tensor_mse_loss(Tensor *pred, Tensor *target);

#endif /* REDUCE_H */
