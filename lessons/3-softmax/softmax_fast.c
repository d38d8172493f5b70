/*
 * softmax_fast.c - lesson 3's softmax, log-softmax and cross-entropy, fast: the same three
 * passes over each row as softmax.c's reference kernels, a vfloat (16 floats with AVX-512, else
 * 8) at a time around the vector exp of simd_lanes.h (shared with lesson 7), and their backwards. The compiler
 * cannot vectorize these loops itself at the course's -O2: it has no vector exp.
 *
 * A strided view (a transposed one) is first copied into the contiguous layout by the core's
 * transposing copy (kernels_contiguous), and each row is worked on from there.
 * docs/3-softmax.md ("How fast") measures both.
 */
#include <stdlib.h>

#include "kernels_fast.h"

enum { L = VFLOAT_LANES };

/* e^(x - shift) of the last count < L floats of a row, from a padded copy through the exp,
 * which gives the same bits as exp_unclamped for the rows' x - max: a value's exp does not
 * depend on where in the row it sits. */
SIMD_INLINE vfloat exp_partial(const float *x, int64_t count, float shift, float *out) {
    float buf[L] = {0};
    for (int64_t i = 0; i < count; i++) buf[i] = x[i];
    vfloat e = VFLOAT(exp)(VFLOAT(load)(buf) - shift);
    VFLOAT(store)(buf, e);
    for (int64_t i = 0; i < count; i++) out[i] = buf[i];
    return e;
}

static void exp_fast(const float *x, int64_t n, float *out) {
    int64_t i = 0;
    for (; i + L <= n; i += L) VFLOAT(store)(out + i, VFLOAT(exp)(VFLOAT(load)(x + i)));
    if (i < n) exp_partial(x + i, n - i, 0.0f, out + i);
}

SIMD_INLINE float row_max(const float *x, int64_t d) {
    /* max skips a nan, like `if (v > m)` */
    vfloat m0 = VFLOAT(splat)(-INFINITY), m1 = m0;
    int64_t j = 0;
    for (; j + 2 * L <= d; j += 2 * L) {
        m0 = VFLOAT(max)(VFLOAT(load)(x + j), m0);
        m1 = VFLOAT(max)(VFLOAT(load)(x + j + L), m1);
    }
    for (; j + L <= d; j += L) m0 = VFLOAT(max)(VFLOAT(load)(x + j), m0);
    float m = VFLOAT(max_lanes)(VFLOAT(max)(m0, m1));
    for (; j < d; j++)
        if (x[j] > m) m = x[j];
    return m;
}

/* The sum of e^(x - m) over the row, each term into out unless out is NULL: in double, as the
 * reference adds them (a float sum stops growing at 2^24, which a long row can reach). */
SIMD_INLINE double row_exp_sum(const float *x, int64_t d, float m, float *out) {
    VFLOAT(sumd) s = {0};
    int64_t j = 0;
    for (; j + L <= d; j += L) {
        vfloat e = VFLOAT(exp_unclamped)(VFLOAT(load)(x + j) - m); /* <= 0, or nan */
        if (out) VFLOAT(store)(out + j, e);
        VFLOAT(sumd_add)(&s, e);
    }
    double sum = VFLOAT(sumd_total)(s);
    if (j < d) {
        float tail[L];
        VFLOAT(store)(tail, exp_partial(x + j, d - j, m, out ? out + j : tail));
        for (int64_t i = 0; i < d - j; i++) sum += tail[i];
    }
    return sum;
}

/* s = softmax(x) or y = log_softmax(x) of one contiguous row: max, exps and their sum, then a
 * scale by 1 / sum or a shift by the log of the sum. */
SIMD_INLINE void row(bool log_softmax, const float *x, int64_t d, float *out) {
    float m = row_max(x, d);
    int64_t j = 0;
    if (log_softmax) {
        float log_sum = (float)log(row_exp_sum(x, d, m, NULL));
        for (; j + L <= d; j += L) VFLOAT(store)(out + j, (VFLOAT(load)(x + j) - m) - log_sum);
        for (; j < d; j++) out[j] = (x[j] - m) - log_sum;
    } else {
        float k = (float)(1.0 / row_exp_sum(x, d, m, out));
        for (; j + L <= d; j += L) VFLOAT(store)(out + j, VFLOAT(load)(out + j) * k);
        for (; j < d; j++) out[j] *= k;
    }
}

/* ==== short rows: eight at a time, one in each lane ======================================= */

/* A row of at most 16 floats (attention's scores over a context of 16) is one or two vectors,
 * and the passes above spend their time on its horizontal steps (a max and a sum across the
 * lanes), each a chain of dependent instructions. Eight rows turned into columns put one row in
 * each lane: every pass is then d plain vector steps, and each row's sums run in the
 * reference's order, j = 0, 1, ... (docs/3-softmax.md). */
enum { SHORT_ROW = 16 };

SIMD_INLINE bool is_short_row(int64_t d) { return d % 4 == 0 && d >= 4 && d <= SHORT_ROW; }

/* row's passes over eight rows of x at once (out may be x) */
SIMD_INLINE void short_rows(bool log_softmax, const float *x, int64_t d, float *out) {
    float c[SHORT_ROW * 8];
    rows_to_columns(8, x, d, d, c, 8);
    vf8 m = vf8_splat(-INFINITY);
    for (int64_t j = 0; j < d; j++) m = vf8_max(vf8_load(c + j * 8), m); /* skips a nan, as row_max */
    vf8_sumd sums = {0};
    for (int64_t j = 0; j < d; j++) {
        vf8 e = vf8_exp_unclamped(vf8_load(c + j * 8) - m);
        if (!log_softmax) vf8_store(c + j * 8, e);
        vf8_sumd_add(&sums, e);
    }
    if (log_softmax) {
        float log_sum[8];
        for (int r = 0; r < 8; r++) log_sum[r] = (float)log(vf8_sumd_lane(sums, r));
        for (int64_t j = 0; j < d; j++) vf8_store(c + j * 8, (vf8_load(c + j * 8) - m) - vf8_load(log_sum));
    } else {
        vf8 k = vf8_sumd_reciprocals(sums);
        for (int64_t j = 0; j < d; j++) vf8_store(c + j * 8, vf8_load(c + j * 8) * k);
    }
    columns_to_rows(8, c, 8, d, out, d);
}

/* `rows` contiguous rows of x, eight at a time when they are short, the rest one by one */
static void rows(bool log_softmax, const float *x, int64_t n_rows, int64_t d, float *out) {
    int64_t r = 0;
    if (is_short_row(d))
        for (; r + 8 <= n_rows; r += 8) short_rows(log_softmax, x + r * d, d, out + r * d);
    for (; r < n_rows; r++) row(log_softmax, x + r * d, d, out + r * d);
}

/* A view whose rows are not contiguous (a transposed one) is first copied whole, in the
 * contiguous layout of its shape (kernels_contiguous: tiles, and streaming stores for a large
 * one), and its rows are worked on from there: copying the rows a block at a time instead reads
 * each row of the stored tensor in short pieces. */
static void softmax_rows_fast(bool log_softmax, int rank, const int64_t *shape, const float *x,
                              const int64_t *x_strides, float *out) {
    int64_t d = shape[rank - 1], n = shape_numel(shape, rank);
    if (d == 0) return;
    if (strides_are_contiguous(shape, rank, x_strides)) { /* the rows one after another: all in one call */
        rows(log_softmax, x, n / d, d, out);
        return;
    }
    if (strides_are_contiguous(&shape[rank - 1], 1, &x_strides[rank - 1])) { /* each row contiguous */
        NdIter it;
        nditer_init(&it, rank - 1, shape, 1, &x_strides);
        for (; nditer_next(&it); out += d) rows(log_softmax, x + it.offset[0], 1, d, out);
        return;
    }
    /* the rows are copied into out, then each is replaced by its softmax (the passes work in place) */
    kernels_contiguous(rank, shape, x, x_strides, out);
    rows(log_softmax, out, n / d, d, out);
}

/* ==== the backward ========================================================================= */

/* softmax: gx += s * (g - dot(g, s)), g - dot in double as the reference takes it; log-softmax:
 * gx += g - e^y * sum(g) (softmax.c) */
SIMD_INLINE void row_backward(bool log_softmax, const float *y, const float *g, int64_t d, float *gx) {
    VFLOAT(sumd) sums = {0};
    int64_t j = 0;
    for (; j + L <= d; j += L)
        VFLOAT(sumd_add_products)(&sums, VFLOAT(load)(g + j), log_softmax ? VFLOAT(splat)(1.0f) : VFLOAT(load)(y + j));
    double dot = VFLOAT(sumd_total)(sums);
    for (; j < d; j++) dot += (double)g[j] * (log_softmax ? 1.0f : y[j]);
    float k = (float)dot;
    for (j = 0; j + L <= d; j += L) {
        vfloat yj = VFLOAT(load)(y + j), gj = VFLOAT(load)(g + j);
        vfloat term = log_softmax
                          ? gj - VFLOAT(exp_unclamped)(yj) * k /* y <= 0 */
                          : yj * VFLOAT(from_doubles)(VFLOAT(low_double)(gj) - dot, VFLOAT(high_double)(gj) - dot);
        VFLOAT(store)(gx + j, VFLOAT(load)(gx + j) + term);
    }
    if (j < d) {
        float e[L];
        if (log_softmax) exp_partial(y + j, d - j, 0.0f, e);
        for (int64_t i = 0; j + i < d; i++)
            gx[j + i] += log_softmax ? g[j + i] - e[i] * k : y[j + i] * (float)(g[j + i] - dot);
    }
}

static void softmax_backward_fast(bool log_softmax, int64_t n_rows, int64_t d, const float *y, const float *g,
                                  float *gx) {
    for (int64_t p = 0; p < n_rows; p++, y += d, g += d, gx += d) row_backward(log_softmax, y, g, d, gx);
}

/* ==== cross-entropy ======================================================================== */

/* -log_softmax(row)[t], as softmax.c's row_cross_entropy computes it. */
SIMD_INLINE double row_cross_entropy(const float *x, int64_t d, int64_t t) {
    float m = row_max(x, d);
    return (double)(m - x[t]) + (float)log(row_exp_sum(x, d, m, NULL));
}

static double cross_entropy_fast(int64_t n, int64_t c, const float *logits, int64_t rs, int64_t cs,
                                 const int64_t *targets) {
    float *copy = NULL;
    if (!strides_are_contiguous(&c, 1, &cs)) { /* the rows made contiguous, or, with no memory, the reference */
        copy = malloc((size_t)(n * c) * sizeof *copy);
        if (!copy) return cross_entropy_reference(n, c, logits, rs, cs, targets);
        logits = kernels_contiguous(2, (const int64_t[]){n, c}, logits, (const int64_t[]){rs, cs}, copy), rs = c;
    }
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) total += row_cross_entropy(logits + i * rs, c, targets[i]);
    free(copy);
    return total;
}

/* Rows of contiguous logits no longer than the buffer for their exps; others go to the
 * reference. Each row: its exps (into e) and their sum, then gx += scale * (e / sum - onehot). */
static void cross_entropy_backward_fast(int64_t n, int64_t c, const float *logits, int64_t rs, int64_t cs,
                                        const int64_t *targets, float scale, float *gx) {
    enum { MAX_ROW = 1024 };
    if (!strides_are_contiguous(&c, 1, &cs) || c > MAX_ROW) {
        cross_entropy_backward_reference(n, c, logits, rs, cs, targets, scale, gx);
        return;
    }
    float e[MAX_ROW];
    for (int64_t i = 0; i < n; i++, gx += c) {
        const float *x = logits + i * rs;
        float k = (float)((double)scale / row_exp_sum(x, c, row_max(x, c), e));
        int64_t j = 0;
        for (; j + L <= c; j += L) VFLOAT(store)(gx + j, VFLOAT(load)(gx + j) + VFLOAT(load)(e + j) * k);
        for (; j < c; j++) gx[j] += e[j] * k;
        gx[targets[i]] -= scale;
    }
}

KERNELS_FAST(softmax, .exp = exp_fast, .softmax_rows = softmax_rows_fast, .softmax_backward = softmax_backward_fast,
             .cross_entropy = cross_entropy_fast, .cross_entropy_backward = cross_entropy_backward_fast);
