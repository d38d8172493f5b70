/*
 * solutions.c - reference solutions to lesson 6's exercises, for instructors and for checking
 * the tests themselves (`make test` runs the exercise tests against this file too).
 */
#include <string.h>

#include "exercises.h"

int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    /* promote: a vector on the left is a row (1, k), on the right a column (k, 1) */
    int64_t pa[8], pb[8];
    int ra = a_rank, rb = b_rank;
    memcpy(pa + (a_rank == 1), a, (size_t)a_rank * sizeof *a);
    if (a_rank == 1) pa[0] = 1, ra = 2;
    memcpy(pb, b, (size_t)b_rank * sizeof *b);
    if (b_rank == 1) pb[1] = 1, rb = 2;
    if (pa[ra - 1] != pb[rb - 2]) return -1; /* k must match */
    /* broadcast the batch dims, counted from the right */
    int na = ra - 2, nb = rb - 2, n = na > nb ? na : nb;
    for (int q = 1; q <= n; q++) {
        int64_t da = q <= na ? pa[na - q] : 1, db = q <= nb ? pb[nb - q] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[n - q] = da == 1 ? db : da;
    }
    int r = n;
    if (a_rank > 1) out[r++] = pa[ra - 2]; /* m */
    if (b_rank > 1) out[r++] = pb[rb - 1]; /* n */
    *out_rank = r;
    return 0;
}

void ex6_2_bmm_backward(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                        float *da, float *db) {
    for (int64_t bi = 0; bi < batch; bi++) {
        const float *A = a + bi * m * k, *B = b + bi * k * n, *G = g + bi * m * n;
        float *dA = da + bi * m * k, *dB = db + bi * k * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++) {
                float s = 0.0f;
                for (int64_t j = 0; j < n; j++) s += G[i * n + j] * B[p * n + j];
                dA[i * k + p] += s;
            }
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t i = 0; i < m; i++) s += A[i * k + p] * G[i * n + j];
                dB[p * n + j] += s;
            }
    }
}

void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                              float *dw) {
    memset(dw, 0, (size_t)(k * n) * sizeof *dw);
    for (int64_t bi = 0; bi < batch; bi++) /* every batch used w: add up their gradients */
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n; j++) dw[p * n + j] += x[(bi * m + i) * k + p] * g[(bi * m + i) * n + j];
}

void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out) {
    /* the fix: one product per batch. keys' batches are k*n apart, not adjacent columns */
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++) s += queries[i * k + p] * keys[(bi * k + p) * n + j];
                out[(bi * m + i) * n + j] = s;
            }
}
