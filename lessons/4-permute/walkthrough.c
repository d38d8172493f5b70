/*
 * walkthrough.c - lesson 4, run with `make lesson4`. Prints every worked example of the
 * lesson, computed by the library as it runs. Read it beside docs/4-permute.md: the section
 * numbers match.
 */
#include <stdio.h>
#include <stdlib.h>

#include "broadcast.h"
#include "permute.h"

static void heading(const char *title) { printf("\n%s\n", title); }

static void print_storage(const char *label, const Tensor *t) {
    printf("%s[", label);
    for (int64_t i = 0; i < t->storage->size; i++) printf(i ? ", %g" : "%g", (double)t->storage->data[i]);
    printf("]\n");
}

static void print_axes(const char *label, const int *dims, int n) {
    printf("%s(", label);
    for (int i = 0; i < n; i++) printf(i ? ", %d" : "%d", dims[i]);
    printf(")\n");
}

static void section_reshape_vs_permute(Ctx *ctx) {
    heading("5.1 reshape reinterprets, permute moves: the same six numbers, two ways to (3,2)");
    Tensor *x = tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    tensor_print("  x", x);
    tensor_print("  reshape(x, (3,2))  ", tensor_reshape(x, DIMS(3, 2)));
    tensor_print("  permute(x, (1,0))  ", tensor_permute(x, AXES(1, 0)));
}

static void section_view(Ctx *ctx) {
    heading("5.1 The chapter's test_permute: (2,3) permuted by (1,0) is a view of the same storage");
    Tensor *x = tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *y = tensor_permute(x, AXES(1, 0));
    tensor_describe("  x           ", x);
    tensor_describe("  y = permute ", y);
    print_storage("  y's storage (x's, untouched): ", y);
    Tensor *c = tensor_contiguous(y);
    tensor_describe("  contiguous(y)", c);
    print_storage("  its storage, moved:           ", c);
    /* the 2-D transpose is this permute: tensor_transpose swaps two entries of the identity order */
    Tensor *t = tensor_transpose(x, 0, 1);
    tensor_describe("  transpose(x, 0, 1)", t);
    bool same = t->rank == y->rank && t->storage == y->storage && t->offset == y->offset;
    for (int i = 0; same && i < t->rank; i++) same = t->shape[i] == y->shape[i] && t->strides[i] == y->strides[i];
    printf("  transpose(x, 0, 1) and permute(x, (1,0)): %s\n",
           same ? "the same view (shape, strides, offset, storage)" : "different views");
}

static void section_3d(Ctx *ctx) {
    heading("5.1 In 3-D: permute (0,2,1) swaps the last two dims of (2,2,3)");
    Tensor *x = tensor_from(ctx, DIMS(2, 2, 3), VALUES(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
    Tensor *y = tensor_permute(x, AXES(0, 2, 1));
    tensor_print("  x", x);
    tensor_describe("  x", x);
    tensor_describe("  y", y);
    tensor_print("  y", y);
}

static void section_inverse(Ctx *ctx) {
    (void)ctx;
    heading("5.2 The inverse permutation, inv[perm[i]] = i, and the chapter's flat-index map");
    const int perms[3][3] = {{1, 0, 0}, {0, 2, 1}, {1, 2, 0}};
    const int ranks[3] = {2, 3, 3};
    for (int k = 0; k < 3; k++) {
        int inv[3];
        inverse_permutation(perms[k], ranks[k], inv);
        printf("  perm ");
        print_axes("", perms[k], ranks[k]);
        print_axes("    inverse ", inv, ranks[k]);
    }
    int64_t map[6], index[2];
    char idx[SHAPE_STR_MAX];
    const int64_t out_shape[2] = {3, 2};
    permute_map(DIMS(2, 3), (const int[]){1, 0}, map);
    printf("  map for (2,3) permuted by (1,0): output flat -> input flat\n");
    for (int64_t t = 0; t < 6; t++) {
        unravel_index(t, out_shape, 2, index);
        printf("    out %-6s flat %lld  <-  x flat %lld\n", shape_format(index, 2, idx, sizeof idx), (long long)t,
               (long long)map[t]);
    }
}

static void section_odometer(Ctx *ctx) {
    heading("5.3 contiguous walks the view like an odometer: the last index turns fastest");
    Tensor *x = tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *y = tensor_permute(x, AXES(1, 0));
    NdIter it;
    nditer_init(&it, y->rank, y->shape, 1, (const int64_t *[]){y->strides});
    char idx[SHAPE_STR_MAX], st[SHAPE_STR_MAX], sh[SHAPE_STR_MAX];
    printf("  y has shape %s and strides %s\n", shape_format(y->shape, y->rank, sh, sizeof sh),
           shape_format(y->strides, y->rank, st, sizeof st));
    printf("  index   offset  change  value\n");
    int64_t previous = 0;
    while (nditer_next(&it)) {
        char change[16] = "";
        if (it.remaining + 1 < tensor_numel(y))
            snprintf(change, sizeof change, "%+lld", (long long)(it.offset[0] - previous));
        printf("  %-7s %-7lld %-7s %g\n", shape_format(it.index, y->rank, idx, sizeof idx), (long long)it.offset[0],
               change, (double)tensor_data(y)[it.offset[0]]);
        previous = it.offset[0];
    }
}

static void section_backward(Ctx *ctx) {
    heading("5.4 Backward: each gradient goes back to where its element came from");
    Tensor *x = tensor_requires_grad(tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *y = tensor_permute(x, AXES(1, 0));
    tensor_backward(tensor_sum(y));
    tensor_print("  d sum(permute(x)) / dx", tensor_grad(x));
    tensor_zero_grad(x);
    Tensor *w = tensor_from(ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    tensor_backward(tensor_sum(tensor_mul(w, y)));
    tensor_print("  w", w);
    tensor_print("  d sum(w * permute(x)) / dx", tensor_grad(x));
    tensor_print("  permute(w, (1,0))          ", tensor_permute(w, AXES(1, 0)));

    /* a swap is its own inverse; a rotation shows the inverse at work */
    int perm[3] = {1, 2, 0}, inv[3];
    inverse_permutation(perm, 3, inv);
    Tensor *c = tensor_requires_grad(tensor_from(ctx, DIMS(2, 1, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *r = tensor_permute(c, perm, 3); /* (1, 3, 2) */
    Tensor *wr = tensor_from(ctx, DIMS(1, 3, 2), VALUES(10, 20, 30, 40, 50, 60));
    tensor_backward(tensor_sum(tensor_mul(wr, r)));
    printf("  rotating x of shape (2,1,3) by (1,2,0); its inverse is (%d,%d,%d)\n", inv[0], inv[1], inv[2]);
    tensor_print("  w", wr);
    tensor_print("  d sum(w * permute(x, (1,2,0))) / dx", tensor_grad(c));
    tensor_print("  permute(w, inverse)                ", tensor_permute(wr, inv, 3));
}

/* Each section gets a context of its own, so storage numbers in the output start at #1. */
static int run_section(void (*section)(Ctx *)) {
    Ctx *ctx = ctx_new();
    if (!ctx) {
        printf("out of memory: %s\n", tensor_error());
        return -1;
    }
    section(ctx);
    ctx_free(ctx);
    return 0;
}

int main(void) {
    printf("Lesson 4: permute\n=================\n");
    void (*sections[])(Ctx *) = {section_reshape_vs_permute, section_view,    section_3d, section_inverse,
                                 section_odometer,           section_backward};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (run_section(sections[i]) < 0) return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
