/*
 * solutions.c - reference solutions to lesson 7's exercises, for instructors and for checking
 * the tests themselves (`make test` runs the exercise tests against this file too).
 */
#include <math.h>

#include "bmm.h"
#include "broadcast.h"
#include "exercises.h"
#include "permute.h"
#include "reduce.h"
#include "softmax.h"
#include "train.h"

void ex7_1_causal_mask(int64_t t, float *mask) {
    /* -inf, not -1e9: exp(-inf) is exactly 0 whatever the scores are */
    for (int64_t row = 0; row < t; row++)
        for (int64_t col = 0; col < t; col++) mask[row * t + col] = col <= row ? 0.0f : -INFINITY;
}

Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv) {
    Tensor *q = tensor_matmul(x, wq), *k = tensor_matmul(x, wk), *v = tensor_matmul(x, wv); /* (T, D) */
    if (!q || !k || !v) return NULL;
    int64_t t = q->shape[0], d = q->shape[1];
    Tensor *scores = tensor_mul_scalar(tensor_matmul(q, tensor_transpose(k, 0, 1)), 1.0f / sqrtf((float)d));
    Tensor *weights = tensor_softmax_last_dim(tensor_add(scores, causal_mask(x->ctx, t))); /* (T, T), rows sum to 1 */
    return tensor_matmul(weights, v);
}

Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    Tensor *mu = tensor_mean_axis(x, -1, true); /* (..., 1) */
    Tensor *centered = tensor_sub(x, mu);
    Tensor *var = tensor_mean_axis(tensor_mul(centered, centered), -1, true); /* the biased variance: / C */
    Tensor *normed = tensor_mul(centered, tensor_pow_scalar(tensor_add_scalar(var, eps), -0.5f));
    return tensor_add(tensor_mul(normed, gamma), beta);
}

void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
                      float beta1, float beta2, float eps, float weight_decay) {
    float bias1 = 1.0f - powf(beta1, (float)step), bias2 = 1.0f - powf(beta2, (float)step);
    for (int64_t i = 0; i < n; i++) {
        param[i] -= lr * weight_decay * param[i]; /* decoupled: not through the gradient */
        m[i] = beta1 * m[i] + (1.0f - beta1) * grad[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * grad[i] * grad[i];
        param[i] -= lr * (m[i] / bias1) / (sqrtf(v[i] / bias2) + eps);
    }
}
