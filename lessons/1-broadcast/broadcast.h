/*
 * broadcast.h - lesson 1: broadcasting, forward and backward (docs/1-broadcast.md).
 *
 * numpy's rule: align the two shapes on the right; each pair of dims must be equal or one of
 * them 1 (a missing dim counts as 1); the result takes the larger. A broadcast input is read
 * through a stride-0 view, and its gradient is summed back onto its own shape.
 */
#ifndef BROADCAST_H
#define BROADCAST_H

#include "tensor.h"

/* ---- shape arithmetic (pure functions) ---------------------------------------------- */

/* The broadcast shape of a and b, written to out (room for TENSOR_MAX_RANK dims) and
 * *out_rank. Returns 0, or -1 with an error if the shapes cannot broadcast:
 * "broadcast_shapes: operands could not be broadcast together with shapes (2,3) (2,4)", or if
 * the shape they broadcast to has too many elements to count (an element count past int64). */
int broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank);

/* Strides that read a tensor of shape src (with strides src_strides) as if it had the larger
 * shape target: aligned on the right, a dim that is broadcast (or missing) gets stride 0.
 * Writes target_rank strides. Returns 0, or -1 with an error if src does not broadcast to
 * target (broadcasting only ever grows a tensor: (3,) -> (2,3), never (2,3) -> (3,)). */
int broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                      int target_rank, int64_t *out_strides);

/* The chapter's index map: map[t] = the row-major flat index of the src element that
 * element t of target reads. map has room for numel(target) entries. Returns 0 or -1. */
int broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map);

/* ---- ops (each forward sits next to its backward in broadcast.c) ---------------------- */

/* x read as the larger shape, as a stride-0 view: no copy. Backward: sum back to x's shape. */
Tensor *tensor_expand(Tensor *x, const int64_t *shape, int rank);
/* The reverse of expand: sums x over the dims where `shape` was broadcast to x's shape.
 * Backward: expand the gradient back. (PyTorch calls it sum_to_size.) */
Tensor *tensor_sum_to_shape(Tensor *x, const int64_t *shape, int rank);
/* Sum of every element, a rank-0 tensor: sum_to_shape with the empty shape (). */
Tensor *tensor_sum(Tensor *x);

/* Elementwise with broadcasting. Backward: each input's gradient is summed onto its shape. */
Tensor *tensor_add(Tensor *a, Tensor *b);
Tensor *tensor_sub(Tensor *a, Tensor *b);
Tensor *tensor_mul(Tensor *a, Tensor *b);
Tensor *tensor_div(Tensor *a, Tensor *b); /* IEEE: x/0 is inf or nan, as in numpy */

/* With a scalar: add and mul broadcast a rank-0 tensor, so they need no backward of their
 * own. pow raises each element to the power p; its backward is p * x^(p-1). */
Tensor *tensor_add_scalar(Tensor *x, float s);
Tensor *tensor_mul_scalar(Tensor *x, float s);
Tensor *tensor_pow_scalar(Tensor *x, float p);

#endif /* BROADCAST_H */
