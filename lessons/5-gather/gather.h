/*
 * gather.h - lesson 5: gather_rows, the embedding lookup, and its scatter-add backward
 * (docs/5-gather.md).
 *
 * A table of V rows (one vector of D numbers per word, say) and a list of N row indices give
 * the N rows they name: out[i, :] = table[indices[i], :]. A row named twice is read twice, so
 * in the backward it receives two gradients, added (+=, never =).
 *
 * Indices are int64_t, 0 <= index < V. Negative indices are errors (as in PyTorch's embedding;
 * numpy's take would wrap them around), and nothing is ever read out of bounds.
 */
#ifndef GATHER_H
#define GATHER_H

#include "tensor.h"

/* The chapter's op: table (V, D) and n indices -> (n, D), a new contiguous tensor. The table
 * may be any view: a transposed one (tensor_permute) passes gradients on to what it views.
 * n = 0 gives (0, D). Backward: scatter-add, each
 * output row's gradient added into the table row it came from. Errors name the index, its
 * position and V. */
Tensor *tensor_gather_rows(Tensor *table, const int64_t *indices, int64_t n);

/* Batched indices, as an embedding layer takes them: indices of shape `index_shape` (rank 0
 * to 7; for example (B, T): B sentences of T words) -> (..., D), here (B, T, D). A composition:
 * gather the rows of the flattened indices, then reshape (lesson 4). A bad index is reported
 * at its position in index_shape, (1,0) say. */
Tensor *tensor_embedding(Tensor *table, const int64_t *indices, const int64_t *index_shape, int index_rank);

#endif /* GATHER_H */
