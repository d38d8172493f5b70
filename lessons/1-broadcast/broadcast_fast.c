/*
 * broadcast_fast.c - lesson 1's elementwise ops, fast: the same out[i] = a[i] op b[i] as
 * broadcast.c's reference kernels, element for element: binary_fast and binary_backward_fast,
 * in the table (kernels.h) for every forward and backward of add, sub, mul and div unless
 * COURSE_KERNELS=reference.
 *   - Dims that line up are merged (a contiguous (4096,4096) is one row of 16M elements), and
 *     each row is a plain loop over inputs that are contiguous or broadcast (stride 1 or 0).
 *   - An input read down the columns of the result (a transposed one) is first copied, one tile
 *     at a time, into a small buffer by the core's transposing copy (kernels.c); the same row
 *     loops then read the buffer, while it is in the cache.
 *   - A tiled result larger than the cache is written with streaming stores, a tile row at a time.
 *   - Every row loop is compiled twice, plain and for AVX2 (which runs where kernels_mode() is
 *     KERNELS_NATIVE); the backward sums a row into a broadcast gradient in eight running sums.
 * docs/1-broadcast.md ("How fast") measures each of these.
 */
#include <string.h>

#include "kernels_fast.h"
#include "platform.h"

/* Every row loop below is compiled twice: for the portable build (on x86-64, SSE: 4 floats a
 * register; NEON on aarch64), and for this CPU's vector instructions (VECTOR_NATIVE: AVX2, 8
 * floats), which runs where kernels_mode() is KERNELS_NATIVE. The same C, so the same results;
 * only the width of the registers the compiler puts eight copies of a statement in differs. */

/* One row of n results, o[i] = x[i * sx] op y[i * sy], o contiguous. Strides of 1 or 0 (the
 * usual cases) get loops over restrict pointers eight elements at a time: gcc at -O2 does not
 * vectorize a loop of unknown length, but it does turn eight copies of one statement into a
 * vector instruction. The op is chosen once per call, never per element. */
#define BINARY_ROW(name, expr) BINARY_ROW_AS(name, , expr) BINARY_ROW_AS(name##_avx2, VECTOR_NATIVE, expr)
#define BINARY_ROW_AS(name, target, expr)                                                                    \
    target static void name(int64_t n, float *restrict o, const float *restrict x, int64_t sx,               \
                            const float *restrict y, int64_t sy) {                                           \
        int64_t i = 0;                                                                                       \
        if (sx == 1 && sy == 1) {                                                                            \
            for (; i + 8 <= n; i += 8)                                                                       \
                for (int k = 0; k < 8; k++) { float u = x[i + k], v = y[i + k]; o[i + k] = (expr); }         \
            for (; i < n; i++) { float u = x[i], v = y[i]; o[i] = (expr); }                                  \
        } else if (sx == 1 && sy == 0) {                                                                     \
            const float v = y[0];                                                                            \
            for (; i + 8 <= n; i += 8)                                                                       \
                for (int k = 0; k < 8; k++) { float u = x[i + k]; o[i + k] = (expr); }                       \
            for (; i < n; i++) { float u = x[i]; o[i] = (expr); }                                            \
        } else if (sx == 0 && sy == 1) {                                                                     \
            const float u = x[0];                                                                            \
            for (; i + 8 <= n; i += 8)                                                                       \
                for (int k = 0; k < 8; k++) { float v = y[i + k]; o[i + k] = (expr); }                       \
            for (; i < n; i++) { float v = y[i]; o[i] = (expr); }                                            \
        } else {                                                                                             \
            for (; i < n; i++) { float u = x[i * sx], v = y[i * sy]; o[i] = (expr); }                        \
        }                                                                                                    \
    }
BINARY_ROW(add_row, u + v)
BINARY_ROW(sub_row, u - v)
BINARY_ROW(mul_row, u * v)
BINARY_ROW(div_row, u / v)
#undef BINARY_ROW
#undef BINARY_ROW_AS

typedef void BinaryRow(int64_t n, float *o, const float *x, int64_t sx, const float *y, int64_t sy);

static BinaryRow *binary_row(char op, KernelMode mode) {
    bool avx2 = mode == KERNELS_NATIVE;
    switch (op) {
    case '+': return avx2 ? add_row_avx2 : add_row;
    case '-': return avx2 ? sub_row_avx2 : sub_row;
    case '*': return avx2 ? mul_row_avx2 : mul_row;
    default: return avx2 ? div_row_avx2 : div_row;
    }
}

/* True when an input has no dim of stride 0 (it is as large as the result). */
static bool is_full(int m, const int64_t *strides) {
    for (int d = 0; d < m; d++)
        if (strides[d] == 0) return false;
    return true;
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
 * columns, that is TILE_COLS runs of TILE_ROWS floats of the input (docs/1-broadcast.md). */
enum { TILE_ROWS = 256, TILE_COLS = 64 };

/* Where an input's elements of one tile are: p[r * rs + c * cs]. An input whose columns are
 * neither contiguous nor broadcast is copied into buf first, where they are. */
typedef struct {
    const float *p;
    int64_t rs, cs;
} TileInput;

static TileInput tile_input(const float *p, int64_t rs, int64_t cs, int64_t rows, int64_t cols, float *buf) {
    if (cs == 0 || cs == 1) return (TileInput){p, rs, cs};
    strided_copy(2, (const int64_t[]){rows, cols}, buf, (const int64_t[]){cols, 1}, p, (const int64_t[]){rs, cs});
    return (TileInput){buf, cols, 1};
}

void binary_fast(char op, int rank, const int64_t *shape, float *out, const float *a, const int64_t *a_strides,
                 const float *b, const int64_t *b_strides) {
    KernelMode mode = kernels_mode();
    BinaryRow *row = binary_row(op, mode);
    int64_t out_strides[TENSOR_MAX_RANK], sh[TENSOR_MAX_RANK], st[3][TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, out_strides);
    int m = kernels_merge_dims(rank, shape, 3, (const int64_t *[]){out_strides, a_strides, b_strides}, sh, st);
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
     * the op runs over out and the other input as they lie. (Tiles read the other input in
     * short pieces, one per row of a tile, and were measured slower: docs/1-broadcast.md.) */
    if (is_full(m, st[1]) && is_full(m, st[2]) && (acs == 1) != (bcs == 1)) {
        bool b_in_out = acs == 1;
        strided_copy(rank, shape, out, out_strides, b_in_out ? b : a, b_in_out ? b_strides : a_strides);
        op_in_place(row, b_in_out, m, sh, st[0], b_in_out ? a : b, b_in_out ? st[1] : st[2], out);
        return;
    }
    /* Tiles over the last two merged dims (rows of `cols` results), an odometer over the rest. */
    bool stream = mode == KERNELS_NATIVE && (uint64_t)shape_numel(shape, rank) > KERNELS_STREAM_BYTES / sizeof(float);
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
                    if (stream) kernels_copy_stream(o, line, tc);
                }
            }
    if (stream) kernels_stream_end();
}

/* ==== the backward ======================================================================= */

/* One row of the gradient of one operand: d[i * sd] += g[i] * (d out / d that operand), with
 * u = a[i * su] and v = b[i * sv] (with store, = over whatever d held; sd is 0 then for one element). A
 * destination of stride 0 (an operand broadcast along the row) takes the row's sum once, added
 * up by the fast kernels' summation policy (kernels_sum in kernels_fast.h); one of stride 1
 * with inputs of stride 1 or 0 gets loops that the compiler vectorizes, as in BINARY_ROW. */
#define GRAD_ROW(name, expr) GRAD_ROW_AS(name, , expr) GRAD_ROW_AS(name##_avx2, VECTOR_NATIVE, expr)
#define GRAD_ROW_AS(name, target, expr)                                                                          \
    target static void name(int64_t n, const float *restrict g, const float *restrict a, int64_t su,            \
                            const float *restrict b, int64_t sv, float *restrict d, int64_t sd, bool store) {    \
        int64_t i = 0;                                                                                           \
        if (sd == 0) { /* the row's sum: its terms a chunk at a time, added by kernels_sum's policy */            \
            float terms[KERNELS_SUM_CHUNK];                                                                      \
            double total = 0.0;                                                                                  \
            for (int64_t i0 = 0; i0 < n; i0 += KERNELS_SUM_CHUNK) {                                              \
                int64_t m = n - i0 < KERNELS_SUM_CHUNK ? n - i0 : KERNELS_SUM_CHUNK;                             \
                if (su == 1 && sv == 0) { /* d is b's gradient: b is broadcast along the row, a is not */      \
                    const float v = b[0];                                                                        \
                    for (int64_t k = 0; k < m; k++) { float gg = g[i0 + k], u = a[i0 + k]; (void)u, (void)v; terms[k] = (expr); } \
                } else if (su == 0 && sv == 1) { /* d is a's gradient, the other way round */                  \
                    const float u = a[0];                                                                        \
                    for (int64_t k = 0; k < m; k++) { float gg = g[i0 + k], v = b[i0 + k]; (void)u, (void)v; terms[k] = (expr); } \
                } else {                                                                                         \
                    for (int64_t k = 0; k < m; k++) { float gg = g[i0 + k], u = a[(i0 + k) * su], v = b[(i0 + k) * sv]; (void)u, (void)v; terms[k] = (expr); } \
                }                                                                                                \
                total += kernels_sum(terms, m);                                                                  \
            }                                                                                                    \
            d[0] = (float)((store ? 0.0 : d[0]) + total); /* one element, with store */                        \
        } else if (sd == 1 && su == 1 && sv == 1 && store) { /* a residual add's: no read of d */                \
            for (; i + 8 <= n; i += 8)                                                                           \
                for (int k = 0; k < 8; k++) { float gg = g[i + k], u = a[i + k], v = b[i + k]; (void)u, (void)v; d[i + k] = 0.0f + (expr); } \
            for (; i < n; i++) { float gg = g[i], u = a[i], v = b[i]; (void)u, (void)v; d[i] = 0.0f + (expr); }         \
        } else if (store) { /* inputs read with other strides, as in the last case */                           \
            for (; i < n; i++) { float gg = g[i], u = a[i * su], v = b[i * sv]; (void)u, (void)v; d[i * sd] = 0.0f + (expr); } \
        } else if (sd == 1 && su == 1 && sv == 1) {                                                              \
            for (; i + 8 <= n; i += 8)                                                                           \
                for (int k = 0; k < 8; k++) { float gg = g[i + k], u = a[i + k], v = b[i + k]; (void)u, (void)v; d[i + k] += (expr); } \
            for (; i < n; i++) { float gg = g[i], u = a[i], v = b[i]; (void)u, (void)v; d[i] += (expr); }        \
        } else if (sd == 1 && su == 1 && sv == 0) {                                                              \
            const float v = b[0];                                                                                \
            for (; i + 8 <= n; i += 8)                                                                           \
                for (int k = 0; k < 8; k++) { float gg = g[i + k], u = a[i + k]; (void)u, (void)v; d[i + k] += (expr); } \
            for (; i < n; i++) { float gg = g[i], u = a[i]; (void)u, (void)v; d[i] += (expr); }                  \
        } else if (sd == 1 && su == 0 && sv == 1) {                                                              \
            const float u = a[0];                                                                                \
            for (; i + 8 <= n; i += 8)                                                                           \
                for (int k = 0; k < 8; k++) { float gg = g[i + k], v = b[i + k]; (void)u, (void)v; d[i + k] += (expr); } \
            for (; i < n; i++) { float gg = g[i], v = b[i]; (void)u, (void)v; d[i] += (expr); }                  \
        } else {                                                                                                 \
            for (; i < n; i++) { float gg = g[i], u = a[i * su], v = b[i * sv]; (void)u, (void)v; d[i * sd] += (expr); } \
        }                                                                                                        \
    }
GRAD_ROW(grad_same, gg)              /* a + b (both), a - b (a): 1 */
GRAD_ROW(grad_negated, -gg)          /* a - b (b): -1 */
GRAD_ROW(grad_times_b, gg * v)       /* a * b (a) */
GRAD_ROW(grad_times_a, gg * u)       /* a * b (b) */
GRAD_ROW(grad_over_b, gg / v)        /* a / b (a) */
GRAD_ROW(grad_quotient, -gg * u / (v * v)) /* a / b (b) */
#undef GRAD_ROW
#undef GRAD_ROW_AS

typedef void GradRow(int64_t n, const float *g, const float *a, int64_t su, const float *b, int64_t sv, float *d,
                     int64_t sd, bool store);

static GradRow *grad_row(char op, bool wrt_a, KernelMode mode) {
    bool avx2 = mode == KERNELS_NATIVE;
    switch (op) {
    case '+': return avx2 ? grad_same_avx2 : grad_same;
    case '-': return wrt_a ? (avx2 ? grad_same_avx2 : grad_same) : (avx2 ? grad_negated_avx2 : grad_negated);
    case '*': return wrt_a ? (avx2 ? grad_times_b_avx2 : grad_times_b) : (avx2 ? grad_times_a_avx2 : grad_times_a);
    default: return wrt_a ? (avx2 ? grad_over_b_avx2 : grad_over_b) : (avx2 ? grad_quotient_avx2 : grad_quotient);
    }
}

void binary_backward_fast(char op, int rank, const int64_t *shape, const float *g, const float *a,
                          const int64_t *a_strides, const float *b, const int64_t *b_strides, float *ga,
                          const int64_t *ga_strides, float *gb, const int64_t *gb_strides, bool store) {
    KernelMode mode = kernels_mode();
    int64_t g_strides[TENSOR_MAX_RANK], sh[TENSOR_MAX_RANK], st[5][TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, g_strides);
    int m = kernels_merge_dims(rank, shape, 5,
                               (const int64_t *[]){g_strides, a_strides, b_strides, ga_strides, gb_strides}, sh, st);
    if (shape_numel(shape, rank) == 0) return;
    /* one row at a time along the last merged dim (one element is a row of 1), the rows of the
     * last two in a plain loop and an odometer over the dims before them, as in the forward */
    int64_t cols = m > 0 ? sh[m - 1] : 1, rows = m >= 2 ? sh[m - 2] : 1, s[5], r[5];
    for (int k = 0; k < 5; k++) s[k] = m > 0 ? st[k][m - 1] : 0, r[k] = m >= 2 ? st[k][m - 2] : 0;
    if (s[0] != 1 && m > 0) { /* g is contiguous, so its last merged dim has stride 1 */
        binary_backward_reference(op, rank, shape, g, a, a_strides, b, b_strides, ga, ga_strides, gb, gb_strides,
                                  store);
        return;
    }
    NdIter it;
    nditer_init(&it, m >= 2 ? m - 2 : 0, sh, 5, (const int64_t *[]){st[0], st[1], st[2], st[3], st[4]});
    GradRow *row_a = grad_row(op, true, mode), *row_b = grad_row(op, false, mode);
    while (nditer_next(&it))
        for (int64_t i = 0; i < rows; i++) {
            int64_t o[5];
            for (int k = 0; k < 5; k++) o[k] = it.offset[k] + i * r[k];
            if (ga) row_a(cols, g + o[0], a + o[1], s[1], b + o[2], s[2], ga + o[3], s[3], store);
            if (gb) row_b(cols, g + o[0], a + o[1], s[1], b + o[2], s[2], gb + o[4], s[4], store);
        }
}
