/*
 * walkthrough.c - lesson 1, run with `make lesson1`. Prints every worked example of the
 * lesson, computed by the library as it runs. Read it beside docs/1-broadcast.md: the
 * section numbers match.
 */
#include <stdio.h>
#include <stdlib.h>

#include "broadcast.h"

static void heading(const char *title) { printf("\n%s\n", title); }

/* "2 vs 1, 3 vs 3": the dims of a and b paired up from the right (a missing dim is 1). */
static const char *pairs(const int64_t *a, int a_rank, const int64_t *b, int b_rank, char *buf, size_t size) {
    int n = a_rank > b_rank ? a_rank : b_rank;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < size; i++) {
        int ia = i - (n - a_rank), ib = i - (n - b_rank);
        used += (size_t)snprintf(buf + used, size - used, "%s%lld vs %lld", i ? ", " : "",
                                 (long long)(ia >= 0 ? a[ia] : 1), (long long)(ib >= 0 ? b[ib] : 1));
    }
    return buf;
}

static void rules_row(const int64_t *a, int a_rank, const int64_t *b, int b_rank) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], so[SHAPE_STR_MAX];
    int64_t out[TENSOR_MAX_RANK];
    int rank;
    char compared[128];
    printf("  %-8s %-8s %-18s", shape_format(a, a_rank, sa, sizeof sa), shape_format(b, b_rank, sb, sizeof sb),
           pairs(a, a_rank, b, b_rank, compared, sizeof compared));
    if (broadcast_shapes(a, a_rank, b, b_rank, out, &rank) == 0) {
        printf("-> %s\n", shape_format(out, rank, so, sizeof so));
        return;
    }
    int n = a_rank > b_rank ? a_rank : b_rank;
    for (int i = 0; i < n; i++) { /* name the pair that broke the rule */
        int64_t da = i - (n - a_rank) >= 0 ? a[i - (n - a_rank)] : 1;
        int64_t db = i - (n - b_rank) >= 0 ? b[i - (n - b_rank)] : 1;
        if (da != db && da != 1 && db != 1) {
            printf("-> cannot broadcast: %lld vs %lld, neither is 1\n", (long long)da, (long long)db);
            return;
        }
    }
}

/* The two shapes of the chapter's 2.1: a bias for every row, and one number for every element. */
static void section_why(Ctx *ctx) {
    heading("2.1 Why broadcasting: a small shape meets a large one, and the small one stretches");
    Tensor *x = tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *bias = tensor_from(ctx, DIMS(3), VALUES(10, 20, 30));
    Tensor *scale = tensor_scalar(ctx, 2.0f);
    tensor_print("  x (B = 2 rows, D = 3)", x);
    tensor_print("  bias (3,)", bias);
    tensor_print("  x + bias, [B, D] + [D]", tensor_add(x, bias));
    tensor_print("  x * 2, [B, D] * [] (2 is rank 0)", tensor_mul(x, scale));
    /* the linear layer: the product xW is lesson 6's (three loops here); adding b is this lesson's */
    Tensor *w = tensor_from(ctx, DIMS(3, 2), VALUES(1, 0, 0, 1, 1, 1)),
           *b = tensor_from(ctx, DIMS(2), VALUES(100, 200));
    Tensor *xw = tensor_zeros(ctx, DIMS(2, 2));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int p = 0; p < 3; p++)
                tensor_data(xw)[2 * i + j] += tensor_data(x)[3 * i + p] * tensor_data(w)[2 * p + j];
    printf("  the linear layer y = xW + b, [B, D] @ [D, out] + [out], with D = 3 and out = 2:\n");
    tensor_print("    W (3,2)", w);
    tensor_print("    b (2,)", b);
    tensor_print("    xW, [2, 3] @ [3, 2]", xw);
    tensor_print("    y = xW + b, [2, 2] + [2]", tensor_add(xw, b));
}

static void section_rules(void) {
    heading("2.2 The rule: align on the right; each pair must be equal or 1");
    printf("  %-8s %-8s %-18s%s\n", "a", "b", "pairs compared", "result");
    rules_row(DIMS(2, 3), DIMS(3));
    rules_row(DIMS(2, 3), DIMS(2, 1));
    rules_row(DIMS(3), DIMS(1));
    rules_row(DIMS(2, 3), DIMS(2, 4));
}

/* The right-alignment steps of broadcast_shapes((2,3), (3,)), one line per output dim. */
static void section_alignment(void) {
    const int64_t a[] = {2, 3}, b[] = {3};
    int a_rank = 2, b_rank = 1, n = 2;
    int64_t out[TENSOR_MAX_RANK];
    int rank;
    char cell[64], so[SHAPE_STR_MAX];
    heading("2.3 broadcast_shapes((2,3), (3,)) step by step (n = 2)");
    printf("  i  %-24s %-24s %-10s out[i]\n", "da", "db", "rule");
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a_rank), ib = i - (n - b_rank);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        printf("  %d  ", i);
        if (ia >= 0) snprintf(cell, sizeof cell, "a[%d] = %lld", ia, (long long)da);
        else snprintf(cell, sizeof cell, "a has no dim here -> 1");
        printf("%-24s ", cell);
        if (ib >= 0) snprintf(cell, sizeof cell, "b[%d] = %lld", ib, (long long)db);
        else snprintf(cell, sizeof cell, "b has no dim here -> 1");
        printf("%-24s %-10s %lld\n", cell,
               da == db  ? "equal"
               : da == 1 ? "da == 1"
                         : "db == 1",
               (long long)(da == 1 ? db : da));
    }
    broadcast_shapes(a, a_rank, b, b_rank, out, &rank);
    printf("  broadcast_shapes returns %s\n", shape_format(out, rank, so, sizeof so));
}

static void scenario(Ctx *ctx, int number, const int64_t *a_shape, int a_rank, const int64_t *b_shape, int b_rank) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], so[SHAPE_STR_MAX], compared[128];
    Tensor *a = tensor_zeros(ctx, a_shape, a_rank), *b = tensor_zeros(ctx, b_shape, b_rank);
    Tensor *c = tensor_add(a, b);
    printf("  %d. %-8s + %-6s %-26s", number, shape_format(a_shape, a_rank, sa, sizeof sa),
           shape_format(b_shape, b_rank, sb, sizeof sb),
           pairs(a_shape, a_rank, b_shape, b_rank, compared, sizeof compared));
    if (c) printf("-> %s\n", shape_format(c->shape, c->rank, so, sizeof so));
    else printf("-> error:\n     %s\n", tensor_error());
}

static void section_scenarios(Ctx *ctx) {
    heading("2.3 numpy's scenarios 1-4, run through tensor_add (the notes' fifth, a matmul, is lesson 6's 7.4)");
    scenario(ctx, 1, DIMS(2, 3), DIMS(2, 3));
    scenario(ctx, 2, DIMS(3, 4), DIMS(4));
    scenario(ctx, 3, DIMS(2, 1, 3), DIMS(4, 3));
    scenario(ctx, 4, DIMS(3, 2), DIMS(4, 2));
    tensor_clear_error();
}

static void section_map(Ctx *ctx) {
    const int64_t target[] = {2, 3}, src[] = {3};
    int64_t index[TENSOR_MAX_RANK], map[6];
    char idx[SHAPE_STR_MAX];

    heading("2.4 Flat index -> multi-index, row-major: peel off the last dim first");
    /* the same % and / steps unravel_index takes, printed as it goes */
    printf("  flat 4 in (2,3):");
    int64_t r = 4;
    for (int d = 1; d >= 0; d--) {
        printf(" index[%d] = %lld %% %lld = %lld, then %lld / %lld = %lld;", d, (long long)r, (long long)target[d],
               (long long)(r % target[d]), (long long)r, (long long)target[d], (long long)(r / target[d]));
        r /= target[d];
    }
    unravel_index(4, target, 2, index);
    printf("\n  unravel_index(4, (2,3)) = %s\n", shape_format(index, 2, idx, sizeof idx));

    heading("2.4 The chapter's way, an index map: broadcast_map((2,3), (3,))");
    broadcast_map(target, 2, src, 1, map);
    printf("  target (i,j)  flat  source  reads\n");
    for (int64_t t = 0; t < 6; t++) {
        unravel_index(t, target, 2, index);
        printf("  %-12s  %4lld  %6lld  b[%lld]\n", shape_format(index, 2, idx, sizeof idx), (long long)t,
               (long long)map[t], (long long)map[t]);
    }

    heading("2.4 The library's way, a stride-0 view: tensor_expand((3,) -> (2,3))");
    Tensor *b = tensor_from(ctx, DIMS(3), VALUES(10, 20, 30));
    Tensor *wide = tensor_expand(b, target, 2);
    tensor_describe("  b         ", b);
    tensor_describe("  b expanded", wide);
    tensor_print("  b expanded", wide);
    /* The offset each target element reads through the view, next to the map. */
    printf("  offsets read through strides (0,1): ");
    int agree = 1;
    for (int64_t t = 0; t < 6; t++) {
        unravel_index(t, target, 2, index);
        int64_t offset = index[0] * wide->strides[0] + index[1] * wide->strides[1];
        printf("%lld ", (long long)offset);
        agree &= offset == map[t];
    }
    printf("-> %s the map\n", agree ? "the same as" : "DIFFERENT FROM");
    Tensor *copy = tensor_contiguous(wide);
    tensor_describe("  contiguous", copy);
}

static void section_backward(Ctx *ctx) {
    heading("2.5 Forward and backward of loss = (a + b).sum(), a (2,3), b (3,)");
    Tensor *a = tensor_requires_grad(tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *b = tensor_requires_grad(tensor_from(ctx, DIMS(3), VALUES(10, 20, 30)));
    Tensor *c = tensor_add(a, b);
    Tensor *loss = tensor_sum(c);
    tensor_print("  a", a);
    tensor_print("  b", b);
    tensor_print("  c = a + b", c);
    /* the chapter's broadcast_plan: a map only for an input whose shape is not the result's */
    printf("  the chapter's broadcast_plan: a has c's shape, so %s (c[t] reads a[t]); b gets 2.4's map\n",
           shape_equal(a->shape, a->rank, c->shape, c->rank) ? "no map for a" : "a map for a");
    tensor_print("  loss", loss);
    if (tensor_backward(loss) != 0) {
        printf("  backward failed: %s\n", tensor_error());
        return;
    }
    tensor_print("  a.grad", tensor_grad(a));
    tensor_print("  b.grad", tensor_grad(b));
    /* why 2: list the elements of c that read b[0] (from the map) and add their gradients */
    int64_t map[6], index[2];
    char idx[SHAPE_STR_MAX];
    broadcast_map(c->shape, c->rank, b->shape, b->rank, map);
    const float *g = tensor_data(c->grad);
    float total = 0;
    const char *sep = " ";
    printf("  b[0] is read by");
    for (int64_t t = 0; t < 6; t++) {
        if (map[t] != 0) continue;
        unravel_index(t, c->shape, c->rank, index);
        printf("%sc%s with gradient %g", sep, shape_format(index, 2, idx, sizeof idx), (double)g[t]);
        total += g[t];
        sep = " and ";
    }
    printf("; += adds them: %g\n", (double)total);
}

/* The chapter's exercise 1 (exercise 1.1 asks for the same by hand, with other numbers). */
static void section_exercise_one(Ctx *ctx) {
    heading("2.5 The chapter's exercise 1: [2,3] + [1,3], where each element of b goes, and its gradient");
    Tensor *a = tensor_requires_grad(tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *b = tensor_requires_grad(tensor_from(ctx, DIMS(1, 3), VALUES(100, 200, 300)));
    Tensor *c = tensor_add(a, b);
    tensor_print("  a (2,3)", a);
    tensor_print("  b (1,3)", b);
    tensor_print("  c = a + b", c);
    int64_t map[6], index[2];
    char idx[SHAPE_STR_MAX];
    broadcast_map(c->shape, c->rank, b->shape, b->rank, map);
    for (int64_t j = 0; j < 3; j++) {
        printf("  b[0,%lld] is copied to", (long long)j);
        for (int64_t t = 0; t < 6; t++)
            if (map[t] == j) {
                unravel_index(t, c->shape, c->rank, index);
                printf(" c%s", shape_format(index, 2, idx, sizeof idx));
            }
        printf("\n");
    }
    if (tensor_backward(tensor_sum(c)) != 0) {
        printf("  backward failed: %s\n", tensor_error());
        return;
    }
    tensor_print("  loss = c.sum(): a.grad", tensor_grad(a));
    tensor_print("  b.grad, each b[0,j] collecting its two copies' 1s", tensor_grad(b));
}

static void section_error(Ctx *ctx) {
    heading("2.2 An incompatible pair is an error, not a crash");
    Tensor *a = tensor_zeros(ctx, DIMS(2, 3)), *b = tensor_zeros(ctx, DIMS(2, 4));
    Tensor *c = tensor_add(a, b);
    printf("  tensor_add((2,3), (2,4)) returned %s\n  tensor_error(): %s\n", c ? "a tensor" : "NULL", tensor_error());
    Tensor *d = tensor_mul_scalar(c, 2.0f); /* a NULL input keeps the first message */
    printf("  tensor_mul_scalar(that NULL, 2) returned %s; tensor_error() still says: %s\n", d ? "a tensor" : "NULL",
           tensor_error());
    tensor_clear_error();
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
    printf("Lesson 1: broadcasting\n======================\n");
    if (run_section(section_why) < 0) return EXIT_FAILURE;
    section_rules();
    if (run_section(section_error) < 0) return EXIT_FAILURE;
    section_alignment();
    if (run_section(section_scenarios) < 0 || run_section(section_map) < 0 || run_section(section_backward) < 0 ||
        run_section(section_exercise_one) < 0)
        return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
