/*
 * gather.c - lesson 5: gather_rows (the embedding lookup) and its scatter-add backward.
 *
 * Read top to bottom: the bounds check, the gather and its backward, then the batched
 * embedding as a composition. docs/5-gather.md explains every step.
 *
 * Names: the table has V rows of D; indices[i] is the row that output row i copies; g is the
 * gradient of the output, gtable the table's.
 */
#include "gather.h"

#include <stdlib.h>
#include <string.h>

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

/* o[i, :] = table[indices[i], :] for i < n (o is contiguous, (n, D) with D > 0; the indices
 * are checked). The table is read through its strides, so any view works; how fast depends on
 * its layout:
 *   - rows contiguous (stride 1 along a row; the usual case, and a table expanded from (1, D)):
 *     each row is one memcpy;
 *   - stride 0 along a row (expanded from (V, 1)): each row is one value, repeated;
 *   - a transposed table, whose rows step over a cache line or more per element: reading a row
 *     reads a cache line per float, about 6 ns per float here. With many indices (n >= V/16)
 *     the table is instead transposed into row-major order (the core's tiled transpose, about
 *     0.5 ns per float) one slab of rows at a time, small enough to stay in the cache, and every
 *     output row whose index falls in the slab is copied from there. The indices are first
 *     sorted into slabs (a counting sort). The output rows are then written in the order of
 *     their indices, which the cache cannot predict: into a result larger than the cache they
 *     go with streaming stores (copy_stream), which do not read each line before writing it.
 *     (Transposing the whole table first and then copying the rows in order, as this function
 *     did before, took 1.9 to 2.3 times as long as a gather from a contiguous table; this way
 *     takes 1.3 to 1.7 times: make lesson5 bench);
 *   - anything else: element by element, through the strides. */
enum {
    TRANSPOSE_FIRST = 16,    /* transpose a transposed table when n >= V / TRANSPOSE_FIRST */
    SLAB_BYTES = 256 << 10,  /* the slab of the table transposed at a time */
    STREAM_ROWS = 1 << 20,   /* results of more bytes than this are written with copy_stream */
};

static void copy_rows(const Tensor *table, const int64_t *indices, int64_t n, float *o) {
    int64_t v = table->shape[0], d = table->shape[1], row_step = table->strides[0], col_step = table->strides[1];
    const float *t = tensor_data(table);
    size_t row_bytes = (size_t)d * sizeof(float);
    if (col_step == 1 || d == 1) {
        for (int64_t i = 0; i < n; i++) memcpy(o + i * d, t + indices[i] * row_step, row_bytes);
        return;
    }
    if (col_step == 0) {
        for (int64_t i = 0; i < n; i++) {
            float value = t[indices[i] * row_step];
            for (int64_t j = 0; j < d; j++) o[i * d + j] = value;
        }
        return;
    }
    /* (a dim of size 1 may have any stride, so row_step counts only when v > 1) */
    bool transposed = v > 1 && row_step != 0 && llabs(row_step) < llabs(col_step) && llabs(col_step) >= 16;
    /* one scratch copy per call, freed below (never one per row), on 64-byte cache lines so that
     * a large copy can stream them (strided_copy) */
    int64_t slab = SLAB_BYTES / (int64_t)sizeof(float) / d; /* table rows per slab, at least 16 */
    slab = slab < 16 ? 16 : slab > v ? v : slab;
    bool many = transposed && n > 0 && n >= v / TRANSPOSE_FIRST && slab <= INT64_MAX / d / 4;
    /* scratch, allocated once per call (never per row): the slab, on 64-byte lines; the output
     * rows sorted by index; where each slab's rows start in that order */
    float *block = many ? aligned_alloc(64, ((size_t)(slab * d) * sizeof(float) + 63) / 64 * 64) : NULL;
    int64_t *order = block ? malloc((size_t)n * sizeof *order) : NULL;
    int64_t *start = order ? calloc((size_t)v + 1, sizeof *start) : NULL;
    if (start) {
        for (int64_t i = 0; i < n; i++) start[indices[i] + 1]++; /* count each table row's uses ... */
        for (int64_t r = 0; r < v; r++) start[r + 1] += start[r];  /* ... where row r's uses begin ... */
        for (int64_t i = 0; i < n; i++) order[start[indices[i]]++] = i; /* ... and place them: start[r] is now their end */
        bool stream = (uint64_t)n * (uint64_t)row_bytes > STREAM_ROWS;
        for (int64_t r0 = 0; r0 < v; r0 += slab) {
            int64_t rows = v - r0 < slab ? v - r0 : slab;
            int64_t first = r0 > 0 ? start[r0 - 1] : 0, last = start[r0 + rows - 1];
            if (first == last) continue; /* no index falls in this slab */
            strided_copy(2, (const int64_t[]){rows, d}, block, (const int64_t[]){d, 1}, t + r0 * row_step,
                         table->strides);
            for (int64_t p = first; p < last; p++) {
                int64_t i = order[p];
                const float *row = block + (indices[i] - r0) * d;
                if (stream) copy_stream(o + i * d, row, d);
                else memcpy(o + i * d, row, row_bytes);
            }
        }
        if (stream) copy_stream_end();
    }
    free(start);
    free(order);
    free(block);
    if (start) return; /* else out of memory for the scratch: element by element, below */
    for (int64_t i = 0; i < n; i++) {
        const float *row = t + indices[i] * row_step; /* the row, through the table's strides */
        for (int64_t j = 0; j < d; j++) o[i * d + j] = row[j * col_step];
    }
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
    if (table->rank != 2) {
        tensor_set_error("%s: the table must have shape (V, D), got %s", op,
                         shape_format(table->shape, table->rank, s, sizeof s));
        return NULL;
    }
    if (n < 0 || (n > 0 && !indices)) {
        tensor_set_error("%s: %lld indices %s", op, (long long)n, n < 0 ? "is not a count" : "given as NULL");
        return NULL;
    }
    int64_t v = table->shape[0], d = table->shape[1];
    if (!indices_in_range(op, indices, n, v, NULL, 0)) return NULL;
    if (shape_numel((const int64_t[]){n, d}, 2) < 0) { /* a table expanded to D = 2^62, say */
        tensor_set_error("%s: the result %s has too many elements", op, shape_format((const int64_t[]){n, d}, 2, s, sizeof s));
        return NULL;
    }

    Tensor *out = tensor_empty(table->ctx, (const int64_t[]){n, d}, 2); /* copy_rows writes every element */
    int64_t *saved = ctx_alloc(table->ctx, (size_t)(n > 0 ? n : 1) * sizeof *saved); /* for the backward */
    if (!out || !saved) return NULL;
    if (n > 0) memcpy(saved, indices, (size_t)n * sizeof *saved);
    if (d > 0) copy_rows(table, indices, n, tensor_data(out));
    out->saved = saved;
    return tensor_record(out, op, gather_rows_backward, 1, &table);
}

Tensor *tensor_embedding(Tensor *table, const int64_t *indices, const int64_t *index_shape, int index_rank) {
    const char *op = "embedding";
    if (!table) return tensor_null_input(op, "table"), NULL;
    if (!shape_is_valid(op, index_shape, index_rank)) return NULL;
    if (index_rank + 1 > TENSOR_MAX_RANK) {
        tensor_set_error("%s: indices of rank %d give a result of rank %d, above the maximum %d", op, index_rank,
                         index_rank + 1, TENSOR_MAX_RANK);
        return NULL;
    }
    int64_t n = shape_numel(index_shape, index_rank), shape[TENSOR_MAX_RANK];
    char s[SHAPE_STR_MAX];
    if (n < 0) {
        tensor_set_error("%s: index shape %s has too many elements", op, shape_format(index_shape, index_rank, s, sizeof s));
        return NULL;
    }
    if (table->rank != 2) {
        tensor_set_error("%s: the table must have shape (V, D), got %s", op, shape_format(table->shape, table->rank, s, sizeof s));
        return NULL;
    }
    if (n > 0 && !indices) {
        tensor_set_error("%s: %lld indices given as NULL", op, (long long)n);
        return NULL;
    }
    if (!indices_in_range(op, indices, n, table->shape[0], index_shape, index_rank)) return NULL;
    for (int k = 0; k < index_rank; k++) shape[k] = index_shape[k];
    shape[index_rank] = table->shape[1];
    if (shape_numel(shape, index_rank + 1) < 0) {
        tensor_set_error("%s: the result %s has too many elements", op, shape_format(shape, index_rank + 1, s, sizeof s));
        return NULL;
    }
    Tensor *rows = tensor_gather_rows(table, indices, n); /* (n, D) */
    if (!rows) return NULL;
    return tensor_reshape(rows, shape, index_rank + 1); /* (..., D): a view, no copy */
}
