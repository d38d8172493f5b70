/*
 * exercises.h - lesson 6's exercises: what each function must do. You edit exercises.c;
 * this file, the tests and the points stay as the course ships them.
 *
 * Check your work with `make lesson6 test`. The "Exercises" section of docs/6-bmm.md lists
 * them with their points.
 */
#ifndef LESSON6_EXERCISES_H
#define LESSON6_EXERCISES_H

#include <stdint.h>

#include "exercise.h"

/* 6.1: the result shape of a @ b for numpy's matmul (docs/6-bmm.md 7.4). a has a_rank dims
 * and b has b_rank dims, each rank 1 to 6. Write the result's shape into out (room for 8
 * dims) and its rank into *out_rank, and return 0; return -1 if the product is not defined
 * (inner dims that differ, batch dims that do not broadcast). A 1-D operand is promoted (a row
 * on the left, a column on the right) and the added dim is removed from the result. */
int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank);

/* 6.2: the chapter's 3-D backward (docs/6-bmm.md 7.3). a is (batch, m, k), b is (batch, k, n)
 * and g, the gradient of a @ b, is (batch, m, n), all contiguous. ADD the gradients into da
 * (batch, m, k) and db (batch, k, n), which may already hold values:
 *   da[bi, i, p] += sum over j of g[bi, i, j] * b[bi, p, j]      (g @ b^T)
 *   db[bi, p, j] += sum over i of a[bi, i, p] * g[bi, i, j]      (a^T @ g) */
void ex6_2_bmm_backward(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                        float *da, float *db);

/* 6.3: the gradient of a weight shared by every batch (docs/6-bmm.md 7.5): out = x @ w with
 * x (batch, m, k), contiguous, and one w (k, n) for all batches, so w was broadcast along the
 * batch. g is out's gradient (batch, m, n). Overwrite dw (k, n) with d loss / d w. */
void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                              float *dw);

/* 6.4: a bug hunt (docs/6-bmm.md 7.6). scores = queries @ keys for a batch: one queries matrix
 * (m, k) shared by every batch, and keys (b, k, n), contiguous, batch-major. Write the
 * (b, m, n) result into out. The stub in exercises.c computes it the way seed 002's library
 * did, fast and wrong: find the mistake and fix it. Every batch is checked. */
void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out);

#endif /* LESSON6_EXERCISES_H */
