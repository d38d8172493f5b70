/*
 * softmax_simd.h - the fast row kernels of lesson 3's softmax family (docs/3-softmax.md,
 * section 4.7): the same three passes over a row as softmax.c's plain C ones, eight floats at a
 * time with AVX2 and FMA, around a vectorized exp.
 *
 * softmax.c picks them at run time, once per op, when the CPU has AVX2 and FMA; setting the
 * environment variable SOFTMAX_KERNEL=generic forces the plain C kernels (the tests run both).
 * On other CPUs, and other architectures, these functions still exist and compute the same
 * thing one float at a time, with expf.
 */
#ifndef SOFTMAX_SIMD_H
#define SOFTMAX_SIMD_H

#include <stdbool.h>
#include <stdint.h>

/* True when this CPU runs the AVX2+FMA kernels (whatever SOFTMAX_KERNEL says). */
bool simd_rows_supported(void);

/* out[i] = e^x[i] for n floats (in place is fine): a polynomial after a range reduction,
 * within 2 units in the last place of the exact e^x over the whole float range, with gradual
 * underflow: inf above 88.72, exactly 0 below -103.97, nan for nan, e^-inf = 0, e^inf = inf. */
void simd_exp(const float *x, int64_t n, float *out);

/* The passes over one contiguous row of d floats. A nan never becomes the max (the comparison
 * is false), as in the plain loop; it reaches the sum instead. */
float simd_row_max(const float *x, int64_t d);
/* The sum, in double, of e^(x[j] - m); when out is not NULL also stores each e^(x[j] - m) in
 * out[j] (out may be x). */
double simd_row_exp_sum(const float *x, int64_t d, float m, float *out);
/* s[j] *= k. */
void simd_row_scale(float *s, int64_t d, float k);
/* y[j] = (x[j] - m) - log_sum (y may be x). */
void simd_row_shift(const float *x, int64_t d, float m, float log_sum, float *y);

#endif /* SOFTMAX_SIMD_H */
