/*
 * softmax_fast.h - the fast path of lesson 3's softmax family (softmax_fast.c). The reference
 * ops of softmax.c offer it their rows first; docs/3-softmax.md ("How fast") measures it.
 */
#ifndef SOFTMAX_FAST_H
#define SOFTMAX_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* out[i] = e^x[i] for n floats (in place is fine): with AVX2 and FMA (kernels.h: KERNELS_NATIVE)
 * a polynomial after a range reduction, within 2 units in the last place of the exact e^x over
 * the whole float range, with gradual underflow: inf above 88.72, exactly 0 below -103.97,
 * nan for nan, e^-inf = 0, e^inf = inf. Otherwise expf, one float at a time. n <= 0 does
 * nothing; a NULL x or out records an error. */
void simd_exp(const float *x, int64_t n, float *out);

/* softmax (log_softmax when `log_softmax`) of every row of x along its last dim into out,
 * contiguous in x's shape; x has rank >= 1. True when done; false, with nothing written,
 * unless kernels_mode() is KERNELS_NATIVE, and for a NULL x or out or a rank-0 x. */
bool softmax_fast_rows(bool log_softmax, const Tensor *x, float *out);

/* *total = the sum over the N rows of logits (N, C) of -log_softmax(row)[targets[row]]. True
 * when done; false, as for softmax_fast_rows, and also when the copy of strided logits cannot
 * be allocated, or for what softmax.c never passes: logits NULL or not (N, C), a NULL targets
 * or total, a target outside 0..C-1. */
bool softmax_fast_cross_entropy(const Tensor *logits, const int64_t *targets, double *total);

#endif /* SOFTMAX_FAST_H */
