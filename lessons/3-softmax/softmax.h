/*
 * softmax.h - lesson 3: numerically stable softmax, log-softmax and cross-entropy, forward
 * and backward (docs/3-softmax.md).
 *
 * Each works row by row along the last dim: a row of D arbitrary scores (logits) becomes D
 * probabilities in [0, 1] that sum to 1. (N, C) is N rows (samples) of C classes.
 *
 * Numeric edge cases, decided once for all three ops (the same as PyTorch):
 *   - an entry of -inf (a masked score) gets probability exactly 0;
 *   - a row that is all -inf, or holds +inf or nan anywhere, becomes all nan (no
 *     distribution is defined);
 *   - D = 1 gives probability 1; logits of any size, even 1e4 or -1e5, are stable, and
 *     log-probabilities keep their accuracy there too.
 */
#ifndef SOFTMAX_H
#define SOFTMAX_H

#include "tensor.h"

/* softmax along the last dim, stable: exp(x - max) / sum(exp(x - max)). Backward:
 * dx_i = s_i * (g_i - sum_j g_j s_j), where s is the output. */
Tensor *tensor_softmax_last_dim(Tensor *x);

/* log(softmax(x)) along the last dim, through log-sum-exp: (x - max) - log(sum(exp(x - max))),
 * which stays finite where log(softmax(x)) would be log(0) = -inf. Backward:
 * dx_i = g_i - softmax_i * sum_j g_j. */
Tensor *tensor_log_softmax_last_dim(Tensor *x);

/* The mean over the N rows of -log_softmax(logits)[n, targets[n]], for logits of shape (N, C)
 * and n_targets = N class indices in 0..C-1. A rank-0 tensor; nan when N = 0. Backward:
 * d loss / d logits[n, c] = (softmax[n, c] - (c == targets[n])) / N. */
Tensor *tensor_cross_entropy(Tensor *logits, const int64_t *targets, int64_t n_targets);

/* The textbook formula with no shift, exp(x_j) / sum_k exp(x_k), on one contiguous row of d
 * floats. For comparison only: once the sum overflows float32 (from e^x near 88.7 on), the
 * entries whose exp is finite become 0 and those whose exp is inf become inf / inf = nan. No
 * tensor, no backward. A NULL x or out (for d > 0) records an error and writes nothing. */
void softmax_naive_row(const float *x, int64_t d, float *out);

#endif /* SOFTMAX_H */
