/*
 * gather_diagram.c - the data of lesson 5's picture, asked of the library as it runs: which
 * table cell gather_rows copies into each output cell, and which cell of the table's gradient
 * its backward adds each gradient into. Contracts in gather_diagram.h; tests/test_diagrams.c
 * checks every cell.
 */
#include "gather_diagram.h"

#include "broadcast.h"
#include "gather.h"

enum { V = 3, D = 2, N = 2 };

static Tensor *gather(Tensor *table, void *indices) { return tensor_gather_rows(table, indices, N); }

static int one_case(Diagram *d, Ctx *ctx, int c, const int64_t *indices) {
    char part[DIAGRAM_NAME_MAX];
    Tensor *table = tensor_requires_grad(tensor_from(ctx, DIMS(V, D), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *out = tensor_gather_rows(table, indices, N);
    float forward[V * D * N * D] = {0}, backward[N * D * V * D] = {0}, values[N * D], grad[V * D];
    const float ones[N * D] = {1, 1, 1, 1}; /* out's gradient: the backward of sum(out) */
    int64_t copies[N * D], into[N * D];
    int status = out && diagram_probe_forward(DIMS(V, D), gather, (void *)indices, forward, V * D * N * D) == N * D &&
                         diagram_probe_backward(out, table, backward, N * D * V * D) == N * D &&
                         tensor_to_array(out, values, N * D) == N * D && tensor_backward(tensor_sum(out)) == 0 &&
                         tensor_to_array(tensor_grad(table), grad, V * D) == V * D
                     ? 0
                     : -1;
    for (int64_t t = 0; t < N * D; t++) {
        copies[t] = diagram_reached(forward + t, V * D, N * D);    /* the table cell whose 1 reached out cell t */
        into[t] = diagram_reached(backward + t * V * D, V * D, 1); /* where out's gradient at t landed */
    }
    snprintf(part, sizeof part, "case%d", c);
    if (status == 0)
        status = diagram_note(d, part, "indices = [%lld, %lld]", (long long)indices[0], (long long)indices[1]);
    snprintf(part, sizeof part, "indices%d", c);
    for (int64_t i = 0; i < N && status == 0; i++)
        status = diagram_cell(d, part, i, 0, (float)indices[i], indices[i], (int)indices[i], "indices[%lld] = %lld",
                              (long long)i, (long long)indices[i]);
    snprintf(part, sizeof part, "out%d", c);
    for (int64_t t = 0; t < N * D && status == 0; t++)
        status = diagram_cell(d, part, t / D, t % D, values[t], copies[t], copies[t] < 0 ? -1 : (int)(copies[t] / D),
                              "%g", (double)values[t]);
    snprintf(part, sizeof part, "g%d", c);
    for (int64_t t = 0; t < N * D && status == 0; t++)
        status = diagram_cell(d, part, t / D, t % D, ones[t], into[t], into[t] < 0 ? -1 : (int)(into[t] / D), "%g",
                              (double)ones[t]);
    snprintf(part, sizeof part, "grad%d", c);
    for (int64_t r = 0; r < V * D && status == 0; r++) {
        char sum[DIAGRAM_LABEL_MAX];
        int n = diagram_terms(sum, sizeof sum, ones, into, N * D, r, "+");
        /* the sum is spelled out where gradients met: "1+1=2" */
        status = n > 1 ? diagram_cell(d, part, r / D, r % D, grad[r], -1, (int)(r / D), "%s=%g", sum, (double)grad[r])
                       : diagram_cell(d, part, r / D, r % D, grad[r], -1, (int)(r / D), "%g", (double)grad[r]);
    }
    return status;
}

int gather_diagram_rows(Diagram *d) {
    Ctx *ctx = ctx_new();
    Tensor *table = tensor_from(ctx, DIMS(V, D), VALUES(1, 2, 3, 4, 5, 6));
    int status = table ? 0 : -1;
    for (int64_t r = 0; r < V * D && status == 0; r++)
        status = diagram_cell(d, "table", r / D, r % D, tensor_data(table)[r], -1, (int)(r / D), "%g",
                              (double)tensor_data(table)[r]);
    if (status == 0) status = one_case(d, ctx, 1, (const int64_t[]){0, 2});
    if (status == 0) status = one_case(d, ctx, 2, (const int64_t[]){0, 0});
    ctx_free(ctx);
    return status;
}
