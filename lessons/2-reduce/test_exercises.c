/*
 * test_exercises.c - checks lesson 2's exercises (exercises.c, or solutions.c for the
 * reference run). Expected answers come from the chapter and from the library (reduce.c,
 * broadcast.c), never from the file under test. The exercise table at the bottom declares
 * each exercise's id, title and points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "exercises.h"
#include "harness.h"
#include "reduce.h"

/* Fails unless t was made by `function`, whose tape records `op`: checks that an exercise
 * composes the ops it was asked to. */
static void expect_op(const Tensor *t, const char *function, const char *op, const char *exercise, const char *what) {
    ck_assert_msg(t != NULL, "exercise %s returned NULL: %s", exercise, tensor_error() ? tensor_error() : "(no error)");
    ck_assert_msg(!strcmp(t->op, op),
                  "exercise %s: %s should come from %s (the op \"%s\" on the tape), but it was made "
                  "by the op \"%s\"",
                  exercise, what, function, op, t->op);
}

/* ==== 2.1 row mean ======================================================================= */

static void probe_2_1(void) { ex2_1_row_mean(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6))); }

static void check_row_mean(Tensor *x, const char *context) {
    char what[640], message[1024], s[SHAPE_STR_MAX], values[512];
    Tensor *x_values = EXPECT_OK(tensor_contiguous(x)); /* x may be a view: its values in row-major order */
    snprintf(what, sizeof what, "x of shape %s, %s%s", shape_format(x->shape, x->rank, s, sizeof s),
             format_literal(tensor_data(x_values), x->shape, x->rank, values, sizeof values), context);
    Tensor *got = ex2_1_row_mean(x);
    expect_op(got, "tensor_mul_scalar", "mul", "2.1", "the result (the row sums times 1/D)");
    expect_op(got->inputs[0], "tensor_sum_last_dim", "sum_last_dim", "2.1", "what is multiplied (the row sums)");
    Tensor *want = EXPECT_OK(tensor_mean_axis(x, -1, true));
    snprintf(message, sizeof message, "exercise 2.1: row mean of %s", what);
    expect_shape_(got, want->shape, want->rank, message, __FILE__, __LINE__);
    /* the usual mistake: the row sums divided by something other than D */
    Tensor *sums = EXPECT_OK(tensor_sum_last_dim(x));
    int64_t rows = tensor_numel(want), length = x->shape[x->rank - 1];
    float by = rows > 0 && tensor_data(got)[0] != 0 ? tensor_data(sums)[0] / tensor_data(got)[0] : 0;
    bool divided = rows > 0 && by > 0.5f && fabsf(by - roundf(by)) < 1e-3f && roundf(by) != (float)length &&
                   !values_close(tensor_data(got), tensor_data(want), rows, 1e-5f);
    for (int64_t p = 0; p < rows && divided; p++)
        divided = fabsf(tensor_data(got)[p] * by - tensor_data(sums)[p]) <= 1e-4f * (1 + fabsf(tensor_data(sums)[p]));
    ck_assert_msg(!divided,
                  "%s: each row sum was divided by %g; a row's mean divides by D = %lld, the size of the last "
                  "dim (x->shape[x->rank - 1], the length of a row)",
                  message, (double)roundf(by), (long long)length);
    EXPECT_VALUES_ARRAY(got, tensor_data(want), tensor_numel(want), 1e-5f, message);

    /* the gradient: with upstream u[p] on row p's mean, each x[p, j] gets u[p] / D */
    Rng rng = rng_seeded(test_seed());
    Tensor *u = random_tensor(test_ctx, &rng, got->shape, got->rank, -1, 1);
    tensor_zero_grad(x);
    ck_assert_msg(got->requires_grad,
                  "%s: the result does not require grad, so no gradient can reach x: it was made from "
                  "something that is not on x's tape (a copy of x's values?). Compose it from ops applied to x itself",
                  message);
    ck_assert_int_eq(tensor_backward_from(got, u), 0);
    int64_t d = x->shape[x->rank - 1];
    float *expected = malloc((size_t)tensor_numel(x) * sizeof(float) + 1);
    for (int64_t i = 0; i < tensor_numel(x); i++) expected[i] = tensor_data(u)[i / d] / (float)d;
    char us[512];
    snprintf(message, sizeof message, "exercise 2.1: gradient of the row mean of %s, upstream %s", what,
             format_literal(tensor_data(u), u->shape, u->rank, us, sizeof us));
    EXPECT_VALUES_ARRAY(tensor_grad(x), expected, tensor_numel(x), 1e-5f, message);
    free(expected);
}

START_TEST(test_2_1_chapter_example) {
    check_row_mean(tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6))), "");
    check_row_mean(tensor_requires_grad(tensor_from(test_ctx, DIMS(1, 4), VALUES(-1, 1, 2, 6))), "");
}
END_TEST

START_TEST(test_2_1_other_shapes) {
    Rng rng = rng_seeded(test_seed());
    /* any rank from 1 up: the rows are along the last dim, whatever comes before it */
    const int64_t shapes[3][3] = {{4, 1, 0}, {2, 3, 5}, {7, 0, 0}};
    const int ranks[3] = {2, 3, 1};
    for (int k = 0; k < 3; k++) {
        Tensor *x = tensor_requires_grad(random_tensor(test_ctx, &rng, shapes[k], ranks[k], -2, 2));
        char context[64];
        snprintf(context, sizeof context, " (COURSE_SEED=%llu)", (unsigned long long)test_seed());
        check_row_mean(x, context);
    }
    /* views: a (3,4) transpose of a (4,3) storage, and rows 2 and 3 of it (an offset into a
     * larger storage); graded, the code sees the same memory as in make test */
    Tensor *base = random_tensor(test_ctx, &rng, DIMS(4, 3), -2, 2);
    check_row_mean(tensor_requires_grad(EXPECT_OK(tensor_as_strided(base, DIMS(3, 4), STRIDES(1, 3), 0))),
                   " (a transposed view of a (4,3) storage)");
    check_row_mean(tensor_requires_grad(EXPECT_OK(tensor_as_strided(base, DIMS(2, 3), STRIDES(3, 1), 6))),
                   " (rows 2 and 3 of a (4,3) storage)");
}
END_TEST

/* ==== 2.2 sum_last_dim's backward ======================================================= */

static void probe_2_2(void) {
    float g[2] = {2, 3}, gx[6] = {0};
    ex2_2_sum_last_dim_backward(g, 2, 3, gx);
}

static void check_backward_2_2(const float *g, int64_t rows, int64_t d, const char *context) {
    /* what the library's sum_last_dim backward gives for upstream g, added to a known start */
    Tensor *x = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(rows, d)));
    Tensor *out = EXPECT_OK(tensor_sum_last_dim(x));
    ck_assert_int_eq(tensor_backward_from(out, EXPECT_OK(tensor_from(test_ctx, DIMS(rows, 1), g, rows))), 0);
    int64_t n = rows * d;
    g = g ? guarded_input(g, rows) : NULL;
    float *got = guarded_buffer(n, -7.0f), *want = malloc((size_t)(n + 1) * sizeof *want);
    ck_assert_ptr_nonnull(want);
    for (int64_t i = 0; i < n; i++) {
        got[i] = 100.0f + (float)i; /* gradients already there: the backward must add to them */
        want[i] = 100.0f + (float)i + tensor_data(tensor_grad(x))[i];
    }
    ex2_2_sum_last_dim_backward(g, rows, d, got);
    char what[512], gs[256];
    snprintf(what, sizeof what, "exercise 2.2%s: rows = %lld, d = %lld, g = %s, gx starting at [100, 101, ...]",
             context, (long long)rows, (long long)d, format_floats(g, rows, gs, sizeof gs));
    float fresh = n > 0 ? want[0] - 100.0f : 0.0f; /* gx[0]'s gradient alone, without what gx held */
    ck_assert_msg(!(n > 0 && fabsf(got[0] - fresh) < 1e-6f && want[0] != got[0]),
                  "%s: gx[0] is %g, the new gradient alone: add it to what gx already holds (+=), do not overwrite gx",
                  what, (double)fresh);
    for (int64_t i = 0; i < n; i++) {
        if (fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i]))) continue;
        ck_assert_msg(got[i] != 100.0f + (float)i,
                      "%s: gx[%lld] is still %g, what it held before the call: add row %lld's "
                      "gradient g[%lld] into it",
                      what, (long long)i, (double)got[i], (long long)(i / d), (long long)(i / d));
        for (int64_t q = 0; q < rows; q++) /* another row's gradient */
            ck_assert_msg(q == i / d || g[q] == g[i / d] || got[i] != 100.0f + (float)i + g[q],
                          "%s: gx[%lld], in row %lld, got g[%lld] = %g added: every element of row p gets g[p], the "
                          "gradient of row p's sum (is g indexed by the column?)",
                          what, (long long)i, (long long)(i / d), (long long)q, (double)g[q]);
        break;
    }
    EXPECT_OUTPUT(got, n, -7.0f, want, 1e-5f, what);
    free(want);
}

START_TEST(test_2_2_chapter_example) {
    /* the chapter: g = [2, 3] over rows of 3 gives [[2,2,2],[3,3,3]] */
    check_backward_2_2((const float[]){2, 3}, 2, 3, "");
    check_backward_2_2((const float[]){-1, 0.5f, 4}, 3, 1, "");
    check_backward_2_2((const float[]){5}, 1, 5, "");
}
END_TEST

START_TEST(test_2_2_edge_and_random) {
    check_backward_2_2((const float[]){1, 2}, 2, 0, " (rows of length 0)");
    check_backward_2_2(NULL, 0, 4, " (no rows)");
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 22);
    char context[96];
    float g[8];
    for (int trial = 0; trial < 100; trial++) {
        int64_t rows = rng_int(&rng, 1, 8), d = rng_int(&rng, 1, 8);
        for (int64_t p = 0; p < rows; p++) g[p] = (float)rng_int(&rng, -9, 9);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_backward_2_2(g, rows, d, context);
    }
}
END_TEST

/* ==== 2.3 sum over an axis =============================================================== */

static void probe_2_3(void) {
    float x[6] = {1, 2, 3, 4, 5, 6}, out[3];
    ex2_3_sum_axis(x, DIMS(2, 3), 0, out);
}

static void check_sum_axis_2_3(const float *x, const int64_t *shape, int rank, int axis, const char *context) {
    int64_t n = shape_numel(shape, rank);
    x = guarded_input(x, n); /* nan around it: a read outside the view shows, in make test and graded alike */
    Tensor *t = EXPECT_OK(tensor_from(test_ctx, shape, rank, x, n));
    Tensor *want = EXPECT_OK(tensor_sum_axis(t, axis, false));
    int64_t n_out = tensor_numel(want), length = shape[axis], inner = 1;
    for (int k = axis + 1; k < rank; k++) inner *= shape[k];
    float *got = guarded_buffer(n_out, 12345.0f); /* garbage to overwrite */
    ex2_3_sum_axis(x, shape, rank, axis, got);
    char what[768], s[SHAPE_STR_MAX], values[512];
    snprintf(what, sizeof what, "exercise 2.3%s: x of shape %s, %s, summed over axis %d", context,
             shape_format(shape, rank, s, sizeof s), format_literal(x, shape, rank, values, sizeof values), axis);
    /* = for +=: each element keeps the last value along the axis */
    bool assigned = length > 1 && n_out > 0 && !values_close(got, tensor_data(want), n_out, 1e-4f);
    for (int64_t j = 0; j < n_out; j++)
        assigned = assigned && got[j] == x[((j / inner) * length + length - 1) * inner + j % inner];
    ck_assert_msg(!assigned,
                  "%s: each element of out holds only the last value along axis %d, not the sum: add every "
                  "value into it (+=) instead of writing it with =",
                  what, axis);
    expect_read_inside(got, tensor_data(want), n_out, what);
    expect_sums(got, tensor_data(want), n_out, length, 12345.0f, 1e-4f, what);
    EXPECT_OUTPUT(got, n_out, 12345.0f, tensor_data(want), 1e-4f, what);
}

START_TEST(test_2_3_examples) {
    const float x[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
    check_sum_axis_2_3(x, DIMS(2, 3), 0, ""); /* column sums [5, 7, 9] */
    check_sum_axis_2_3(x, DIMS(2, 3), 1, ""); /* row sums [6, 15] */
    check_sum_axis_2_3(x, DIMS(6), 0, "");    /* everything: a scalar */
    check_sum_axis_2_3(x, DIMS(2, 3, 4), 0, "");
    check_sum_axis_2_3(x, DIMS(2, 3, 4), 1, ""); /* the middle axis: neither rows nor columns */
    check_sum_axis_2_3(x, DIMS(2, 3, 4), 2, "");
    check_sum_axis_2_3(x, DIMS(2, 1, 3, 1, 4), 3, "");
    check_sum_axis_2_3(x, DIMS(0, 3), 0, ""); /* summing nothing gives 0 */
    check_sum_axis_2_3(x, DIMS(3, 0), 0, ""); /* an empty result */
    /* values with fractions: a sum kept in an int passes every case above */
    const float fractions[6] = {0.5f, 1.25f, -2.75f, 3.5f, 0.125f, -0.375f},
                tenths[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
    check_sum_axis_2_3(fractions, DIMS(2, 3), 0, ""); /* [4, 1.375, -3.125] */
    check_sum_axis_2_3(fractions, DIMS(2, 3), 1, ""); /* [-1, 3.25] */
    check_sum_axis_2_3(tenths, DIMS(3, 2), 0, "");    /* [0.9, 1.2] */
}
END_TEST

START_TEST(test_2_3_random_shapes) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 23);
    char context[96];
    float x[729];
    for (int trial = 0; trial < 200; trial++) {
        int64_t shape[6];
        int rank = (int)rng_int(&rng, 1, 6), axis = (int)rng_int(&rng, 0, rank - 1);
        random_shape(&rng, rank, 1, 3, shape);
        /* quarters: their sums are exact in float whatever the order of the additions */
        for (int64_t i = 0; i < shape_numel(shape, rank); i++) x[i] = 0.25f * (float)rng_int(&rng, -36, 36);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_sum_axis_2_3(x, shape, rank, axis, context);
    }
}
END_TEST

/* ==== 2.4 MSE ============================================================================ */

static bool close_to(float got, float want) { return fabsf(got - want) <= 1e-5f * (1 + fabsf(want)); }

static void probe_2_4(void) {
    Tensor *p = tensor_from(test_ctx, DIMS(2), VALUES(1, 2)), *t = tensor_from(test_ctx, DIMS(2), VALUES(0, 0));
    ex2_4_mse_loss(p, t);
}

static void check_mse(Tensor *pred, Tensor *target, const char *what) {
    char message[1024];
    Tensor *got = ex2_4_mse_loss(pred, target);
    expect_op(got, "tensor_mul_scalar", "mul", "2.4", "the loss (the sum times 1/N)");
    expect_op(got->inputs[0], "tensor_sum", "sum", "2.4", "what is multiplied (the sum)");
    expect_op(got->inputs[0]->inputs[0], "tensor_pow_scalar", "pow_scalar", "2.4", "what is summed (the squares)");
    expect_op(got->inputs[0]->inputs[0]->inputs[0], "tensor_sub", "sub", "2.4", "what is squared (pred - target)");
    Tensor *want = EXPECT_OK(tensor_mse_loss(pred, target));
    snprintf(message, sizeof message, "exercise 2.4: mse_loss of %s", what);
    ck_assert_msg(got->rank == 0, "%s: the loss should be a rank-0 tensor (a scalar), got rank %d", message, got->rank);
    /* the sum of the squares divided by something other than N (from the values: when graded,
     * the tape's tensors are stand-ins that hold no values) */
    int64_t count = tensor_numel(pred);
    float sum = tensor_data(want)[0] * (float)count, by = tensor_data(got)[0] != 0 ? sum / tensor_data(got)[0] : 0;
    ck_assert_msg(
        close_to(tensor_data(got)[0], tensor_data(want)[0]) || !(by > 0.5f && fabsf(by - roundf(by)) < 1e-3f),
        "%s: the loss is %g, the sum of the squares (%g) divided by %g, where the mean divides by N = %lld, the "
        "number of elements",
        message, (double)tensor_data(got)[0], (double)sum, (double)roundf(by), (long long)count);
    EXPECT_VALUES_ARRAY(got, tensor_data(want), 1, 1e-5f, message);
    /* d loss / d pred = 2 (pred - target) / N */
    tensor_zero_grad(pred);
    ck_assert_int_eq(tensor_backward(got), 0);
    int64_t n = tensor_numel(pred);
    float *expected = malloc((size_t)n * sizeof(float) + 1);
    for (int64_t i = 0; i < n; i++) expected[i] = 2.0f * (tensor_data(pred)[i] - tensor_data(target)[i]) / (float)n;
    snprintf(message, sizeof message, "exercise 2.4: gradient of the mse_loss of %s", what);
    EXPECT_VALUES_ARRAY(tensor_grad(pred), expected, n, 1e-5f, message);
    free(expected);
}

START_TEST(test_2_4_example) {
    /* the walk-through's example: pred [2.5, 0, 2, 8], target [3, -0.5, 2, 7], loss 0.375 */
    Tensor *pred = tensor_requires_grad(tensor_from(test_ctx, DIMS(4), VALUES(2.5f, 0, 2, 8)));
    Tensor *target = tensor_from(test_ctx, DIMS(4), VALUES(3, -0.5f, 2, 7));
    check_mse(pred, target, "pred [2.5, 0, 2, 8] and target [3, -0.5, 2, 7]");
}
END_TEST

START_TEST(test_2_4_random_shapes) {
    Rng rng = rng_seeded(test_seed());
    int64_t shapes[3][3] = {{2, 3, 1}, {5, 1, 1}, {2, 2, 2}};
    for (int k = 0; k < 3; k++) {
        Tensor *pred = tensor_requires_grad(random_tensor(test_ctx, &rng, shapes[k], 3, -2, 2));
        Tensor *target = random_tensor(test_ctx, &rng, shapes[k], 3, -2, 2);
        char what[700], s[SHAPE_STR_MAX], ps[300], ts[300];
        snprintf(what, sizeof what, "pred of shape %s, %s, and target %s (COURSE_SEED=%llu)",
                 shape_format(pred->shape, pred->rank, s, sizeof s),
                 format_literal(tensor_data(pred), pred->shape, pred->rank, ps, sizeof ps),
                 format_literal(tensor_data(target), target->shape, target->rank, ts, sizeof ts),
                 (unsigned long long)test_seed());
        check_mse(pred, target, what);
    }
}
END_TEST

int main(int argc, char **argv) {
    /* clang-format off */
    const Exercise exercises[] = {
        {"2.1", "row mean from sum_last_dim and mul_scalar", 2, probe_2_1, {test_2_1_chapter_example, test_2_1_other_shapes}},
        {"2.2", "sum_last_dim's backward", 3, probe_2_2, {test_2_2_chapter_example, test_2_2_edge_and_random}},
        {"2.3", "sum over any axis", 4, probe_2_3, {test_2_3_examples, test_2_3_random_shapes}},
        {"2.4", "the MSE loss, the chapter's way", 2, probe_2_4, {test_2_4_example, test_2_4_random_shapes}},
    };
    /* clang-format on */
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
