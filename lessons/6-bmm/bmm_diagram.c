/*
 * bmm_diagram.c - the data of lesson 6's picture, asked of the library as it runs: what
 * tensor_matmul and the invalid column fold wrote into each cell of seed 002's result, and
 * which row of q wrote it. Contracts in bmm_diagram.h; tests/test_diagrams.c checks every cell.
 */
#include "bmm_diagram.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "bmm.h"
#include "broadcast.h"

enum { B = 4, M = 2, K = 3, N = 5, CELLS = B * M * N };

/* What one way of computing the product writes into out (CELLS floats) for queries (M,K) and
 * keys (B,K,N), both contiguous. */
typedef int (*Product)(Ctx *ctx, const float *queries, const float *keys, float *out);

static int library_product(Ctx *ctx, const float *queries, const float *keys, float *out) {
    Tensor *q = tensor_expand(tensor_from(ctx, DIMS(1, M, K), queries, M * K), DIMS(B, M, K));
    Tensor *scores = tensor_matmul(q, tensor_from(ctx, DIMS(B, K, N), keys, B * K * N));
    return scores && tensor_to_array(scores, out, CELLS) == CELLS ? 0 : -1;
}

static int column_fold(Ctx *ctx, const float *queries, const float *keys, float *out) {
    (void)ctx;
    return matmul_wrong_column_fold(queries, keys, B, M, K, N, out) >= 0 ? 0 : -1;
}

/* One result's cells and its count; `rows` names the part of its rows' writers. *second is the
 * first element that row 1 of q wrote, *end one past the last element written. */
static int result_cells(Diagram *d, Ctx *ctx, const char *part, const char *rows, Product product, const float *queries,
                        const float *keys, const double *want, int *second, int *end) {
    float got[CELLS], probe[CELLS], marked_queries[M * K], ones[B * K * N];
    /* row i of q all i+1 and keys all 1: a cell written by row i holds K*(i+1) */
    for (int i = 0; i < M * K; i++) {
        int row = i / K;
        marked_queries[i] = (float)(row + 1);
    }
    for (int i = 0; i < B * K * N; i++) ones[i] = 1.0f;
    if (product(ctx, queries, keys, got) < 0 || product(ctx, marked_queries, ones, probe) < 0) return -1;
    int64_t writer[CELLS];
    int count[3] = {0, 0, 0}, status = 0;
    for (int t = 0; t < CELLS; t++) {
        float row = probe[t] / K - 1.0f;
        writer[t] = probe[t] == 0.0f ? -1 : row == floorf(row) && row >= 0 && row < M ? (int64_t)row : -2;
        int kind = writer[t] == -1                          ? BMM_CELL_UNWRITTEN
                   : fabs((double)got[t] - want[t]) <= 1e-5 ? BMM_CELL_RIGHT
                                                            : BMM_CELL_WRONG;
        count[kind]++;
        status = kind == BMM_CELL_RIGHT ? diagram_cell(d, part, t / N, t % N, got[t], writer[t], kind, "right")
                 : kind == BMM_CELL_WRONG
                     ? diagram_cell(d, part, t / N, t % N, got[t], writer[t], kind, "want %.2f", want[t])
                     : diagram_cell(d, part, t / N, t % N, got[t], writer[t], kind, "unwritten");
        if (status < 0) return -1;
    }
    for (int r = 0; r < B * M && status == 0; r++) {
        int64_t who = writer[r * N];
        for (int j = 1; j < N; j++)
            if (writer[r * N + j] != who) who = -2;
        status = who >= 0 ? diagram_cell(d, rows, r, 0, 0, who, 0, "q row %lld", (long long)who)
                          : diagram_cell(d, rows, r, 0, 0, who, 0, "%s", who == -1 ? "nothing" : "several rows");
    }
    *second = -1, *end = 0;
    for (int t = CELLS - 1; t >= 0; t--) {
        if (writer[t] == 1) *second = t;
        if (writer[t] >= 0 && *end == 0) *end = t + 1;
    }
    /* the batches whose every cell is right */
    char survivors[DIAGRAM_NOTE_MAX] = "", name[DIAGRAM_NAME_MAX + 16];
    int n_survivors = 0, used = 0;
    for (int b = 0; b < B; b++) {
        bool all = true;
        for (int t = b * M * N; t < (b + 1) * M * N; t++)
            all = all && fabs((double)got[t] - want[t]) <= 1e-5 && writer[t] >= 0;
        if (all && used < (int)sizeof survivors)
            used += snprintf(survivors + used, sizeof survivors - (size_t)used, "%s%d", n_survivors++ ? ", " : "", b);
    }
    snprintf(name, sizeof name, "%s_survivors", part);
    if (status == 0)
        status = n_survivors == 0   ? diagram_note(d, name, "no batch survives")
                 : n_survivors == 1 ? diagram_note(d, name, "only batch %s survives", survivors)
                                    : diagram_note(d, name, "batches %s survive", survivors);
    char counts[DIAGRAM_NAME_MAX + 8];
    snprintf(counts, sizeof counts, "%s_counts", part);
    if (status == 0 && count[BMM_CELL_RIGHT] == CELLS) status = diagram_note(d, counts, "%d of %d right", CELLS, CELLS);
    else if (status == 0)
        status = diagram_note(d, counts, "%d right, %d wrong, %d never written (still 0)", count[BMM_CELL_RIGHT],
                              count[BMM_CELL_WRONG], count[BMM_CELL_UNWRITTEN]);
    return status;
}

int bmm_diagram_fold(Diagram *d) {
    Ctx *ctx = ctx_new();
    float queries[M * K], keys[B * K * N];
    for (int i = 0; i < M * K; i++) queries[i] = (float)i;
    for (int i = 0; i < B * K * N; i++) keys[i] = (float)i * 0.01f;
    /* the product by its definition, in double: what every cell should hold */
    double want[CELLS];
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0.0;
                for (int p = 0; p < K; p++) s += (double)queries[i * K + p] * (double)keys[(b * K + p) * N + j];
                want[(b * M + i) * N + j] = s;
            }
    int status = ctx ? 0 : -1, second, end;
    if (status == 0)
        status = result_cells(d, ctx, "lib", "lib_rows", library_product, queries, keys, want, &second, &end);
    if (status == 0)
        status = result_cells(d, ctx, "fold", "fold_rows", column_fold, queries, keys, want, &second, &end);
    /* the fold's one product has M rows of B*N: where the probe saw them land */
    if (status == 0)
        status = diagram_note(d, "overlap", "its %d rows, %d wide, are written %d apart", M, B * N, second);
    if (status == 0)
        status = diagram_note(d, "tail", "row 1 covers all but %d of row 0, and nothing is written from element %d on",
                              second, end);
    Tensor *q = tensor_expand(tensor_from(ctx, DIMS(1, M, K), queries, M * K), DIMS(B, M, K));
    Tensor *k = tensor_from(ctx, DIMS(B, K, N), keys, B * K * N);
    char s[SHAPE_STR_MAX];
    if (status == 0 && (!q || !k)) status = -1;
    if (status == 0)
        status = diagram_note(d, "q", "q = expand(queries (1,2,3), (4,2,3)): strides %s",
                              shape_format(q->strides, q->rank, s, sizeof s));
    if (status == 0)
        status = diagram_note(d, "rows", "%s",
                              matmul_folds_into_rows(1, (const int64_t[]){B}, q->strides, k->strides, M, q->strides[1])
                                  ? "yes"
                                  : "no");
    if (status == 0) status = diagram_note(d, "lib", "the library: tensor_matmul(q, keys)");
    if (status == 0)
        status = diagram_note(d, "fold", "candle 0.11's fold into columns: one (%d,%d) @ (%d,%d)", M, K, K, B * N);
    ctx_free(ctx);
    return status;
}
