/*
 * train_fast.c - lesson 7's linear layer, GELU, layer norm, AdamW and attention over the heads,
 * fast. The linear layer is lesson 6's product with the bias added as each tile is stored; the
 * rest are the same formulas as train.c's and model.c's reference kernels, over contiguous
 * floats eight at a time instead of the odometer: tanh(u) from the vector exp, where libm's
 * tanhf takes one element at a time. GELU's forward and the attention run in vfloat, sixteen
 * lanes where the build has AVX-512 (simd.h). docs/7-train.md ("How fast") measures each.
 */
#include "bmm_fast.h"
#include "kernels_fast.h"
#include "train.h"

/* ==== the linear layer ===================================================================== */

/* out = x @ w + b, b in every row of out, through lesson 6's product with the bias added as each
 * tile is stored: out written once, where the reference copies b into all of out and then adds
 * the product. Without b, the product is stored over out. Products too small to pack (k = 0
 * among them) and a buffer that cannot be allocated go to the reference. */
static void linear_fast(const float *x, int64_t rows, int64_t k, const float *w, int64_t w_rs, int64_t w_cs,
                        const float *b, int64_t b_stride, float *out, int64_t n) {
    if (!gemm_plus_row(x, rows, k, w, w_rs, w_cs, b, b_stride, out, n))
        linear_reference(x, rows, k, w, w_rs, w_cs, b, b_stride, out, n);
}

/* ==== GELU ================================================================================== */

/* VFLOAT_LANES at a time, tanh from the vector exp; the last n % VFLOAT_LANES go through the
 * same vector code from a padded copy, so a value's result does not depend on where it sits. */
SIMD_INLINE void gelu_lanes(const float *x, float *out, float *tanh_u) {
    vfloat v = VFLOAT(load)(x);
    vfloat t = VFLOAT(tanh)(GELU_S * ((GELU_A * v * v) * v + v));
    VFLOAT(store)(tanh_u, t);
    VFLOAT(store)(out, 0.5f * v * (1.0f + t));
}

static void gelu_fast(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, float *out,
                      float *tanh_u) {
    if (!strides_are_contiguous(shape, rank, x_strides)) {
        gelu_reference(rank, shape, x, x_strides, out, tanh_u);
        return;
    }
    int64_t n = shape_numel(shape, rank), i = 0;
    for (; i + VFLOAT_LANES <= n; i += VFLOAT_LANES) gelu_lanes(x + i, out + i, tanh_u + i);
    if (i < n) {
        float xs[VFLOAT_LANES] = {0}, o[VFLOAT_LANES], t[VFLOAT_LANES];
        for (int64_t k = 0; k < n - i; k++) xs[k] = x[i + k];
        gelu_lanes(xs, o, t);
        for (int64_t k = 0; k < n - i; k++) out[i + k] = o[k], tanh_u[i + k] = t[k];
    }
}

/* The reference's gradient, eight at a time; the last n % 8 one at a time (the same formula) */
SIMD_INLINE void gelu_backward_rows(const float *x, const float *tanh_u, const float *g, int64_t n, float *gx,
                                    bool accumulate) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vf8 v = vf8_load(x + i), t = vf8_load(tanh_u + i);
        vf8 du_dx = GELU_S * (1.0f + 3.0f * GELU_A * v * v);
        vf8 before = accumulate ? vf8_load(gx + i) : vf8_splat(0.0f);
        vf8_store(gx + i, before + vf8_load(g + i) * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du_dx));
    }
    for (; i < n; i++) {
        float v = x[i], t = tanh_u[i], du_dx = GELU_S * (1.0f + 3.0f * GELU_A * v * v);
        gx[i] = (accumulate ? gx[i] : 0.0f) + g[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du_dx);
    }
}

static void gelu_backward_fast(int rank, const int64_t *shape, const float *x, const int64_t *x_strides,
                               const float *tanh_u, const float *g, float *gx, bool accumulate) {
    if (!strides_are_contiguous(shape, rank, x_strides)) {
        gelu_backward_reference(rank, shape, x, x_strides, tanh_u, g, gx, accumulate);
        return;
    }
    gelu_backward_rows(x, tanh_u, g, shape_numel(shape, rank), gx, accumulate);
}

/* ==== layer norm ============================================================================ */

/* The reference's passes over a row, eight floats at a time, its sums by the float policy
 * (simd_sum.h: rows of at most one chunk); eight rows at a time while eight are left, their
 * sums across lanes taken together (sumf_totals8): one row's is a chain of dependent adds. */
static void layer_norm_fast_rows(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta,
                                 float eps, float *out, float *stats) {
    int64_t r = 0;
    for (; r + 8 <= rows; r += 8, x += 8 * c, out += 8 * c) {
        vf8 acc[8];
        float mu[8], rstd[8];
        SIMD_UNROLL
        for (int k = 0; k < 8; k++) acc[k] = vf8_splat(0.0f);
        for (int64_t i = 0; i < c; i += 8) {
            SIMD_UNROLL
            for (int k = 0; k < 8; k++) sumf_add(&acc[k], vf8_load(x + k * c + i));
        }
        vf8_store(mu, sumf_totals8(acc) / (float)c);
        SIMD_UNROLL
        for (int k = 0; k < 8; k++) acc[k] = vf8_splat(0.0f);
        for (int64_t i = 0; i < c; i += 8) {
            SIMD_UNROLL
            for (int k = 0; k < 8; k++) {
                vf8 d = vf8_load(x + k * c + i) - mu[k];
                sumf_add(&acc[k], d * d);
            }
        }
        vf8 var = sumf_totals8(acc) / (float)c + eps, root;
        for (int k = 0; k < 8; k++) root[k] = sqrtf(var[k]); /* one vector square root (-fno-math-errno) */
        vf8_store(rstd, 1.0f / root);
        for (int k = 0; k < 8; k++) {
            for (int64_t i = 0; i < c; i += 8)
                vf8_store(out + k * c + i,
                          (vf8_load(x + k * c + i) - mu[k]) * rstd[k] * vf8_load(gamma + i) + vf8_load(beta + i));
            stats[2 * (r + k)] = mu[k], stats[2 * (r + k) + 1] = rstd[k];
        }
    }
    for (; r < rows; r++, x += c, out += c) {
        vf8 sum = {0}, squares = {0};
        for (int64_t i = 0; i < c; i += 8) sumf_add(&sum, vf8_load(x + i));
        float mu = (float)sumf_total(sum) / (float)c;
        for (int64_t i = 0; i < c; i += 8) {
            vf8 d = vf8_load(x + i) - mu;
            sumf_add(&squares, d * d);
        }
        float rstd = 1.0f / sqrtf((float)sumf_total(squares) / (float)c + eps);
        for (int64_t i = 0; i < c; i += 8)
            vf8_store(out + i, (vf8_load(x + i) - mu) * rstd * vf8_load(gamma + i) + vf8_load(beta + i));
        stats[2 * r] = mu, stats[2 * r + 1] = rstd;
    }
}

static void layer_norm_backward_fast_rows(int64_t rows, int64_t c, const float *x, const float *gamma,
                                          const float *stats, const float *g, float *gx, float *ggamma, float *gbeta) {
    for (int64_t r = 0; r < rows; r++, x += c, g += c) {
        float mu = stats[2 * r], rstd = stats[2 * r + 1];
        vf8 dy_sum = {0}, dy_xhat_sum = {0};
        for (int64_t i = 0; i < c; i += 8) {
            vf8 xhat = (vf8_load(x + i) - mu) * rstd, gi = vf8_load(g + i), dy = gi * vf8_load(gamma + i);
            sumf_add(&dy_sum, dy);
            sumf_add(&dy_xhat_sum, dy * xhat);
            if (ggamma) vf8_store(ggamma + i, vf8_load(ggamma + i) + gi * xhat);
            if (gbeta) vf8_store(gbeta + i, vf8_load(gbeta + i) + gi);
        }
        if (!gx) continue;
        float mean_dy = (float)sumf_total(dy_sum) / (float)c, mean_dy_xhat = (float)sumf_total(dy_xhat_sum) / (float)c;
        float *row = gx + r * c;
        for (int64_t i = 0; i < c; i += 8) {
            vf8 xhat = (vf8_load(x + i) - mu) * rstd, dy = vf8_load(g + i) * vf8_load(gamma + i);
            vf8_store(row + i, vf8_load(row + i) + rstd * (dy - mean_dy - xhat * mean_dy_xhat));
        }
    }
}

/* Rows of whole vectors, no longer than one chunk of the summation policy; others go to the
 * reference. */
static bool layer_norm_takes(int64_t c) { return c % 8 == 0 && c <= SUM_CHUNK; }

static void layer_norm_fast(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta, float eps,
                            float *out, float *stats) {
    if (layer_norm_takes(c)) layer_norm_fast_rows(rows, c, x, gamma, beta, eps, out, stats);
    else layer_norm_reference(rows, c, x, gamma, beta, eps, out, stats);
}

static void layer_norm_backward_fast(int64_t rows, int64_t c, const float *x, const float *gamma, const float *stats,
                                     const float *g, float *gx, float *ggamma, float *gbeta) {
    if (layer_norm_takes(c)) layer_norm_backward_fast_rows(rows, c, x, gamma, stats, g, gx, ggamma, gbeta);
    else layer_norm_backward_reference(rows, c, x, gamma, stats, g, gx, ggamma, gbeta);
}

/* ==== AdamW ================================================================================= */

/* The reference's update with its constants taken out of the loop:
 * lr * (m / bias1) / (sqrt(v / bias2) + eps) = (lr / bias1) * m / (sqrt(v) / sqrt(bias2) + eps).
 * Eight at a time; vector extensions have no square root, so it is taken lane by lane (one
 * vector instruction with -fno-math-errno). */
static void adamw_fast(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr, float beta1,
                       float beta2, float eps, float weight_decay) {
    float bias1 = 1.0f - powf(beta1, (float)step), bias2 = 1.0f - powf(beta2, (float)step);
    float decay = 1.0f - lr * weight_decay, step_size = lr / bias1, inv_sqrt_bias2 = 1.0f / sqrtf(bias2);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vf8 gi = vf8_load(g + i), pi = vf8_load(p + i) * decay;
        vf8 mi = beta1 * vf8_load(m + i) + (1.0f - beta1) * gi;
        vf8 vi = beta2 * vf8_load(v + i) + (1.0f - beta2) * (gi * gi), root;
        for (int k = 0; k < 8; k++) root[k] = sqrtf(vi[k]);
        vf8_store(m + i, mi);
        vf8_store(v + i, vi);
        vf8_store(p + i, pi - (step_size * mi) / (root * inv_sqrt_bias2 + eps));
    }
    for (; i < n; i++) {
        p[i] *= decay;
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        p[i] -= step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bias2 + eps);
    }
}

/* ==== attention over the heads ============================================================= */

/* One head of one batch at a time, VFLOAT_LANES of its query rows at once (turned into columns,
 * one row in each lane): their scores against a key are one vector, their softmaxes over the
 * keys need no sum across lanes (as softmax_fast.c's short rows), and each sum over the keys or
 * the columns of a head is a few multiply-adds of whole vectors. T and D must be multiples of
 * VFLOAT_LANES, at most ATTENTION_MAX; other sizes go to the reference. */
enum { ATTENTION_MAX = 64 };

static bool attention_takes(int64_t t, int64_t d) {
    return t > 0 && d > 0 && t % VFLOAT_LANES == 0 && d % VFLOAT_LANES == 0 && t <= ATTENTION_MAX && d <= ATTENTION_MAX;
}

/* out[o * os + lane] = (or += when add) the sum over p < n of a[o * ao + p * as] * b[p * bs +
 * lane], for the eight o: a small product, eight sums side by side, so that each vector of b is
 * loaded once for all of them and no multiply-add waits for another */
SIMD_INLINE void weighted_rows(const float *a, int64_t ao, int64_t as, const float *b, int64_t bs, int64_t n,
                               float *out, int64_t os, bool add) {
    vfloat s[8];
    SIMD_UNROLL
    for (int o = 0; o < 8; o++) s[o] = VFLOAT(splat)(0.0f);
    for (int64_t p = 0; p < n; p++, a += as, b += bs) {
        vfloat bp = VFLOAT(load)(b);
        SIMD_UNROLL
        for (int o = 0; o < 8; o++) s[o] += a[o * ao] * bp;
    }
    SIMD_UNROLL
    for (int o = 0; o < 8; o++) VFLOAT(store)(out + o * os, add ? VFLOAT(load)(out + o * os) + s[o] : s[o]);
}

/* one head: q, k, v, y at its column h*D of row 0, rows c apart; w its (T, T) weights; mask_t
 * the mask turned, mask_t[j * t + i] = mask[i * t + j] */
SIMD_INLINE void attention_head(int64_t t, int64_t d, int64_t c, const float *q, const float *k, const float *v,
                                const float *mask_t, float scale, float *w, float *y) {
    enum { L = VFLOAT_LANES };
    float qc[ATTENTION_MAX * L], wc[ATTENTION_MAX * L];
    for (int64_t i = 0; i < t; i += L) { /* rows i .. i + L - 1, lane r row i + r */
        rows_to_columns(VFLOAT_LANES, q + i * c, c, d, qc, L);
        vfloat m = VFLOAT(splat)(-INFINITY);
        for (int64_t j = 0; j < t; j += 8) weighted_rows(k + j * c, c, 1, qc, L, d, wc + j * L, L, false);
        for (int64_t j = 0; j < t; j++) {
            vfloat s = VFLOAT(load)(wc + j * L) * scale + VFLOAT(load)(mask_t + j * t + i);
            VFLOAT(store)(wc + j * L, s);
            m = VFLOAT(max)(s, m); /* skips a nan, as the reference's `if (w[j] > m)` */
        }
        VFLOAT(sumd) sums = {0}; /* each row's sum of exps in double, as the reference's */
        for (int64_t j = 0; j < t; j++) {
            vfloat e = VFLOAT(exp_unclamped)(VFLOAT(load)(wc + j * L) - m); /* of a score less the max: <= 0, or nan */
            VFLOAT(store)(wc + j * L, e);
            VFLOAT(sumd_add)(&sums, e);
        }
        vfloat inv = VFLOAT(sumd_reciprocals)(sums);
        for (int64_t j = 0; j < t; j++) VFLOAT(store)(wc + j * L, VFLOAT(load)(wc + j * L) * inv);
        columns_to_rows(VFLOAT_LANES, wc, L, t, w + i * t, t);
        /* y's rows i + r, eight at a time, L of their columns in lanes: each straight into y */
        for (int64_t r = 0; r < L; r += 8)
            for (int64_t e = 0; e < d; e += L) weighted_rows(wc + r, 1, L, v + e, c, t, y + (i + r) * c + e, c, false);
    }
}

/* The reference's backward for one head, L query rows at once as in the forward: their
 * dw_ij = g_i . v_j and ds_ij in lanes, kept for the whole head turned (ds_t[j * t + i], and w
 * the same way), gq's rows from those; then each row of gk and of gv, a sum over all the query
 * rows at once, L of its columns in lanes. */
SIMD_INLINE void attention_head_backward(int64_t t, int64_t d, int64_t c, const float *q, const float *k,
                                         const float *v, const float *w, float scale, const float *gy, float *gq,
                                         float *gk, float *gv, bool accumulate) {
    enum { L = VFLOAT_LANES };
    float w_t[ATTENTION_MAX * ATTENTION_MAX], ds_t[ATTENTION_MAX * ATTENTION_MAX], gc[ATTENTION_MAX * L];
    for (int64_t i = 0; i < t; i += L) { /* rows i .. i + L - 1, lane r row i + r */
        rows_to_columns(VFLOAT_LANES, w + i * t, t, t, w_t + i, t);
        rows_to_columns(VFLOAT_LANES, gy + i * c, c, d, gc, L);
        for (int64_t j = 0; j < t; j += 8)
            weighted_rows(v + j * c, c, 1, gc, L, d, ds_t + j * t + i, t, false); /* dw */
        VFLOAT(sumd) sums = {0}; /* each row's sum of w_ij dw_ij, in double */
        for (int64_t j = 0; j < t; j++)
            VFLOAT(sumd_add_products)(&sums, VFLOAT(load)(ds_t + j * t + i), VFLOAT(load)(w_t + j * t + i));
        vfloat dot = VFLOAT(sumd_lanes)(sums); /* dw - dot then in float, where the reference rounds after */
        for (int64_t j = 0; j < t; j++) VFLOAT(store)
        (ds_t + j * t + i, VFLOAT(load)(w_t + j * t + i) * (VFLOAT(load)(ds_t + j * t + i) - dot) * scale);
        if (gq) /* its rows i + r, eight at a time, L of their columns in lanes, as y's */
            for (int64_t r = 0; r < L; r += 8)
                for (int64_t e = 0; e < d; e += L)
                    weighted_rows(ds_t + i + r, 1, t, k + e, c, t, gq + (i + r) * c + e, c, accumulate);
    }
    for (int64_t j = 0; j < t; j += 8) /* rows j .. j+7 of gk and of gv */
        for (int64_t e = 0; e < d; e += L) {
            if (gk) weighted_rows(ds_t + j * t, t, 1, q + e, c, t, gk + j * c + e, c, accumulate);
            if (gv) weighted_rows(w_t + j * t, t, 1, gy + e, c, t, gv + j * c + e, c, accumulate);
        }
}

static void attention_fast(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                           const float *v, const float *mask, float scale, float *weights, float *y) {
    if (!attention_takes(t, d)) {
        attention_reference(b, t, heads, d, q, k, v, mask, scale, weights, y);
        return;
    }
    int64_t c = heads * d;
    float mask_t[ATTENTION_MAX * ATTENTION_MAX];
    for (int64_t i = 0; i < t; i += 8) rows_to_columns(8, mask + i * t, t, t, mask_t + i, t);
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t h = 0; h < heads; h++) {
            int64_t at = bi * t * c + h * d;
            attention_head(t, d, c, q + at, k + at, v + at, mask_t, scale, weights + (bi * heads + h) * t * t, y + at);
        }
}

static void attention_backward_fast(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                                    const float *v, const float *weights, float scale, const float *gy, float *gq,
                                    float *gk, float *gv, bool accumulate) {
    if (!attention_takes(t, d)) {
        attention_backward_reference(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
        return;
    }
    int64_t c = heads * d;
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t h = 0; h < heads; h++) {
            int64_t at = bi * t * c + h * d;
            attention_head_backward(t, d, c, q + at, k + at, v + at, weights + (bi * heads + h) * t * t, scale, gy + at,
                                    gq ? gq + at : NULL, gk ? gk + at : NULL, gv ? gv + at : NULL, accumulate);
        }
}

KERNELS_FAST(train, .linear = linear_fast, .gelu = gelu_fast, .gelu_backward = gelu_backward_fast,
             .layer_norm = layer_norm_fast, .layer_norm_backward = layer_norm_backward_fast, .adamw = adamw_fast,
             .attention = attention_fast, .attention_backward = attention_backward_fast);
