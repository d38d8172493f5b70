/*
 * reduce_diagram.c - the data of lesson 2's picture, asked of the library as it runs: where
 * sum_axis sends each cell of x, and where its backward sends each cell of the gradient.
 * Contracts in reduce_diagram.h; tests/test_diagrams.c checks every cell.
 */
#include "reduce_diagram.h"

#include "broadcast.h"
#include "reduce.h"

static Tensor *column_sums(Tensor *x, void *arg) { return (void)arg, tensor_sum_axis(x, 0, true); }

int reduce_diagram_sum(Diagram *d) {
    Ctx *ctx = ctx_new();
    Tensor *x = tensor_requires_grad(tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *out = tensor_sum_axis(x, 0, true);
    Tensor *g = tensor_from(ctx, DIMS(1, 3), VALUES(1, 2, 3));
    float forward[6 * 3] = {0}, backward[3 * 6] = {0}, sums[3], gx[6];
    int64_t into[6], from[6], strides[2];
    int status = out && diagram_probe_forward(DIMS(2, 3), column_sums, NULL, forward, 6 * 3) == 3 &&
                         diagram_probe_backward(out, x, backward, 3 * 6) == 3 && tensor_to_array(out, sums, 3) == 3 &&
                         tensor_backward_from(out, g) == 0 && tensor_to_array(tensor_grad(x), gx, 6) == 6 &&
                         broadcast_strides(out->shape, out->rank, out->strides, x->shape, x->rank, strides) == 0
                     ? 0
                     : -1;
    for (int64_t r = 0; r < 6; r++) {
        into[r] = diagram_reached(forward + r * 3, 3, 1); /* the cell of out that x's 1 at r reached */
        from[r] = diagram_reached(backward + r, 3, 6);    /* the cell of g whose 1 reached gx[r] */
    }
    const float *xs = status == 0 ? tensor_data(x) : NULL;
    for (int64_t r = 0; r < 6 && status == 0; r++)
        status =
            diagram_cell(d, "x", r / 3, r % 3, xs[r], into[r], (int)into[r], "%lld*%lld + %lld*%lld = %lld",
                         (long long)(r / 3), (long long)strides[0], (long long)(r % 3), (long long)strides[1],
                         (long long)r / 3 * strides[0] + (long long)r % 3 * strides[1]); /* the arrow is the probe's */
    for (int64_t j = 0; j < 3 && status == 0; j++) {
        char sum[DIAGRAM_LABEL_MAX];
        int n = diagram_terms(sum, sizeof sum, xs, into, 6, j, " + ");
        status = diagram_cell(d, "out", 0, j, sums[j], -1, (int)j, "%s = %g", n ? sum : "nothing", (double)sums[j]);
    }
    for (int64_t j = 0; j < 3 && status == 0; j++)
        status = diagram_cell(d, "g", 0, j, tensor_data(g)[j], -1, (int)j, "g[%lld] = %g", (long long)j,
                              (double)tensor_data(g)[j]);
    for (int64_t r = 0; r < 6 && status == 0; r++)
        status = diagram_cell(d, "gx", r / 3, r % 3, gx[r], from[r], (int)from[r], "+= g[%lld] = %g",
                              (long long)from[r], (double)gx[r]);
    char s[SHAPE_STR_MAX];
    if (status == 0) status = diagram_note(d, "strides", "%s", shape_format(strides, 2, s, sizeof s));
    ctx_free(ctx);
    return status;
}
