/*
 * exercises.h - lesson 3's exercises: what each function must do. You edit exercises.c;
 * this file, the tests and the points stay as the course ships them.
 *
 * Check your work with `make lesson3 test`. The "Exercises" section of docs/3-softmax.md lists
 * them with their points.
 */
#ifndef LESSON3_EXERCISES_H
#define LESSON3_EXERCISES_H

#include <stdint.h>

#include "exercise.h"

/* 3.1 (the chapter's exercise 3): softmax of two scores, by hand. s = softmax([x0, x1]) and
 * g = (g0, g1) is the upstream gradient d loss / d s. Work out on paper d loss / d x0 and
 * d loss / d x1 as expressions in s0, s1, g0 and g1 only, then write them here (docs 4.4).
 * Simplify them with s0 + s1 = 1: each is a short product. */
void ex3_1_softmax2_backward(float s0, float s1, float g0, float g1, float *dx0, float *dx1);

/* 3.2: the stable softmax of one contiguous row of d scores (docs 4.3). Write d probabilities
 * into out. It must stay finite for any finite scores, however large or small (1e4, -1e5),
 * give exactly 0 to an entry of -inf, and make a row that is all -inf all nan. */
void ex3_2_softmax_row(const float *x, int64_t d, float *out);

/* 3.3: the backward of softmax for one row (docs 4.4). s is the softmax output, g the
 * upstream gradient, both d long. ADD (+=) dx_i = s_i * (g_i - sum_j g_j s_j) into dx. */
void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx);

/* 3.4: log(softmax(x)) for one row, through log-sum-exp (docs 4.5): out_j = (x_j - m) -
 * log(sum_k exp(x_k - m)), m the row's max. It must stay finite where log(softmax(x)) would
 * be log(0): for x = [0, 200], out[0] is -200, not -inf. The same edge cases as 3.2 apply:
 * an entry of -inf gives -inf, a row that is all -inf gives nan. */
void ex3_4_log_softmax_row(const float *x, int64_t d, float *out);

#endif /* LESSON3_EXERCISES_H */
