/*
 * gather.c - lesson 5: gather_rows (the embedding lookup) and its scatter-add backward.
 *
 * Read top to bottom: the bounds check, the gather and its backward, then the batched
 * embedding as a composition. The gather computes through the table (kernels.h), whose fast
 * kernel (gather_fast.c) copies contiguous rows with memcpy and a transposed table in slabs.
 * docs/5-gather.md explains every step.
 *
 * Names: the table has V rows of D; indices[i] is the row that output row i copies; g is the
 * gradient of the output, gtable the table's.
 */
#include "gather.h"

#include <string.h>

#include "kernels.h"
#include "permute.h"

/* Every index must name a row of the table. All of them are checked before anything is read,
 * so a bad index can never cause an out-of-bounds read. The message gives the position in the
 * indices' own shape when there is one: (1,0) for batched indices, 3 for a flat list. */
static bool indices_in_range(const char *op, const int64_t *indices, int64_t n, int64_t v, const int64_t *index_shape,
                             int index_rank) {
    for (int64_t i = 0; i < n; i++) {
        if (indices[i] >= 0 && indices[i] < v) continue;
        char where[SHAPE_STR_MAX], valid[64];
        if (index_shape) {
            int64_t position[TENSOR_MAX_RANK];
            unravel_index(i, index_shape, index_rank, position);
            shape_format(position, index_rank, where, sizeof where);
        } else {
            snprintf(where, sizeof where, "%lld", (long long)i);
        }
        if (v > 0) snprintf(valid, sizeof valid, "valid: 0 to %lld", (long long)v - 1);
        else snprintf(valid, sizeof valid, "it has no rows");
        tensor_set_error("%s: index %lld at position %s is out of range for a table of %lld rows (%s)", op,
                         (long long)indices[i], where, (long long)v, valid);
        return false;
    }
    return true;
}

/* The reference kernel: out[i, :] = table[indices[i], :], the table read through its row and
 * column strides (any view works), out contiguous (n, D). */
void gather_rows_reference(int64_t v, int64_t d, const float *table, int64_t rs, int64_t cs, const int64_t *indices,
                           int64_t n, float *out) {
    (void)v; /* every index is in range: the op checked them */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) out[i * d + j] = table[indices[i] * rs + j * cs];
}

/* Scatter-add: output row i came from table row indices[i], so its gradient goes back there.
 * A row that was gathered twice receives both gradients: +=, never =. */
static void gather_rows_backward(Tensor *out) {
    Tensor *table = out->inputs[0];
    const int64_t *indices = out->saved;
    int64_t n = out->shape[0], d = out->shape[1];
    float *gtable = tensor_grad_data(table); /* contiguous (V, D) */
    const float *g = tensor_data(out->grad);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) gtable[indices[i] * d + j] += g[i * d + j];
}

Tensor *tensor_gather_rows(Tensor *table, const int64_t *indices, int64_t n) {
    const char *op = "gather_rows";
    char s[SHAPE_STR_MAX];
    if (!table) return tensor_null_input(op, "table"), NULL;
    if (table->rank != 2)
        return tensor_set_error("%s: the table must have shape (V, D), got %s", op,
                                shape_format(table->shape, table->rank, s, sizeof s)),
               NULL;
    if (n < 0 || (n > 0 && !indices))
        return tensor_set_error("%s: %lld indices %s", op, (long long)n, n < 0 ? "is not a count" : "given as NULL"),
               NULL;
    int64_t v = table->shape[0], d = table->shape[1];
    if (!indices_in_range(op, indices, n, v, NULL, 0)) return NULL;
    if (shape_numel((const int64_t[]){n, d}, 2) < 0) /* a table expanded to D = 2^62, say */
        return tensor_set_error("%s: the result %s has too many elements", op,
                                shape_format((const int64_t[]){n, d}, 2, s, sizeof s)),
               NULL;
    Tensor *out = tensor_empty(table->ctx, (const int64_t[]){n, d}, 2); /* every element is written below */
    int64_t *saved = ctx_alloc(table->ctx, (size_t)(n > 0 ? n : 1) * sizeof *saved); /* for the backward */
    if (!out || !saved) return NULL;
    if (n > 0) memcpy(saved, indices, (size_t)n * sizeof *saved);
    kernels()->gather_rows(v, d, tensor_data(table), table->strides[0], table->strides[1], indices, n,
                           tensor_data(out));
    out->saved = saved;
    return tensor_record(out, op, gather_rows_backward, 1, &table);
}

Tensor *tensor_embedding(Tensor *table, const int64_t *indices, const int64_t *index_shape, int index_rank) {
    const char *op = "embedding";
    if (!table) return tensor_null_input(op, "table"), NULL;
    if (!shape_is_valid(op, index_shape, index_rank)) return NULL;
    if (index_rank + 1 > TENSOR_MAX_RANK)
        return tensor_set_error("%s: indices of rank %d give a result of rank %d, above the maximum %d", op, index_rank,
                                index_rank + 1, TENSOR_MAX_RANK),
               NULL;
    int64_t n = shape_numel(index_shape, index_rank), shape[TENSOR_MAX_RANK];
    char s[SHAPE_STR_MAX];
    if (n < 0)
        return tensor_set_error("%s: index shape %s has too many elements", op,
                                shape_format(index_shape, index_rank, s, sizeof s)),
               NULL;
    if (table->rank != 2)
        return tensor_set_error("%s: the table must have shape (V, D), got %s", op,
                                shape_format(table->shape, table->rank, s, sizeof s)),
               NULL;
    if (n > 0 && !indices) return tensor_set_error("%s: %lld indices given as NULL", op, (long long)n), NULL;
    if (!indices_in_range(op, indices, n, table->shape[0], index_shape, index_rank)) return NULL;
    for (int k = 0; k < index_rank; k++) shape[k] = index_shape[k];
    shape[index_rank] = table->shape[1];
    if (shape_numel(shape, index_rank + 1) < 0)
        return tensor_set_error("%s: the result %s has too many elements", op,
                                shape_format(shape, index_rank + 1, s, sizeof s)),
               NULL;
    Tensor *rows = tensor_gather_rows(table, indices, n); /* (n, D) */
    if (!rows) return NULL;
    return tensor_reshape(rows, shape, index_rank + 1); /* (..., D): a view, no copy */
}

/* ==== this lesson's entries of the table of kernels (kernels.h) ============================ */

KERNELS_LESSON(gather, .gather_rows = gather_rows_reference)
