/*
 * permute_diagram.c - the data of lesson 4's pictures, asked of the library as it runs: each
 * view's own header, what tensor_get reads through it, the odometer's offsets and what
 * contiguous() copied. Contracts in permute_diagram.h; tests/test_diagrams.c checks every cell.
 */
#include "permute_diagram.h"

#include "broadcast.h"
#include "permute.h"

static int storage_cells(Diagram *d, const Tensor *x) {
    int status = 0;
    for (int64_t k = 0; k < x->storage->size && status == 0; k++)
        status = diagram_cell(d, "storage", 0, k, x->storage->data[k], -1, (int)k, "s[%lld] = %g", (long long)k,
                              (double)x->storage->data[k]);
    return status;
}

/* A header's cells (rank 1 or 2) and its note: how it was made, then its shape, strides, offset. */
static int header_cells(Diagram *d, const char *part, const char *made, const Tensor *v) {
    if (!v) return -1;
    int64_t rows = v->rank == 2 ? v->shape[0] : 1, cols = v->shape[v->rank - 1];
    int status = 0;
    for (int64_t i = 0; i < rows && status == 0; i++)
        for (int64_t j = 0; j < cols && status == 0; j++) {
            int64_t index[2] = {i, j}, offset = v->offset + j * v->strides[v->rank - 1];
            if (v->rank == 2) offset += i * v->strides[0];
            float value = tensor_get(v, v->rank == 2 ? index : index + 1);
            status = diagram_cell(d, part, i, j, value, offset, (int)offset, "s[%lld]", (long long)offset);
        }
    char shape[SHAPE_STR_MAX], strides[SHAPE_STR_MAX], header[DIAGRAM_NAME_MAX];
    snprintf(header, sizeof header, "%s_header", part);
    if (status == 0) status = diagram_note(d, part, "%s", made);
    if (status == 0)
        status = diagram_note(d, header, "shape %s, strides %s, offset %lld",
                              shape_format(v->shape, v->rank, shape, sizeof shape),
                              shape_format(v->strides, v->rank, strides, sizeof strides), (long long)v->offset);
    return status;
}

int permute_diagram_views(Diagram *d) {
    Ctx *ctx = ctx_new();
    Tensor *x = tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    int status = x ? storage_cells(d, x) : -1;
    if (status == 0) status = header_cells(d, "contiguous", "x itself", x);
    if (status == 0) status = header_cells(d, "permuted", "permute(x, (1,0))", tensor_permute(x, AXES(1, 0)));
    if (status == 0)
        status = header_cells(d, "expanded", "x's row 1, expanded to (2,3)",
                              tensor_expand(tensor_as_strided(x, DIMS(3), STRIDES(1), 3), DIMS(2, 3)));
    if (status == 0)
        status = header_cells(d, "window", "x[:, 1:3]", tensor_as_strided(x, DIMS(2, 2), STRIDES(3, 1), 1));
    if (status == 0)
        status = header_cells(d, "reversed", "x[:, ::-1]", tensor_as_strided(x, DIMS(2, 3), STRIDES(3, -1), 2));
    ctx_free(ctx);
    return status;
}

int permute_diagram_walk(Diagram *d) {
    Ctx *ctx = ctx_new();
    Tensor *x = tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *y = tensor_permute(x, AXES(1, 0));
    Tensor *copy = tensor_contiguous(y);
    int status = copy ? storage_cells(d, x) : -1; /* copy is y itself if y is contiguous */
    NdIter it;
    if (status == 0) nditer_init(&it, y->rank, y->shape, 1, (const int64_t *[]){y->strides});
    for (int64_t k = 0, last = 0; status == 0 && nditer_next(&it); k++) {
        int64_t offset = y->offset + it.offset[0];
        status = diagram_cell(d, "walk", 0, k, tensor_data(copy)[k], offset, (int)offset, "(%lld,%lld)",
                              (long long)it.index[0], (long long)it.index[1]);
        /* a step whose last index went back to 0 carried into the index before it */
        if (status == 0 && k > 0)
            status = diagram_cell(d, "hop", last, k, (float)(offset - last), offset, (int)offset, "%+lld%s",
                                  (long long)(offset - last), it.index[y->rank - 1] == 0 ? " (a carry)" : "");
        last = offset;
    }
    char shape[SHAPE_STR_MAX], strides[SHAPE_STR_MAX];
    if (status == 0)
        status = diagram_note(d, "y", "y = permute(x, (1,0)): shape %s, strides %s",
                              shape_format(y->shape, y->rank, shape, sizeof shape),
                              shape_format(y->strides, y->rank, strides, sizeof strides));
    ctx_free(ctx);
    return status;
}
