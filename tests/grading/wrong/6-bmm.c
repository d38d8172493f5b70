/*
 * 6-bmm.c - known-wrong answers to lesson 6's exercises: the grader and make test must fail
 * each the same way, with a message that names the mistake (tests/grading/test_agreement.sh
 * says how this file is read).
 */
#include <string.h>

/* wrong 6.1: lines the batch dims up from the left, not from the right | expect: do broadcast: compare the batch dims from the right */
int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    int64_t pa[8], pb[8];
    int ra = a_rank, rb = b_rank;
    memcpy(pa + (a_rank == 1), a, (size_t)a_rank * sizeof *a);
    if (a_rank == 1) pa[0] = 1, ra = 2;
    memcpy(pb, b, (size_t)b_rank * sizeof *b);
    if (b_rank == 1) pb[1] = 1, rb = 2;
    if (pa[ra - 1] != pb[rb - 2]) return -1;
    int na = ra - 2, nb = rb - 2, n = na > nb ? na : nb;
    for (int q = 0; q < n; q++) {
        int64_t da = q < na ? pa[q] : 1, db = q < nb ? pb[q] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[q] = da == 1 ? db : da;
    }
    int r = n;
    if (a_rank > 1) out[r++] = pa[ra - 2];
    if (b_rank > 1) out[r++] = pb[rb - 1];
    *out_rank = r;
    return 0;
}

/* wrong 6.1: never compares the inner dims | expect: must equal the second-to-last dim */
int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    int64_t pa[8], pb[8];
    int ra = a_rank, rb = b_rank;
    memcpy(pa + (a_rank == 1), a, (size_t)a_rank * sizeof *a);
    if (a_rank == 1) pa[0] = 1, ra = 2;
    memcpy(pb, b, (size_t)b_rank * sizeof *b);
    if (b_rank == 1) pb[1] = 1, rb = 2;
    int na = ra - 2, nb = rb - 2, n = na > nb ? na : nb;
    for (int q = 1; q <= n; q++) {
        int64_t da = q <= na ? pa[na - q] : 1, db = q <= nb ? pb[nb - q] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[n - q] = da == 1 ? db : da;
    }
    int r = n;
    if (a_rank > 1) out[r++] = pa[ra - 2];
    if (b_rank > 1) out[r++] = pb[rb - 1];
    *out_rank = r;
    return 0;
}

/* wrong 6.1: keeps the dim that promoting a vector added | expect: remove the 1 */
int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    int64_t pa[8], pb[8];
    int ra = a_rank, rb = b_rank;
    memcpy(pa + (a_rank == 1), a, (size_t)a_rank * sizeof *a);
    if (a_rank == 1) pa[0] = 1, ra = 2;
    memcpy(pb, b, (size_t)b_rank * sizeof *b);
    if (b_rank == 1) pb[1] = 1, rb = 2;
    if (pa[ra - 1] != pb[rb - 2]) return -1;
    int na = ra - 2, nb = rb - 2, n = na > nb ? na : nb;
    for (int q = 1; q <= n; q++) {
        int64_t da = q <= na ? pa[na - q] : 1, db = q <= nb ? pb[nb - q] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[n - q] = da == 1 ? db : da;
    }
    out[n] = pa[ra - 2], out[n + 1] = pb[rb - 1];
    *out_rank = n + 2;
    return 0;
}

/* wrong 6.2: steps db's batches by m * k, a's batch size, not k * n | expect: db's batch bi starts at bi * k * n */
void ex6_2_bmm_backward(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                        float *da, float *db) {
    for (int64_t bi = 0; bi < batch; bi++) {
        const float *A = a + bi * m * k, *B = b + bi * k * n, *G = g + bi * m * n;
        float *dA = da + bi * m * k, *dB = db + bi * m * k;
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

/* wrong 6.2: da = g @ b without the transpose: reads b[bi, p, j] at j * k + p | expect: b^T */
void ex6_2_bmm_backward(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                        float *da, float *db) {
    for (int64_t bi = 0; bi < batch; bi++) {
        const float *A = a + bi * m * k, *B = b + bi * k * n, *G = g + bi * m * n;
        float *dA = da + bi * m * k, *dB = db + bi * k * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++) {
                float s = 0.0f;
                for (int64_t j = 0; j < n; j++) s += G[i * n + j] * B[j * k + p];
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

/* wrong 6.2: writes db[bi, p, j] at j * k + p, as if db were (batch, n, k) | expect: as if db were (batch, n, k) */
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
                dB[j * k + p] += s;
            }
    }
}

/* wrong 6.3: zeroes dw inside the batch loop, so only the last batch's gradient is left | expect: gradient alone: every batch used w */
void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                              float *dw) {
    for (int64_t bi = 0; bi < batch; bi++) {
        memset(dw, 0, (size_t)(k * n) * sizeof *dw);
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n; j++) dw[p * n + j] += x[(bi * m + i) * k + p] * g[(bi * m + i) * n + j];
    }
}

/* wrong 6.3: averages the batches' gradients instead of adding them | expect: divided by the batch */
void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                              float *dw) {
    memset(dw, 0, (size_t)(k * n) * sizeof *dw);
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n; j++) dw[p * n + j] += x[(bi * m + i) * k + p] * g[(bi * m + i) * n + j];
    for (int64_t q = 0; q < k * n; q++) dw[q] /= (float)batch;
}

/* wrong 6.3: reads x without the batch offset, batch 0's x with every batch's g | expect: x's batch */
void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                              float *dw) {
    memset(dw, 0, (size_t)(k * n) * sizeof *dw);
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n; j++) dw[p * n + j] += x[i * k + p] * g[(bi * m + i) * n + j];
}

/* wrong 6.4: indexes the shared queries by the batch, as if there were one per batch | expect: shared by every batch */
void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out) {
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++) s += queries[(bi * m + i) * k + p] * keys[(bi * k + p) * n + j];
                out[(bi * m + i) * n + j] = s;
            }
}

/* wrong 6.4: loops over the batches but reads batch 0's keys in each | expect: keys' batch bi */
void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out) {
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++) s += queries[i * k + p] * keys[p * n + j];
                out[(bi * m + i) * n + j] = s;
            }
}

/* wrong 6.4: reads keys as one (k, b * n) matrix, the batches side by side, as the stub does | expect: side by side */
void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out) {
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++) s += queries[i * k + p] * keys[p * b * n + bi * n + j];
                out[(bi * m + i) * n + j] = s;
            }
}
