/*
 * train_fast.c - lesson 7's GELU, fast: the same formula as train.c's, over contiguous floats
 * in plain loops instead of the odometer, and with AVX2 and FMA where kernels_mode() is
 * KERNELS_NATIVE: tanh(u) = 1 - 2 / (e^(2u) + 1) around common/simd_exp.h's exp, where libm's
 * tanhf takes one element at a time. GELU was 42% of a training step before this file
 * (docs/7-train.md, "How fast").
 */
#include "train_fast.h"

#include <math.h>

#include "kernels.h"
#include "simd_exp.h"

#ifdef SIMD_X86
/* Eight at a time; the last n % 8 go through the same vector code from a padded copy, so a
 * value's result does not depend on where it sits. */
AVX2_FMA static void gelu8(const float *x, float *out, float *tanh_u) {
    __m256 v = _mm256_loadu_ps(x);
    __m256 u = _mm256_mul_ps(_mm256_set1_ps(GELU_S),
                             _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(GELU_A), _mm256_mul_ps(v, v)), v, v));
    __m256 e = exp8(_mm256_add_ps(u, u));
    __m256 t = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
    _mm256_storeu_ps(tanh_u, t);
    _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), t)));
}

AVX2_FMA static void gelu_avx2(const float *x, int64_t n, float *out, float *tanh_u) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) gelu8(x + i, out + i, tanh_u + i);
    if (i < n) {
        float xs[8] = {0}, o[8], t[8];
        for (int64_t k = 0; k < n - i; k++) xs[k] = x[i + k];
        gelu8(xs, o, t);
        for (int64_t k = 0; k < n - i; k++) out[i + k] = o[k], tanh_u[i + k] = t[k];
    }
}
#endif

bool train_fast_gelu(const float *x, int64_t n, float *out, float *tanh_u) {
    Kernels mode = kernels_mode();
    if (mode == KERNELS_REFERENCE || n < 0 || (n > 0 && (!x || !out || !tanh_u))) return false;
#ifdef SIMD_X86
    if (mode == KERNELS_NATIVE) {
        gelu_avx2(x, n, out, tanh_u);
        return true;
    }
#endif
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        tanh_u[i] = tanhf(GELU_S * (v + GELU_A * v * v * v));
        out[i] = 0.5f * v * (1.0f + tanh_u[i]);
    }
    return true;
}

/* Eight copies of one statement over restrict pointers: gcc at -O2 turns them into vector
 * instructions (broadcast_fast.c does the same). */
bool train_fast_gelu_backward(const float *restrict x, const float *restrict tanh_u, const float *restrict g, int64_t n,
                              float *restrict gx) {
    if (kernels_mode() == KERNELS_REFERENCE || n < 0 || (n > 0 && (!x || !tanh_u || !g || !gx))) return false;
    int64_t i = 0;
#define GELU_GRAD(j)                                                                                         \
    do {                                                                                                     \
        float v = x[j], t = tanh_u[j];                                                                       \
        gx[j] += g[j] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * GELU_S * (1.0f + 3.0f * GELU_A * v * v)); \
    } while (0)
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) GELU_GRAD(i + k);
    for (; i < n; i++) GELU_GRAD(i);
#undef GELU_GRAD
    return true;
}

/* ==== AdamW ================================================================================ */

#ifdef SIMD_X86
AVX2_FMA static void adamw_avx2(float *p, const float *g, float *m, float *v, int64_t n, float decay, float b1,
                                float b2, float step_size, float inv_sqrt_bias2, float eps) {
    __m256 vdecay = _mm256_set1_ps(decay), vb1 = _mm256_set1_ps(b1), vb2 = _mm256_set1_ps(b2);
    __m256 c1 = _mm256_set1_ps(1.0f - b1), c2 = _mm256_set1_ps(1.0f - b2), vstep = _mm256_set1_ps(step_size);
    __m256 vinv = _mm256_set1_ps(inv_sqrt_bias2), veps = _mm256_set1_ps(eps);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 gi = _mm256_loadu_ps(g + i);
        __m256 pi = _mm256_mul_ps(_mm256_loadu_ps(p + i), vdecay);
        __m256 mi = _mm256_add_ps(_mm256_mul_ps(vb1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(c1, gi));
        __m256 vi = _mm256_add_ps(_mm256_mul_ps(vb2, _mm256_loadu_ps(v + i)), _mm256_mul_ps(c2, _mm256_mul_ps(gi, gi)));
        __m256 denom = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(vi), vinv), veps);
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        _mm256_storeu_ps(p + i, _mm256_sub_ps(pi, _mm256_div_ps(_mm256_mul_ps(vstep, mi), denom)));
    }
    for (; i < n; i++) {
        p[i] *= decay;
        m[i] = b1 * m[i] + (1.0f - b1) * g[i];
        v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        p[i] -= step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bias2 + eps);
    }
}
#endif

bool train_fast_adamw(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr, float beta1,
                      float beta2, float eps, float weight_decay) {
    if (kernels_mode() != KERNELS_NATIVE || n < 0 || (n > 0 && (!p || !g || !m || !v))) return false;
#ifdef SIMD_X86
    /* the reference's update with its constants taken out of the loop:
     * lr * (m / bias1) / (sqrt(v / bias2) + eps) = (lr / bias1) * m / (sqrt(v) / sqrt(bias2) + eps) */
    float bias1 = 1.0f - powf(beta1, (float)step), bias2 = 1.0f - powf(beta2, (float)step);
    adamw_avx2(p, g, m, v, n, 1.0f - lr * weight_decay, beta1, beta2, lr / bias1, 1.0f / sqrtf(bias2), eps);
    return true;
#else
    (void)p, (void)g, (void)m, (void)v, (void)n, (void)step, (void)lr, (void)beta1, (void)beta2, (void)eps,
        (void)weight_decay;
    return false;
#endif
}
