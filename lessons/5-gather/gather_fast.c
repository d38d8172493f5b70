/*
 * gather_fast.c - lesson 5's gather_rows, fast: the same rows as gather.c's loop, copied in a
 * way that suits the table's layout:
 *   - rows contiguous (stride 1 along a row: the usual case, and a table expanded from (1, D)):
 *     each row is one memcpy;
 *   - stride 0 along a row (a table expanded from (V, 1)): each row is one value, repeated;
 *   - a transposed table, whose rows step over a cache line or more per element: reading a row
 *     then reads a cache line per float. With many indices (n >= V / 16) the table is instead
 *     transposed into row-major order by the core's tiled copy, one slab of rows at a time,
 *     small enough to stay in the cache, and every output row whose index falls in the slab is
 *     copied from there; the indices are first sorted into slabs (a counting sort);
 *   - anything else, and few indices into a transposed table: gather.c's reference kernel.
 * docs/5-gather.md ("How fast") has the measurements.
 */
#include <stdlib.h>

#include "kernels_fast.h"
#include "simd_stream.h"

enum {
    SLAB_AT_LEAST = 16,     /* slab by slab when n >= V / SLAB_AT_LEAST */
    SLAB_BYTES = 256 << 10, /* the slab of the table transposed at a time */
};

/* The transposed table, slab by slab: false (nothing written) if the scratch does not fit. The
 * rows go out slab by slab, in the order of their indices, which the cache cannot predict: they
 * are streamed, so that no line of the result is read from memory before it is written. */
static bool gather_by_slabs(int64_t v, int64_t d, const float *t, int64_t rs, int64_t cs, const int64_t *indices,
                            int64_t n, float *o) {
    int64_t slab = SLAB_BYTES / (int64_t)sizeof(float) / d; /* table rows per slab, at least 16 */
    slab = slab < 16 ? 16 : slab > v ? v : slab;
    if (slab > INT64_MAX / d / 4) return false;
    /* scratch, once per call: the slab (on 64-byte lines, so that the core's copy can stream
     * into it), the output rows sorted by index, and where each table row's uses begin */
    float *block = aligned_alloc(64, ((size_t)(slab * d) * sizeof(float) + 63) / 64 * 64);
    int64_t *order = block ? malloc((size_t)n * sizeof *order) : NULL;
    int64_t *start = order ? calloc((size_t)v + 1, sizeof *start) : NULL;
    if (start) {
        for (int64_t i = 0; i < n; i++) start[indices[i] + 1]++;  /* count each table row's uses ... */
        for (int64_t r = 0; r < v; r++) start[r + 1] += start[r]; /* ... where row r's uses begin ... */
        for (int64_t i = 0; i < n; i++)
            order[start[indices[i]]++] = i; /* ... and place them: start[r] is now their end */
        for (int64_t r0 = 0; r0 < v; r0 += slab) {
            int64_t rows = v - r0 < slab ? v - r0 : slab;
            int64_t first = r0 > 0 ? start[r0 - 1] : 0, last = start[r0 + rows - 1];
            if (first == last) continue; /* no index falls in this slab */
            kernels()->copy(2, (const int64_t[]){rows, d}, block, (const int64_t[]){d, 1}, t + r0 * rs,
                            (const int64_t[]){rs, cs});
            for (int64_t p = first; p < last; p++) {
                /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign): the sort placed every i < n */
                int64_t i = order[p];
                stream_copy(o + i * d, block + (indices[i] - r0) * d, d);
            }
        }
        stream_end();
    }
    free(start);
    free(order);
    free(block);
    return start != NULL;
}

static void gather_rows_fast(int64_t v, int64_t d, const float *t, int64_t rs, int64_t cs, const int64_t *indices,
                             int64_t n, float *out) {
    if (d == 0 || n == 0) return;
    if (strides_are_contiguous(&d, 1, &cs)) { /* each row one run of d floats */
        for (int64_t i = 0; i < n; i++) memcpy(out + i * d, t + indices[i] * rs, (size_t)d * sizeof(float));
        return;
    }
    if (cs == 0) {
        for (int64_t i = 0; i < n; i++) {
            float value = t[indices[i] * rs];
            for (int64_t j = 0; j < d; j++) out[i * d + j] = value;
        }
        return;
    }
    /* a dim of size 1 may have any stride, so rs counts only when v > 1 */
    bool transposed = v > 1 && rs != 0 && llabs(rs) < llabs(cs) && llabs(cs) >= 16;
    if (!(transposed && n >= v / SLAB_AT_LEAST && gather_by_slabs(v, d, t, rs, cs, indices, n, out)))
        gather_rows_reference(v, d, t, rs, cs, indices, n, out);
}

KERNELS_FAST(gather, .gather_rows = gather_rows_fast);
