/*
 * solutions.c - reference solutions to lesson 3's exercises, for instructors and for checking
 * the tests themselves (`make test` runs the exercise tests against this file too).
 */
#include <math.h>

#include "exercises.h"

void ex3_1_softmax2_backward(float s0, float s1, float g0, float g1, float *dx0, float *dx1) {
    /* dx0 = s0 (g0 - (g0 s0 + g1 s1)) = s0 (g0 (1 - s0) - g1 s1) = s0 s1 (g0 - g1), and the
     * mirror image for dx1: the two gradients are equal and opposite. */
    *dx0 = s0 * s1 * (g0 - g1);
    *dx1 = s0 * s1 * (g1 - g0);
}

void ex3_2_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j < d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += out[j] = expf(x[j] - largest);
    for (int64_t j = 0; j < d; j++) out[j] = out[j] / total;
}

void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) {
    float dot = 0.0f;
    for (int64_t j = 0; j < d; j++) dot += g[j] * s[j];
    for (int64_t i = 0; i < d; i++) dx[i] += s[i] * (g[i] - dot);
}

void ex3_4_log_softmax_row(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j < d; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += expf(x[j] - largest);
    /* (x - max) - log(total), not x - (max + log(total)): adding the max to the log would
     * round it to the max's size */
    /* cppcheck-suppress invalidFunctionArg ; total >= 1 when d > 0 (the max adds e^0); for d == 0 the value is unused */
    float log_total = logf(total);
    for (int64_t j = 0; j < d; j++) out[j] = (x[j] - largest) - log_total;
}
