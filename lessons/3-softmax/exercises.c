/*
 * exercises.c - lesson 3's exercises. This is the file you edit.
 *
 * Each function below is a stub: it says what to do, where the lesson explains it, and calls
 * EXERCISE_TODO() so the tests report it as TODO rather than wrong. Delete that line (and the
 * (void) casts) when you start, then run `make lesson3 test` to check your answer. Use plain C
 * and <math.h> (expf, logf, INFINITY): the point is to write the rows yourself.
 */
#include <math.h>

#include "exercises.h"

/* 3.1: d loss/d x0 and d loss/d x1 for s = softmax([x0, x1]), in s0, s1, g0, g1 (docs 4.4).
 * Start from ds_i/dx_j = s_i (delta_ij - s_j), then use s0 + s1 = 1. */
void ex3_1_softmax2_backward(float s0, float s1, float g0, float g1, float *dx0, float *dx1) {
    EXERCISE_TODO();
    (void)s0, (void)s1, (void)g0, (void)g1, (void)dx0, (void)dx1;
}

/* 3.2: stable softmax of one row (docs 4.3): find the row's max (what should it start at, so
 * that any row finds its true max?), exp each x_j minus the max, then divide by their sum. */
void ex3_2_softmax_row(const float *x, int64_t d, float *out) {
    EXERCISE_TODO();
    (void)x, (void)d, (void)out;
}

/* 3.3: softmax's backward for one row (docs 4.4): one dot product sum_j g_j s_j, then
 * dx_i += s_i * (g_i - dot). */
void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) {
    EXERCISE_TODO();
    (void)s, (void)g, (void)d, (void)dx;
}

/* 3.4: log-softmax of one row through log-sum-exp (docs 4.5): the max m, then
 * out_j = (x_j - m) - log(sum_k exp(x_k - m)). Keep the parentheses: x_j - m is exact. */
void ex3_4_log_softmax_row(const float *x, int64_t d, float *out) {
    EXERCISE_TODO();
    (void)x, (void)d, (void)out;
}
