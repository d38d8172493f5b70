/*
 * broadcast_diagram.c - the data of lesson 1's pictures, asked of the library as it runs: the
 * view's strides and offset, broadcast_map, and the gradient cells a backward adds into.
 * Contracts in broadcast_diagram.h; tests/test_diagrams.c checks every cell.
 */
#include "broadcast_diagram.h"

#include "broadcast.h"

int broadcast_diagram_reads(Diagram *d) {
    Ctx *ctx = ctx_new();
    Tensor *b = tensor_from(ctx, DIMS(3), VALUES(10, 20, 30));
    Tensor *view = tensor_expand(b, DIMS(2, 3));
    int64_t map[6];
    int status = view && broadcast_map(DIMS(2, 3), DIMS(3), map) == 0 ? 0 : -1;
    for (int64_t k = 0; k < 3 && status == 0; k++)
        status = diagram_cell(d, "storage", 0, k, tensor_data(b)[k], -1, (int)k, "b[%lld] = %g", (long long)k,
                              (double)tensor_data(b)[k]);
    for (int64_t i = 0; i < 2 && status == 0; i++)
        for (int64_t j = 0; j < 3 && status == 0; j++) {
            /* the address the header gives, and the value the library reads through it */
            int64_t offset = view->offset + i * view->strides[0] + j * view->strides[1];
            float value = tensor_get(view, (const int64_t[]){i, j});
            status =
                diagram_cell(d, "view", i, j, value, offset, (int)offset, "%lld*%lld + %lld*%lld = %lld", (long long)i,
                             (long long)view->strides[0], (long long)j, (long long)view->strides[1], (long long)offset);
        }
    for (int64_t t = 0; t < 6 && status == 0; t++) {
        int64_t index[2];
        unravel_index(t, DIMS(2, 3), index);
        status = diagram_cell(d, "map", 0, t, (float)map[t], map[t], (int)map[t], "(%lld,%lld)", (long long)index[0],
                              (long long)index[1]);
    }
    char shape[SHAPE_STR_MAX], strides[SHAPE_STR_MAX];
    if (status == 0)
        status =
            diagram_note(d, "view", "the library: b viewed as %s, strides %s, offset %lld",
                         shape_format(view->shape, view->rank, shape, sizeof shape),
                         shape_format(view->strides, view->rank, strides, sizeof strides), (long long)view->offset);
    if (status == 0) status = diagram_note(d, "map", "the chapter: the index map broadcast_map((2,3), (3,))");
    ctx_free(ctx);
    return status;
}

int broadcast_diagram_grads(Diagram *d) {
    Ctx *ctx = ctx_new();
    Tensor *a = tensor_requires_grad(tensor_zeros(ctx, DIMS(2, 3)));
    Tensor *b = tensor_requires_grad(tensor_from(ctx, DIMS(3), VALUES(10, 20, 30)));
    Tensor *c = tensor_add(a, b);
    float g[6] = {1, 2, 3, 4, 5, 6}, reach[6 * 3] = {0}, gb[3];
    int64_t into[6];
    int status = diagram_probe_backward(c, b, reach, 6 * 3) == 6 ? 0 : -1;
    /* the cell of b's gradient that each cell of c's gradient reaches: where its 1 landed */
    for (int t = 0; t < 6; t++) into[t] = diagram_reached(reach + t * 3, 3, 1);
    Tensor *upstream = tensor_from(ctx, DIMS(2, 3), g, 6);
    if (status == 0 && (tensor_backward_from(c, upstream) < 0 || tensor_to_array(tensor_grad(b), gb, 3) != 3))
        status = -1;
    for (int t = 0; t < 6 && status == 0; t++)
        status = diagram_cell(d, "g", t / 3, t % 3, g[t], into[t], (int)into[t], "g = %g", (double)g[t]);
    for (int k = 0; k < 3 && status == 0; k++) {
        char sum[DIAGRAM_LABEL_MAX];
        int n = diagram_terms(sum, sizeof sum, g, into, 6, k, " + ");
        status = diagram_cell(d, "gb", 0, k, gb[k], -1, k, "%s = %g", n ? sum : "nothing", (double)gb[k]);
    }
    if (status == 0)
        status = diagram_note(d, "grads", "backward: each gradient of c is added (+=) into the cell of b it read");
    ctx_free(ctx);
    return status;
}
