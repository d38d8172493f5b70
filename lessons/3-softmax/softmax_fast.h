/*
 * softmax_fast.h - what lesson 3's fast file (softmax_fast.c) offers besides its kernels
 * (kernels_fast.h): its exp over an array, for the tests and the bench.
 */
#ifndef SOFTMAX_FAST_H
#define SOFTMAX_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* out[i] = e^x[i] for n floats (in place is fine): with AVX2 and FMA (COURSE_KERNELS=native, kernels.h)
 * a polynomial after a range reduction, within 2 units in the last place of the exact e^x over
 * the whole float range, with gradual underflow: inf above 88.72, exactly 0 below -103.97,
 * nan for nan, e^-inf = 0, e^inf = inf. Otherwise expf, one float at a time. n <= 0 does
 * nothing; a NULL x or out records an error. */
void simd_exp(const float *x, int64_t n, float *out);

#endif /* SOFTMAX_FAST_H */
