/*
 * permute.h - lesson 4: permute, views and contiguous copies, forward and backward
 * (docs/4-permute.md).
 *
 * permute reorders a tensor's dims as a view: it swaps entries of the shape and the strides
 * and moves no data. The copy that does move data is the core's tensor_contiguous. reshape
 * only reinterprets: it keeps the row-major order of the elements and changes the shape.
 */
#ifndef PERMUTE_H
#define PERMUTE_H

#include "tensor.h"

/* A list of axes, inline: tensor_permute(x, AXES(1, 0)). */
#define AXES(...) ((const int[]){__VA_ARGS__}), (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

/* ---- index arithmetic (pure functions) ---------------------------------------------- */

/* Checks that dims (n of them) is a permutation of 0..rank-1, with numpy's negative axes
 * (-1 is the last) turned into their positive form in out (which may be dims itself). Returns
 * 0, or -1 with an error naming `op`: a rank outside 0..TENSOR_MAX_RANK, a wrong length, an
 * axis out of range, a repeated axis, a NULL dims or out. */
int normalize_permutation(const char *op, const int *dims, int n, int rank, int *out);

/* inv[dims[i]] = i: the permutation that undoes dims. If dims is not a valid permutation
 * (normalize_permutation's rules) or inv is NULL, inv is left as it was and an error is
 * recorded. */
void inverse_permutation(const int *dims, int n, int *inv);

/* The chapter's flat-index map for x permuted by dims: map[t] = the row-major flat index in
 * x (of shape `shape`) of the element that element t of the permuted tensor reads. map has
 * room for numel(shape) entries. Returns 0, or -1 with an error for an invalid permutation. */
int permute_map(const int64_t *shape, int rank, const int *dims, int64_t *map);

/* ---- ops ------------------------------------------------------------------------------ */

/* numpy's transpose(x, dims): output dim i is input dim dims[i]. A view (no copy): the shape
 * and strides are reordered, the offset and storage are x's. Backward: the gradient goes back
 * through the inverse permutation, which the code does by writing it through the same
 * permuted strides into x's gradient. */
Tensor *tensor_permute(Tensor *x, const int *dims, int n);
/* Swaps two dims (negative allowed): a permute. */
Tensor *tensor_transpose(Tensor *x, int dim0, int dim1);

/* The same elements in the same row-major order, read as `shape` (one dim may be -1: it is
 * inferred). A view when x's strides allow it, else a copy; either way, changing the shape
 * never reorders anything. Backward: the gradient, read in the same order, reshaped back. */
Tensor *tensor_reshape(Tensor *x, const int64_t *shape, int rank);

#endif /* PERMUTE_H */
