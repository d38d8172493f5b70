/*
 * walkthrough.c - lesson 2, run with `make lesson2`. Prints every worked example of the
 * lesson, computed by the library as it runs. Read it beside docs/2-reduce.md: the section
 * numbers match.
 */
#include <stdio.h>
#include <stdlib.h>

#include "broadcast.h"
#include "reduce.h"

static void heading(const char *title) { printf("\n%s\n", title); }

/* The ops that made t, newest first: "mul <- sum <- pow_scalar <- sub". */
static void print_tape(const char *label, const Tensor *t) {
    printf("%s", label);
    for (const char *sep = ""; t && t->n_inputs > 0; t = t->inputs[0], sep = " <- ") printf("%s%s", sep, t->op);
    printf("\n");
}

static Tensor *example(Ctx *ctx) {
    return tensor_requires_grad(tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
}

static void section_sum(Ctx *ctx) {
    heading("3.1 sum: every element to one scalar; every element gets the upstream gradient");
    Tensor *x = example(ctx);
    Tensor *s = tensor_sum(x);
    tensor_print("  x", x);
    tensor_print("  sum(x)", s);
    tensor_describe("  sum(x)", s);
    tensor_backward(s);
    tensor_print("  x.grad, upstream 1", tensor_grad(x));
    tensor_zero_grad(x);
    tensor_backward_from(s, tensor_scalar(ctx, 2));
    tensor_print("  x.grad, upstream 2", tensor_grad(x));
}

static void section_sum_last_dim(Ctx *ctx) {
    heading("3.2 sum_last_dim: (..., D) -> (..., 1), keeping the dim");
    Tensor *x = example(ctx);
    Tensor *rows = tensor_sum_last_dim(x);
    Tensor *dropped = tensor_sum_axis(x, -1, false);
    tensor_print("  x", x);
    tensor_print("  sum_last_dim(x)", rows);
    tensor_describe("  sum_last_dim(x)", rows);
    tensor_describe("  sum_axis(x, -1, keepdim=false)", dropped);
    Tensor *g = tensor_from(ctx, DIMS(2, 1), VALUES(2, 3));
    tensor_backward_from(rows, g);
    tensor_print("  upstream g", g);
    tensor_print("  x.grad", tensor_grad(x));
}

static void section_mean(Ctx *ctx) {
    heading("3.3 mean = sum * (1/N): a composition, with no backward of its own");
    Tensor *x = example(ctx);
    Tensor *m = tensor_mean(x);
    tensor_print("  mean(x)", m);
    print_tape("  its tape: ", m);
    tensor_backward(m);
    tensor_print("  x.grad", tensor_grad(x));
}

static void section_mse(Ctx *ctx) {
    heading("3.3 The MSE loss, the chapter's way: sum((pred - target)^2) * (1/N)");
    Tensor *pred = tensor_requires_grad(tensor_from(ctx, DIMS(4), VALUES(2.5f, 0, 2, 8)));
    Tensor *target = tensor_from(ctx, DIMS(4), VALUES(3, -0.5f, 2, 7));
    Tensor *loss = tensor_mse_loss(pred, target);
    tensor_print("  pred", pred);
    tensor_print("  target", target);
    tensor_print("  mse_loss", loss);
    print_tape("  its tape: ", loss);
    tensor_backward(loss);
    tensor_print("  pred.grad = 2 (pred - target) / N", tensor_grad(pred));
}

/* The chapter's table, each row measured on the same (2,3) input. */
static void section_table(Ctx *ctx) {
    heading("3.3 The three reductions of x = [[1,2,3],[4,5,6]]");
    printf("  %-13s %-16s %-32s %-12s %s\n", "op", "shape", "gradient rule", "upstream g", "x.grad");
    const char *names[] = {"sum", "sum_last_dim", "mean"};
    const char *rules[] = {"every element += g", "g[p] to every element of row p", "as sum, then times 1/N"};
    for (int k = 0; k < 3; k++) {
        Tensor *x = example(ctx);
        Tensor *out = k == 0 ? tensor_sum(x) : k == 1 ? tensor_sum_last_dim(x) : tensor_mean(x);
        Tensor *g = k == 1 ? tensor_from(ctx, DIMS(2, 1), VALUES(2, 3)) : tensor_scalar(ctx, 2);
        tensor_backward_from(out, g);
        char si[SHAPE_STR_MAX], so[SHAPE_STR_MAX], shapes[64], upstream[32] = "";
        snprintf(shapes, sizeof shapes, "%s -> %s", shape_format(x->shape, x->rank, si, sizeof si),
                 shape_format(out->shape, out->rank, so, sizeof so));
        for (int64_t i = 0, used = 0; i < tensor_numel(g); i++)
            used += snprintf(upstream + used, sizeof upstream - (size_t)used, "%s%g", i ? ", " : "",
                             (double)tensor_data(g)[i]);
        printf("  %-13s %-16s %-32s %-12s ", names[k], shapes, rules[k], upstream);
        const float *gx = tensor_data(tensor_grad(x));
        for (int i = 0; i < 6; i++) printf("%s%.4g", i ? " " : "[", (double)gx[i]);
        printf("]\n");
    }
}

static void section_axis(Ctx *ctx) {
    heading("3.4 Any axis: sum_axis(x, axis, keepdim) is lesson 1's sum_to_shape");
    Tensor *x = example(ctx);
    for (int axis = 0; axis < 2; axis++) {
        char label[64];
        snprintf(label, sizeof label, "  sum_axis(x, %d, keepdim=true) ", axis);
        tensor_print(label, tensor_sum_axis(x, axis, true));
    }
    tensor_print("  sum_to_shape(x, (1,3))       ", tensor_sum_to_shape(x, DIMS(1, 3)));
}

static void section_duality(Ctx *ctx) {
    heading("3.5 The backward of a reduction is a broadcast, and the other way round");
    Tensor *x = example(ctx);
    Tensor *cols = tensor_sum_axis(x, 0, true);
    Tensor *g = tensor_from(ctx, DIMS(1, 3), VALUES(1, 2, 3));
    tensor_backward_from(cols, g);
    tensor_print("  column sums of x, (2,3) -> (1,3)", cols);
    tensor_print("  their backward for upstream [[1, 2, 3]]", tensor_grad(x));
    tensor_print("  expand([[1, 2, 3]], (2,3))             ", tensor_expand(g, DIMS(2, 3)));
    Tensor *b = tensor_requires_grad(tensor_from(ctx, DIMS(1, 3), VALUES(10, 20, 30)));
    Tensor *wide = tensor_expand(b, DIMS(2, 3));
    tensor_backward_from(wide, tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    tensor_print("  backward of expand((1,3) -> (2,3)) for upstream x", tensor_grad(b));
    tensor_print("  sum_axis(x, 0, keepdim=true)                     ", tensor_sum_axis(x, 0, true));
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
    printf("Lesson 2: reductions\n====================\n");
    void (*sections[])(Ctx *) = {section_sum,   section_sum_last_dim, section_mean,   section_mse,
                                 section_table, section_axis,         section_duality};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (run_section(sections[i]) < 0) return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
