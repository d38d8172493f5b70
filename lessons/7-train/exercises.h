/*
 * exercises.h - lesson 7's exercises: what each function must do. You edit exercises.c;
 * this file, the tests and the points stay as the course ships them.
 *
 * Check your work with `make lesson7 test`. The "Exercises" section of docs/7-train.md lists
 * them with their points. Letters as in train.h: T positions, C numbers per position, D the
 * width of one attention head.
 */
#ifndef LESSON7_EXERCISES_H
#define LESSON7_EXERCISES_H

#include <stdint.h>

#include "exercise.h"
#include "tensor.h"

/* 7.1: the causal mask (docs/7-train.md, 3 "The causal mask"). Overwrite all t * t floats of
 * mask, row-major (row r, column c at mask[r * t + c]), with 0 where c <= r (a position sees
 * itself and the ones before it) and -INFINITY where c > r (a later position). Exactly
 * -INFINITY, from <math.h>: not a large negative number. t may be 0 (then write nothing). */
void ex7_1_causal_mask(int64_t t, float *mask);

/* 7.2: one causal attention head (docs/7-train.md, 4 "One attention head"), from the library's
 * ops only: x is (T, C), wq, wk and wv are (C, D). With q = x @ wq, k = x @ wk, v = x @ wv,
 *   out = softmax(q @ k^T / sqrt(D) + mask) @ v,    (T, D)
 * mask the (T, T) causal mask and the softmax over the last dim. Return out (made by
 * tensor_matmul from a tensor_softmax_last_dim), or NULL if an op failed. Built from ops, its
 * gradients with respect to x, wq, wk and wv come from theirs. */
Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv);

/* 7.3: layer norm over the last dim (docs/7-train.md, 5 "Layer norm"), as a composition of
 * lessons 1 and 2's ops. x is (..., C) (rank 1 or more), gamma and beta are (C,):
 *   mu = mean(x), var = mean((x - mu)^2)    (over the last dim; divide by C, not C - 1)
 *   y = (x - mu) / sqrt(var + eps) * gamma + beta
 * Return y, shape of x, or NULL if an op failed. Its gradients with respect to x, gamma and
 * beta must come out of backward, so no loops over the values: ops only. */
Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps);

/* 7.4: one AdamW step (docs/7-train.md, 7 "AdamW"), PyTorch's torch.optim.AdamW, in place on
 * n floats. param holds the parameters, grad their gradients; m and v are the moments, kept
 * from step to step (zeros before the first); step counts the steps from 1. For each i:
 *   param[i] -= lr * weight_decay * param[i]             (decoupled decay, first)
 *   m[i] = beta1 * m[i] + (1 - beta1) * grad[i]
 *   v[i] = beta2 * v[i] + (1 - beta2) * grad[i]^2
 *   mhat = m[i] / (1 - beta1^step),  vhat = v[i] / (1 - beta2^step)
 *   param[i] -= lr * mhat / (sqrt(vhat) + eps)
 * m and v keep the moments themselves, not mhat and vhat. */
void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
                      float beta1, float beta2, float eps, float weight_decay);

#endif /* LESSON7_EXERCISES_H */
