/*
 * gather_fast.c - lesson 5's gather_rows, fast: the same rows as gather.c's loop, copied in a
 * way that suits the table's layout: gather_rows_fast, in the table (kernels.h) unless
 * COURSE_KERNELS=reference. It has a better way for all but the last case below:
 *   - rows contiguous (stride 1 along a row: the usual case, and a table expanded from (1, D)):
 *     each row is one memcpy;
 *   - stride 0 along a row (a table expanded from (V, 1)): each row is one value, repeated;
 *   - a transposed table, whose rows step over a cache line or more per element: reading a row
 *     then reads a cache line per float. With many indices (n >= V / 16) the table is instead
 *     transposed into row-major order by the core's tiled copy, one slab of rows at a time,
 *     small enough to stay in the cache, and every output row whose index falls in the slab is
 *     copied from there; the indices are first sorted into slabs (a counting sort). Those rows
 *     are written in the order of their indices, which the cache cannot predict, so into a
 *     result larger than the cache they go with streaming stores;
 *   - anything else, and few indices into a transposed table: gather.c's reference kernel.
 * docs/5-gather.md ("How fast") has the measurements.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels_fast.h"

enum {
    SLAB_AT_LEAST = 16,        /* slab by slab when n >= V / SLAB_AT_LEAST */
    SLAB_BYTES = 256 << 10,    /* the slab of the table transposed at a time */
    SCATTER_STREAM = 1 << 20,  /* rows scattered over more bytes than this are streamed */
};

/* The transposed table, slab by slab: false (nothing written) if the scratch does not fit. */
static bool gather_by_slabs(const Tensor *table, const int64_t *indices, int64_t n, float *o) {
    int64_t v = table->shape[0], d = table->shape[1], row_step = table->strides[0];
    const float *t = tensor_data(table);
    size_t row_bytes = (size_t)d * sizeof(float);
    int64_t slab = SLAB_BYTES / (int64_t)sizeof(float) / d; /* table rows per slab, at least 16 */
    slab = slab < 16 ? 16 : slab > v ? v : slab;
    if (slab > INT64_MAX / d / 4) return false;
    /* scratch, once per call: the slab (on 64-byte lines, so that the core's copy can stream
     * into it), the output rows sorted by index, and where each table row's uses begin */
    float *block = aligned_alloc(64, ((size_t)(slab * d) * sizeof(float) + 63) / 64 * 64);
    int64_t *order = block ? malloc((size_t)n * sizeof *order) : NULL;
    int64_t *start = order ? calloc((size_t)v + 1, sizeof *start) : NULL;
    if (start) {
        for (int64_t i = 0; i < n; i++) start[indices[i] + 1]++;        /* count each table row's uses ... */
        for (int64_t r = 0; r < v; r++) start[r + 1] += start[r];       /* ... where row r's uses begin ... */
        for (int64_t i = 0; i < n; i++) order[start[indices[i]]++] = i; /* ... and place them: start[r] is now their end */
        /* The rows go out slab by slab, scattered over the result: written the usual way, each
         * line of a result larger than the L2 cache would be read from memory first. */
        bool stream = kernels_mode() == KERNELS_NATIVE && (uint64_t)n * (uint64_t)row_bytes > SCATTER_STREAM;
        for (int64_t r0 = 0; r0 < v; r0 += slab) {
            int64_t rows = v - r0 < slab ? v - r0 : slab;
            int64_t first = r0 > 0 ? start[r0 - 1] : 0, last = start[r0 + rows - 1];
            if (first == last) continue; /* no index falls in this slab */
            strided_copy(2, (const int64_t[]){rows, d}, block, (const int64_t[]){d, 1}, t + r0 * row_step,
                         table->strides);
            for (int64_t p = first; p < last; p++) {
                int64_t i = order[p];
                const float *row = block + (indices[i] - r0) * d;
                if (stream) kernels_copy_stream(o + i * d, row, d);
                else memcpy(o + i * d, row, row_bytes);
            }
        }
        if (stream) kernels_stream_end();
    }
    free(start);
    free(order);
    free(block);
    return start != NULL;
}

void gather_rows_fast(const Tensor *table, const int64_t *indices, int64_t n, float *out) {
    int64_t v = table->shape[0], d = table->shape[1], row_step = table->strides[0], col_step = table->strides[1];
    const float *t = tensor_data(table);
    if (d == 0 || n == 0) return;
    if (col_step == 1 || d == 1) {
        for (int64_t i = 0; i < n; i++) memcpy(out + i * d, t + indices[i] * row_step, (size_t)d * sizeof(float));
        return;
    }
    if (col_step == 0) {
        for (int64_t i = 0; i < n; i++) {
            float value = t[indices[i] * row_step];
            for (int64_t j = 0; j < d; j++) out[i * d + j] = value;
        }
        return;
    }
    /* a dim of size 1 may have any stride, so row_step counts only when v > 1 */
    bool transposed = v > 1 && row_step != 0 && llabs(row_step) < llabs(col_step) && llabs(col_step) >= 16;
    if (!(transposed && n >= v / SLAB_AT_LEAST && gather_by_slabs(table, indices, n, out)))
        gather_rows_reference(table, indices, n, out);
}
