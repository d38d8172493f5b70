/*
 * tensor_fast.c - the fast strided_copy and strided_accumulate: the reference's pairs of
 * elements in an order that follows memory. (1) Dims are turned forwards, sorted by stride and
 * merged; (2) the innermost loop is one of a few plain row loops; (3) a transpose goes through
 * vector registers in tiles, and a copy larger than the cache streams its writes.
 * docs/4-permute.md and docs/2-reduce.md ("How fast") measure each step.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels_fast.h"
#include "simd_stream.h"
#include "tensor_internal.h"

/* ==== the plain inner loops ================================================================ */

typedef enum { COPY, ADD, STREAM } Write; /* STREAM: a copy whose stores bypass the cache */

/* Rows shorter than this go through short_rows, two dims at a time. */
enum { SHORT_ROW = 64 };

/* |s|, kept in range for the one stride whose negation overflows */
static int64_t magnitude(int64_t s) { return s >= 0 ? s : s == INT64_MIN ? INT64_MAX : -s; }

/* d[i * ds] = s[i * ss] for i < n. */
static void row_copy(int64_t n, float *d, int64_t ds, const float *s, int64_t ss) {
    if (ds == 1 && ss == 1) {
        memcpy(d, s, (size_t)n * sizeof *d);
    } else if (ss == 0) {
        for (int64_t i = 0; i < n; i++) d[i * ds] = s[0];
    } else {
        for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];
    }
}

/* d[i] (or, reversed, d[n - 1 - i]) += s_0[i] + ... + s_{k-1}[i] for k <= 4 rows of n floats,
 * eight at a time: gcc -O2 makes a vector instruction of eight copies of a statement. */
SIMD_INLINE void rows_add_body(float *restrict d, const float *const *s, int k, int64_t n, bool reversed) {
#define AT(i) (reversed ? n - 1 - (i) : (i))
    int64_t i = 0;
    if (k == 4) {
        const float *restrict a = s[0], *restrict b = s[1], *restrict c = s[2], *restrict e = s[3];
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++) d[AT(i + j)] += (a[i + j] + b[i + j]) + (c[i + j] + e[i + j]);
        for (; i < n; i++) d[AT(i)] += (a[i] + b[i]) + (c[i] + e[i]);
        return;
    }
    for (int r = 0; r < k; r++) {
        const float *restrict x = s[r];
        for (i = 0; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++) d[AT(i + j)] += x[i + j];
        for (; i < n; i++) d[AT(i)] += x[i];
    }
#undef AT
}
static void rows_add(float *restrict d, const float *const *s, int k, int64_t n) { rows_add_body(d, s, k, n, false); }
static void rows_add_reversed(float *restrict d, const float *const *s, int k, int64_t n) {
    rows_add_body(d, s, k, n, true);
}

/* Rows of n floats, dr and sr apart, copied or added onto d's: two dims in one loop, for rows
 * too short (lesson 7's heads) to pay for a step of the odometer each. */
static void short_rows(Write how, int64_t rows, int64_t n, float *restrict d, int64_t dr, const float *restrict s,
                       int64_t sr) {
    for (int64_t r = 0; r < rows; r++, d += dr, s += sr) {
        int64_t i = 0;
        if (how == ADD) {
            for (; i + 8 <= n; i += 8)
                for (int j = 0; j < 8; j++) d[i + j] += s[i + j];
            for (; i < n; i++) d[i] += s[i];
        } else {
            for (; i + 8 <= n; i += 8)
                for (int j = 0; j < 8; j++) d[i + j] = s[i + j];
            for (; i < n; i++) d[i] = s[i];
        }
    }
}

/* d[i * ds] += s[i * ss] for i < n; one value along a contiguous row eight at a time. */
static void row_add(int64_t n, float *restrict d, int64_t ds, const float *restrict s, int64_t ss) {
    int64_t i = 0;
    if (ds == 1 && ss == 0)
        for (const float x = s[0]; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++) d[i + j] += x;
    for (; i < n; i++) d[i * ds] += s[i * ss];
}

/* The sum of n floats step apart, by simd_sum.h's policy. */
static double row_sum(const float *x, int64_t n, int64_t step) {
    return step == 1 ? sumf_row_quarters(x, n) : sumd_strided(x, n, step);
}

/* ==== transposes =========================================================================== */

/* d[i * ld + j] = s[j * ls + i] (or +=) for i < ni, j < nj, in tiles of TILE_I x TILE_J (two
 * fit in a 512 KB L2); a streamed copy reads s in longer runs (docs/4-permute.md). */
enum { TILE_I = 256, TILE_J = 128, STREAM_TILE_I = 1024, STREAM_TILE_J = 32, PREFETCH_BLOCKS = 4 };

static void transpose_generic(Write how, int64_t ni, int64_t nj, float *d, int64_t ld, const float *s, int64_t ls) {
    for (int64_t i0 = 0; i0 < ni; i0 += TILE_I)
        for (int64_t j0 = 0; j0 < nj; j0 += TILE_J) {
            int64_t i1 = ni - i0 < TILE_I ? ni : i0 + TILE_I, j1 = nj - j0 < TILE_J ? nj : j0 + TILE_J;
            for (int64_t i = i0; i < i1; i++) {
                float *row = d + i * ld;
                if (how == ADD)
                    for (int64_t j = j0; j < j1; j++) row[j] += s[j * ls + i];
                else
                    for (int64_t j = j0; j < j1; j++) row[j] = s[j * ls + i];
            }
        }
}

/* An 8 x 8 block's columns into c: three rounds of shuffles (pairs, pairs of pairs, halves). */
SIMD_INLINE void transpose8(const float *s, int64_t ls, vf8 c[8]) {
    vf8 r[8], t[8], u[8];
    SIMD_UNROLL
    for (int k = 0; k < 8; k++) r[k] = vf8_load(s + k * ls);
    SIMD_UNROLL
    for (int k = 0; k < 8; k += 2) {
        t[k] = VF8_SHUFFLE(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[k + 1] = VF8_SHUFFLE(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    SIMD_UNROLL
    for (int k = 0; k < 8; k += 4) {
        u[k] = VF8_SHUFFLE(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 1] = VF8_SHUFFLE(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        u[k + 2] = VF8_SHUFFLE(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 3] = VF8_SHUFFLE(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
    }
    SIMD_UNROLL
    for (int k = 0; k < 4; k++) {
        c[k] = VF8_SHUFFLE(u[k], u[k + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        c[k + 4] = VF8_SHUFFLE(u[k], u[k + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

/* A 16 x 16 block's columns into c: four rounds interleaving row k with row k + 8, each of which
 * rotates the eight bits of (row, lane) by one, so after four they have swapped. */
SIMD_INLINE void transpose16x16(const float *s, int64_t ls, vf16 c[16]) {
    vf16 r[16];
    SIMD_UNROLL
    for (int k = 0; k < 16; k++) c[k] = vf16_load(s + k * ls);
    SIMD_UNROLL
    for (int round = 0; round < 4; round++) {
        SIMD_UNROLL
        for (int k = 0; k < 8; k++) {
            r[2 * k] = VF16_SHUFFLE(c[k], c[k + 8], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            r[2 * k + 1] = VF16_SHUFFLE(c[k], c[k + 8], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        }
        SIMD_UNROLL
        for (int k = 0; k < 16; k++) c[k] = r[k];
    }
}

/* transpose8 in the build's registers: of 16 bytes (SSE, NEON), through blocks of 4 x 4 */
SIMD_INLINE void transpose8_built(const float *s, int64_t ls, vf8 c[8]) {
    if (SIMD_LANES >= 8) {
        transpose8(s, ls, c);
        return;
    }
    float block[8 * 8] __attribute__((aligned(64)));
    SIMD_UNROLL
    for (int q = 0; q < 4; q++) transpose4(s + q / 2 * 4 * ls + q % 2 * 4, ls, block + q % 2 * 32 + q / 2 * 4, 8);
    SIMD_UNROLL
    for (int k = 0; k < 8; k++) c[k] = vf8_load(block + k * 8);
}

SIMD_INLINE void store8(Write how, float *d, vf8 v) {
    if (how == STREAM) stream8(d, v);
    else if (how == ADD) vf8_store(d, vf8_load(d) + v);
    else vf8_store(d, v);
}
SIMD_INLINE void store16(Write how, float *d, vf16 v) {
    if (how == STREAM) stream16(d, v);
    else if (how == ADD) vf16_store(d, vf16_load(d) + v);
    else vf16_store(d, v);
}

/* A 16 x 16 block, each row of d written as a whole line: in 16 registers with AVX-512; with AVX2
 * streamed, as 8 x 8 quarters that read both halves of 8 lines of s before the next 8 (16 rows a
 * power of two apart share an L1 set); otherwise through a buffer, unless d's rows are near. */
enum { NARROW_ROWS = 64 };
SIMD_INLINE void transpose16(Write how, float *d, int64_t ld, const float *s, int64_t ls) {
    if (SIMD_LANES == 16) {
        vf16 c[16];
        transpose16x16(s, ls, c);
        SIMD_UNROLL
        for (int k = 0; k < 16; k++) store16(how, d + k * ld, c[k]);
        return;
    }
    if (SIMD_LANES == 8 && how == STREAM) {
        vf8 top_left[8], bottom_left[8], right[8]; /* d's quarters, named as they lie in d */
        transpose8(s, ls, top_left);
        transpose8(s + 8, ls, bottom_left);
        transpose8(s + 8 * ls, ls, right);
        SIMD_UNROLL
        for (int k = 0; k < 8; k++) stream8(d + k * ld, top_left[k]), stream8(d + k * ld + 8, right[k]);
        transpose8(s + 8 * ls + 8, ls, right);
        SIMD_UNROLL
        for (int k = 0; k < 8; k++) stream8(d + (8 + k) * ld, bottom_left[k]), stream8(d + (8 + k) * ld + 8, right[k]);
        return;
    }
    float block[16 * 16] __attribute__((aligned(64)));
    bool direct = how == COPY && ld <= NARROW_ROWS;
    float *out = direct ? d : block;
    int64_t lo = direct ? ld : 16;
    for (int g = 0; g < 16 && SIMD_LANES == 4; g += 8) /* the same order, in blocks of 4 x 4 */
        for (int m = g; m < g + 8; m += 4) {
            SIMD_UNROLL
            for (int k = 0; k < 16; k += 4) transpose4(s + m * ls + k, ls, out + k * lo + m, lo);
        }
    for (int g = 0; g < 16 && SIMD_LANES == 8; g += 8)
        for (int h = 0; h < 16; h += 8) {
            vf8 a[8];
            transpose8(s + g * ls + h, ls, a);
            SIMD_UNROLL
            for (int k = 0; k < 8; k++) vf8_store(out + (h + k) * lo + g, a[k]);
        }
    if (direct) return;
    SIMD_UNROLL
    for (int k = 0; k < 16; k++) {
        store8(how, d + k * ld, vf8_load(block + k * 16));
        store8(how, d + k * ld + 8, vf8_load(block + k * 16 + 8));
    }
}

/* transpose_generic's tiles in blocks of 16 x 16, then 8 x 8, the rest plain. Each block
 * prefetches its share of the next tile's lines; the last tile, its own, blocks ahead. */
SIMD_INLINE void transpose_body(const Write how, int64_t ni, int64_t nj, float *d, int64_t ld, const float *s,
                                int64_t ls) {
    const int64_t ti = how == STREAM ? STREAM_TILE_I : TILE_I, tj = how == STREAM ? STREAM_TILE_J : TILE_J;
    int64_t tiles_j = (nj + tj - 1) / tj, tiles = (ni + ti - 1) / ti * tiles_j;
    for (int64_t t = 0; t < tiles; t++) {
        int64_t i0 = t / tiles_j * ti, j0 = t % tiles_j * tj;
        int64_t i1 = ni - i0 < ti ? ni : i0 + ti, j1 = nj - j0 < tj ? nj : j0 + tj;
        /* the next tile: its rows of s, each a run of its width in floats, and 16 floats a line */
        int64_t ni0 = (t + 1) / tiles_j * ti, nj0 = (t + 1) % tiles_j * tj;
        int64_t n_rows = t + 1 < tiles ? (nj - nj0 < tj ? nj - nj0 : tj) : 0;
        int64_t run = ni - ni0 < ti ? ni - ni0 : ti, row_lines = (run + 15) / 16, next = 0;
        int64_t lines = n_rows * row_lines, blocks = (i1 - i0) / 16 * ((j1 - j0) / 16);
        int64_t share = blocks > 0 ? (lines + blocks - 1) / blocks : 0;
        int64_t i16 = i0 + (i1 - i0) / 16 * 16, j16 = j0 + (j1 - j0) / 16 * 16, i8 = i0 + (i1 - i0) / 8 * 8;
        /* the next tile's next line: `line` lines into the run at `ahead` (counters, not a
         * division per line) */
        const float *ahead = s + nj0 * ls + ni0;
        int64_t line = 0;
        for (int64_t i = i0; i < i16; i += 16)
            for (int64_t j = j0; j < j16; j += 16) {
                for (int64_t q = 0; q < share && next < lines; q++, next++) {
                    __builtin_prefetch(ahead + line * 16, 0, 2);
                    if (++line == row_lines) line = 0, ahead += ls;
                }
                if (lines == 0 && i + 16 * PREFETCH_BLOCKS < i16) /* the last tile: its own lines ahead */
                    for (int k = 0; k < 16; k++) __builtin_prefetch(s + (j + k) * ls + i + 16 * PREFETCH_BLOCKS, 0, 2);
                transpose16(how, d + i * ld + j, ld, s + j * ls + i, ls);
            }
        int64_t j = j16;
        for (; j + 8 <= j1; j += 8) /* columns left over: half a line, never streamed */
            for (int64_t i = i0; i < i8; i += 8) {
                vf8 a[8];
                transpose8_built(s + j * ls + i, ls, a);
                SIMD_UNROLL
                for (int k = 0; k < 8; k++) store8(how == STREAM ? COPY : how, d + (i + k) * ld + j, a[k]);
            }
        transpose_generic(how == ADD ? ADD : COPY, i8 - i0, j1 - j, d + i0 * ld + j, ld, s + j * ls + i0, ls);
        for (int64_t i = i16; i < i8; i += 8) /* rows left over, 8 at a time */
            for (int64_t jj = j0; jj + 8 <= j16; jj += 8) {
                vf8 a[8];
                transpose8_built(s + jj * ls + i, ls, a);
                SIMD_UNROLL
                for (int k = 0; k < 8; k++) store8(how == STREAM ? COPY : how, d + (i + k) * ld + jj, a[k]);
            }
        transpose_generic(how == ADD ? ADD : COPY, i1 - i8, j1 - j0, d + i8 * ld + j0, ld, s + j0 * ls + i8, ls);
    }
}

/* One copy of the loop per kind of store, so that none is chosen per store. */
static void transpose(Write how, int64_t ni, int64_t nj, float *d, int64_t ld, const float *s, int64_t ls) {
    /* streaming stores need whole lines: rows that start on 64 bytes */
    if (how == STREAM && ((uintptr_t)d % 64 != 0 || ld % 16 != 0)) how = COPY;
    if (how == STREAM) transpose_body(STREAM, ni, nj, d, ld, s, ls);
    else if (how == ADD) transpose_body(ADD, ni, nj, d, ld, s, ls);
    else transpose_body(COPY, ni, nj, d, ld, s, ls);
}

/* ==== one row, many rows ================================================================== */

enum { ROWS_SUMMED_MAX = 1 << 18 }; /* floats: 1 MB, within a core's L2 cache */

/* Rows of n floats, sr apart, summed onto d's one row (a bias's gradient): columns' sums held in
 * registers down all the rows, added four rows a pass as rows_add adds them (the same sums). */
SIMD_INLINE void columns_summed(float *restrict d, const float *restrict s, int64_t rows, int64_t sr, int vectors) {
    vf8 acc[4];
    SIMD_UNROLL
    for (int v = 0; v < vectors; v++) acc[v] = vf8_load(d + 8 * v);
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4, s += 4 * sr) {
        SIMD_UNROLL
        for (int v = 0; v < vectors; v++)
            acc[v] += (vf8_load(s + 8 * v) + vf8_load(s + sr + 8 * v)) +
                      (vf8_load(s + 2 * sr + 8 * v) + vf8_load(s + 3 * sr + 8 * v));
    }
    for (; r < rows; r++, s += sr) {
        SIMD_UNROLL
        for (int v = 0; v < vectors; v++) acc[v] += vf8_load(s + 8 * v);
    }
    SIMD_UNROLL
    for (int v = 0; v < vectors; v++) vf8_store(d + 8 * v, acc[v]);
}
static void rows_summed(float *restrict d, const float *restrict s, int64_t rows, int64_t sr, int64_t n) {
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) columns_summed(d + j, s + j, rows, sr, 4);
    for (; j + 8 <= n; j += 8) columns_summed(d + j, s + j, rows, sr, 1);
    for (; j < n; j++) {
        float acc = d[j];
        const float *x = s + j;
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4, x += 4 * sr) acc += (x[0] + x[sr]) + (x[2 * sr] + x[3 * sr]);
        for (; r < rows; r++, x += sr) acc += x[0];
        d[j] = acc;
    }
}
/* s's row of n floats into rows rows of d, dr apart: a vector loop, cheaper than memcpy a row. */
static void row_repeated(float *d, int64_t dr, int64_t rows, const float *s, int64_t n) {
    for (int64_t r = 0; r < rows; r++, d += dr) {
        int64_t j = 0;
        for (; j + 8 <= n; j += 8) vf8_store(d + j, vf8_load(s + j));
        for (; j < n; j++) d[j] = s[j];
    }
}

/* ==== strided copies and sums ============================================================== */

/* True when dst and src may share memory (or their spans cannot be computed): then only the
 * reference's order is right. */
static bool overlap(int rank, const int64_t *shape, const float *dst, const int64_t *dst_strides, const float *src,
                    const int64_t *src_strides) {
    int64_t dlo, dhi, slo, shi;
    if (!strides_span(rank, shape, dst_strides, &dlo, &dhi) || !strides_span(rank, shape, src_strides, &slo, &shi))
        return true;
    uintptr_t f = sizeof(float), d = (uintptr_t)dst, s = (uintptr_t)src; /* unsigned: wraps, never overflows */
    return d + (uintptr_t)dlo * f <= s + (uintptr_t)shi * f + f - 1 &&
           s + (uintptr_t)slo * f <= d + (uintptr_t)dhi * f + f - 1;
}

/* True when every row of dst (the last dim, contiguous) covers whole 64-byte lines: dst on a
 * line, and the rows and every step between them a multiple of 16 floats. */
static bool whole_lines(int m, const int64_t *sh, const int64_t *ds, const float *dst) {
    if ((uintptr_t)dst % 64 != 0 || sh[m - 1] % 16 != 0) return false;
    for (int k = 0; k < m - 1; k++)
        if (ds[k] % 16 != 0) return false;
    return true;
}

/* The walk both kernels share. False, having touched nothing, when dst and src may overlap. */
static bool strided(Write how, int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                    const int64_t *src_strides) {
    int64_t n = shape_numel(shape, rank);
    if (overlap(rank, shape, dst, dst_strides, src, src_strides)) return false;
    if (n == 0) return true;

    /* 1. A dim src walks backwards is walked forwards from its other end, dst's turned with it;
     *    the dims sorted by their larger stride, largest outermost (stable), then merged. */
    int64_t sh[TENSOR_MAX_RANK], ds[TENSOR_MAX_RANK], ss[TENSOR_MAX_RANK];
    int order[TENSOR_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        ds[k] = dst_strides[k], ss[k] = src_strides[k];
        if (shape[k] > 1 && ss[k] < 0 && ss[k] > INT64_MIN && ds[k] > INT64_MIN) {
            src += (shape[k] - 1) * ss[k], dst += (shape[k] - 1) * ds[k];
            ss[k] = -ss[k], ds[k] = -ds[k];
        }
        int64_t key = magnitude(ds[k]) > ss[k] ? magnitude(ds[k]) : ss[k], m = k;
        for (; m > 0; m--) {
            int p = order[m - 1];
            if ((magnitude(ds[p]) > ss[p] ? magnitude(ds[p]) : ss[p]) >= key) break;
            order[m] = p;
        }
        order[m] = k;
    }
    int64_t sorted_shape[TENSOR_MAX_RANK], sorted_ds[TENSOR_MAX_RANK], sorted_ss[TENSOR_MAX_RANK];
    for (int k = 0; k < rank; k++)
        sorted_shape[k] = shape[order[k]], sorted_ds[k] = ds[order[k]], sorted_ss[k] = ss[order[k]];
    int64_t merged[2][TENSOR_MAX_RANK];
    int m = merge_dims(rank, sorted_shape, 2, (const int64_t *[]){sorted_ds, sorted_ss}, sh, merged);
    memcpy(ds, merged[0], sizeof ds);
    memcpy(ss, merged[1], sizeof ss);
    if (m == 0) { /* one element */
        dst[0] = how == ADD ? dst[0] + src[0] : src[0];
        return true;
    }
    if (how == COPY && SIMD_STREAMS && (uint64_t)n > SIMD_STREAM_BYTES / sizeof(float)) how = STREAM;

    /* 3. A transpose: dst contiguous along one dim (j), src along another (i). The tiles run
     *    over those two; the odometer over the others. */
    int j = -1, i = -1;
    for (int k = 0; k < m; k++) {
        if (ds[k] == 1 && ss[k] != 0 && j < 0) j = k;
        else if (ss[k] == 1 && ds[k] != 0 && i < 0) i = k;
    }
    if (i >= 0 && j >= 0 && ss[m - 1] != 0 && !(ds[m - 1] == 1 && ss[m - 1] == 1)) {
        int64_t outer_shape[TENSOR_MAX_RANK], outer[2][TENSOR_MAX_RANK];
        int rest = 0;
        for (int k = 0; k < m; k++) {
            if (k == i || k == j) continue;
            outer_shape[rest] = sh[k], outer[0][rest] = ds[k], outer[1][rest] = ss[k];
            rest++;
        }
        NdIter it;
        nditer_init(&it, rest, outer_shape, 2, (const int64_t *[]){outer[0], outer[1]});
        while (nditer_next(&it)) transpose(how, sh[i], sh[j], dst + it.offset[0], ds[i], src + it.offset[1], ss[j]);
        if (how == STREAM) stream_end();
        return true;
    }

    /* 2. Otherwise, one plain loop along the innermost dim, under an odometer over the others;
     *    short contiguous rows onto rows of their own (dst's rows apart: no two the same), the
     *    last two dims together. */
    NdIter it;
    int64_t len = sh[m - 1], d1 = ds[m - 1], s1 = ss[m - 1];
    if (how == STREAM && d1 == 1 && s1 == 1 && whole_lines(m, sh, ds, dst)) {
        /* Rows of whole lines stream wherever they land, so the outer dims are walked in src's
         * order (largest stride outermost), which the prefetcher follows. */
        for (int k = 1; k < m - 1; k++)
            for (int q = k; q > 0 && magnitude(ss[q - 1]) < magnitude(ss[q]); q--) {
                int64_t t0 = sh[q], t1 = ds[q], t2 = ss[q];
                sh[q] = sh[q - 1], ds[q] = ds[q - 1], ss[q] = ss[q - 1];
                sh[q - 1] = t0, ds[q - 1] = t1, ss[q - 1] = t2;
            }
        nditer_init(&it, m - 1, sh, 2, (const int64_t *[]){ds, ss});
        while (nditer_next(&it)) stream_copy(dst + it.offset[0], src + it.offset[1], len);
        stream_end();
        return true;
    }
    /* rows summed onto one row, when they fit in a core's cache (from memory, rows_add is faster) */
    if (how == ADD && m == 2 && ds[0] == 0 && d1 == 1 && s1 == 1 && sh[0] * ss[0] <= ROWS_SUMMED_MAX) {
        rows_summed(dst, src, sh[0], ss[0], len);
        return true;
    }
    if (how == COPY && m == 2 && ss[0] == 0 && d1 == 1 && s1 == 1 && ds[0] >= len) { /* one row into many */
        row_repeated(dst, ds[0], sh[0], src, len);
        return true;
    }
    if (how != STREAM && m >= 2 && len < SHORT_ROW && d1 == 1 && s1 == 1 && magnitude(ds[m - 2]) >= len) {
        nditer_init(&it, m - 2, sh, 2, (const int64_t *[]){ds, ss});
        while (nditer_next(&it))
            short_rows(how, sh[m - 2], len, dst + it.offset[0], ds[m - 2], src + it.offset[1], ss[m - 2]);
        return true;
    }
    nditer_init(&it, m - 1, sh, 2, (const int64_t *[]){ds, ss});
    if (how != ADD) {
        while (nditer_next(&it)) row_copy(len, dst + it.offset[0], d1, src + it.offset[1], s1);
    } else if (d1 == 0) { /* rows summed, each into one element: four at a time when contiguous */
        float *target[4];
        const float *row[4];
        double total[4];
        int k = 0;
        while (nditer_next(&it)) {
            target[k] = dst + it.offset[0], row[k] = src + it.offset[1];
            if (++k < 4 && s1 == 1) continue;
            if (k == 4) sumf_rows(4, row, len, total);
            else total[0] = row_sum(row[0], len, s1);
            for (int r = 0; r < k; r++) *target[r] = (float)(*target[r] + total[r]);
            k = 0;
        }
        for (int r = 0; r < k; r++) *target[r] = (float)(*target[r] + row_sum(row[r], len, s1));
    } else if ((d1 == 1 || d1 == -1) && s1 == 1) { /* rows added onto rows: up to four onto the same one at once */
        const float *pending[4];
        float *target = NULL;
        int n_pending = 0;
        /* a row that runs the other way starts at its last element's address */
        void (*add)(float *restrict, const float *const *, int, int64_t) = d1 == 1 ? rows_add : rows_add_reversed;
        int64_t back = d1 == 1 ? 0 : len - 1;
        while (nditer_next(&it)) {
            float *o = dst + it.offset[0];
            if (n_pending == 4 || (n_pending > 0 && o != target)) {
                add(target - back, pending, n_pending, len);
                n_pending = 0;
            }
            pending[n_pending++] = src + it.offset[1];
            target = o;
        }
        if (n_pending > 0) add(target - back, pending, n_pending, len);
    } else {
        while (nditer_next(&it)) row_add(len, dst + it.offset[0], d1, src + it.offset[1], s1);
    }
    return true;
}

static void strided_copy_fast(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                              const int64_t *src_strides) {
    if (!strided(COPY, rank, shape, dst, dst_strides, src, src_strides))
        strided_copy_reference(rank, shape, dst, dst_strides, src, src_strides);
}

static void strided_accumulate_fast(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides,
                                    const float *src, const int64_t *src_strides) {
    if (!strided(ADD, rank, shape, dst, dst_strides, src, src_strides))
        strided_accumulate_reference(rank, shape, dst, dst_strides, src, src_strides);
}

KERNELS_FAST(tensor, .copy = strided_copy_fast, .accumulate = strided_accumulate_fast);
