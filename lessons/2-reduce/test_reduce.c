/*
 * test_reduce.c - lesson 2's core tests. They mirror the chapter's section 3 (sum,
 * sum_last_dim, mean as a composition, the MSE loss, its table), then go past it: sums over
 * any axis, rank-0, size-1 and size-0 inputs, views, a gradient check of every op, and
 * seeded random shapes and views against a naive loop.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "gradcheck.h"
#include "harness.h"
#include "reduce.h"

/* ==== the chapter ======================================================================== */

START_TEST(test_sum) {
    /* sum(x) = x0 + x1 + ..., so every element's gradient is the upstream gradient */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *s = EXPECT_OK(tensor_sum(x));
    ck_assert_int_eq(s->rank, 0);
    ck_assert_float_eq(tensor_item(s), 21.0f);
    ck_assert_int_eq(tensor_backward(s), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(1, 1, 1, 1, 1, 1), 0, "d sum / dx");
    tensor_zero_grad(x);
    ck_assert_int_eq(tensor_backward_from(s, tensor_scalar(test_ctx, 2.5f)), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f), 0, "upstream 2.5 reaches every element");
}
END_TEST

START_TEST(test_sum_last_dim) {
    /* the chapter: [[1,2,3],[4,5,6]] -> [[6],[15]]; upstream [[2],[3]] -> [[2,2,2],[3,3,3]] */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *rows = EXPECT_OK(tensor_sum_last_dim(x));
    EXPECT_SHAPE(rows, DIMS(2, 1), "sum_last_dim keeps the last dim as 1");
    EXPECT_VALUES(rows, VALUES(6, 15), 0, "row sums");
    ck_assert_int_eq(tensor_backward_from(rows, tensor_from(test_ctx, DIMS(2, 1), VALUES(2, 3))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2, 2, 2, 3, 3, 3), 0, "each row's gradient broadcast back over the row");
}
END_TEST

/* x feeds sum_last_dim and, directly, a sum: both add into x's gradient, 1 + 1 = 2 each. The
 * backward runs the ops in reverse order of making, so in one of the two orders sum_last_dim's
 * backward finds x's gradient already holding the other's 1: one that assigns (=) instead of
 * adding (+=) leaves 1 there. A second backward adds 2 more onto the 2 the first left. */
START_TEST(test_sum_last_dim_adds_to_the_gradient) {
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *losses[2] = {tensor_add(tensor_sum(tensor_sum_last_dim(x)), tensor_sum(x)),
                         tensor_add(tensor_sum(x), tensor_sum(tensor_sum_last_dim(x)))};
    const char *what[2] = {"sum(sum_last_dim(x)) + sum(x)", "sum(x) + sum(sum_last_dim(x))"};
    char msg[128];
    for (int k = 0; k < 2; k++) {
        tensor_zero_grad(x);
        ck_assert_int_eq(tensor_backward(EXPECT_OK(losses[k])), 0);
        snprintf(msg, sizeof msg, "d/dx of %s: 1 from each term", what[k]);
        EXPECT_VALUES(tensor_grad(x), VALUES(2, 2, 2, 2, 2, 2), 0, msg);
        ck_assert_int_eq(tensor_backward(losses[k]), 0);
        snprintf(msg, sizeof msg, "d/dx of %s after a second backward, which adds", what[k]);
        EXPECT_VALUES(tensor_grad(x), VALUES(4, 4, 4, 4, 4, 4), 0, msg);
    }
}
END_TEST

START_TEST(test_mean_is_a_composition) {
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *m = EXPECT_OK(tensor_mean(x));
    ck_assert_float_eq_tol(tensor_item(m), 3.5f, 1e-6f);
    /* no kernel of its own: a multiply of a sum */
    ck_assert_str_eq(m->op, "mul");
    ck_assert_str_eq(m->inputs[0]->op, "sum");
    ck_assert_int_eq(tensor_backward(m), 0);
    float sixth = 1.0f / 6.0f;
    EXPECT_VALUES(tensor_grad(x), VALUES(sixth, sixth, sixth, sixth, sixth, sixth), 1e-6f, "d mean / dx = 1/N");
    /* the price of multiplying by a rounded 1/N (docs/2-reduce.md 3.3): the mean of 41 ones */
    Tensor *ones = tensor_zeros(test_ctx, DIMS(41));
    for (int i = 0; i < 41; i++) tensor_data(ones)[i] = 1.0f;
    ck_assert_float_eq(tensor_item(tensor_mean(ones)), 0.99999994f);
}
END_TEST

START_TEST(test_mse_loss) {
    Tensor *pred = tensor_requires_grad(tensor_from(test_ctx, DIMS(4), VALUES(2.5f, 0, 2, 8)));
    Tensor *target = tensor_requires_grad(tensor_from(test_ctx, DIMS(4), VALUES(3, -0.5f, 2, 7)));
    Tensor *loss = EXPECT_OK(tensor_mse_loss(pred, target));
    ck_assert_float_eq_tol(tensor_item(loss), 0.375f, 1e-6f);
    ck_assert_str_eq(loss->op, "mul");
    ck_assert_str_eq(loss->inputs[0]->op, "sum");
    ck_assert_str_eq(loss->inputs[0]->inputs[0]->op, "pow_scalar");
    ck_assert_str_eq(loss->inputs[0]->inputs[0]->inputs[0]->op, "sub");
    ck_assert_int_eq(tensor_backward(loss), 0);
    /* d/dpred = 2 (pred - target) / N, and the opposite for target */
    EXPECT_VALUES(tensor_grad(pred), VALUES(-0.25f, 0.25f, 0, 0.5f), 1e-6f, "d mse / d pred");
    EXPECT_VALUES(tensor_grad(target), VALUES(0.25f, -0.25f, 0, -0.5f), 1e-6f, "d mse / d target");
}
END_TEST

START_TEST(test_chapter_table) {
    /* sum: (D1, D2, ...) -> (); sum_last_dim: (..., D) -> (..., 1); mean: like sum */
    Tensor *x = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(2, 3, 4)));
    ck_assert_int_eq(EXPECT_OK(tensor_sum(x))->rank, 0);
    EXPECT_SHAPE(tensor_sum_last_dim(x), DIMS(2, 3, 1), "sum_last_dim");
    ck_assert_int_eq(EXPECT_OK(tensor_mean(x))->rank, 0);
    /* and the gradient rules, with upstream 1 */
    ck_assert_int_eq(tensor_backward(tensor_mean(x)), 0);
    for (int64_t i = 0; i < 24; i++) ck_assert_float_eq_tol(tensor_data(tensor_grad(x))[i], 1.0f / 24.0f, 1e-7f);
}
END_TEST

/* ==== any axis =========================================================================== */

START_TEST(test_sum_axis) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    EXPECT_VALUES(tensor_sum_axis(x, 0, false), VALUES(5, 7, 9), 0, "axis 0");
    EXPECT_SHAPE(tensor_sum_axis(x, 0, false), DIMS(3), "axis 0 without keepdim");
    EXPECT_SHAPE(tensor_sum_axis(x, 0, true), DIMS(1, 3), "axis 0 with keepdim");
    EXPECT_VALUES(tensor_sum_axis(x, 1, false), VALUES(6, 15), 0, "axis 1");
    EXPECT_VALUES(tensor_sum_axis(x, -1, true), VALUES(6, 15), 0, "axis -1");
    EXPECT_SHAPE(tensor_sum_axis(x, -2, false), DIMS(3), "axis -2");
    Tensor *cube = tensor_from(test_ctx, DIMS(2, 2, 2), VALUES(1, 2, 3, 4, 5, 6, 7, 8));
    EXPECT_VALUES(tensor_sum_axis(cube, 1, false), VALUES(4, 6, 12, 14), 0, "the middle axis of (2,2,2)");
    /* the same reduction three ways */
    Tensor *a = tensor_sum_last_dim(cube), *b = tensor_sum_axis(cube, -1, true),
           *c = tensor_sum_to_shape(cube, DIMS(2, 2, 1));
    EXPECT_VALUES(a, VALUES(3, 7, 11, 15), 0, "sum_last_dim");
    EXPECT_VALUES_ARRAY(b, tensor_data(a), 4, 0, "sum_axis(-1, keepdim)");
    EXPECT_VALUES_ARRAY(c, tensor_data(a), 4, 0, "sum_to_shape (2,2,1)");
    EXPECT_VALUES(tensor_mean_axis(x, 0, false), VALUES(2.5f, 3.5f, 4.5f), 1e-6f, "mean over axis 0");
}
END_TEST

START_TEST(test_errors) {
    Tensor *x = tensor_zeros(test_ctx, DIMS(2, 3));
    tensor_clear_error();
    ck_assert_ptr_null(tensor_sum_axis(x, 2, false));
    ck_assert_str_eq(tensor_error(), "sum_axis: axis 2 is out of bounds for array of dimension 2");
    ck_assert_ptr_null(tensor_sum_axis(x, -3, true));
    ck_assert_str_eq(tensor_error(), "sum_axis: axis -3 is out of bounds for array of dimension 2");
    ck_assert_ptr_null(tensor_mean_axis(x, 5, true));
    ck_assert_str_eq(tensor_error(), "mean_axis: axis 5 is out of bounds for array of dimension 2");
    ck_assert_ptr_null(tensor_sum_last_dim(tensor_scalar(test_ctx, 1)));
    ck_assert_str_eq(tensor_error(), "sum_last_dim: a rank-0 tensor (a scalar) has no last dim to sum over");
    ck_assert_ptr_null(tensor_sum_axis(tensor_scalar(test_ctx, 1), 0, false));
    ck_assert_str_eq(tensor_error(), "sum_axis: axis 0 is out of bounds for array of dimension 0");
    ck_assert_ptr_null(tensor_mse_loss(x, tensor_zeros(test_ctx, DIMS(3))));
    ck_assert_str_eq(tensor_error(), "mse_loss: pred has shape (2,3) but target has shape (3,); they must be the same");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_mean(NULL));
    ck_assert_str_eq(tensor_error(), "mean: input x is NULL");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_mse_loss(x, NULL));
    ck_assert_str_eq(tensor_error(), "mse_loss: input target is NULL");
    /* a NULL from an earlier failure keeps that failure's message */
    ck_assert_ptr_null(tensor_mean(tensor_sum_last_dim(tensor_sum_axis(x, 7, true))));
    ck_assert_str_eq(tensor_error(), "sum_axis: axis 7 is out of bounds for array of dimension 2");
}
END_TEST

START_TEST(test_rank0_size1_size0) {
    Tensor *s = tensor_requires_grad(tensor_scalar(test_ctx, 4));
    EXPECT_VALUES(tensor_sum(s), VALUES(4), 0, "sum of a scalar");
    EXPECT_VALUES(tensor_mean(s), VALUES(4), 0, "mean of a scalar");
    Tensor *one = tensor_from(test_ctx, DIMS(1, 1, 1), VALUES(9));
    EXPECT_VALUES(tensor_sum_last_dim(one), VALUES(9), 0, "sum_last_dim of (1,1,1)");
    EXPECT_SHAPE(tensor_sum_axis(one, 1, false), DIMS(1, 1), "sum over a size-1 axis");
    /* empty tensors: a sum of nothing is 0, a mean of nothing is nan (0 * 1/0), as numpy */
    Tensor *empty = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(0, 3)));
    EXPECT_VALUES(tensor_sum(empty), VALUES(0), 0, "sum of (0,3)");
    ck_assert(isnan(tensor_item(tensor_mean(empty))));
    EXPECT_SHAPE(tensor_sum_last_dim(empty), DIMS(0, 1), "sum_last_dim of (0,3)");
    EXPECT_VALUES(tensor_sum_axis(empty, 0, false), VALUES(0, 0, 0), 0, "sum of (0,3) over axis 0");
    Tensor *nan3 = EXPECT_OK(tensor_mean_axis(empty, 0, false));
    for (int k = 0; k < 3; k++) ck_assert(isnan(tensor_data(nan3)[k]));
    Tensor *no_cols = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(2, 0)));
    EXPECT_VALUES(tensor_sum_last_dim(no_cols), VALUES(0, 0), 0, "sum_last_dim of (2,0)");
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_sum_last_dim(no_cols))), 0);
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_sum_axis(empty, 1, false))), 0);
}
END_TEST

START_TEST(test_reductions_of_views) {
    /* the transpose of [[1,2,3],[4,5,6]] is [[1,4],[2,5],[3,6]]: row sums 5, 7, 9 */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *t = tensor_as_strided(x, DIMS(3, 2), STRIDES(1, 3), 0);
    EXPECT_VALUES(tensor_sum_last_dim(t), VALUES(5, 7, 9), 0, "row sums of a transposed view");
    EXPECT_VALUES(tensor_sum_axis(t, 0, false), VALUES(6, 15), 0, "column sums of a transposed view");
    /* an expanded (stride-0) view: each copy counts, and each copy's gradient comes home */
    Tensor *row = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)));
    Tensor *wide = tensor_expand(row, DIMS(4, 3));
    Tensor *sums = EXPECT_OK(tensor_sum_last_dim(wide));
    EXPECT_VALUES(sums, VALUES(6, 6, 6, 6), 0, "row sums of (3,) expanded to (4,3)");
    ck_assert_int_eq(tensor_backward_from(sums, tensor_from(test_ctx, DIMS(4, 1), VALUES(1, 2, 3, 4))), 0);
    EXPECT_VALUES(tensor_grad(row), VALUES(10, 10, 10), 0, "gradient through sum_last_dim and expand");
    EXPECT_VALUES(tensor_mean(wide), VALUES(2), 1e-6f, "mean of an expanded view");
    /* an offset view: the last column of x */
    Tensor *col = tensor_as_strided(x, DIMS(2, 1), STRIDES(3, 1), 2);
    EXPECT_VALUES(tensor_sum_axis(col, 0, true), VALUES(9), 0, "sum of an offset view");
}
END_TEST

/* ==== gradients ========================================================================== */

typedef struct {
    int axis;
    bool keepdim;
} AxisArg;

static Tensor *fn_sum_last_dim(Tensor *const *in, void *arg) { return (void)arg, tensor_sum_last_dim(in[0]); }
static Tensor *fn_sum_axis(Tensor *const *in, void *arg) {
    AxisArg *a = arg;
    return tensor_sum_axis(in[0], a->axis, a->keepdim);
}
static Tensor *fn_mean_axis(Tensor *const *in, void *arg) {
    AxisArg *a = arg;
    return tensor_mean_axis(in[0], a->axis, a->keepdim);
}
static Tensor *fn_mean(Tensor *const *in, void *arg) { return (void)arg, tensor_mean(in[0]); }
static Tensor *fn_mse(Tensor *const *in, void *arg) { return (void)arg, tensor_mse_loss(in[0], in[1]); }
/* sum_last_dim of an expanded view: the gradient must find its way back through stride 0 */
static Tensor *fn_sum_last_dim_of_view(Tensor *const *in, void *arg) {
    return (void)arg, tensor_sum_last_dim(tensor_expand(in[0], DIMS(2, 3, 4)));
}

START_TEST(test_gradcheck_every_op) {
    Rng rng = rng_seeded(test_seed());
    Tensor *v = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(5), -1, 1));
    Tensor *m = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3, 4), -1, 1));
    Tensor *c = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3, 4), -1, 1));
    EXPECT_GRADCHECK(fn_sum_last_dim, NULL, (Tensor *[]){v}, 1, "sum_last_dim (5,)");
    EXPECT_GRADCHECK(fn_sum_last_dim, NULL, (Tensor *[]){m}, 1, "sum_last_dim (3,4)");
    EXPECT_GRADCHECK(fn_sum_last_dim, NULL, (Tensor *[]){c}, 1, "sum_last_dim (2,3,4)");
    EXPECT_GRADCHECK(fn_sum_last_dim_of_view, NULL, (Tensor *[]){m}, 1, "sum_last_dim of an expanded view");
    for (int axis = -3; axis < 3; axis++) {
        for (int keep = 0; keep < 2; keep++) {
            AxisArg arg = {axis, keep};
            EXPECT_GRADCHECK(fn_sum_axis, &arg, (Tensor *[]){c}, 1, "sum_axis of (2,3,4)");
            EXPECT_GRADCHECK(fn_mean_axis, &arg, (Tensor *[]){c}, 1, "mean_axis of (2,3,4)");
        }
    }
    EXPECT_GRADCHECK(fn_mean, NULL, (Tensor *[]){c}, 1, "mean");
    Tensor *target = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3, 4), -1, 1));
    EXPECT_GRADCHECK(fn_mse, NULL, (Tensor *[]){m, target}, 2, "mse_loss");
}
END_TEST

/* ==== random shapes and views against a naive loop ======================================= */

/* A random input of the given shape: contiguous, a transposed view (strides reversed), or a
 * view that walks its last dim backwards from an offset (a negative stride). */
static Tensor *random_input(Rng *rng, const int64_t *shape, int rank, const char **kind) {
    int choice = (int)rng_int(rng, 0, 2);
    int64_t n = shape_numel(shape, rank), strides[5], base_shape[5];
    if (choice == 0 || n == 0) {
        *kind = "contiguous";
        return tensor_requires_grad(random_tensor(test_ctx, rng, shape, rank, -2, 2));
    }
    Tensor *base;
    int64_t offset = 0;
    if (choice == 1) {
        *kind = "transposed view";
        for (int d = 0; d < rank; d++) base_shape[d] = shape[rank - 1 - d];
        base = random_tensor(test_ctx, rng, base_shape, rank, -2, 2);
        int64_t base_strides[5];
        contiguous_strides(base_shape, rank, base_strides);
        for (int d = 0; d < rank; d++) strides[d] = base_strides[rank - 1 - d];
    } else {
        *kind = "view with a negative stride and an offset";
        base = random_tensor(test_ctx, rng, shape, rank, -2, 2);
        contiguous_strides(shape, rank, strides);
        strides[rank - 1] = -1;
        offset = shape[rank - 1] - 1; /* each row starts at its last element */
    }
    Tensor *x = tensor_as_strided(base, shape, rank, strides, offset);
    return tensor_requires_grad(x); /* a leaf view: its own gradient is checked */
}

/* The naive reference for a sum over axis a: every input element is added into the output
 * element whose index is its own with dim a left out, and its gradient is w there. */
static void check_against_naive(Tensor *x, Tensor *out, int a, Rng *rng, const char *context) {
    int64_t out_n = tensor_numel(out), n = tensor_numel(x), index[5];
    float *want = calloc((size_t)out_n + 1, sizeof(float)), *grad = calloc((size_t)n + 1, sizeof(float));
    Tensor *w = random_tensor(test_ctx, rng, out->shape, out->rank, -1, 1);
    for (int64_t i = 0; i < n; i++) {
        unravel_index(i, x->shape, x->rank, index);
        int64_t o = 0;
        for (int d = 0; d < x->rank; d++)
            if (d != a) o = o * x->shape[d] + index[d];
        want[o] += tensor_get(x, index);
        grad[i] = tensor_data(w)[o];
    }
    EXPECT_VALUES_ARRAY(out, want, out_n, 1e-5f, context);
    tensor_zero_grad(x);
    ck_assert_msg(tensor_backward_from(out, w) == 0, "%s: %s", context, tensor_error());
    EXPECT_VALUES_ARRAY(tensor_grad(x), grad, n, 1e-5f, context);
    free(want);
    free(grad);
}

START_TEST(test_random_against_naive) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 200; trial++) {
        int64_t shape[5];
        int rank = (int)rng_int(&rng, 1, 5);
        random_shape(&rng, rank, 0, 3, shape);
        const char *kind;
        Tensor *x = random_input(&rng, shape, rank, &kind);
        int axis = (int)rng_int(&rng, -rank, rank - 1);
        bool keepdim = rng_int(&rng, 0, 1);
        char s[SHAPE_STR_MAX], context[512];
        shape_format(shape, rank, s, sizeof s);

        snprintf(context, sizeof context, "COURSE_SEED=%llu case %d: sum_axis of %s (%s) over axis %d, keepdim %d",
                 (unsigned long long)seed, trial, s, kind, axis, keepdim);
        Tensor *out = tensor_sum_axis(x, axis, keepdim);
        ck_assert_msg(out != NULL, "%s: %s", context, tensor_error());
        check_against_naive(x, out, axis < 0 ? axis + rank : axis, &rng, context);

        snprintf(context, sizeof context, "COURSE_SEED=%llu case %d: sum_last_dim of %s (%s)", (unsigned long long)seed,
                 trial, s, kind);
        out = tensor_sum_last_dim(x);
        ck_assert_msg(out != NULL, "%s: %s", context, tensor_error());
        check_against_naive(x, out, rank - 1, &rng, context);
    }
}
END_TEST

/* ==== the reduction kernel: every layout, edge sizes, against a double reference ========== */

/* A random input of `shape` in one of five layouts. The view's element at index i is
 * base[offset + sum_d i_d * strides[d]], whatever the layout. */
static Tensor *layout_view(Rng *rng, const int64_t *shape, int rank, int layout, const char **kind) {
    int64_t base_shape[TENSOR_MAX_RANK], base_strides[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK], offset = 0;
    static const char *const kinds[] = {"contiguous", "transposed (every dim reversed)",
                                        "an offset window into a padded buffer", "walked backwards (negative strides)",
                                        "expanded (stride 0) along its first dim"};
    *kind = kinds[layout];
    if (layout == 0 || shape_numel(shape, rank) == 0) return random_tensor(test_ctx, rng, shape, rank, -1, 1);
    for (int d = 0; d < rank; d++)
        base_shape[d] = layout == 1 ? shape[rank - 1 - d] : layout == 2 ? shape[d] + 2 : shape[d];
    if (layout == 4) base_shape[0] = 1;
    contiguous_strides(base_shape, rank, base_strides);
    for (int d = 0; d < rank; d++) {
        strides[d] = layout == 1 ? base_strides[rank - 1 - d] : layout == 3 ? -base_strides[d] : base_strides[d];
        if (layout == 2) offset += base_strides[d];                  /* start one step in along every dim */
        if (layout == 3) offset += (shape[d] - 1) * base_strides[d]; /* start at the far corner */
    }
    if (layout == 4) strides[0] = 0;
    Tensor *base = random_tensor(test_ctx, rng, base_shape, rank, -1, 1);
    return tensor_as_strided(base, shape, rank, strides, offset);
}

/* out (keepdim shape) against sums in double of x's elements read one by one with tensor_get.
 * The tolerance scales with the sum of |x|: float sums of thousands of terms round. */
static void check_sum(const Tensor *x, const Tensor *out, int a, const char *context) {
    int64_t n = tensor_numel(x), out_n = tensor_numel(out), index[TENSOR_MAX_RANK];
    double *want = calloc((size_t)out_n + 1, sizeof *want), *magnitude = calloc((size_t)out_n + 1, sizeof *magnitude);
    for (int64_t i = 0; i < n; i++) {
        unravel_index(i, x->shape, x->rank, index);
        int64_t o = 0;
        for (int d = 0; d < x->rank; d++)
            if (d != a) o = o * x->shape[d] + index[d];
        double v = tensor_get(x, index);
        want[o] += v;
        magnitude[o] += fabs(v);
    }
    float *got = malloc(((size_t)out_n + 1) * sizeof *got);
    ck_assert_int_eq(tensor_to_array(out, got, out_n), out_n);
    for (int64_t o = 0; o < out_n; o++)
        ck_assert_msg(fabs(got[o] - want[o]) <= 1e-6 + 1e-5 * magnitude[o], "%s: element %lld is %.9g, reference %.9g",
                      context, (long long)o, (double)got[o], want[o]);
    free(want);
    free(magnitude);
    free(got);
}

START_TEST(test_kernel_layouts_and_edge_sizes) {
    /* Lengths around the fast path's 8-float steps and its groups of 4 rows, and a long row;
     * every layout; every axis; every COURSE_KERNELS setting. The fast kernel (tensor_fast.c) sorts
     * dims by stride, so each layout reaches a different inner loop: a row sum (stride 1 or
     * not), rows added onto a row, or any strides. */
    Rng rng = rng_seeded(test_seed());
    const int64_t lengths[] = {0, 1, 7, 8, 9, 17, 4099};
    const int64_t shapes[][3] = {{1, 0, 0}, {3, 0, 0}, {5, 0, 0}, {9, 0, 0}, {2, 5, 0}, {3, 4, 0}};
    const int ranks[] = {2, 2, 2, 2, 3, 3};
    for (const char *const *mode = test_kernel_modes(); *mode; mode++)
        for (int si = 0; si < 6; si++) {
            const char *kernels = use_kernels(*mode);
            for (int li = 0; li < 7; li++) {
                int rank = ranks[si];
                int64_t shape[3] = {shapes[si][0], shapes[si][1], shapes[si][2]};
                shape[rank - 1] = lengths[li];
                if (rank == 3 && lengths[li] > 17) continue; /* keeps the test quick under valgrind */
                for (int layout = 0; layout < 5; layout++) {
                    const char *kind;
                    Tensor *x = layout_view(&rng, shape, rank, layout, &kind);
                    ck_assert_msg(x != NULL, "%s", tensor_error());
                    char sx[SHAPE_STR_MAX], context[512];
                    shape_format(shape, rank, sx, sizeof sx);
                    for (int a = -1; a < rank; a++) { /* a = -1: sum_last_dim */
                        snprintf(context, sizeof context, "COURSE_SEED=%llu, %s kernels: %s of %s (%s)",
                                 (unsigned long long)test_seed(), kernels,
                                 a < 0    ? "sum_last_dim"
                                 : a == 0 ? "sum_axis 0"
                                 : a == 1 ? "sum_axis 1"
                                          : "sum_axis 2",
                                 sx, kind);
                        Tensor *out = a < 0 ? tensor_sum_last_dim(x) : tensor_sum_axis(x, a, true);
                        ck_assert_msg(out != NULL, "%s: %s", context, tensor_error());
                        check_sum(x, out, a < 0 ? rank - 1 : a, context);
                    }
                    /* the mean over an axis is that sum times 1/n */
                    Tensor *mean = EXPECT_OK(tensor_mean_axis(x, 0, true)),
                           *sum = EXPECT_OK(tensor_sum_axis(x, 0, true));
                    for (int64_t i = 0; i < tensor_numel(sum); i++)
                        ck_assert_float_eq(tensor_data(mean)[i], tensor_data(sum)[i] * (1.0f / (float)shape[0]));
                }
            }
        }
}
END_TEST

START_TEST(test_kernel_special_values) {
    /* inf, nan and -0 go through the kernel's vector adds like through a plain loop */
    Tensor *x = tensor_from(test_ctx, DIMS(3, 9),
                            VALUES(1, 2, 3, 4, 5, 6, 7, 8, INFINITY, /* a row with inf */
                                   1, 2, 3, NAN, 5, 6, 7, 8, 9,      /* nan */
                                   -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f));
    Tensor *rows = EXPECT_OK(tensor_sum_last_dim(x)), *cols = EXPECT_OK(tensor_sum_axis(x, 0, false));
    ck_assert(isinf(tensor_data(rows)[0]) && tensor_data(rows)[0] > 0);
    ck_assert(isnan(tensor_data(rows)[1]));
    ck_assert_float_eq(tensor_data(rows)[2], 0.0f);
    ck_assert(isnan(tensor_data(cols)[3]));
    ck_assert(isinf(tensor_data(cols)[8]));
    ck_assert_float_eq(tensor_data(cols)[0], 2.0f);
}
END_TEST

/* A sum whose running sums overflow float though its total does not: the fast path's eight
 * lanes must not turn +inf and -inf into nan. [3e38, 3e38, -3e38] and 16 entries of +-3e38 (the
 * same sign eight apart, so that a lane holds two of one sign) sum to 3e38 and 0. The reference,
 * one running sum in float, gives inf for the first (as numpy does): it may, but never nan. */
START_TEST(test_sum_overflowing_partway) {
    float alternating[16];
    for (int i = 0; i < 16; i++) alternating[i] = i % 2 ? -3e38f : 3e38f;
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *kernels = use_kernels(*mode);
        bool fast = strcmp(*mode, "reference") != 0;
        float a = tensor_item(tensor_sum(tensor_from(test_ctx, DIMS(3), VALUES(3e38f, 3e38f, -3e38f))));
        float b = tensor_item(tensor_sum_last_dim(tensor_from(test_ctx, DIMS(16), alternating, 16)));
        ck_assert_msg(!isnan(a) && !isnan(b), "%s kernels: sums of finite floats came out nan (%g, %g)", kernels,
                      (double)a, (double)b);
        if (fast)
            ck_assert_msg(a == 3e38f && b == 0.0f, "%s kernels: the sums are %g and %g, expected 3e38 and 0", kernels,
                          (double)a, (double)b);
    }
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("lesson 2: reductions");
    TCase *chapter = add_test_case(s, "chapter");
    add_test(chapter, test_sum);
    add_test(chapter, test_sum_last_dim);
    add_test(chapter, test_sum_last_dim_adds_to_the_gradient);
    add_test(chapter, test_mean_is_a_composition);
    add_test(chapter, test_mse_loss);
    add_test(chapter, test_chapter_table);
    TCase *axes = add_test_case(s, "axes, edges, errors, views");
    add_test(axes, test_sum_axis);
    add_test(axes, test_errors);
    add_test(axes, test_rank0_size1_size0);
    add_test(axes, test_reductions_of_views);
    TCase *grads = add_test_case(s, "gradients");
    add_test(grads, test_gradcheck_every_op);
    TCase *random = add_large_test_case(s, "random");
    tcase_set_timeout(random, 30);
    add_test(random, test_random_against_naive);
    TCase *kernel = add_large_test_case(s, "the reduction kernel");
    tcase_set_timeout(kernel, 30);
    add_test(kernel, test_kernel_layouts_and_edge_sizes);
    add_test(kernel, test_kernel_special_values);
    add_test(kernel, test_sum_overflowing_partway);
    return run_core_tests(argc, argv, s);
}
