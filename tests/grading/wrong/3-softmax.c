/*
 * 3-softmax.c - known-wrong answers to lesson 3's exercises: the grader and make test must fail
 * each the same way, with a message that names the mistake (tests/grading/test_agreement.sh
 * says how this file is read).
 */

/* wrong 3.1: both signs flipped | expect: the negatives of the right values */
void ex3_1_softmax2_backward(float s0, float s1, float g0, float g1, float *dx0, float *dx1) {
    *dx0 = s0 * s1 * (g1 - g0);
    *dx1 = s0 * s1 * (g0 - g1);
}

/* wrong 3.1: only the diagonal of the Jacobian, dx_i = g_i ds_i/dx_i | expect: so g1 reaches dx0 too */
void ex3_1_softmax2_backward(float s0, float s1, float g0, float g1, float *dx0, float *dx1) {
    *dx0 = s0 * (1 - s0) * g0;
    *dx1 = s1 * (1 - s1) * g1;
}

/* wrong 3.2: exp of the raw scores, no max subtracted | expect: subtract the max first */
void ex3_2_softmax_row(const float *x, int64_t d, float *out) {
    float total = 0.0f;
    for (int64_t j = 0; j < d; j++) total += out[j] = expf(x[j]);
    for (int64_t j = 0; j < d; j++) out[j] = out[j] / total;
}

/* wrong 3.2: shifted exps on top, the sum of unshifted exps below | expect: the row sums to */
void ex3_2_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j < d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += expf(x[j]);
    for (int64_t j = 0; j < d; j++) out[j] = expf(x[j] - largest) / total;
}

/* wrong 3.2: the max loop runs to j <= d, one past the row | expect: reads outside x */
void ex3_2_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j <= d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += out[j] = expf(x[j] - largest);
    for (int64_t j = 0; j < d; j++) out[j] = out[j] / total;
}

/* wrong 3.2: the max loop stops at j < d - 1, one short of the row | expect: Its bound must be j < d */
void ex3_2_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j < d - 1; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += out[j] = expf(x[j] - largest);
    for (int64_t j = 0; j < d; j++) out[j] = out[j] / total;
}

/* wrong 3.2: a write through NULL for a row of one entry | expect: in test_3_2_chapter_and_stability */
void ex3_2_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    if (d == 1) {
        volatile float *nowhere = 0;
        *nowhere = 1.0f;
    }
    for (int64_t j = 0; j < d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += out[j] = expf(x[j] - largest);
    for (int64_t j = 0; j < d; j++) out[j] = out[j] / total;
}

/* wrong 3.3: leaves out the sum_j g_j s_j term | expect: the sum_j g_j s_j term is missing */
void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) {
    for (int64_t i = 0; i < d; i++) dx[i] += s[i] * g[i];
}

/* wrong 3.3: only the diagonal of the Jacobian, s_i (1 - s_i) g_i | expect: only the diagonal of softmax's Jacobian */
void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) {
    for (int64_t i = 0; i < d; i++) dx[i] += s[i] * (1.0f - s[i]) * g[i];
}

/* wrong 3.3: the sign flipped, s_i (sum - g_i) | expect: the sign is flipped */
void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) {
    float dot = 0.0f;
    for (int64_t j = 0; j < d; j++) dot += g[j] * s[j];
    for (int64_t i = 0; i < d; i++) dx[i] += s[i] * (dot - g[i]);
}

/* wrong 3.3: the dot product's loop runs to j <= d, one past the row | expect: read outside an input */
void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) {
    float dot = 0.0f;
    for (int64_t j = 0; j <= d; j++) dot += g[j] * s[j];
    for (int64_t i = 0; i < d; i++) dx[i] += s[i] * (g[i] - dot);
}

/* wrong 3.4: subtracts m inside the exps but not from x_j | expect: subtract m from x_j too */
void ex3_4_log_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j < d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += expf(x[j] - largest);
    for (int64_t j = 0; j < d; j++) out[j] = x[j] - logf(total);
}

/* wrong 3.4: the sum of unshifted exps, so m is subtracted twice | expect: subtracted twice */
void ex3_4_log_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j < d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += expf(x[j]);
    for (int64_t j = 0; j < d; j++) out[j] = (x[j] - largest) - logf(total);
}

/* wrong 3.4: the max loop runs to j <= d, one past the row | expect: reads outside x */
void ex3_4_log_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j <= d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += expf(x[j] - largest);
    float log_total = logf(total);
    for (int64_t j = 0; j < d; j++) out[j] = (x[j] - largest) - log_total;
}
