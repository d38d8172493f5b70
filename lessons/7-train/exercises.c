/*
 * exercises.c - lesson 7's exercises. This is the file you edit.
 *
 * Each function below is a stub: it says what to do, where the lesson explains it, and calls
 * EXERCISE_TODO() so the tests report it as TODO rather than wrong. Delete that line (and the
 * (void) casts) when you start, then run `make lesson7 test` to check your answer.
 * 7.1 and 7.4 are plain C loops; 7.2 and 7.3 are compositions of the library's ops (tensor.h,
 * broadcast.h, reduce.h, softmax.h, permute.h, bmm.h), so that backward works through them.
 */
#include <math.h>

#include "bmm.h"
#include "broadcast.h"
#include "exercises.h"
#include "permute.h"
#include "reduce.h"
#include "softmax.h"
#include "train.h"

/* 7.1: 0 on and below the diagonal, -INFINITY above it (docs/7-train.md, 3 "The causal
 * mask"). Row r may look at columns 0..r. */
void ex7_1_causal_mask(int64_t t, float *mask) {
    EXERCISE_TODO();
    (void)t, (void)mask;
}

/* 7.2: q, k, v from three matmuls; the scores q @ k^T (tensor_transpose makes k^T, a view)
 * scaled by 1/sqrt(D); the causal mask added (causal_mask(x->ctx, T), train.h, or your 7.1
 * in a tensor); softmax over the last dim; then @ v (docs/7-train.md, 4 "One attention
 * head"). */
Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv) {
    EXERCISE_TODO();
    (void)x, (void)wq, (void)wk, (void)wv;
    return NULL;
}

/* 7.3: tensor_mean_axis(..., -1, true) keeps the last dim as 1, so that tensor_sub and
 * tensor_mul broadcast it back over the row; tensor_add_scalar and tensor_pow_scalar with -0.5
 * give 1/sqrt(var + eps) (docs/7-train.md, 5 "Layer norm"). */
Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    EXERCISE_TODO();
    (void)x, (void)gamma, (void)beta, (void)eps;
    return NULL;
}

/* 7.4: the decay first, then the moments, then the bias-corrected update; powf(beta1, step)
 * for beta1^step (docs/7-train.md, 7 "AdamW"). */
void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
                      float beta1, float beta2, float eps, float weight_decay) {
    EXERCISE_TODO();
    (void)param, (void)grad, (void)m, (void)v, (void)n, (void)step, (void)lr, (void)beta1, (void)beta2, (void)eps,
        (void)weight_decay;
}
