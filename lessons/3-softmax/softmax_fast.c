/*
 * softmax_fast.c - lesson 3's softmax, log-softmax and cross-entropy, fast: the same three
 * passes over each row as softmax.c's reference, eight floats at a time with AVX2 and FMA,
 * around a vectorized exp. kernels.c puts softmax_rows_fast and cross_entropy_fast in the
 * table under COURSE_KERNELS=native on a CPU that has both; elsewhere the reference runs.
 *
 * The compiler's own vectorizer cannot do this at the course's default -O2: it has no vector
 * exp, and gcc 12 at -O2 does not vectorize loops of unknown length. So the loops are written
 * with intrinsics, in functions compiled for AVX2+FMA alone (the target attribute): the rest
 * of the library stays plain x86-64.
 *
 * The exp is common/platform.h's, shared with lesson 7's GELU. A masked score (-inf, as
 * attention's causal mask makes half of lesson 7's) gets its 0 without going through it.
 *
 * A strided view (a transposed one) is first copied into the contiguous layout by the core's
 * transposing copy (kernels_contiguous), and each row is worked on from there. docs/3-softmax.md ("How fast")
 * measures both.
 */
#include "softmax_fast.h"

#include <math.h>
#include <stdlib.h>

#include "kernels_fast.h"
#include "platform.h"

#ifdef PLATFORM_X86
/* exp8(v), except that where v < -104, whose e^v exp8 rounds to exactly 0 (a masked score of
 * -inf among them), the 0 is put in place instead of computed: the multiply that rounds a
 * result down to 0 takes the CPU's slow path for tiny results (a microcode assist of over a
 * hundred cycles on Intel), and the causal mask of lesson 7 puts -inf in half of attention's
 * scores. The same results, bit for bit. */
TARGET_AVX2 static __m256 exp8_masked(__m256 v) {
    __m256 zero = _mm256_cmp_ps(v, _mm256_set1_ps(-104.0f), _CMP_LT_OQ); /* false for nan */
    if (_mm256_testz_ps(zero, zero)) return exp8(v);
    return _mm256_andnot_ps(zero, exp8(_mm256_andnot_ps(zero, v))); /* those lanes: e^0, then 0 */
}

/* The last d % 8 floats of a row go through the same exp8, from a padded copy, so a value's
 * exp does not depend on where in the row it sits. */
TARGET_AVX2 static __m256 exp8_partial(const float *x, int64_t count, __m256 shift, float *out) {
    float buf[8] = {0};
    for (int64_t i = 0; i < count; i++) buf[i] = x[i];
    __m256 e = exp8_masked(_mm256_sub_ps(_mm256_loadu_ps(buf), shift));
    _mm256_storeu_ps(buf, e);
    for (int64_t i = 0; i < count; i++) out[i] = buf[i];
    return e;
}

TARGET_AVX2 static void exp_avx2(const float *x, int64_t n, float *out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, exp8(_mm256_loadu_ps(x + i)));
    if (i < n) exp8_partial(x + i, n - i, _mm256_setzero_ps(), out + i);
}

TARGET_AVX2 static float row_max_avx2(const float *x, int64_t d) {
    /* max(v, m) returns m when v is nan: a nan is skipped, like `if (v > m)` */
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
    int64_t j = 0;
    for (; j + 16 <= d; j += 16) {
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + j), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(x + j + 8), m1);
    }
    for (; j + 8 <= d; j += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(x + j), m0);
    float lanes[8], m = -INFINITY;
    _mm256_storeu_ps(lanes, _mm256_max_ps(m0, m1));
    for (int k = 0; k < 8; k++)
        if (lanes[k] > m) m = lanes[k];
    for (; j < d; j++)
        if (x[j] > m) m = x[j];
    return m;
}

/* Each e^(x - m) is widened to double before it is added, into eight running sums (two
 * vectors of four doubles), as the reference adds them in double (the summation policy,
 * kernels_fast.h): a float sum stops growing at 2^24, which a long row can reach. */
TARGET_AVX2 static double row_exp_sum_avx2(const float *x, int64_t d, float m, float *out) {
    __m256 shift = _mm256_set1_ps(m);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        __m256 e = exp8_masked(_mm256_sub_ps(_mm256_loadu_ps(x + j), shift));
        if (out) _mm256_storeu_ps(out + j, e);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    double lanes[4], sum = 0.0;
    _mm256_storeu_pd(lanes, _mm256_add_pd(s0, s1));
    sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    if (j < d) {
        float tail[8];
        _mm256_storeu_ps(tail, exp8_partial(x + j, d - j, shift, out ? out + j : tail));
        for (int64_t i = 0; i < d - j; i++) sum += tail[i];
    }
    return sum;
}

TARGET_AVX2 static void row_scale_avx2(float *s, int64_t d, float k) {
    __m256 factor = _mm256_set1_ps(k);
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) _mm256_storeu_ps(s + j, _mm256_mul_ps(_mm256_loadu_ps(s + j), factor));
    for (; j < d; j++) s[j] *= k;
}

TARGET_AVX2 static void row_shift_avx2(const float *x, int64_t d, float m, float log_sum, float *y) {
    __m256 vm = _mm256_set1_ps(m), vl = _mm256_set1_ps(log_sum);
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) _mm256_storeu_ps(y + j, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), vm), vl));
    for (; j < d; j++) y[j] = (x[j] - m) - log_sum;
}

/* s = softmax(x) or y = log_softmax(x) of one contiguous row: max, exps and their sum, then a
 * scale by 1 / sum or a shift by the log of the sum. */
static void row_avx2(bool log_softmax, const float *x, int64_t d, float *out) {
    float m = row_max_avx2(x, d);
    if (log_softmax) row_shift_avx2(x, d, m, (float)log(row_exp_sum_avx2(x, d, m, NULL)), out);
    else row_scale_avx2(out, d, (float)(1.0 / row_exp_sum_avx2(x, d, m, out)));
}

/* -log_softmax(row)[t], as softmax.c's row_cross_entropy computes it. */
static double row_cross_entropy_avx2(const float *x, int64_t d, int64_t t) {
    float m = row_max_avx2(x, d);
    return (double)(m - x[t]) + (float)log(row_exp_sum_avx2(x, d, m, NULL));
}
#endif

void simd_exp(const float *x, int64_t n, float *out) {
    if (n > 0 && (!x || !out))
        return (void)tensor_set_error("simd_exp: x and out must not be NULL for %lld floats", (long long)n);
#ifdef PLATFORM_X86
    if (kernels_mode() == KERNELS_NATIVE) {
        exp_avx2(x, n, out);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) out[i] = expf(x[i]);
}

/* ==== rows of views ======================================================================= */

/* A view whose rows are not contiguous (a transposed one) is first copied whole, in the
 * contiguous layout of its shape (kernels_contiguous: tiles, and streaming stores for a large
 * one), and its rows are worked on from there. Copying the rows a block at a time instead,
 * into a scratch buffer that stays in the cache, reads each row of the stored tensor in short
 * pieces, and measured slower (docs/3-softmax.md). Off x86-64 the table never points here. */
void softmax_rows_fast(bool log_softmax, const Tensor *x, float *out) {
#ifdef PLATFORM_X86
    int64_t d = x->shape[x->rank - 1];
    if (x->strides[x->rank - 1] == 1 || d <= 1) {
        NdIter rows;
        nditer_init_rows(&rows, x);
        for (; nditer_next(&rows); out += d) row_avx2(log_softmax, tensor_data(x) + rows.offset[0], d, out);
        return;
    }
    /* the rows are copied into out, then each is replaced by its softmax (the passes work in place) */
    kernels_contiguous(x, out);
    for (int64_t i = 0, n = tensor_numel(x); i < n; i += d) row_avx2(log_softmax, out + i, d, out + i);
#else
    softmax_rows_reference(log_softmax, x, out);
#endif
}

double cross_entropy_fast(const Tensor *logits, const int64_t *targets) {
#ifdef PLATFORM_X86
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
    for (int64_t i = 0; i < n; i++) total += row_cross_entropy_avx2(rows + i * row_step, c, targets[i]);
    free(copy);
    return total;
#else
    return cross_entropy_reference(logits, targets);
#endif
}
