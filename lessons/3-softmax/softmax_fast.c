/*
 * softmax_fast.c - lesson 3's softmax, log-softmax and cross-entropy, fast: the same three
 * passes over each row as softmax.c's reference kernels, eight floats at a time around a
 * vector exp, and their backwards. kernels.c puts softmax_rows_fast, cross_entropy_fast and
 * their *_backward_fast in the table unless COURSE_KERNELS=reference.
 *
 * The compiler's own vectorizer cannot do this at the course's default -O2: it has no vector
 * exp, and gcc 12 at -O2 vectorizes only the simplest loops. So the passes are written with
 * vf8, the vector type of common/platform.h, and its exp (shared with lesson 7's GELU), once:
 * compiled for the portable build (two SSE or NEON registers a vf8) and for AVX2 and FMA,
 * which runs under COURSE_KERNELS=native on a CPU that has them.
 *
 * A strided view (a transposed one) is first copied into the contiguous layout by the core's
 * transposing copy (kernels_contiguous), and each row is worked on from there.
 * docs/3-softmax.md ("How fast") measures both.
 */
#include "softmax_fast.h"

#include <math.h>
#include <stdlib.h>

#include "kernels_fast.h"
#include "platform.h"

/* e^(x - shift) of the last count < 8 floats of a row, from a padded copy through vf8_exp,
 * which gives the same bits as vf8_exp_unclamped for the rows' x - max: a value's exp does not
 * depend on where in the row it sits. */
VECTOR_BODY vf8 exp_partial(const float *x, int64_t count, float shift, float *out) {
    float buf[8] = {0};
    for (int64_t i = 0; i < count; i++) buf[i] = x[i];
    vf8 e = vf8_exp(vf8_load(buf) - shift);
    vf8_store(buf, e);
    for (int64_t i = 0; i < count; i++) out[i] = buf[i];
    return e;
}

VECTOR_BODY void exp_body(const float *x, int64_t n, float *out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) vf8_store(out + i, vf8_exp(vf8_load(x + i)));
    if (i < n) exp_partial(x + i, n - i, 0.0f, out + i);
}

VECTOR_BODY float row_max(const float *x, int64_t d) {
    /* vf8_max skips a nan, like `if (v > m)` */
    vf8 m0 = vf8_splat(-INFINITY), m1 = m0;
    int64_t j = 0;
    for (; j + 16 <= d; j += 16) {
        m0 = vf8_max(vf8_load(x + j), m0);
        m1 = vf8_max(vf8_load(x + j + 8), m1);
    }
    for (; j + 8 <= d; j += 8) m0 = vf8_max(vf8_load(x + j), m0);
    float m = vf8_max_lanes(vf8_max(m0, m1));
    for (; j < d; j++)
        if (x[j] > m) m = x[j];
    return m;
}

/* Each e^(x - m) is widened to double before it is added, into eight running sums (two
 * vectors of four doubles), as the reference adds them in double (the summation policy,
 * kernels_fast.h): a float sum stops growing at 2^24, which a long row can reach. */
VECTOR_BODY double row_exp_sum(const float *x, int64_t d, float m, float *out) {
    vd4 s0 = {0}, s1 = {0};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        vf8 e = vf8_exp_unclamped(vf8_load(x + j) - m); /* <= 0, or nan */
        if (out) vf8_store(out + j, e);
        s0 += vf8_low_double(e);
        s1 += vf8_high_double(e);
    }
    vd4 s = s0 + s1;
    double sum = (s[0] + s[1]) + (s[2] + s[3]);
    if (j < d) {
        float tail[8];
        vf8_store(tail, exp_partial(x + j, d - j, m, out ? out + j : tail));
        for (int64_t i = 0; i < d - j; i++) sum += tail[i];
    }
    return sum;
}

VECTOR_BODY void row_scale(float *s, int64_t d, float k) {
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) vf8_store(s + j, vf8_load(s + j) * k);
    for (; j < d; j++) s[j] *= k;
}

VECTOR_BODY void row_shift(const float *x, int64_t d, float m, float log_sum, float *y) {
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) vf8_store(y + j, (vf8_load(x + j) - m) - log_sum);
    for (; j < d; j++) y[j] = (x[j] - m) - log_sum;
}

/* s = softmax(x) or y = log_softmax(x) of one contiguous row: max, exps and their sum, then a
 * scale by 1 / sum or a shift by the log of the sum. */
VECTOR_BODY void row_body(bool log_softmax, const float *x, int64_t d, float *out) {
    float m = row_max(x, d);
    if (log_softmax) row_shift(x, d, m, (float)log(row_exp_sum(x, d, m, NULL)), out);
    else row_scale(out, d, (float)(1.0 / row_exp_sum(x, d, m, out)));
}

/* -log_softmax(row)[t], as softmax.c's row_cross_entropy computes it. */
VECTOR_BODY double row_cross_entropy_body(const float *x, int64_t d, int64_t t) {
    float m = row_max(x, d);
    return (double)(m - x[t]) + (float)log(row_exp_sum(x, d, m, NULL));
}

/* The reference's double sums, in lanes of doubles: sum of g * s (g * s in double) or of g */
VECTOR_BODY double row_dot_double(const float *g, const float *s, int64_t d) {
    vd4 s0 = {0}, s1 = {0};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        vf8 gj = vf8_load(g + j), sj = s ? vf8_load(s + j) : vf8_splat(1.0f);
        s0 += vf8_low_double(gj) * vf8_low_double(sj);
        s1 += vf8_high_double(gj) * vf8_high_double(sj);
    }
    vd4 t = s0 + s1;
    double total = (t[0] + t[1]) + (t[2] + t[3]);
    for (; j < d; j++) total += (double)g[j] * (s ? s[j] : 1.0f);
    return total;
}

/* softmax: gx += s * (g - dot(g, s)), g - dot in double as the reference takes it; log-softmax:
 * gx += g - e^y * sum(g) (softmax.c) */
VECTOR_BODY void row_backward_body(bool log_softmax, const float *y, const float *g, int64_t d, float *gx) {
    double dot = row_dot_double(g, log_softmax ? NULL : y, d);
    float k = (float)dot;
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        vf8 yj = vf8_load(y + j), gj = vf8_load(g + j);
        vf8 term = log_softmax ? gj - vf8_exp_unclamped(yj) * k /* y <= 0 */
                               : yj * vf8_from_doubles(vf8_low_double(gj) - dot, vf8_high_double(gj) - dot);
        vf8_store(gx + j, vf8_load(gx + j) + term);
    }
    if (j < d) {
        float e[8];
        if (log_softmax) exp_partial(y + j, d - j, 0.0f, e);
        for (int64_t i = 0; j + i < d; i++)
            gx[j + i] += log_softmax ? g[j + i] - e[i] * k : y[j + i] * (float)(g[j + i] - dot);
    }
}

VECTOR_BODY void rows_backward_body(bool log_softmax, int64_t rows, int64_t d, const float *y, const float *g,
                                    float *gx) {
    for (int64_t p = 0; p < rows; p++, y += d, g += d, gx += d) row_backward_body(log_softmax, y, g, d, gx);
}

/* Cross-entropy's backward of one contiguous row: its exps (into e, d floats) and their sum,
 * then gx += scale * (e / sum - onehot). */
VECTOR_BODY void row_cross_entropy_backward_body(const float *x, int64_t d, int64_t t, float scale, float *e,
                                                 float *gx) {
    float m = row_max(x, d);
    float k = (float)((double)scale / row_exp_sum(x, d, m, e));
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) vf8_store(gx + j, vf8_load(gx + j) + vf8_load(e + j) * k);
    for (; j < d; j++) gx[j] += e[j] * k;
    gx[t] -= scale;
}

/* ==== short rows: eight at a time, one in each lane ======================================= */

/* A row of at most 16 floats (attention's scores over a context of 16) is one or two vectors,
 * and the passes above spend their time on its horizontal steps (a max and a sum across the
 * lanes), each a chain of dependent instructions. Eight rows turned into columns put one row in
 * each lane: every pass is then d plain vector steps, and each row's sums run in the
 * reference's order, j = 0, 1, ... (docs/3-softmax.md measures both; the backward, one pass
 * for the dot and one for the terms, measured no faster this way and stays a row at a time). */
enum { SHORT_ROW = 16 };

VECTOR_BODY bool is_short_row(int64_t d) { return d % 4 == 0 && d >= 4 && d <= SHORT_ROW; }

/* row_body's passes over eight rows of x at once (out may be x) */
VECTOR_BODY void short_rows_body(bool log_softmax, const float *x, int64_t d, float *out) {
    float c[SHORT_ROW * 8];
    rows8_to_columns(x, d, d, c, 8);
    vf8 m = vf8_splat(-INFINITY);
    for (int64_t j = 0; j < d; j++) m = vf8_max(vf8_load(c + j * 8), m); /* skips a nan, as row_max */
    vd4 low = {0}, high = {0};
    for (int64_t j = 0; j < d; j++) {
        vf8 e = vf8_exp_unclamped(vf8_load(c + j * 8) - m);
        if (!log_softmax) vf8_store(c + j * 8, e);
        low += vf8_low_double(e);
        high += vf8_high_double(e);
    }
    if (log_softmax) {
        float log_sum[8];
        for (int r = 0; r < 4; r++) log_sum[r] = (float)log(low[r]), log_sum[r + 4] = (float)log(high[r]);
        for (int64_t j = 0; j < d; j++) vf8_store(c + j * 8, (vf8_load(c + j * 8) - m) - vf8_load(log_sum));
    } else {
        vf8 k = vf8_from_doubles(1.0 / low, 1.0 / high);
        for (int64_t j = 0; j < d; j++) vf8_store(c + j * 8, vf8_load(c + j * 8) * k);
    }
    columns_to_rows8(c, 8, d, out, d);
}

/* `rows` contiguous rows of x, eight at a time when they are short, the rest one by one */
VECTOR_BODY void rows_body(bool log_softmax, const float *x, int64_t rows, int64_t d, float *out) {
    int64_t r = 0;
    if (is_short_row(d))
        for (; r + 8 <= rows; r += 8) short_rows_body(log_softmax, x + r * d, d, out + r * d);
    for (; r < rows; r++) row_body(log_softmax, x + r * d, d, out + r * d);
}

/* Each body twice: for the portable build, and for this CPU's vector instructions. */
static void exp_portable(const float *x, int64_t n, float *out) { exp_body(x, n, out); }
VECTOR_NATIVE static void exp_native(const float *x, int64_t n, float *out) { exp_body(x, n, out); }
static void rows_portable(bool log_softmax, const float *x, int64_t rows, int64_t d, float *out) {
    rows_body(log_softmax, x, rows, d, out);
}
VECTOR_NATIVE static void rows_native(bool log_softmax, const float *x, int64_t rows, int64_t d, float *out) {
    rows_body(log_softmax, x, rows, d, out);
}
static void backward_portable(bool log_softmax, int64_t rows, int64_t d, const float *y, const float *g, float *gx) {
    rows_backward_body(log_softmax, rows, d, y, g, gx);
}
VECTOR_NATIVE static void backward_native(bool log_softmax, int64_t rows, int64_t d, const float *y, const float *g,
                                          float *gx) {
    rows_backward_body(log_softmax, rows, d, y, g, gx);
}
static void ce_backward_portable(const float *x, int64_t d, int64_t t, float scale, float *e, float *gx) {
    row_cross_entropy_backward_body(x, d, t, scale, e, gx);
}
VECTOR_NATIVE static void ce_backward_native(const float *x, int64_t d, int64_t t, float scale, float *e, float *gx) {
    row_cross_entropy_backward_body(x, d, t, scale, e, gx);
}
static double ce_portable(const float *x, int64_t d, int64_t t) { return row_cross_entropy_body(x, d, t); }
VECTOR_NATIVE static double ce_native(const float *x, int64_t d, int64_t t) { return row_cross_entropy_body(x, d, t); }

void simd_exp(const float *x, int64_t n, float *out) {
    if (n > 0 && (!x || !out))
        return (void)tensor_set_error("simd_exp: x and out must not be NULL for %lld floats", (long long)n);
    if (n <= 0) return;
    if (kernels_mode() == KERNELS_NATIVE) exp_native(x, n, out);
    else exp_portable(x, n, out);
}

/* ==== rows of views ======================================================================= */

/* A view whose rows are not contiguous (a transposed one) is first copied whole, in the
 * contiguous layout of its shape (kernels_contiguous: tiles, and streaming stores for a large
 * one), and its rows are worked on from there. Copying the rows a block at a time instead,
 * into a scratch buffer that stays in the cache, reads each row of the stored tensor in short
 * pieces, and measured slower (docs/3-softmax.md). */
void softmax_rows_fast(bool log_softmax, const Tensor *x, float *out) {
    void (*rows_fn)(bool, const float *, int64_t, int64_t, float *) =
        kernels_mode() == KERNELS_NATIVE ? rows_native : rows_portable;
    int64_t d = x->shape[x->rank - 1], n = tensor_numel(x);
    if (tensor_is_contiguous(x) && d > 0) /* the rows one after another: all in one call */
        return rows_fn(log_softmax, tensor_data(x), n / d, d, out);
    if (x->strides[x->rank - 1] == 1 || d <= 1) {
        NdIter rows;
        nditer_init_rows(&rows, x);
        for (; nditer_next(&rows); out += d) rows_fn(log_softmax, tensor_data(x) + rows.offset[0], 1, d, out);
        return;
    }
    /* the rows are copied into out, then each is replaced by its softmax (the passes work in place) */
    kernels_contiguous(x, out);
    if (d > 0) rows_fn(log_softmax, out, n / d, d, out);
}

double cross_entropy_fast(const Tensor *logits, const int64_t *targets) {
    double (*row)(const float *, int64_t, int64_t) = kernels_mode() == KERNELS_NATIVE ? ce_native : ce_portable;
    int64_t n = logits->shape[0], c = logits->shape[1];
    const float *rows = tensor_data(logits);
    int64_t row_step = logits->strides[0];
    float *copy = NULL;
    if (logits->strides[1] != 1 && c > 1) {
        copy = malloc((size_t)(n * c) * sizeof *copy);
        if (!copy) return cross_entropy_reference(logits, targets); /* the reference needs no memory */
        rows = kernels_contiguous(logits, copy), row_step = c;
    }
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) total += row(rows + i * row_step, c, targets[i]);
    free(copy);
    return total;
}

void softmax_backward_fast(bool log_softmax, int64_t rows, int64_t d, const float *y, const float *g, float *gx) {
    if (kernels_mode() == KERNELS_NATIVE) backward_native(log_softmax, rows, d, y, g, gx);
    else backward_portable(log_softmax, rows, d, y, g, gx);
}

/* Rows of contiguous logits no longer than the buffer for their exps; others go to the
 * reference. */
void cross_entropy_backward_fast(const Tensor *logits, const int64_t *targets, float scale, float *gx) {
    enum { MAX_ROW = 1024 };
    int64_t n = logits->shape[0], c = logits->shape[1];
    if ((logits->strides[1] != 1 && c > 1) || c > MAX_ROW)
        return cross_entropy_backward_reference(logits, targets, scale, gx);
    void (*row)(const float *, int64_t, int64_t, float, float *, float *) =
        kernels_mode() == KERNELS_NATIVE ? ce_backward_native : ce_backward_portable;
    float e[MAX_ROW];
    for (int64_t i = 0; i < n; i++, gx += c) row(tensor_data(logits) + i * logits->strides[0], c, targets[i], scale, e, gx);
}
