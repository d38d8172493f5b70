/*
 * train_fast.c - lesson 7's GELU and AdamW, fast: the same formulas as train.c's reference
 * kernels, over contiguous floats in plain loops instead of the odometer, and with AVX2 and
 * FMA where kernels_mode() is KERNELS_NATIVE: tanh(u) = 1 - 2 / (e^(2u) + 1) around
 * common/platform.h's exp, where libm's tanhf takes one element at a time. GELU was 42% of a training step before this file
 * (docs/7-train.md, "How fast").
 */
#include <math.h>

#include "kernels_fast.h"
#include "platform.h"
#include "train.h"

/* True when x, of that shape, is contiguous: the fast kernels take only those. */
static bool is_row_major(int rank, const int64_t *shape, const int64_t *strides) {
    int64_t row_major[TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, row_major);
    for (int d = 0; d < rank; d++)
        if (shape[d] > 1 && strides[d] != row_major[d]) return false;
    return true;
}

#ifdef PLATFORM_X86
/* Eight at a time; the last n % 8 go through the same vector code from a padded copy, so a
 * value's result does not depend on where it sits. */
TARGET_AVX2 static void gelu8(const float *x, float *out, float *tanh_u) {
    __m256 v = _mm256_loadu_ps(x);
    __m256 u = _mm256_mul_ps(_mm256_set1_ps(GELU_S),
                             _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(GELU_A), _mm256_mul_ps(v, v)), v, v));
    __m256 e = exp8(_mm256_add_ps(u, u));
    __m256 t = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
    _mm256_storeu_ps(tanh_u, t);
    _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), t)));
}

TARGET_AVX2 static void gelu_avx2(const float *x, int64_t n, float *out, float *tanh_u) {
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

void gelu_fast(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, float *out, float *tanh_u) {
    if (!is_row_major(rank, shape, x_strides)) {
        gelu_reference(rank, shape, x, x_strides, out, tanh_u);
        return;
    }
    int64_t n = shape_numel(shape, rank);
#ifdef PLATFORM_X86
    if (kernels_mode() == KERNELS_NATIVE) {
        gelu_avx2(x, n, out, tanh_u);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        tanh_u[i] = tanhf(GELU_S * (v + GELU_A * v * v * v));
        out[i] = 0.5f * v * (1.0f + tanh_u[i]);
    }
}

/* Eight copies of one statement over restrict pointers: the compiler turns them into vector
 * instructions (broadcast_fast.c does the same). */
static void rows_gelu_backward(const float *restrict x, const float *restrict tanh_u, const float *restrict g,
                               int64_t n, float *restrict gx) {
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
}

void gelu_backward_fast(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, const float *tanh_u,
                        const float *g, float *gx) {
    if (!is_row_major(rank, shape, x_strides)) {
        gelu_backward_reference(rank, shape, x, x_strides, tanh_u, g, gx);
        return;
    }
    rows_gelu_backward(x, tanh_u, g, shape_numel(shape, rank), gx);
}

/* ==== AdamW ================================================================================ */

#ifdef PLATFORM_X86
TARGET_AVX2 static void adamw_avx2(float *p, const float *g, float *m, float *v, int64_t n, float decay, float b1,
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

/* Off x86-64 the table never points here. */
void adamw_fast(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr, float beta1,
                float beta2, float eps, float weight_decay) {
#ifdef PLATFORM_X86
    /* the reference's update with its constants taken out of the loop:
     * lr * (m / bias1) / (sqrt(v / bias2) + eps) = (lr / bias1) * m / (sqrt(v) / sqrt(bias2) + eps) */
    float bias1 = 1.0f - powf(beta1, (float)step), bias2 = 1.0f - powf(beta2, (float)step);
    adamw_avx2(p, g, m, v, n, 1.0f - lr * weight_decay, beta1, beta2, lr / bias1, 1.0f / sqrtf(bias2), eps);
#else
    adamw_reference(p, g, m, v, n, step, lr, beta1, beta2, eps, weight_decay);
#endif
}
