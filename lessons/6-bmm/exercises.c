/*
 * exercises.c - lesson 6's exercises. This is the file you edit.
 *
 * Each function below is a stub: it says what to do, where the lesson explains it, and calls
 * EXERCISE_TODO() so the tests report it as TODO rather than wrong. Delete that line (and the
 * (void) casts) when you start, then run `make lesson6 test` to check your answer. Use plain
 * C: the point is to write the index arithmetic yourself.
 */
#include "exercises.h"

/* 6.1: split each shape into batch dims and matrix dims (after promoting a 1-D operand),
 * check the inner dims, broadcast the batch dims with lesson 1's rule, and put (m, n) back,
 * minus any dim a promotion added (docs/6-bmm.md 7.4). */
int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    EXERCISE_TODO();
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    return -1;
}

/* 6.2: four nested loops per gradient, with the batch offsets bi*m*k, bi*k*n and bi*m*n
 * (docs/6-bmm.md 7.3). Add into da and db. */
void ex6_2_bmm_backward(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                        float *da, float *db) {
    EXERCISE_TODO();
    (void)a, (void)b, (void)g, (void)batch, (void)m, (void)k, (void)n, (void)da, (void)db;
}

/* 6.3: w was used by every batch, so its gradient is the sum over the batch of x_b^T @ g_b
 * (docs/6-bmm.md 7.5). Zero dw first. */
void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                              float *dw) {
    EXERCISE_TODO();
    (void)x, (void)g, (void)batch, (void)m, (void)k, (void)n, (void)dw;
}

/* 6.4: the bug hunt (docs/6-bmm.md 7.6). This is what a real library ran when the left
 * operand was shared by every batch: fast, and wrong. Delete the EXERCISE_TODO() line, run
 * `make lesson6 test` to see what it gets wrong, then find the mistake and fix it. */
void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out) {
    EXERCISE_TODO();
    for (int64_t i = 0; i < b * m * n; i++) out[i] = 0.0f;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < b * n; j++) {
            float s = 0.0f;
            for (int64_t p = 0; p < k; p++) s += queries[i * k + p] * keys[p * n + j];
            out[i * n + j] = s;
        }
}
