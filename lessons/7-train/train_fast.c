/*
 * train_fast.c - lesson 7's linear layer, GELU, layer norm, AdamW and attention over the
 * heads, fast. The linear layer is lesson 6's GEMM with the bias added as each tile is stored;
 * the rest are the same formulas as train.c's reference kernels, over contiguous floats eight
 * at a time instead of the odometer, with common/platform.h's vf8 (compiled for the portable
 * build, and for AVX2 and FMA under COURSE_KERNELS=native): tanh(u) from the vector exp, where
 * libm's tanhf takes one element at a time. GELU was 42% of a training step before this file
 * (docs/7-train.md, "How fast"). GELU's forward and the attention, written once in
 * train_lanes.h, also run sixteen at a time in vf16 where AVX-512 may (kernels_avx512()). */
#include <math.h>

#include "gemm.h"
#include "kernels_fast.h"
#include "platform.h"
#include "train.h"

/* The table's linear: out = x @ w + b, b in every row of out. The reference first copies b
 * into all of out and then adds the product into it: out written twice, and read between
 * (docs/7-train.md). Without b, the product is stored over out. Products too small to pack
 * (k = 0 among them) and a buffer that cannot be allocated go to the reference. */
void linear_fast(const float *x, int64_t rows, int64_t k, const float *w, int64_t w_rs, int64_t w_cs, const float *b,
                 int64_t b_stride, float *out, int64_t n) {
    if (!gemm_f32_plus_row(x, rows, k, w, w_rs, w_cs, b, b_stride, out, n))
        linear_reference(x, rows, k, w, w_rs, w_cs, b, b_stride, out, n);
}

/* True when x, of that shape, is contiguous: the fast kernels take only those. */
static bool is_row_major(int rank, const int64_t *shape, const int64_t *strides) {
    int64_t row_major[TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, row_major);
    for (int d = 0; d < rank; d++)
        if (shape[d] > 1 && strides[d] != row_major[d]) return false;
    return true;
}

enum { ATTENTION_MAX = 64 };

/* GELU's forward and the attention, eight lanes (gelu_body8, attention_body8) and, on x86-64,
 * sixteen for AVX-512 (gelu_body16, attention_body16): one text, train_lanes.h */
#define LANES 8
#include "train_lanes.h"
#undef LANES
#ifdef VECTOR_WIDE
#define LANES 16
#include "train_lanes.h"
#undef LANES
#endif

static void gelu_portable(const float *x, int64_t n, float *out, float *tanh_u) { gelu_body8(x, n, out, tanh_u); }
VECTOR_NATIVE static void gelu_native(const float *x, int64_t n, float *out, float *tanh_u) { gelu_body8(x, n, out, tanh_u); }
#ifdef VECTOR_WIDE
VECTOR_WIDE static void gelu_wide(const float *x, int64_t n, float *out, float *tanh_u) { gelu_body16(x, n, out, tanh_u); }
#endif

void gelu_fast(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, float *out, float *tanh_u) {
    if (!is_row_major(rank, shape, x_strides)) {
        gelu_reference(rank, shape, x, x_strides, out, tanh_u);
        return;
    }
    int64_t n = shape_numel(shape, rank);
#ifdef VECTOR_WIDE
    if (kernels_avx512()) {
        gelu_wide(x, n, out, tanh_u);
        return;
    }
#endif
    if (kernels_mode() == KERNELS_NATIVE) gelu_native(x, n, out, tanh_u);
    else gelu_portable(x, n, out, tanh_u);
}

/* The reference's gradient, eight at a time; the last n % 8 one at a time (the same formula),
 * added to gx or stored over it */
VECTOR_BODY void gelu_backward_body(const float *x, const float *tanh_u, const float *g, int64_t n, float *gx,
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
static void gelu_backward_portable(const float *x, const float *tanh_u, const float *g, int64_t n, float *gx,
                                   bool accumulate) {
    gelu_backward_body(x, tanh_u, g, n, gx, accumulate);
}
VECTOR_NATIVE static void gelu_backward_native(const float *x, const float *tanh_u, const float *g, int64_t n,
                                               float *gx, bool accumulate) {
    gelu_backward_body(x, tanh_u, g, n, gx, accumulate);
}

void gelu_backward_fast(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, const float *tanh_u,
                        const float *g, float *gx, bool accumulate) {
    if (!is_row_major(rank, shape, x_strides)) {
        gelu_backward_reference(rank, shape, x, x_strides, tanh_u, g, gx, accumulate);
        return;
    }
    int64_t n = shape_numel(shape, rank);
    if (kernels_mode() == KERNELS_NATIVE) gelu_backward_native(x, tanh_u, g, n, gx, accumulate);
    else gelu_backward_portable(x, tanh_u, g, n, gx, accumulate);
}

/* ==== layer norm =========================================================================== */

/* A row's sum in eight float lanes, the lanes totalled in double: kernels_fast.h's summation
 * policy for a row no longer than one of its chunks, which is all these kernels take. */
VECTOR_BODY float lanes_total(vf8 v) {
    double total = 0.0;
    for (int k = 0; k < 8; k++) total += v[k];
    return (float)total;
}

/* Eight vectors' totals, one in each lane: lane r is lanes_total(v[r]), the same lanes added in
 * the same order in double (the eight turned, platform.h's rows8_to_columns, then seven adds
 * of whole vectors), so that a row's result does not depend on the rows beside it */
VECTOR_BODY vf8 lanes_totals8(const vf8 v[8]) {
    float rows[64], cols[64];
    VECTOR_UNROLL for (int r = 0; r < 8; r++) vf8_store(rows + r * 8, v[r]);
    rows8_to_columns(rows, 8, 8, cols, 8);
    vd4 low = vf8_low_double(vf8_load(cols)), high = vf8_high_double(vf8_load(cols));
    VECTOR_UNROLL for (int e = 1; e < 8; e++) {
        low += vf8_low_double(vf8_load(cols + e * 8));
        high += vf8_high_double(vf8_load(cols + e * 8));
    }
    return vf8_from_doubles(low, high);
}

/* The reference's passes over a row, eight floats at a time; eight rows at a time while eight
 * are left, their sums across lanes taken together (lanes_totals8): one row's are a chain of
 * dependent adds that took as long as the row's arithmetic */
VECTOR_BODY void layer_norm_body(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta,
                                 float eps, float *out, float *stats) {
    int64_t r = 0;
    for (; r + 8 <= rows; r += 8, x += 8 * c, out += 8 * c) {
        vf8 acc[8];
        float mu[8], rstd[8];
        VECTOR_UNROLL for (int k = 0; k < 8; k++) acc[k] = vf8_splat(0.0f);
        for (int64_t i = 0; i < c; i += 8)
            VECTOR_UNROLL for (int k = 0; k < 8; k++) acc[k] += vf8_load(x + k * c + i);
        vf8_store(mu, lanes_totals8(acc) / (float)c);
        VECTOR_UNROLL for (int k = 0; k < 8; k++) acc[k] = vf8_splat(0.0f);
        for (int64_t i = 0; i < c; i += 8)
            VECTOR_UNROLL for (int k = 0; k < 8; k++) {
                vf8 d = vf8_load(x + k * c + i) - mu[k];
                acc[k] += d * d;
            }
        vf8 var = lanes_totals8(acc) / (float)c + eps, root;
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
        for (int64_t i = 0; i < c; i += 8) sum += vf8_load(x + i);
        float mu = lanes_total(sum) / (float)c;
        for (int64_t i = 0; i < c; i += 8) {
            vf8 d = vf8_load(x + i) - mu;
            squares += d * d;
        }
        float rstd = 1.0f / sqrtf(lanes_total(squares) / (float)c + eps);
        for (int64_t i = 0; i < c; i += 8)
            vf8_store(out + i, (vf8_load(x + i) - mu) * rstd * vf8_load(gamma + i) + vf8_load(beta + i));
        stats[2 * r] = mu, stats[2 * r + 1] = rstd;
    }
}

VECTOR_BODY void layer_norm_backward_body(int64_t rows, int64_t c, const float *x, const float *gamma,
                                          const float *stats, const float *g, float *gx, float *ggamma, float *gbeta) {
    for (int64_t r = 0; r < rows; r++, x += c, g += c) {
        float mu = stats[2 * r], rstd = stats[2 * r + 1];
        vf8 dy_sum = {0}, dy_xhat_sum = {0};
        for (int64_t i = 0; i < c; i += 8) {
            vf8 xhat = (vf8_load(x + i) - mu) * rstd, gi = vf8_load(g + i), dy = gi * vf8_load(gamma + i);
            dy_sum += dy;
            dy_xhat_sum += dy * xhat;
            if (ggamma) vf8_store(ggamma + i, vf8_load(ggamma + i) + gi * xhat);
            if (gbeta) vf8_store(gbeta + i, vf8_load(gbeta + i) + gi);
        }
        if (!gx) continue;
        float mean_dy = lanes_total(dy_sum) / (float)c, mean_dy_xhat = lanes_total(dy_xhat_sum) / (float)c;
        float *row = gx + r * c;
        for (int64_t i = 0; i < c; i += 8) {
            vf8 xhat = (vf8_load(x + i) - mu) * rstd, dy = vf8_load(g + i) * vf8_load(gamma + i);
            vf8_store(row + i, vf8_load(row + i) + rstd * (dy - mean_dy - xhat * mean_dy_xhat));
        }
    }
}

static void layer_norm_portable(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta,
                                float eps, float *out, float *stats) {
    layer_norm_body(rows, c, x, gamma, beta, eps, out, stats);
}
VECTOR_NATIVE static void layer_norm_native(int64_t rows, int64_t c, const float *x, const float *gamma,
                                            const float *beta, float eps, float *out, float *stats) {
    layer_norm_body(rows, c, x, gamma, beta, eps, out, stats);
}
static void layer_norm_backward_portable(int64_t rows, int64_t c, const float *x, const float *gamma,
                                         const float *stats, const float *g, float *gx, float *ggamma, float *gbeta) {
    layer_norm_backward_body(rows, c, x, gamma, stats, g, gx, ggamma, gbeta);
}
VECTOR_NATIVE static void layer_norm_backward_native(int64_t rows, int64_t c, const float *x, const float *gamma,
                                                     const float *stats, const float *g, float *gx, float *ggamma,
                                                     float *gbeta) {
    layer_norm_backward_body(rows, c, x, gamma, stats, g, gx, ggamma, gbeta);
}

/* Rows of whole vectors, no longer than one chunk of the summation policy; others go to the
 * reference. */
static bool layer_norm_takes(int64_t c) { return c % 8 == 0 && c <= KERNELS_SUM_CHUNK; }

void layer_norm_fast(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta, float eps,
                     float *out, float *stats) {
    if (!layer_norm_takes(c)) layer_norm_reference(rows, c, x, gamma, beta, eps, out, stats);
    else if (kernels_mode() == KERNELS_NATIVE) layer_norm_native(rows, c, x, gamma, beta, eps, out, stats);
    else layer_norm_portable(rows, c, x, gamma, beta, eps, out, stats);
}

void layer_norm_backward_fast(int64_t rows, int64_t c, const float *x, const float *gamma, const float *stats,
                              const float *g, float *gx, float *ggamma, float *gbeta) {
    if (!layer_norm_takes(c)) layer_norm_backward_reference(rows, c, x, gamma, stats, g, gx, ggamma, gbeta);
    else if (kernels_mode() == KERNELS_NATIVE) layer_norm_backward_native(rows, c, x, gamma, stats, g, gx, ggamma, gbeta);
    else layer_norm_backward_portable(rows, c, x, gamma, stats, g, gx, ggamma, gbeta);
}

/* ==== AdamW ================================================================================ */

/* The reference's update with its constants taken out of the loop:
 * lr * (m / bias1) / (sqrt(v / bias2) + eps) = (lr / bias1) * m / (sqrt(v) / sqrt(bias2) + eps).
 * Eight at a time; vector extensions have no square root, so it is taken lane by lane. */
VECTOR_BODY void adamw_body(float *p, const float *g, float *m, float *v, int64_t n, float decay, float b1, float b2,
                            float step_size, float inv_sqrt_bias2, float eps) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vf8 gi = vf8_load(g + i), pi = vf8_load(p + i) * decay;
        vf8 mi = b1 * vf8_load(m + i) + (1.0f - b1) * gi;
        vf8 vi = b2 * vf8_load(v + i) + (1.0f - b2) * (gi * gi), root;
        for (int k = 0; k < 8; k++) root[k] = sqrtf(vi[k]);
        vf8_store(m + i, mi);
        vf8_store(v + i, vi);
        vf8_store(p + i, pi - (step_size * mi) / (root * inv_sqrt_bias2 + eps));
    }
    for (; i < n; i++) {
        p[i] *= decay;
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        p[i] -= step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bias2 + eps);
    }
}
static void adamw_portable(float *p, const float *g, float *m, float *v, int64_t n, float decay, float b1, float b2,
                           float step_size, float inv_sqrt_bias2, float eps) {
    adamw_body(p, g, m, v, n, decay, b1, b2, step_size, inv_sqrt_bias2, eps);
}
VECTOR_NATIVE static void adamw_native(float *p, const float *g, float *m, float *v, int64_t n, float decay, float b1,
                                       float b2, float step_size, float inv_sqrt_bias2, float eps) {
    adamw_body(p, g, m, v, n, decay, b1, b2, step_size, inv_sqrt_bias2, eps);
}

void adamw_fast(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr, float beta1,
                float beta2, float eps, float weight_decay) {
    float bias1 = 1.0f - powf(beta1, (float)step), bias2 = 1.0f - powf(beta2, (float)step);
    void (*body)(float *, const float *, float *, float *, int64_t, float, float, float, float, float, float) =
        kernels_mode() == KERNELS_NATIVE ? adamw_native : adamw_portable;
    body(p, g, m, v, n, 1.0f - lr * weight_decay, beta1, beta2, lr / bias1, 1.0f / sqrtf(bias2), eps);
}

/* ==== attention over the heads ============================================================= */

/* The sizes each takes: T and D multiples of the lanes and of 8, at most ATTENTION_MAX; others
 * go to the eight-lane kernels, or to the reference. */
static bool attention_takes(int64_t t, int64_t d, int64_t lanes) {
    return t > 0 && d > 0 && t % lanes == 0 && d % lanes == 0 && t <= ATTENTION_MAX && d <= ATTENTION_MAX;
}

static void attention_portable(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                               const float *v, const float *mask, float scale, float *weights, float *y) {
    attention_body8(b, t, heads, d, q, k, v, mask, scale, weights, y);
}
VECTOR_NATIVE static void attention_native(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q,
                                           const float *k, const float *v, const float *mask, float scale,
                                           float *weights, float *y) {
    attention_body8(b, t, heads, d, q, k, v, mask, scale, weights, y);
}
static void attention_backward_portable(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                                        const float *v, const float *weights, float scale, const float *gy, float *gq,
                                        float *gk, float *gv, bool accumulate) {
    attention_backward_body8(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
}
VECTOR_NATIVE static void attention_backward_native(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q,
                                                    const float *k, const float *v, const float *weights, float scale,
                                                    const float *gy, float *gq, float *gk, float *gv, bool accumulate) {
    attention_backward_body8(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
}
#ifdef VECTOR_WIDE
VECTOR_WIDE static void attention_wide(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                                       const float *v, const float *mask, float scale, float *weights, float *y) {
    attention_body16(b, t, heads, d, q, k, v, mask, scale, weights, y);
}
VECTOR_WIDE static void attention_backward_wide(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q,
                                                const float *k, const float *v, const float *weights, float scale,
                                                const float *gy, float *gq, float *gk, float *gv, bool accumulate) {
    attention_backward_body16(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
}
#endif

/* Sixteen lanes where AVX-512 may run (kernels_avx512) and the sizes allow, else eight */
void attention_fast(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k, const float *v,
                    const float *mask, float scale, float *weights, float *y) {
#ifdef VECTOR_WIDE
    if (kernels_avx512() && attention_takes(t, d, 16)) {
        attention_wide(b, t, heads, d, q, k, v, mask, scale, weights, y);
        return;
    }
#endif
    if (!attention_takes(t, d, 8)) attention_reference(b, t, heads, d, q, k, v, mask, scale, weights, y);
    else if (kernels_mode() == KERNELS_NATIVE) attention_native(b, t, heads, d, q, k, v, mask, scale, weights, y);
    else attention_portable(b, t, heads, d, q, k, v, mask, scale, weights, y);
}

void attention_backward_fast(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                             const float *v, const float *weights, float scale, const float *gy, float *gq, float *gk,
                             float *gv, bool accumulate) {
#ifdef VECTOR_WIDE
    if (kernels_avx512() && attention_takes(t, d, 16)) {
        attention_backward_wide(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
        return;
    }
#endif
    if (!attention_takes(t, d, 8))
        attention_backward_reference(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
    else if (kernels_mode() == KERNELS_NATIVE)
        attention_backward_native(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
    else attention_backward_portable(b, t, heads, d, q, k, v, weights, scale, gy, gq, gk, gv, accumulate);
}
