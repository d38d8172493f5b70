/*
 * broadcast_fast.c - lesson 1's elementwise ops, fast: the same out[i] = a[i] op b[i] as
 * broadcast.c's reference kernels, element for element, and their backward.
 *   - Dims that line up are merged (a contiguous (4096,4096) is one row of 16M elements), and
 *     each row is a plain loop over inputs that are contiguous or broadcast (stride 1 or 0).
 *   - An input read down the columns of the result (a transposed one) is first copied, one tile
 *     at a time, into a small buffer by the core's transposing copy; the same row loops then
 *     read the buffer, while it is in the cache.
 *   - A tiled result larger than the cache is written with streaming stores, a tile row at a time.
 *   - The backward sums a row into a broadcast gradient by the summation policy (simd_sum.h).
 * docs/1-broadcast.md ("How fast") measures each of these.
 */
#include "kernels_fast.h"
#include "simd_stream.h"

/* ==== the forward ========================================================================== */

SIMD_INLINE float apply(char op, float u, float v) {
    switch (op) {
    case '+': return u + v;
    case '-': return u - v;
    case '*': return u * v;
    default: return u / v;
    }
}

/* One row of n results, o[i] = x[i * sx] op y[i * sy], o contiguous. Strides of 1 or 0 (the
 * usual cases) get loops over restrict pointers eight elements at a time: gcc at -O2 does not
 * vectorize a loop of unknown length, but it does turn eight copies of one statement into a
 * vector instruction. The op is a constant in each of the four functions below. */
SIMD_INLINE void row_body(char op, int64_t n, float *restrict o, const float *restrict x, int64_t sx,
                          const float *restrict y, int64_t sy) {
    int64_t i = 0;
    if (sx == 1 && sy == 1) {
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) o[i + k] = apply(op, x[i + k], y[i + k]);
        for (; i < n; i++) o[i] = apply(op, x[i], y[i]);
    } else if (sx == 1 && sy == 0) {
        const float v = y[0];
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) o[i + k] = apply(op, x[i + k], v);
        for (; i < n; i++) o[i] = apply(op, x[i], v);
    } else if (sx == 0 && sy == 1) {
        const float u = x[0];
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) o[i + k] = apply(op, u, y[i + k]);
        for (; i < n; i++) o[i] = apply(op, u, y[i]);
    } else {
        for (; i < n; i++) o[i] = apply(op, x[i * sx], y[i * sy]);
    }
}

typedef void BinaryRow(int64_t n, float *o, const float *x, int64_t sx, const float *y, int64_t sy);
static void add_row(int64_t n, float *o, const float *x, int64_t sx, const float *y, int64_t sy) {
    row_body('+', n, o, x, sx, y, sy);
}
static void sub_row(int64_t n, float *o, const float *x, int64_t sx, const float *y, int64_t sy) {
    row_body('-', n, o, x, sx, y, sy);
}
static void mul_row(int64_t n, float *o, const float *x, int64_t sx, const float *y, int64_t sy) {
    row_body('*', n, o, x, sx, y, sy);
}
static void div_row(int64_t n, float *o, const float *x, int64_t sx, const float *y, int64_t sy) {
    row_body('/', n, o, x, sx, y, sy);
}
static BinaryRow *binary_row(char op) {
    return op == '+' ? add_row : op == '-' ? sub_row : op == '*' ? mul_row : div_row;
}

/* True when an input is broadcast along one of the m merged dims (stride 0: merging dropped
 * the dims of size 1). */
static bool is_broadcast(int m, const int64_t *strides) {
    for (int d = 0; d < m; d++)
        if (strides[d] == 0) return true;
    return false;
}

/* out = out op y (y op out when y_first) over the m merged dims, along whose last both are
 * contiguous: the second of the two passes below. Each piece of out is read into a small buffer
 * first, so that the row loop's output is never one of its inputs (its pointers are restrict). */
static void op_in_place(BinaryRow *row, bool y_first, int m, const int64_t *shape, const int64_t *out_strides,
                        const float *y, const int64_t *y_strides, float *out) {
    enum { PIECE = 1024 };
    float piece[PIECE];
    int64_t cols = shape[m - 1];
    NdIter it;
    nditer_init(&it, m - 1, shape, 2, (const int64_t *[]){out_strides, y_strides});
    while (nditer_next(&it))
        for (int64_t i = 0; i < cols; i += PIECE) {
            int64_t k = cols - i < PIECE ? cols - i : PIECE;
            float *o = out + it.offset[0] + i;
            const float *v = y + it.offset[1] + i;
            memcpy(piece, o, (size_t)k * sizeof *o);
            if (y_first) row(k, o, v, 1, piece, 1);
            else row(k, o, piece, 1, v, 1);
        }
}

/* The tiles that a transposed input is copied in: TILE_ROWS rows of the result by TILE_COLS
 * columns, that is TILE_COLS runs of TILE_ROWS floats of the input. */
enum { TILE_ROWS = 256, TILE_COLS = 64 };

/* Where an input's elements of one tile are: p[r * rs + c * cs]. An input whose columns are
 * neither contiguous nor broadcast is copied into buf first, where they are. */
typedef struct {
    const float *p;
    int64_t rs, cs;
} TileInput;

static TileInput tile_input(const float *p, int64_t rs, int64_t cs, int64_t rows, int64_t cols, float *buf) {
    if (cs == 0 || cs == 1) return (TileInput){p, rs, cs};
    kernels()->copy(2, (const int64_t[]){rows, cols}, buf, (const int64_t[]){cols, 1}, p, (const int64_t[]){rs, cs});
    return (TileInput){buf, cols, 1};
}

static void binary_fast(char op, int rank, const int64_t *shape, float *out, const float *a, const int64_t *a_strides,
                        const float *b, const int64_t *b_strides) {
    BinaryRow *row = binary_row(op);
    int64_t out_strides[TENSOR_MAX_RANK], sh[TENSOR_MAX_RANK], st[3][TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, out_strides);
    int m = merge_dims(rank, shape, 3, (const int64_t *[]){out_strides, a_strides, b_strides}, sh, st);
    if (shape_numel(shape, rank) == 0) return;
    if (m == 0) { /* one element */
        row(1, out, a, 0, b, 0);
        return;
    }
    int64_t cols = sh[m - 1], acs = st[1][m - 1], bcs = st[2][m - 1];
    NdIter it;
    /* the last two merged dims: `rows` rows of `cols` results (one row when m is 1) */
    int64_t rows = m >= 2 ? sh[m - 2] : 1, ors = m >= 2 ? st[0][m - 2] : 0;
    int64_t ars = m >= 2 ? st[1][m - 2] : 0, brs = m >= 2 ? st[2][m - 2] : 0;
    if ((acs == 0 || acs == 1) && (bcs == 0 || bcs == 1)) { /* rows, as they lie */
        /* the odometer over the dims before the last two; a plain loop over the rows, which are
         * short in lesson 7 (64 floats), so that stepping the odometer costs less than a row */
        nditer_init(&it, m >= 2 ? m - 2 : 0, sh, 3, (const int64_t *[]){st[0], st[1], st[2]});
        while (nditer_next(&it))
            for (int64_t r = 0; r < rows; r++)
                row(cols, out + it.offset[0] + r * ors, a + it.offset[1] + r * ars, acs, b + it.offset[2] + r * brs,
                    bcs);
        return;
    }
    /* Two inputs of the result's size, one of them read down the columns: two passes, each of
     * which reads memory in order. The core's transposing copy puts that input into out, then
     * the op runs over out and the other input as they lie (tiles would read the other input in
     * short pieces, one per row of a tile). */
    if (!is_broadcast(m, st[1]) && !is_broadcast(m, st[2]) && (acs == 1) != (bcs == 1)) {
        bool b_in_out = acs == 1;
        kernels()->copy(rank, shape, out, out_strides, b_in_out ? b : a, b_in_out ? b_strides : a_strides);
        op_in_place(row, b_in_out, m, sh, st[0], b_in_out ? a : b, b_in_out ? st[1] : st[2], out);
        return;
    }
    /* Tiles over the last two merged dims (rows of `cols` results), an odometer over the rest. */
    bool stream = SIMD_STREAMS && (uint64_t)shape_numel(shape, rank) > SIMD_STREAM_BYTES / sizeof(float);
    static _Thread_local float a_buf[TILE_ROWS * TILE_COLS], b_buf[TILE_ROWS * TILE_COLS], line[TILE_COLS];
    nditer_init(&it, m >= 2 ? m - 2 : 0, sh, 3, (const int64_t *[]){st[0], st[1], st[2]});
    while (nditer_next(&it))
        for (int64_t r0 = 0; r0 < rows; r0 += TILE_ROWS)
            for (int64_t c0 = 0; c0 < cols; c0 += TILE_COLS) {
                int64_t tr = rows - r0 < TILE_ROWS ? rows - r0 : TILE_ROWS;
                int64_t tc = cols - c0 < TILE_COLS ? cols - c0 : TILE_COLS;
                TileInput x = tile_input(a + it.offset[1] + r0 * ars + c0 * acs, ars, acs, tr, tc, a_buf);
                TileInput y = tile_input(b + it.offset[2] + r0 * brs + c0 * bcs, brs, bcs, tr, tc, b_buf);
                /* the next tile's lines of a transposed a (the usual case), a share at each row */
                int64_t nc0 = c0 + TILE_COLS, ntc = cols - nc0 < TILE_COLS ? cols - nc0 : TILE_COLS;
                int64_t run_lines = (tr + 15) / 16, at = 0;
                int64_t left = ars == 1 && acs > 16 && nc0 < cols ? ntc * run_lines : 0, share = (left + tr - 1) / tr;
                const float *run = a + it.offset[1] + r0 + nc0 * acs;
                for (int64_t r = 0; r < tr; r++) {
                    for (int64_t q = 0; q < share && left > 0; q++, left--) {
                        __builtin_prefetch(run + at * 16, 0, 2);
                        if (++at == run_lines) at = 0, run += acs;
                    }
                    float *o = out + it.offset[0] + (r0 + r) * ors + c0;
                    row(tc, stream ? line : o, x.p + r * x.rs, x.cs, y.p + r * y.rs, y.cs);
                    if (stream) stream_copy(o, line, tc);
                }
            }
    if (stream) stream_end();
}

/* ==== the backward ========================================================================= */

/* The six derivatives, times g: d out / d a and d out / d b of each op, with u = a and v = b. */
typedef enum { SAME, NEGATED, TIMES_B, TIMES_A, OVER_B, QUOTIENT } Term;

SIMD_INLINE float term(Term t, float g, float u, float v) {
    switch (t) {
    case SAME: return g;              /* a + b (both), a - b (a): 1 */
    case NEGATED: return -g;          /* a - b (b): -1 */
    case TIMES_B: return g * v;       /* a * b (a) */
    case TIMES_A: return g * u;       /* a * b (b) */
    case OVER_B: return g / v;        /* a / b (a) */
    default: return -g * u / (v * v); /* a / b (b) */
    }
}

/* One row of the gradient of one operand: d[i * sd] += term(g[i], a[i * su], b[i * sv]), or,
 * without accumulate, = 0 + the term (as into a cleared gradient). A destination of stride 0
 * (an operand broadcast along the row) takes the row's sum once, its terms a chunk at a time,
 * added by the summation policy (sumf_row, simd_sum.h); one of stride 1 with inputs of stride 1
 * or 0 gets loops eight at a time, as row_body's. */
SIMD_INLINE void grad_row_body(Term t, int64_t n, const float *restrict g, const float *restrict a, int64_t su,
                               const float *restrict b, int64_t sv, float *restrict d, int64_t sd, bool accumulate) {
    int64_t i = 0;
    if (sd == 0) {
        float terms[SUM_CHUNK];
        double total = 0.0;
        for (int64_t i0 = 0; i0 < n; i0 += SUM_CHUNK) {
            int64_t m = n - i0 < SUM_CHUNK ? n - i0 : SUM_CHUNK;
            if (su == 1 && sv == 0) /* d is b's gradient: b is broadcast along the row, a is not */
                for (int64_t k = 0; k < m; k++) terms[k] = term(t, g[i0 + k], a[i0 + k], b[0]);
            else if (su == 0 && sv == 1) /* d is a's gradient, the other way round */
                for (int64_t k = 0; k < m; k++) terms[k] = term(t, g[i0 + k], a[0], b[i0 + k]);
            else
                for (int64_t k = 0; k < m; k++) terms[k] = term(t, g[i0 + k], a[(i0 + k) * su], b[(i0 + k) * sv]);
            total += sumf_row(terms, m);
        }
        d[0] = (float)((accumulate ? d[0] : 0.0) + total);
    } else if (!accumulate && sd == 1 && su == 1 && sv == 1) { /* a residual add's: no read of d */
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) d[i + k] = 0.0f + term(t, g[i + k], a[i + k], b[i + k]);
        for (; i < n; i++) d[i] = 0.0f + term(t, g[i], a[i], b[i]);
    } else if (!accumulate) {
        for (; i < n; i++) d[i * sd] = 0.0f + term(t, g[i], a[i * su], b[i * sv]);
    } else if (sd == 1 && su == 1 && sv == 1) {
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) d[i + k] += term(t, g[i + k], a[i + k], b[i + k]);
        for (; i < n; i++) d[i] += term(t, g[i], a[i], b[i]);
    } else if (sd == 1 && su == 1 && sv == 0) {
        const float v = b[0];
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) d[i + k] += term(t, g[i + k], a[i + k], v);
        for (; i < n; i++) d[i] += term(t, g[i], a[i], v);
    } else if (sd == 1 && su == 0 && sv == 1) {
        const float u = a[0];
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) d[i + k] += term(t, g[i + k], u, b[i + k]);
        for (; i < n; i++) d[i] += term(t, g[i], u, b[i]);
    } else {
        for (; i < n; i++) d[i * sd] += term(t, g[i], a[i * su], b[i * sv]);
    }
}

typedef void GradRow(int64_t n, const float *g, const float *a, int64_t su, const float *b, int64_t sv, float *d,
                     int64_t sd, bool accumulate);
#define GRAD_ROW(name, t)                                                                                         \
    static void name(int64_t n, const float *g, const float *a, int64_t su, const float *b, int64_t sv, float *d, \
                     int64_t sd, bool accumulate) {                                                               \
        grad_row_body(t, n, g, a, su, b, sv, d, sd, accumulate);                                                  \
    }
GRAD_ROW(grad_same, SAME)
GRAD_ROW(grad_negated, NEGATED)
GRAD_ROW(grad_times_b, TIMES_B)
GRAD_ROW(grad_times_a, TIMES_A)
GRAD_ROW(grad_over_b, OVER_B)
GRAD_ROW(grad_quotient, QUOTIENT)
#undef GRAD_ROW

static GradRow *grad_row(char op, bool wrt_a) {
    switch (op) {
    case '+': return grad_same;
    case '-': return wrt_a ? grad_same : grad_negated;
    case '*': return wrt_a ? grad_times_b : grad_times_a;
    default: return wrt_a ? grad_over_b : grad_quotient;
    }
}

static void binary_backward_fast(char op, int rank, const int64_t *shape, const float *g, const float *a,
                                 const int64_t *a_strides, const float *b, const int64_t *b_strides, float *ga,
                                 const int64_t *ga_strides, float *gb, const int64_t *gb_strides, bool accumulate) {
    int64_t g_strides[TENSOR_MAX_RANK], sh[TENSOR_MAX_RANK], st[5][TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, g_strides);
    int m = merge_dims(rank, shape, 5, (const int64_t *[]){g_strides, a_strides, b_strides, ga_strides, gb_strides}, sh,
                       st);
    if (shape_numel(shape, rank) == 0) return;
    /* one row at a time along the last merged dim (one element is a row of 1), the rows of the
     * last two in a plain loop and an odometer over the dims before them, as in the forward */
    int64_t cols = m > 0 ? sh[m - 1] : 1, rows = m >= 2 ? sh[m - 2] : 1, s[5], r[5];
    for (int k = 0; k < 5; k++) s[k] = m > 0 ? st[k][m - 1] : 0, r[k] = m >= 2 ? st[k][m - 2] : 0;
    NdIter it;
    nditer_init(&it, m >= 2 ? m - 2 : 0, sh, 5, (const int64_t *[]){st[0], st[1], st[2], st[3], st[4]});
    GradRow *row_a = grad_row(op, true), *row_b = grad_row(op, false);
    while (nditer_next(&it))
        for (int64_t i = 0; i < rows; i++) {
            int64_t o[5];
            for (int k = 0; k < 5; k++) o[k] = it.offset[k] + i * r[k];
            if (ga) row_a(cols, g + o[0], a + o[1], s[1], b + o[2], s[2], ga + o[3], s[3], accumulate);
            if (gb) row_b(cols, g + o[0], a + o[1], s[1], b + o[2], s[2], gb + o[4], s[4], accumulate);
        }
}

KERNELS_FAST(broadcast, .binary = binary_fast, .binary_backward = binary_backward_fast);
