/*
 * 7-train.c - known-wrong answers to lesson 7's exercises: the grader and make test must fail
 * each the same way, with a message that names the mistake (tests/grading/test_agreement.sh
 * says how this file is read).
 */

/* wrong 7.1: -inf below the diagonal instead of above it | expect: the transpose of the causal mask */
void ex7_1_causal_mask(int64_t t, float *mask) {
    for (int64_t row = 0; row < t; row++)
        for (int64_t col = 0; col < t; col++) mask[row * t + col] = col < row ? -INFINITY : 0.0f;
}

/* wrong 7.1: masks the diagonal too, so a position cannot see itself | expect: a position may look at itself */
void ex7_1_causal_mask(int64_t t, float *mask) {
    for (int64_t row = 0; row < t; row++)
        for (int64_t col = 0; col < t; col++) mask[row * t + col] = col < row ? 0.0f : -INFINITY;
}

/* wrong 7.1: a large negative number where -inf belongs | expect: not a large negative number */
void ex7_1_causal_mask(int64_t t, float *mask) {
    for (int64_t row = 0; row < t; row++)
        for (int64_t col = 0; col < t; col++) mask[row * t + col] = col <= row ? 0.0f : -1e9f;
}

/* wrong 7.2: no 1/sqrt(D) scale on the scores | expect: the scores were not scaled */
Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv) {
    Tensor *q = tensor_matmul(x, wq), *k = tensor_matmul(x, wk), *v = tensor_matmul(x, wv);
    if (!q || !k || !v) return NULL;
    Tensor *scores = tensor_matmul(q, tensor_transpose(k, 0, 1));
    Tensor *weights = tensor_softmax_last_dim(tensor_add(scores, causal_mask(x->ctx, q->shape[0])));
    return tensor_matmul(weights, v);
}

/* wrong 7.2: scales by 1/sqrt(C), x's width, where the head's width D belongs | expect: 1/sqrt(C) */
Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv) {
    Tensor *q = tensor_matmul(x, wq), *k = tensor_matmul(x, wk), *v = tensor_matmul(x, wv);
    if (!q || !k || !v) return NULL;
    int64_t t = x->shape[0], c = x->shape[1];
    Tensor *scores = tensor_mul_scalar(tensor_matmul(q, tensor_transpose(k, 0, 1)), 1.0f / sqrtf((float)c));
    Tensor *weights = tensor_softmax_last_dim(tensor_add(scores, causal_mask(x->ctx, t)));
    return tensor_matmul(weights, v);
}

/* wrong 7.2: k from wq, a copy-paste slip, so the scores are q @ q^T | expect: k = x @ wq */
Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv) {
    Tensor *q = tensor_matmul(x, wq), *k = tensor_matmul(x, wq), *v = tensor_matmul(x, wv);
    (void)wk;
    if (!q || !k || !v) return NULL;
    int64_t t = q->shape[0], d = q->shape[1];
    Tensor *scores = tensor_mul_scalar(tensor_matmul(q, tensor_transpose(k, 0, 1)), 1.0f / sqrtf((float)d));
    Tensor *weights = tensor_softmax_last_dim(tensor_add(scores, causal_mask(x->ctx, t)));
    return tensor_matmul(weights, v);
}

/* wrong 7.3: forgets eps, (x - mu) / sqrt(var) | expect: eps was left out */
Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    (void)eps;
    Tensor *mu = tensor_mean_axis(x, -1, true);
    Tensor *centered = tensor_sub(x, mu);
    Tensor *var = tensor_mean_axis(tensor_mul(centered, centered), -1, true);
    Tensor *normed = tensor_mul(centered, tensor_pow_scalar(var, -0.5f));
    return tensor_add(tensor_mul(normed, gamma), beta);
}

/* wrong 7.3: the unbiased variance, divided by C - 1 | expect: divided by C - 1 */
Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    Tensor *mu = tensor_mean_axis(x, -1, true);
    Tensor *centered = tensor_sub(x, mu);
    float c = x ? (float)x->shape[x->rank - 1] : 2.0f;
    Tensor *var = tensor_mul_scalar(tensor_sum_axis(tensor_mul(centered, centered), -1, true), 1.0f / (c - 1.0f));
    Tensor *normed = tensor_mul(centered, tensor_pow_scalar(tensor_add_scalar(var, eps), -0.5f));
    return tensor_add(tensor_mul(normed, gamma), beta);
}

/* wrong 7.3: the mean and the variance over axis 0, the rows, instead of the last dim | expect: over axis 0 */
Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    Tensor *mu = tensor_mean_axis(x, 0, true);
    Tensor *centered = tensor_sub(x, mu);
    Tensor *var = tensor_mean_axis(tensor_mul(centered, centered), 0, true);
    Tensor *normed = tensor_mul(centered, tensor_pow_scalar(tensor_add_scalar(var, eps), -0.5f));
    return tensor_add(tensor_mul(normed, gamma), beta);
}

/* wrong 7.4: no bias correction | expect: there is no bias correction */
void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
                      float beta1, float beta2, float eps, float weight_decay) {
    (void)step;
    for (int64_t i = 0; i < n; i++) {
        param[i] -= lr * weight_decay * param[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * grad[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * grad[i] * grad[i];
        param[i] -= lr * m[i] / (sqrtf(v[i]) + eps);
    }
}

/* wrong 7.4: the weight decay added to the gradient (Adam with L2), not decoupled | expect: went into the gradient */
void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
                      float beta1, float beta2, float eps, float weight_decay) {
    float bias1 = 1.0f - powf(beta1, (float)step), bias2 = 1.0f - powf(beta2, (float)step);
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i] + weight_decay * param[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g;
        v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
        param[i] -= lr * (m[i] / bias1) / (sqrtf(v[i] / bias2) + eps);
    }
}

/* wrong 7.4: bias-corrects m but not v | expect: m was bias-corrected but v was not */
void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
                      float beta1, float beta2, float eps, float weight_decay) {
    float bias1 = 1.0f - powf(beta1, (float)step);
    for (int64_t i = 0; i < n; i++) {
        param[i] -= lr * weight_decay * param[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * grad[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * grad[i] * grad[i];
        param[i] -= lr * (m[i] / bias1) / (sqrtf(v[i]) + eps);
    }
}
