/*
 * bmm.h - lesson 6: matrix multiplication of 2-D, 3-D and N-D tensors, with broadcast batch
 * dims, forward and backward (docs/6-bmm.md).
 *
 * numpy's rule: only the last two dims multiply, (..., m, k) @ (..., k, n) -> (..., m, n). The
 * dims before them are batch dims: they broadcast by lesson 1's rule, compared dim by dim. A
 * 1-D left operand is a row (1, k) and a 1-D right operand a column (k, 1); the added dim is
 * removed from the result.
 *
 * Letters: m rows and k columns on the left, k rows and n columns on the right; b is the
 * number of batches.
 */
#ifndef BMM_H
#define BMM_H

#include <stdbool.h>

#include "tensor.h"

/* a @ b with numpy's semantics. Operands may be any views (transposed, expanded, offset); the
 * result is contiguous. Errors name both shapes: a rank-0 operand, inner dims that differ,
 * batch dims that do not broadcast. Backward: da = g @ b^T and db = a^T @ g for every batch,
 * summed over the batch dims an operand was broadcast along. Every 2-D product but the tiniest
 * runs on gemm.c's blocked, vectorised kernel (section 7.7), forward and backward. */
Tensor *tensor_matmul(Tensor *a, Tensor *b);

/* The one predicate behind the only fold this library does. A batch of products a_i @ b can
 * be computed as one (b*m, k) @ (k, n) product when the right operand is the same for every
 * batch (its batch strides are all 0, or the batch dim has size 1) and the left operand's
 * batch dims and row dim merge into one dim (lesson 4's dims_merge: each dim's stride is its
 * inner neighbour's size times stride, or its size is 1; a transposed left operand fails). a
 * and b are the operands after 1-D promotion, with the same number of batch dims, already
 * broadcast to `batch`. Exposed for the tests and the docs. False for no batch dims
 * (batch_rank 0), a batch_rank above TENSOR_MAX_RANK or a NULL array. */
bool matmul_folds_into_rows(int batch_rank, const int64_t *batch, const int64_t *a_batch_strides,
                            const int64_t *b_batch_strides, int64_t m, int64_t a_row_stride);

/* For teaching only: seed 002's invalid fold, kept so the walk-through can show what it does.
 * q (m, k), contiguous, is shared by every batch; keys (b, k, n) is contiguous, batch-major.
 * It multiplies q by keys read as one (k, b*n) matrix whose rows are n apart, and writes rows of
 * b*n into out with a row stride of n: rows overlap, later ones overwrite earlier ones, and
 * the tail is never written. Returns how many elements of out (b*m*n) it wrote. Never use it.
 * A negative size, or a NULL array when there is something to write, writes nothing and
 * returns 0 with an error. */
int64_t matmul_wrong_column_fold(const float *q, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out);

#endif /* BMM_H */
