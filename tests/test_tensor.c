/*
 * test_tensor.c - tensor core: tests of the shared core (common/): the arena, shapes, views,
 * the strided loop, printing, the error contract, the autodiff engine and the gradient checker.
 * The engine is tested with two tiny ops defined here, so these tests need no lesson.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gradcheck.h"
#include "harness.h"
#include "kernels.h"
#include "kernels_fast.h"

/* ==== two tiny ops for the engine: scale by 3, and elementwise product of same shapes ==== */

static void triple_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    float *gx = tensor_grad_data(x);
    const float *g = tensor_data(out->grad);
    for (int64_t i = 0; i < tensor_numel(x); i++) gx[i] += 3.0f * g[i] * out->param;
}

/* param = 1 is the right backward; anything else is a deliberately wrong one */
static Tensor *triple(Tensor *x, float backward_factor) {
    Tensor *out = tensor_zeros(x->ctx, x->shape, x->rank);
    for (int64_t i = 0; i < tensor_numel(x); i++) tensor_data(out)[i] = 3.0f * tensor_data(x)[i];
    out->param = backward_factor;
    return tensor_record(out, "triple", triple_backward, 1, &x);
}

static void product_backward(Tensor *out) {
    Tensor *a = out->inputs[0], *b = out->inputs[1];
    const float *g = tensor_data(out->grad);
    for (int64_t i = 0; i < tensor_numel(out); i++) {
        if (a->requires_grad) tensor_grad_data(a)[i] += g[i] * tensor_data(b)[i];
        if (b->requires_grad) tensor_grad_data(b)[i] += g[i] * tensor_data(a)[i];
    }
}

static Tensor *product(Tensor *a, Tensor *b) {
    Tensor *out = tensor_zeros(a->ctx, a->shape, a->rank);
    for (int64_t i = 0; i < tensor_numel(a); i++) tensor_data(out)[i] = tensor_data(a)[i] * tensor_data(b)[i];
    return tensor_record(out, "product", product_backward, 2, (Tensor *[]){a, b});
}

/* x * 2 with a backward that assigns (=) its gradient instead of adding to it (+=): right as
 * long as nothing else has added into x's gradient first */
static void double_assigning_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    for (int64_t i = 0; i < tensor_numel(x); i++) tensor_grad_data(x)[i] = 2.0f * tensor_data(out->grad)[i];
}

static Tensor *double_assigning(Tensor *x) {
    Tensor *out = tensor_zeros(x->ctx, x->shape, x->rank);
    for (int64_t i = 0; i < tensor_numel(x); i++) tensor_data(out)[i] = 2.0f * tensor_data(x)[i];
    return tensor_record(out, "double_assigning", double_assigning_backward, 1, &x);
}

/* a reversed view whose backward wrongly sends each gradient to the same position */
static void reverse_wrong_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    for (int64_t i = 0; i < tensor_numel(x); i++) tensor_grad_data(x)[i] += tensor_data(out->grad)[i];
}

static Tensor *reverse_wrong(Tensor *x) {
    Tensor *out = tensor_zeros(x->ctx, x->shape, x->rank);
    int64_t n = tensor_numel(x);
    for (int64_t i = 0; i < n; i++) tensor_data(out)[i] = tensor_data(x)[n - 1 - i];
    return tensor_record(out, "reverse_wrong", reverse_wrong_backward, 1, &x);
}

/* x * 3 with a backward that is right but for its last element, which gets param added: a
 * number, nan or infinity */
static void flawed_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t n = tensor_numel(x);
    for (int64_t i = 0; i < n; i++)
        tensor_grad_data(x)[i] += 3.0f * tensor_data(out->grad)[i] + (i == n - 1 ? out->param : 0.0f);
}

static Tensor *flawed(Tensor *x, float flaw) {
    Tensor *out = tensor_zeros(x->ctx, x->shape, x->rank);
    for (int64_t i = 0; i < tensor_numel(x); i++) tensor_data(out)[i] = 3.0f * tensor_data(x)[i];
    out->param = flaw;
    return tensor_record(out, "flawed", flawed_backward, 1, &x);
}

/* ==== arena and shapes =================================================================== */

START_TEST(test_ctx_owns_everything) {
    Ctx *ctx = ctx_new();
    ck_assert_ptr_nonnull(ctx);
    for (int i = 0; i < 1000; i++) ck_assert_ptr_nonnull(tensor_zeros(ctx, DIMS(10, 10)));
    ck_assert_ptr_nonnull(tensor_zeros(ctx, DIMS(1000, 1000))); /* a large block of its own */
    ck_assert_uint_ge(ctx_bytes(ctx), 1000 * 400 + 4000000);
    void *p = ctx_alloc(ctx, 0);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)ctx_alloc(ctx, 3) % 16, 0);
    ctx_free(ctx); /* valgrind checks that this releases everything */
    ctx_free(NULL);
}
END_TEST

START_TEST(test_shape_format_like_numpy) {
    char buf[SHAPE_STR_MAX];
    ck_assert_str_eq(shape_format(DIMS(2, 3), buf, sizeof buf), "(2,3)");
    ck_assert_str_eq(shape_format(DIMS(3), buf, sizeof buf), "(3,)");
    ck_assert_str_eq(shape_format(NULL, 0, buf, sizeof buf), "()");
    ck_assert_str_eq(shape_format(DIMS(0, 1, 2, 3, 4, 5), buf, sizeof buf), "(0,1,2,3,4,5)");
}
END_TEST

START_TEST(test_contiguous_strides_and_unravel) {
    int64_t strides[4], index[4];
    contiguous_strides(DIMS(2, 3, 4), strides);
    ck_assert_int_eq(strides[0], 12);
    ck_assert_int_eq(strides[1], 4);
    ck_assert_int_eq(strides[2], 1);
    unravel_index(23, DIMS(2, 3, 4), index);
    ck_assert(index[0] == 1 && index[1] == 2 && index[2] == 3);
    unravel_index(4, DIMS(2, 3), index);
    ck_assert(index[0] == 1 && index[1] == 1);
    ck_assert_int_eq(shape_numel(NULL, 0), 1); /* a scalar holds one element */
    ck_assert_int_eq(shape_numel(DIMS(3, 0, 5)), 0);
    ck_assert_int_eq(shape_numel(DIMS(-1, 2)), -1);
    ck_assert_int_eq(shape_numel(DIMS(INT64_MAX, 2)), -1);
    unravel_index(0, DIMS(2, 0, 3), index); /* a shape with no elements: no division by 0 */
    ck_assert(index[0] == 0 && index[1] == 0 && index[2] == 0);
    /* a dim of 0 counts as 1 in the strides after it, as PyTorch's: torch.empty(2, 0, 3).stride()
     * is (3, 3, 1), torch.empty(0, 2, 3).stride() (6, 3, 1), torch.empty(2, 3, 0).stride() (3, 1, 1),
     * torch.empty(4, 0, 1, 5).stride() (5, 5, 5, 1) */
    const struct {
        int rank;
        int64_t shape[4], torch[4];
    } empty[] = {{3, {2, 0, 3}, {3, 3, 1}},
                 {3, {0, 2, 3}, {6, 3, 1}},
                 {3, {2, 3, 0}, {3, 1, 1}},
                 {4, {4, 0, 1, 5}, {5, 5, 5, 1}}};
    for (size_t c = 0; c < sizeof empty / sizeof empty[0]; c++) {
        char shape[SHAPE_STR_MAX], got[SHAPE_STR_MAX], want[SHAPE_STR_MAX];
        shape_format(empty[c].shape, empty[c].rank, shape, sizeof shape);
        shape_format(empty[c].torch, empty[c].rank, want, sizeof want);
        contiguous_strides(empty[c].shape, empty[c].rank, strides);
        ck_assert_msg(memcmp(strides, empty[c].torch, (size_t)empty[c].rank * sizeof *strides) == 0,
                      "contiguous_strides%s gave %s, PyTorch's are %s", shape,
                      shape_format(strides, empty[c].rank, got, sizeof got), want);
        Tensor *t = EXPECT_OK(tensor_zeros(test_ctx, empty[c].shape, empty[c].rank));
        ck_assert_msg(memcmp(t->strides, empty[c].torch, (size_t)empty[c].rank * sizeof *strides) == 0,
                      "tensor_zeros%s has strides %s, PyTorch's are %s", shape,
                      shape_format(t->strides, t->rank, got, sizeof got), want);
    }
}
END_TEST

START_TEST(test_get_checks_the_index) {
    Tensor *a = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_float_eq(tensor_get(a, (const int64_t[]){1, 2}), 6.0f);
    tensor_clear_error();
    ck_assert(isnan(tensor_get(a, (const int64_t[]){2, 0})));
    ck_assert_str_eq(tensor_error(), "get: index 2 is out of range for dim 0 of shape (2,3)");
    ck_assert(isnan(tensor_get(a, (const int64_t[]){0, -1})));
    EXPECT_ERROR("index -1 is out of range for dim 1", "a negative index");
}
END_TEST

START_TEST(test_making_tensors) {
    Tensor *a = EXPECT_OK(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    ck_assert_int_eq(a->rank, 2);
    ck_assert_int_eq(a->strides[0], 3);
    ck_assert(!a->is_view && tensor_is_contiguous(a));
    ck_assert_str_eq(a->op, "leaf");
    Tensor *s = EXPECT_OK(tensor_scalar(test_ctx, 7));
    ck_assert_int_eq(s->rank, 0);
    ck_assert_int_eq(tensor_numel(s), 1);
    ck_assert_float_eq(tensor_item(s), 7.0f);
    Tensor *e = EXPECT_OK(tensor_zeros(test_ctx, DIMS(0, 4)));
    ck_assert_int_eq(tensor_numel(e), 0);
    Tensor *r6 = EXPECT_OK(tensor_zeros(test_ctx, DIMS(1, 2, 1, 2, 1, 2)));
    ck_assert_int_eq(tensor_numel(r6), 8);
    Tensor *r8 = EXPECT_OK(tensor_zeros(test_ctx, DIMS(1, 1, 1, 1, 1, 1, 1, 2)));
    ck_assert_int_eq(r8->rank, TENSOR_MAX_RANK);
}
END_TEST

/* An op's checks in one line each (inputs_valid, shape_is), and a helper's message under the
 * op's name (tensor_error_as): part of test_bad_inputs_are_errors. */
static void op_checks_and_their_messages(void) {
    Tensor *x = tensor_zeros(test_ctx, DIMS(2, 3)), *gamma = tensor_zeros(test_ctx, DIMS(3)), *none = NULL;
    Ctx *other = ctx_new();
    Tensor *far = tensor_zeros(other, DIMS(3));
    tensor_clear_error();
    ck_assert(inputs_valid("op", INPUTS(x, gamma)));
    ck_assert_ptr_null(tensor_error());
    ck_assert(!inputs_valid("op", INPUTS(x, gamma, none)));
    ck_assert_str_eq(tensor_error(), "op: input none is NULL");
    ck_assert(!inputs_valid("op", INPUTS(x, gamma, far)));
    ck_assert_str_eq(tensor_error(), "op: x and far belong to different contexts");
    ck_assert(!inputs_valid("op", INPUTS(x, far)));
    ck_assert_str_eq(tensor_error(), "op: x and far belong to different contexts");
    /* a NULL input keeps the message already recorded, as tensor_null_input does */
    ck_assert(!inputs_valid("later", INPUTS(none, x)));
    ck_assert_str_eq(tensor_error(), "op: x and far belong to different contexts");

    tensor_clear_error();
    ck_assert(shape_is("op", "gamma", gamma, "(C,)", DIMS(3), "x", x));
    ck_assert(!shape_is("op", "x", x, "(C, C)", DIMS(3, 3), "gamma", gamma));
    ck_assert_str_eq(tensor_error(), "op: x must be (C, C) = (3,3) for gamma (3,), got (2,3)");
    ck_assert(!shape_is("op", "the mask", x, "(T, T)", DIMS(2, 2), NULL, NULL));
    ck_assert_str_eq(tensor_error(), "op: the mask must be (T, T) = (2,2), got (2,3)");

    tensor_set_error("broadcast_shapes: operands could not be broadcast together with shapes (2,3) (2,4)");
    ck_assert(!tensor_error_as("add", NULL));
    ck_assert_str_eq(tensor_error(), "add: operands could not be broadcast together with shapes (2,3) (2,4)");
    ck_assert(!tensor_error_as("matmul", ": the batch dims of %s", "(2,3,5)"));
    ck_assert_str_eq(tensor_error(),
                     "matmul: operands could not be broadcast together with shapes (2,3) (2,4): the batch "
                     "dims of (2,3,5)");
    tensor_clear_error();
    ck_assert(!tensor_error_as("op", NULL));
    ck_assert_str_eq(tensor_error(), "op: failed");
    ctx_free(other);
}

/* tensor_grads_begin: a gradient nothing has reached yet is stored over (accumulate false),
 * unless it is not written whole, shares the call with a gradient already reached, or belongs
 * to a tensor given twice; then every gradient is added to, the fresh ones cleared first. Part
 * of test_backward_chain_and_accumulation. */
static void grads_begin_stores_or_adds(void) {
    Ctx *ctx = ctx_new();
    Tensor *a = tensor_requires_grad(tensor_zeros(ctx, DIMS(3))), *b = tensor_requires_grad(tensor_zeros(ctx, DIMS(3)));
    Tensor *constant = tensor_zeros(ctx, DIMS(3));
    float *g[3];
    /* fresh, whole, distinct: store, and the gradients are not cleared (what they hold is kept) */
    ck_assert(!tensor_grads_begin(3, (Tensor *[]){a, constant, b}, NULL, g));
    ck_assert_ptr_eq(g[0], tensor_data(a->grad));
    ck_assert_ptr_null(g[1]); /* a constant takes no gradient */
    ck_assert_ptr_eq(g[2], tensor_data(b->grad));
    for (int i = 0; i < 3; i++) g[0][i] = 1.0f, g[2][i] = 2.0f; /* as the kernel would store */
    /* now reached: add, nothing cleared */
    ck_assert(tensor_grads_begin(1, &a, NULL, g));
    EXPECT_VALUES(tensor_grad(a), VALUES(1, 1, 1), 0, "a gradient already reached is not cleared");
    /* one fresh, one reached: both add, the fresh one cleared first */
    Tensor *c = tensor_requires_grad(tensor_zeros(ctx, DIMS(3)));
    ck_assert(!tensor_grads_begin(1, &c, NULL, g)); /* made, not cleared */
    for (int i = 0; i < 3; i++) g[0][i] = 7.0f;
    c->grad_unset = true; /* as tensor_backward marks an intermediate's gradient to restart */
    ck_assert(!tensor_grads_begin(1, &c, NULL, g));
    EXPECT_VALUES(tensor_grad(c), VALUES(7, 7, 7), 0, "a gradient to be stored over is not cleared first");
    c->grad_unset = true;
    ck_assert(tensor_grads_begin(2, (Tensor *[]){c, b}, NULL, g));
    EXPECT_VALUES(tensor_grad(c), VALUES(0, 0, 0), 0, "a fresh gradient added to with another is cleared first");
    EXPECT_VALUES(tensor_grad(b), VALUES(2, 2, 2), 0, "a gradient already reached");
    /* fresh but not written whole (a broadcast input's): add, after clearing */
    c->grad_unset = true;
    ck_assert(tensor_grads_begin(1, &c, (const bool[]){false}, g));
    EXPECT_VALUES(tensor_grad(c), VALUES(0, 0, 0), 0, "a gradient not written whole is cleared");
    /* fresh, given twice (x * x): add, cleared once */
    c->grad_unset = true;
    ck_assert(tensor_grads_begin(2, (Tensor *[]){c, c}, NULL, g));
    ck_assert_ptr_eq(g[0], g[1]);
    EXPECT_VALUES(tensor_grad(c), VALUES(0, 0, 0), 0, "the gradient of a tensor given twice is cleared");
    ctx_free(ctx);
}

START_TEST(test_bad_inputs_are_errors) {
    tensor_clear_error();
    ck_assert_ptr_null(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5)));
    ck_assert_str_eq(tensor_error(), "tensor_from: 5 values given for shape (2,3), which holds 6");
    ck_assert_ptr_null(tensor_zeros(test_ctx, DIMS(1, 1, 1, 1, 1, 1, 1, 1, 1)));
    ck_assert_str_eq(tensor_error(), "tensor_zeros: rank 9 is outside 0..8 (TENSOR_MAX_RANK)");
    ck_assert_ptr_null(tensor_zeros(test_ctx, DIMS(2, -1)));
    ck_assert_str_eq(tensor_error(), "tensor_zeros: negative dimensions are not allowed, got shape (2,-1)");
    ck_assert_ptr_null(tensor_zeros(test_ctx, DIMS(INT64_MAX / 2, 4)));
    EXPECT_ERROR("has too many elements", "an element count that overflows");
    ck_assert_ptr_null(tensor_zeros(test_ctx, DIMS(1 << 30, 1 << 30, 1 << 30)));
    EXPECT_ERROR("has too many elements", "an element count that overflows");
    ck_assert_ptr_null(tensor_zeros(NULL, DIMS(2)));
    ck_assert_str_eq(tensor_error(), "tensor_zeros: ctx is NULL");
    ck_assert(isnan(tensor_item(tensor_zeros(test_ctx, DIMS(2)))));
    ck_assert_str_eq(tensor_error(), "item: only a one-element tensor has an item, got shape (2,)");
    float out[2];
    ck_assert_int_eq(tensor_to_array(tensor_zeros(test_ctx, DIMS(3)), out, 2), -1);
    EXPECT_ERROR("room for 2 floats", "to_array with too little room");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_contiguous(NULL));
    ck_assert_str_eq(tensor_error(), "contiguous: input x is NULL");
    ck_assert(tensor_error() != NULL);
    tensor_clear_error();
    ck_assert_ptr_null(tensor_error());
    op_checks_and_their_messages();
}
END_TEST

START_TEST(test_null_input_keeps_first_message) {
    tensor_clear_error();
    ck_assert_ptr_null(tensor_from(test_ctx, DIMS(2), VALUES(1, 2, 3)));
    const char *first = "tensor_from: 3 values given for shape (2,), which holds 2";
    ck_assert_str_eq(tensor_error(), first);
    ck_assert_ptr_null(tensor_contiguous(NULL));
    ck_assert_ptr_null(tensor_as_strided(NULL, DIMS(1), STRIDES(1), 0));
    ck_assert_int_eq(tensor_backward(NULL), -1);
    ck_assert_ptr_null(tensor_grad(NULL));
    ck_assert_ptr_null(tensor_grad_data(NULL));
    ck_assert_ptr_null(tensor_data(NULL));
    ck_assert(isnan(tensor_get(NULL, NULL)));
    ck_assert(!tensor_is_contiguous(NULL));
    ck_assert_int_eq(tensor_numel(NULL), 0);
    tensor_zero_grad(NULL);
    ck_assert_str_eq(tensor_error(), first);
}
END_TEST

/* ==== views and the strided loop ========================================================= */

START_TEST(test_as_strided_views) {
    Tensor *a = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *t = EXPECT_OK(tensor_as_strided(a, DIMS(3, 2), STRIDES(1, 3), 0)); /* the transpose */
    ck_assert_ptr_eq(t->storage, a->storage);
    ck_assert(t->is_view && !tensor_is_contiguous(t));
    EXPECT_VALUES(t, VALUES(1, 4, 2, 5, 3, 6), 0, "transposed view");
    Tensor *c = EXPECT_OK(tensor_contiguous(t));
    ck_assert_ptr_ne(c->storage, a->storage);
    ck_assert(tensor_is_contiguous(c));
    EXPECT_VALUES(c, VALUES(1, 4, 2, 5, 3, 6), 0, "contiguous copy of the transpose");
    ck_assert_ptr_eq(tensor_contiguous(a), a); /* already contiguous: no copy */

    Tensor *rev = EXPECT_OK(tensor_as_strided(a, DIMS(6), STRIDES(-1), 5)); /* a negative stride */
    EXPECT_VALUES(rev, VALUES(6, 5, 4, 3, 2, 1), 0, "reversed view");
    Tensor *last_col = EXPECT_OK(tensor_as_strided(a, DIMS(2), STRIDES(3), 2)); /* an offset */
    EXPECT_VALUES(last_col, VALUES(3, 6), 0, "offset view");
    Tensor *rows = EXPECT_OK(tensor_as_strided(a, DIMS(4, 3), STRIDES(0, 1), 3)); /* stride 0 */
    EXPECT_VALUES(rows, VALUES(4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6), 0, "stride-0 view");

    /* a view may not reach outside its storage */
    tensor_clear_error();
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(3, 3), STRIDES(3, 1), 0));
    ck_assert_str_eq(tensor_error(), "as_strided: a view with shape (3,3), strides (3,1) and offset 0 reaches "
                                     "outside storage #1 of 6 floats");
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(2), STRIDES(-1), 0));
    EXPECT_ERROR("outside storage", "a negative stride below the start");
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(1), STRIDES(1), 6));
    EXPECT_ERROR("outside storage", "an offset past the end");
    /* strides so large that stride * (size - 1) would overflow int64 */
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(2, 2, 2), STRIDES(INT64_C(1) << 62, INT64_C(1) << 62, 1 << 28), 0));
    EXPECT_ERROR("outside storage", "strides that overflow");
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(3, 3), STRIDES(INT64_MAX, -INT64_MAX), 2));
    EXPECT_ERROR("outside storage", "strides that overflow");
    ck_assert_ptr_nonnull(tensor_as_strided(a, DIMS(1, 1), STRIDES(INT64_MAX, INT64_MIN), 5)); /* never used */
    ck_assert_ptr_nonnull(tensor_as_strided(a, DIMS(0, 5), STRIDES(100, 100), 0)); /* empty: reaches nothing */

    /* the boundary on both sides: the last element a view reaches is offset + sum((size - 1) *
     * stride), which must be at most 5 here; with a negative stride, the first must be at least 0 */
    EXPECT_VALUES(tensor_as_strided(a, DIMS(2), STRIDES(3), 2), VALUES(3, 6), 0,
                  "(2,) step 3 from 2: elements 2 and 5");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(2), STRIDES(3), 3)); /* elements 3 and 6: one past the end */
    ck_assert_str_eq(tensor_error(), "as_strided: a view with shape (2,), strides (3,) and offset 3 reaches "
                                     "outside storage #1 of 6 floats");
    EXPECT_VALUES(tensor_as_strided(a, DIMS(2, 2), STRIDES(3, 1), 1), VALUES(2, 3, 5, 6), 0,
                  "(2,2) from 1: up to element 5");
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(2, 2), STRIDES(3, 1), 2)); /* up to element 6 */
    EXPECT_ERROR("reaches outside storage #1 of 6 floats", "a (2,2) view one past the end");
    EXPECT_VALUES(tensor_as_strided(a, DIMS(2), STRIDES(-3), 3), VALUES(4, 1), 0,
                  "(2,) step -3 from 3: elements 3 and 0");
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(2), STRIDES(-3), 2)); /* elements 2 and -1 */
    EXPECT_ERROR("reaches outside storage #1 of 6 floats", "a negative stride one before the start");
    EXPECT_VALUES(tensor_as_strided(a, DIMS(6), STRIDES(1), 0), VALUES(1, 2, 3, 4, 5, 6), 0, "all six");
    ck_assert_ptr_null(tensor_as_strided(a, DIMS(7), STRIDES(1), 0));
    EXPECT_ERROR("reaches outside storage #1 of 6 floats", "seven elements of six");
    /* a view with a 0 dim reads nothing: any offset from 0 on is accepted, whatever its strides */
    for (int64_t offset = 0; offset <= 8; offset++) {
        Tensor *none = tensor_as_strided(a, DIMS(3, 0), STRIDES(-100, 100), offset);
        ck_assert_msg(none != NULL, "an empty view at offset %lld was refused: %s", (long long)offset, tensor_error());
        ck_assert_int_eq(tensor_numel(none), 0);
        ck_assert_int_eq(none->offset, offset < 6 ? offset : 6); /* kept inside the storage */
    }
}
END_TEST

START_TEST(test_nditer_is_an_odometer) {
    NdIter it;
    int64_t strides[2] = {10, 1};
    nditer_init(&it, 2, (const int64_t[]){2, 3}, 1, (const int64_t *[]){strides});
    const int64_t want[6] = {0, 1, 2, 10, 11, 12};
    int count = 0;
    while (nditer_next(&it)) {
        ck_assert_int_lt(count, 6);
        ck_assert_int_eq(it.offset[0], want[count]);
        count++;
    }
    ck_assert_int_eq(count, 6);
    nditer_init(&it, 0, NULL, 1, (const int64_t *[]){strides}); /* rank 0: one element */
    ck_assert(nditer_next(&it));
    ck_assert(!nditer_next(&it));
    nditer_init(&it, 2, (const int64_t[]){3, 0}, 1, (const int64_t *[]){strides}); /* empty: none */
    ck_assert(!nditer_next(&it));
}
END_TEST

/* ==== strided_copy and strided_accumulate, and their fast paths ========================== */

/* ck_assert_msg for checks inside loops over many elements: Check reports every assertion that
 * passes to its parent process, which would cost a system call per element. */
#define EXPECT_THAT(cond, ...)                  \
    do {                                        \
        if (!(cond)) ck_abort_msg(__VA_ARGS__); \
    } while (0)

/* A random view over a buffer: its dims laid out in a random order, with padding between them
 * (an offset window), some walked backwards (negative strides) and some of stride 0 (expanded).
 * offset and size say where element (0,...) lies and how large the buffer must be. */
typedef struct {
    int64_t strides[TENSOR_MAX_RANK], offset, size;
} RandomView;

static RandomView random_view(Rng *rng, int rank, const int64_t *shape, bool allow_expanded) {
    RandomView v = {{0}, 0, 1};
    int order[TENSOR_MAX_RANK];
    for (int d = 0; d < rank; d++) order[d] = d;
    for (int d = rank - 1; d > 0; d--) { /* a random memory order of the dims */
        int e = (int)rng_int(rng, 0, d), keep = order[d];
        order[d] = order[e];
        order[e] = keep;
    }
    bool contiguous = rng_int(rng, 0, 4) == 0; /* keep some plain layouts in the mix */
    int64_t step = 1;
    for (int i = rank - 1; i >= 0; i--) {
        int d = contiguous ? i : order[i];
        v.strides[d] = step;
        step *= shape[d] + (!contiguous && rng_int(rng, 0, 2) == 0 ? rng_int(rng, 1, 3) : 0);
    }
    int64_t lo = 0, hi = 0;
    bool empty = false;
    for (int d = 0; d < rank; d++) {
        if (!contiguous && rng_int(rng, 0, 3) == 0) v.strides[d] = -v.strides[d];
        if (!contiguous && allow_expanded && rng_int(rng, 0, 5) == 0) v.strides[d] = 0;
        int64_t reach = v.strides[d] * (shape[d] > 0 ? shape[d] - 1 : 0);
        if (reach > 0) hi += reach;
        else lo += reach;
        empty = empty || shape[d] == 0;
    }
    v.offset = empty ? 0 : -lo;
    v.size = empty ? 1 : hi - lo + 1;
    return v;
}

/* A shape of rank 0..4 with up to two long dims (0..150, so across the 64-element tiles, and
 * not a multiple of them or of 8) and short others; at most about 60,000 elements. */
static void random_tiled_shape(Rng *rng, int rank, int64_t *shape) {
    for (int d = 0; d < rank; d++) shape[d] = rng_int(rng, 1, 3);
    for (int k = 0; k < 2 && rank > 0; k++) {
        int d = (int)rng_int(rng, 0, rank - 1);
        int64_t pick = rng_int(rng, 0, 9);
        shape[d] = pick == 0 ? 0 : pick == 1 ? 1 : rng_int(rng, 2, 150);
    }
    while (shape_numel(shape, rank) > 60000)
        for (int d = 0; d < rank; d++) shape[d] = shape[d] > 1 ? shape[d] / 2 : shape[d];
}

static int64_t offset_of(int64_t flat, const int64_t *shape, int rank, const int64_t *strides) {
    int64_t index[TENSOR_MAX_RANK], off = 0;
    unravel_index(flat, shape, rank, index);
    for (int d = 0; d < rank; d++) off += index[d] * strides[d];
    return off;
}

static float *buffer_of(Rng *rng, int64_t size) {
    float *b = malloc((size_t)size * sizeof *b);
    ck_assert_ptr_nonnull(b);
    for (int64_t i = 0; i < size; i++) b[i] = (float)rng_int(rng, -8, 8); /* small integers: every sum is exact */
    return b;
}

/* True when the two layouts are each contiguous along a different dim (of size > 1): the
 * transposes that the fast path cuts into tiles. */
static bool is_transpose(int rank, const int64_t *shape, const int64_t *a, const int64_t *b) {
    int da = -1, db = -1;
    for (int d = 0; d < rank; d++) {
        if (shape[d] <= 1) continue;
        if (a[d] == 1 || a[d] == -1) da = d;
        if (b[d] == 1 || b[d] == -1) db = d;
    }
    return da >= 0 && db >= 0 && da != db;
}

/* strided_copy and strided_accumulate against element-by-element loops, on random layouts
 * large enough to be cut into tiles, under one setting of COURSE_KERNELS. */
static void check_strided_loops(const char *mode) {
    const char *kernels = use_kernels(mode);
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed ^ (uint64_t)strlen(mode));
    int transposes = 0;
    for (int trial = 0; trial < 150; trial++) {
        int rank = (int)rng_int(&rng, 0, 4);
        int64_t shape[TENSOR_MAX_RANK], n, contiguous[TENSOR_MAX_RANK];
        random_tiled_shape(&rng, rank, shape);
        n = shape_numel(shape, rank);
        contiguous_strides(shape, rank, contiguous);
        RandomView sv = random_view(&rng, rank, shape, true), dv = random_view(&rng, rank, shape, trial % 2 == 0);
        float *src = buffer_of(&rng, sv.size), *dst = buffer_of(&rng, dv.size),
              *want = malloc((size_t)dv.size * sizeof *want);
        float *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
        ck_assert(want && out);
        transposes += n > 1 && (is_transpose(rank, shape, contiguous, sv.strides) ||
                                is_transpose(rank, shape, dv.strides, sv.strides));

        /* copy into a contiguous array */
        strided_copy(rank, shape, out, contiguous, src + sv.offset, sv.strides);
        for (int64_t f = 0; f < n; f++)
            EXPECT_THAT(out[f] == src[sv.offset + offset_of(f, shape, rank, sv.strides)],
                        "COURSE_SEED=%llu case %d (%s kernels): strided_copy element %lld is %g, expected %g",
                        (unsigned long long)seed, trial, kernels, (long long)f, (double)out[f],
                        (double)src[sv.offset + offset_of(f, shape, rank, sv.strides)]);
        /* accumulate into another random view, which may have stride 0 (a reduction) */
        memcpy(want, dst, (size_t)dv.size * sizeof *want);
        for (int64_t f = 0; f < n; f++)
            want[dv.offset + offset_of(f, shape, rank, dv.strides)] +=
                src[sv.offset + offset_of(f, shape, rank, sv.strides)];
        strided_accumulate(rank, shape, dst + dv.offset, dv.strides, src + sv.offset, sv.strides);
        for (int64_t i = 0; i < dv.size; i++)
            EXPECT_THAT(dst[i] == want[i],
                        "COURSE_SEED=%llu case %d (%s kernels): strided_accumulate: destination slot %lld is %g, "
                        "expected %g",
                        (unsigned long long)seed, trial, kernels, (long long)i, (double)dst[i], (double)want[i]);
        free(src);
        free(dst);
        free(want);
        free(out);
    }
    EXPECT_THAT(transposes >= 20, "only %d of 150 random layouts were transposes: the test no longer covers them",
                transposes);
}

START_TEST(test_strided_loops_against_naive) {
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) check_strided_loops(*mode);
}
END_TEST

/* The tables each build of the fast files exports (kernels.h), in the order of KERNELS_EACH_BUILD */
KERNELS_EACH_BUILD(KERNELS_DECLARE_BUILD, tensor)
KERNELS_EACH_BUILD(KERNELS_DECLARE_BUILD, broadcast)
KERNELS_EACH_BUILD(KERNELS_DECLARE_BUILD, softmax)
KERNELS_EACH_BUILD(KERNELS_DECLARE_BUILD, gather)
KERNELS_EACH_BUILD(KERNELS_DECLARE_BUILD, bmm)
KERNELS_EACH_BUILD(KERNELS_DECLARE_BUILD, train)
#define BUILD_NAME(topic, build) #build,

/* Whether every entry of the table is the reference kernel (build NULL) or that build's. */
static bool table_is(const char *build) {
    static const char *const names[] = {KERNELS_EACH_BUILD(BUILD_NAME, unused)};
    static const Kernels *const tensor[] = {KERNELS_EACH_BUILD(KERNELS_ADDRESS_BUILD, tensor)};
    static const Kernels *const broadcast[] = {KERNELS_EACH_BUILD(KERNELS_ADDRESS_BUILD, broadcast)};
    static const Kernels *const softmax[] = {KERNELS_EACH_BUILD(KERNELS_ADDRESS_BUILD, softmax)};
    static const Kernels *const gather[] = {KERNELS_EACH_BUILD(KERNELS_ADDRESS_BUILD, gather)};
    static const Kernels *const bmm[] = {KERNELS_EACH_BUILD(KERNELS_ADDRESS_BUILD, bmm)};
    static const Kernels *const train[] = {KERNELS_EACH_BUILD(KERNELS_ADDRESS_BUILD, train)};
    const Kernels *k = kernels();
    if (!build)
        return k->copy == strided_copy_reference && k->accumulate == strided_accumulate_reference &&
               k->binary == binary_reference && k->binary_backward == binary_backward_reference &&
               k->exp == exp_reference && k->softmax_rows == softmax_rows_reference &&
               k->cross_entropy_backward == cross_entropy_backward_reference &&
               k->gather_rows == gather_rows_reference && k->matmul == matmul_reference &&
               k->linear == linear_reference && k->gelu == gelu_reference &&
               k->attention_backward == attention_backward_reference && k->adamw == adamw_reference;
    for (int b = 0; b < KERNELS_BUILDS; b++)
        if (strcmp(build, names[b]) == 0)
            return k->copy == tensor[b]->copy && k->accumulate == tensor[b]->accumulate &&
                   k->binary == broadcast[b]->binary && k->binary_backward == broadcast[b]->binary_backward &&
                   k->exp == softmax[b]->exp && k->softmax_rows == softmax[b]->softmax_rows &&
                   k->cross_entropy_backward == softmax[b]->cross_entropy_backward &&
                   k->gather_rows == gather[b]->gather_rows && k->matmul == bmm[b]->matmul &&
                   k->linear == train[b]->linear && k->gelu == train[b]->gelu &&
                   k->attention_backward == train[b]->attention_backward && k->adamw == train[b]->adamw;
    return false;
}

/* The switch: each setting of COURSE_KERNELS runs what it names, an unknown one the reference;
 * and each fills every entry as kernels.c says: with the reference kernel, or with the build
 * the setting and this CPU choose (native: the best this CPU runs). */
START_TEST(test_kernels_switch) {
    bool avx2 = kernels_cpu_runs("avx2"), avx512 = kernels_cpu_runs("avx512");
    ck_assert(kernels_cpu_runs("portable") && !kernels_cpu_runs("sse9") && !kernels_cpu_runs(NULL));
    ck_assert(!avx512 || avx2); /* the avx512 build uses AVX2 and FMA too */
    const char *native = avx512 ? "avx512" : avx2 ? "avx2" : "portable";
    ck_assert_str_eq(use_kernels("reference"), "reference");
    ck_assert(table_is(NULL));
    ck_assert_str_eq(kernels_setting(), "reference");
    ck_assert_str_eq(use_kernels("portable"), "portable");
    ck_assert(table_is("portable"));
    ck_assert_str_eq(use_kernels("avx2"), avx2 ? "avx2" : "portable");
    ck_assert(table_is(avx2 ? "avx2" : "portable"));
    ck_assert_str_eq(kernels_setting(), "avx2");
    ck_assert_str_eq(use_kernels("avx512"), avx512 ? "avx512" : "portable");
    ck_assert(table_is(avx512 ? "avx512" : "portable"));
    ck_assert_str_eq(kernels_setting(), "avx512");
    ck_assert_str_eq(use_kernels("native"), native);
    ck_assert(table_is(native));
    ck_assert_str_eq(use_kernels(""), native);
    ck_assert_str_eq(use_kernels(NULL), native);
    /* an unknown value: the reference, and a note on stderr naming the five it knows */
    fflush(stderr);
    int saved = dup(2);
    FILE *note = tmpfile();
    ck_assert(saved >= 0 && note && dup2(fileno(note), 2) >= 0);
    const char *unknown = use_kernels("fast please");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[256] = "";
    rewind(note);
    size_t got = fread(text, 1, sizeof text - 1, note);
    text[got] = '\0';
    fclose(note);
    ck_assert_str_eq(unknown, "reference");
    ck_assert_str_eq(kernels_setting(), "reference");
    ck_assert_msg(strstr(text, "COURSE_KERNELS=fast please is not one of reference, portable, native, avx2, avx512") !=
                      NULL,
                  "the note on stderr was: %s", text);
    /* what the old names meant is gone: they run the reference too */
    ck_assert_str_eq(use_kernels("generic"), "reference");
}
END_TEST

/* A dim of size 1 may have any stride (it never moves): the odometer must never add it, however
 * large (under SANITIZE=1 an overflowing add would stop the program). A negative dim is an
 * error of nditer_init's, not a loop that quietly visits nothing. */
START_TEST(test_size1_dims_and_bad_shapes) {
    Tensor *x = tensor_from(test_ctx, DIMS(6), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *v = EXPECT_OK(tensor_as_strided(x, DIMS(3, 1, 2), STRIDES(2, INT64_MAX, 1), 0));
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *kernels = use_kernels(*mode);
        float out[6] = {0};
        ck_assert_int_eq(tensor_to_array(v, out, 6), 6);
        EXPECT_ARRAY(out, ((const float[]){1, 2, 3, 4, 5, 6}), 6, 0.0f, kernels);
        EXPECT_VALUES(tensor_contiguous(v), VALUES(1, 2, 3, 4, 5, 6), 0.0f, kernels);
        NdIter rows;
        nditer_init_rows(&rows, v);
        int64_t at[3] = {-1, -1, -1}, k = 0;
        while (nditer_next(&rows)) {
            if (k < 3) at[k] = rows.offset[0];
            k++;
        }
        ck_assert_msg(k == 3 && at[0] == 0 && at[1] == 2 && at[2] == 4, "%s: rows at %lld %lld %lld", kernels,
                      (long long)at[0], (long long)at[1], (long long)at[2]);
    }
    NdIter it;
    tensor_clear_error();
    nditer_init(&it, 2, (const int64_t[]){3, -1}, 1, (const int64_t *[]){STRIDES(1, 1)});
    ck_assert(!nditer_next(&it));
    EXPECT_ERROR("nditer_init: shape (3,-1) has a negative dim or too many elements", "a negative dim");
}
END_TEST

/* strided_accumulate into memory that overlaps its source: the fast path hands the work back,
 * so the result is the reference's, whose order (the odometer's) defines it. Here each element
 * adds the one before it after that one was itself added to. */
START_TEST(test_accumulate_overlapping) {
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *kernels = use_kernels(*mode);
        float buf[21], want[21];
        for (int i = 0; i < 21; i++) buf[i] = 1.0f, want[i] = (float)(i + 1);
        strided_accumulate(1, (const int64_t[]){20}, buf + 1, STRIDES(1), buf, STRIDES(1));
        EXPECT_ARRAY(buf, want, 21, 0.0f, kernels);
        float copy[40];
        for (int i = 0; i < 40; i++) copy[i] = (float)i;
        strided_copy(2, (const int64_t[]){4, 5}, copy + 3, STRIDES(5, 1), copy, STRIDES(1, 4)); /* overlapping */
        float ref[40];
        for (int i = 0; i < 40; i++) ref[i] = (float)i;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 5; c++) ref[3 + r * 5 + c] = ref[r + c * 4];
        EXPECT_ARRAY(copy, ref, 40, 0.0f, kernels);
    }
}
END_TEST

/* tensor_contiguous and tensor_to_array of transposed, flipped and offset views at sizes around
 * the fast path's tiles (256 x 128) and its 16 x 16 blocks, under every COURSE_KERNELS setting. */
START_TEST(test_contiguous_of_transposes) {
    const int64_t sizes[] = {0, 1, 7, 8, 9, 16, 17, 33, 65, 129, 257, 300};
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *kernels = use_kernels(*mode);
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 12; j++) {
                int64_t r = sizes[i], c = sizes[j];
                /* a (c+2, r+3) buffer; the view is its (r, c) transpose, offset by one row and column,
                 * and in the second form also walked backwards along both dims */
                Tensor *x = tensor_zeros(test_ctx, DIMS(c + 2, r + 3));
                for (int64_t k = 0; k < tensor_numel(x); k++) tensor_data(x)[k] = (float)k;
                for (int flip = 0; flip < 2; flip++) {
                    int64_t st0 = flip ? -1 : 1, st1 = flip ? -(r + 3) : r + 3;
                    int64_t offset = flip ? (c > 0 ? c : 1) * (r + 3) + (r > 0 ? r : 1) : (r + 3) + 1;
                    Tensor *v = EXPECT_OK(tensor_as_strided(x, DIMS(r, c), (const int64_t[]){st0, st1}, offset));
                    Tensor *copy = EXPECT_OK(tensor_contiguous(v));
                    float *arr = malloc((size_t)(r * c + 1) * sizeof *arr);
                    ck_assert_int_eq(tensor_to_array(v, arr, r * c), r * c);
                    for (int64_t a = 0; a < r; a++)
                        for (int64_t b = 0; b < c; b++) {
                            float want = tensor_data(x)[offset + a * st0 + b * st1];
                            EXPECT_THAT(tensor_data(copy)[a * c + b] == want && arr[a * c + b] == want,
                                        "(%lld,%lld) transpose%s, %s kernels: element (%lld,%lld) is %g (to_array %g), "
                                        "expected %g",
                                        (long long)r, (long long)c, flip ? ", flipped" : "", kernels, (long long)a,
                                        (long long)b, (double)tensor_data(copy)[a * c + b], (double)arr[a * c + b],
                                        (double)want);
                        }
                    free(arr);
                }
            }
    }
}
END_TEST

/* A transposing copy of more than SIMD_STREAM_BYTES (16 MB) streams its writes past the
 * cache (whole 64-byte lines, on rows that start on a line): into tensor_contiguous's result,
 * into a 64-byte aligned array (tensor_to_array), and, not streamed, into one that is not
 * aligned. The source's rows 2053 and 2048 floats apart, rows not a multiple of the 8 x 16
 * blocks; then a result whose rows (2070 floats) do not start on lines; then 75 small
 * transposes, K of attention heads, (1008,60) each, whose rows are 240 bytes apart. Under
 * every COURSE_KERNELS setting. */
START_TEST(test_large_transposes_stream) {
    const int64_t sizes[3][2] = {{2053, 2064}, {2048, 2064}, {2051, 2070}};
    for (const char *const *mode = test_kernel_modes(); *mode; mode++)
        for (int k = 0; k < 4; k++) {
            const char *kernels = use_kernels(*mode);
            /* the view v, (r, c) or (heads, d, t), of x's storage, and where its elements are */
            int64_t r, c, heads = 75, t = 1008, d = 60;
            Tensor *x, *v;
            if (k < 3) {
                r = sizes[k][0], c = sizes[k][1];
                x = tensor_zeros(test_ctx, DIMS(c, r));
                v = EXPECT_OK(tensor_as_strided(x, DIMS(r, c), STRIDES(1, r), 0));
            } else {
                r = heads * d, c = t;
                x = tensor_zeros(test_ctx, DIMS(heads, t, d));
                v = EXPECT_OK(tensor_as_strided(x, DIMS(heads, d, t), STRIDES(t * d, 1, d), 0));
            }
            for (int64_t e = 0; e < r * c; e++) tensor_data(x)[e] = (float)(e % 100003);
            Tensor *copy = EXPECT_OK(tensor_contiguous(v));
            ck_assert_msg((uintptr_t)tensor_data(copy) % 64 == 0, "a large tensor's data starts on a cache line");
            float *aligned = aligned_alloc(64, ((size_t)(r * c) * sizeof(float) + 63) / 64 * 64); /* a multiple of 64 */
            float *unaligned = malloc((size_t)(r * c + 1) * sizeof(float));
            ck_assert(aligned && unaligned);
            ck_assert_int_eq(tensor_to_array(v, aligned, r * c), r * c);
            ck_assert_int_eq(tensor_to_array(v, unaligned + 1, r * c), r * c);
            for (int64_t a = 0; a < r; a++)
                for (int64_t b = 0; b < c; b++) {
                    /* element (a, b) of the view, rows a of (r, c); for the heads, a = head * d + i */
                    float want = k < 3 ? tensor_data(x)[b * r + a] : tensor_data(x)[(a / d) * t * d + b * d + a % d];
                    EXPECT_THAT(tensor_data(copy)[a * c + b] == want && aligned[a * c + b] == want &&
                                    unaligned[1 + a * c + b] == want,
                                "case %d, %s kernels: element %lld of the transposed copy (%lld rows of %lld) is %g "
                                "(to_array: %g aligned, %g not), expected %g",
                                k, kernels, (long long)(a * c + b), (long long)r, (long long)c,
                                (double)tensor_data(copy)[a * c + b], (double)aligned[a * c + b],
                                (double)unaligned[1 + a * c + b], (double)want);
                }
            free(aligned);
            free(unaligned);
        }
}
END_TEST

/* ==== printing =========================================================================== */

static char *printed(const char *name, const Tensor *t, const char *fmt, char *buf, size_t size) {
    FILE *f = fmemopen(buf, size, "w");
    ck_assert_ptr_nonnull(f);
    tensor_fprint(f, name, t, fmt);
    fclose(f);
    return buf;
}

/* The dims merge_dims merges must be walked over exactly the offsets nditer_init visits
 * over the dims as they were, in the same order, for any layout: merging only changes who
 * counts. */
START_TEST(test_merged_dims_visit_the_same_offsets) {
    int64_t merged_shape[TENSOR_MAX_RANK], merged[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK];
    int m = merge_dims(2, (const int64_t[]){4096, 4096}, 1, (const int64_t *[]){(const int64_t[]){4096, 1}},
                       merged_shape, merged);
    ck_assert_msg(m == 1 && merged_shape[0] == 4096 * 4096 && merged[0][0] == 1,
                  "a contiguous (4096,4096) is one dim of 16M: got %d dims, the last of %lld", m,
                  (long long)merged_shape[m > 0 ? m - 1 : 0]);

    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 500; trial++) {
        int rank = (int)rng_int(&rng, 0, 5), n_ops = (int)rng_int(&rng, 1, 3);
        int64_t shape[TENSOR_MAX_RANK], strides[3][TENSOR_MAX_RANK];
        random_shape(&rng, rank, 0, 3, shape);
        for (int k = 0; k < n_ops; k++) { /* contiguous, broadcast (0), reversed or random strides */
            int64_t s = 1;
            int kind = (int)rng_int(&rng, 0, 3);
            for (int d = rank - 1; d >= 0; d--) {
                strides[k][d] = kind == 0   ? s
                                : kind == 1 ? (rng_int(&rng, 0, 1) ? s : 0)
                                : kind == 2 ? -s
                                            : rng_int(&rng, -7, 7);
                s *= shape[d] > 0 ? shape[d] : 1;
            }
        }
        const int64_t *views[3] = {strides[0], strides[1], strides[2]};
        NdIter plain, walk;
        int64_t expected[3][256], count = 0;
        nditer_init(&plain, rank, shape, n_ops, views);
        while (nditer_next(&plain)) {
            for (int k = 0; k < n_ops; k++) expected[k][count] = plain.offset[k];
            count++;
        }
        m = merge_dims(rank, shape, n_ops, views, merged_shape, merged);
        ck_assert_msg(m >= 0 && m <= rank, "COURSE_SEED=%llu case %d: %d merged dims for rank %d",
                      (unsigned long long)seed, trial, m, rank);
        int64_t seen = 0;
        nditer_init(&walk, m, merged_shape, n_ops, (const int64_t *[]){merged[0], merged[1], merged[2]});
        if (shape_numel(shape, rank) == 0) ck_assert(!nditer_next(&walk));
        while (shape_numel(shape, rank) > 0 && nditer_next(&walk)) {
            for (int k = 0; k < n_ops; k++)
                ck_assert_msg(seen < count && walk.offset[k] == expected[k][seen],
                              "COURSE_SEED=%llu case %d: element %lld of operand %d: offset %lld, nditer_init's %lld",
                              (unsigned long long)seed, trial, (long long)seen, k, (long long)walk.offset[k],
                              (long long)(seen < count ? expected[k][seen] : -1));
            seen++;
        }
        ck_assert_msg(seen == count, "COURSE_SEED=%llu case %d: %lld elements visited, not %lld",
                      (unsigned long long)seed, trial, (long long)seen, (long long)count);
    }
}
END_TEST

START_TEST(test_print_nested_brackets) {
    char buf[512];
    Tensor *a = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_str_eq(printed(NULL, a, NULL, buf, sizeof buf), "[[1. 2. 3.]\n [4. 5. 6.]]\n");
    ck_assert_str_eq(printed("a", a, NULL, buf, sizeof buf), "a = [[1. 2. 3.]\n     [4. 5. 6.]]\n");
    Tensor *v = tensor_from(test_ctx, DIMS(3), VALUES(0.5f, -12, 3));
    ck_assert_str_eq(printed(NULL, v, NULL, buf, sizeof buf), "[  0.5000 -12.0000   3.0000]\n");
    ck_assert_str_eq(printed(NULL, v, "%.1f", buf, sizeof buf), "[  0.5 -12.0   3.0]\n");
    Tensor *c = tensor_from(test_ctx, DIMS(2, 1, 2), VALUES(1, 2, 3, 4));
    ck_assert_str_eq(printed(NULL, c, NULL, buf, sizeof buf), "[[[1. 2.]]\n\n [[3. 4.]]]\n");
    ck_assert_str_eq(printed(NULL, tensor_scalar(test_ctx, 7), NULL, buf, sizeof buf), "7.\n");
    ck_assert_str_eq(printed(NULL, tensor_zeros(test_ctx, DIMS(2, 0)), NULL, buf, sizeof buf), "[]\n");
    Tensor *odd = tensor_from(test_ctx, DIMS(3), VALUES(INFINITY, NAN, 1));
    ck_assert_str_eq(printed(NULL, odd, NULL, buf, sizeof buf), "[inf nan  1.]\n");
    Tensor *wide = tensor_from(test_ctx, DIMS(2), VALUES(1e20f, 0.5f));
    ck_assert_str_eq(printed(NULL, wide, NULL, buf, sizeof buf), "[1.0000e+20 5.0000e-01]\n");
    Tensor *tiny = tensor_from(test_ctx, DIMS(2), VALUES(1e-7f, 1));
    ck_assert_str_eq(printed(NULL, tiny, NULL, buf, sizeof buf), "[1.0000e-07 1.0000e+00]\n");
    /* a view prints its logical elements */
    Tensor *t = tensor_as_strided(a, DIMS(3, 2), STRIDES(1, 3), 0);
    ck_assert_str_eq(printed(NULL, t, NULL, buf, sizeof buf), "[[1. 4.]\n [2. 5.]\n [3. 6.]]\n");
}
END_TEST

START_TEST(test_describe_shows_strides) {
    char buf[512];
    Tensor *a = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *t = tensor_as_strided(a, DIMS(3, 2), STRIDES(1, 3), 0);
    FILE *f = fmemopen(buf, sizeof buf, "w");
    tensor_fdescribe(f, "t", t);
    fclose(f);
    ck_assert_str_eq(buf,
                     "t: shape (3,2), strides (1,3), offset 0, storage #1 (6 floats), view: yes, contiguous: no\n");
}
END_TEST

/* ==== autodiff =========================================================================== */

START_TEST(test_backward_chain_and_accumulation) {
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(1), VALUES(2)));
    Tensor *y = triple(triple(x, 1), 1); /* y = 9x */
    ck_assert_int_eq(tensor_backward(y), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(9), 0, "d(9x)/dx");
    /* a second backward adds to the leaf's gradient; intermediate gradients restart */
    ck_assert_int_eq(tensor_backward(y), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(18), 0, "leaf gradient after two backward calls");
    tensor_zero_grad(x);
    EXPECT_VALUES(tensor_grad(x), VALUES(0), 0, "after zero_grad");
    ck_assert_int_eq(tensor_backward(y), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(9), 0, "after zero_grad and backward");
    ctx_zero_grads(test_ctx);
    EXPECT_VALUES(tensor_grad(x), VALUES(0), 0, "after ctx_zero_grads");
    grads_begin_stores_or_adds();
}
END_TEST

/* A backward that passes no gradient on (an op whose inputs are cut from the gradient). */
static void no_backward(Tensor *out) { (void)out; }

/* Gradients are made when backward starts and zeroed when first used. A step that runs again
 * after ctx_reset gets its gradients in the memory the last step's used, so reading a gradient
 * that was never zeroed shows last step's numbers: each must be exactly the first step's. h
 * receives no gradient (its only consumer passes none on), so its own backward must read zeros;
 * nor does the leaf `lost`, whose gradient must hold zeros when backward returns, even read
 * straight from the struct. */
START_TEST(test_gradients_in_reused_memory) {
    enum { N = 20000 }; /* 80 KB: blocks of their own, which ctx_reset keeps for reuse */
    Ctx *ctx = ctx_new();
    Tensor *x = tensor_requires_grad(tensor_zeros(ctx, DIMS(N)));
    for (int64_t i = 0; i < N; i++) tensor_data(x)[i] = (float)(i % 7) - 3.0f;
    ctx_mark(ctx);
    for (int step = 0; step < 3; step++) {
        ctx_zero_grads(ctx);
        for (int k = 0; k < step; k++) { /* so that each tensor gets another one's last memory */
            Tensor *pad = tensor_zeros(ctx, DIMS(N));
            for (int64_t i = 0; i < N; i++) tensor_data(pad)[i] = 99.0f;
        }
        Tensor *u = triple(x, 1), *h = triple(x, 1);
        Tensor *lost = tensor_requires_grad(tensor_zeros(ctx, DIMS(N))); /* a leaf: no backward of its own runs */
        Tensor *cut = tensor_record(tensor_zeros(ctx, DIMS(N)), "cut", no_backward, 2, (Tensor *[]){h, lost});
        Tensor *up = tensor_zeros(ctx, DIMS(N));
        for (int64_t i = 0; i < N; i++) tensor_data(cut)[i] = 1.0f, tensor_data(up)[i] = (float)(step + 1);
        Tensor *z = product(u, cut);
        ck_assert_int_eq(tensor_backward_from(z, up), 0);
        /* read as the struct has it, before tensor_grad: zeros when backward returns */
        for (int64_t i = 0; i < N; i++)
            if (tensor_data(lost->grad)[i] != 0.0f)
                ck_abort_msg("step %d: lost->grad's data [%lld] is %g after backward, which added nothing to it", step,
                             (long long)i, (double)tensor_data(lost->grad)[i]);
        const float *gx = tensor_data(tensor_grad(x)), *gu = tensor_data(tensor_grad(u));
        const float *gh = tensor_data(tensor_grad(h));
        for (int64_t i = 0; i < N; i++) {
            if (gu[i] != (float)(step + 1))
                ck_abort_msg("step %d: u's gradient [%lld] is %g, not %d", step, (long long)i, (double)gu[i], step + 1);
            if (gh[i] != 0.0f)
                ck_abort_msg("step %d: h got no gradient, but its gradient [%lld] is %g", step, (long long)i,
                             (double)gh[i]);
            if (gx[i] != 3.0f * (float)(step + 1))
                ck_abort_msg("step %d: x's gradient [%lld] is %g, not %d", step, (long long)i, (double)gx[i],
                             3 * (step + 1));
        }
        ctx_reset(ctx);
    }
    ctx_free(ctx);
}
END_TEST

START_TEST(test_backward_diamond_and_square) {
    /* x feeds two paths that meet again: z = (3x) * (3x) = 9x^2, dz/dx = 18x */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(1, 2)));
    Tensor *u = triple(x, 1);
    Tensor *z = product(u, u);
    ck_assert_int_eq(tensor_backward_from(z, tensor_from(test_ctx, DIMS(2), VALUES(1, 1))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(18, 36), 1e-6f, "d(9x^2)/dx");
    /* two separate branches of x: w = (3x) * x = 3x^2, dw/dx = 6x */
    tensor_zero_grad(x);
    Tensor *w = product(triple(x, 1), x);
    ck_assert_int_eq(tensor_backward_from(w, tensor_from(test_ctx, DIMS(2), VALUES(1, 10))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(6, 120), 1e-6f, "d(3x^2)/dx weighted by (1,10)");
}
END_TEST

START_TEST(test_backward_long_chain) {
    /* 100000 ops deep: the topological sort must not recurse on the C stack */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(1), VALUES(1)));
    Tensor *y = x;
    for (int i = 0; i < 100000; i++) y = product(y, tensor_scalar(test_ctx, 1));
    ck_assert_int_eq(tensor_backward(y), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(1), 0, "gradient through a long chain");
}
END_TEST

START_TEST(test_backward_errors) {
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(1, 2)));
    tensor_clear_error();
    ck_assert_int_eq(tensor_backward(triple(x, 1)), -1);
    EXPECT_ERROR("backward: the loss must be a scalar (one element), got shape (2,)", "backward on a non-scalar");
    ck_assert_int_eq(tensor_backward(tensor_scalar(test_ctx, 1)), -1);
    EXPECT_ERROR("does not require grad", "backward of a constant");
    ck_assert_int_eq(tensor_backward_from(triple(x, 1), tensor_zeros(test_ctx, DIMS(3))), -1);
    ck_assert_str_eq(tensor_error(), "backward: upstream gradient has shape (3,) but the output has shape (2,)");
    ck_assert_ptr_null(tensor_grad(tensor_zeros(test_ctx, DIMS(2))));
    EXPECT_ERROR("does not require grad; call tensor_requires_grad()", "grad of a constant");
    /* a loss of shape (1,1) is a scalar enough */
    Tensor *one = tensor_requires_grad(tensor_from(test_ctx, DIMS(1, 1), VALUES(5)));
    ck_assert_int_eq(tensor_backward(triple(one, 1)), 0);
    EXPECT_VALUES(tensor_grad(one), VALUES(3), 0, "grad of a (1,1) loss");
}
END_TEST

START_TEST(test_contiguous_backward) {
    Tensor *a = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *t = tensor_as_strided(a, DIMS(3, 2), STRIDES(1, 3), 0);
    t->requires_grad = true; /* a raw view has no backward: attach it to a through contiguous */
    Tensor *c = tensor_contiguous(t);
    ck_assert_ptr_eq(c->inputs[0], t);
    ck_assert_str_eq(c->op, "contiguous");
    ck_assert_int_eq(tensor_backward_from(c, tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6))), 0);
    EXPECT_VALUES(tensor_grad(t), VALUES(1, 2, 3, 4, 5, 6), 0, "contiguous passes the gradient straight through");
    /* t has no backward of its own, so its gradient accumulates like a leaf's: a second backward
     * adds onto what the first left (a copy instead of an add would leave it as it was) */
    ck_assert_int_eq(tensor_backward_from(c, tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6))), 0);
    EXPECT_VALUES(tensor_grad(t), VALUES(2, 4, 6, 8, 10, 12), 0, "a second backward through contiguous adds");
}
END_TEST

/* ==== the gradient checker =============================================================== */

static Tensor *fn_triple(Tensor *const *in, void *factor) { return triple(in[0], *(float *)factor); }
static Tensor *fn_product(Tensor *const *in, void *arg) { return (void)arg, product(in[0], in[1]); }
static Tensor *fn_reverse_wrong(Tensor *const *in, void *arg) { return (void)arg, reverse_wrong(in[0]); }
static Tensor *fn_double_assigning(Tensor *const *in, void *arg) { return (void)arg, double_assigning(in[0]); }
static Tensor *fn_flawed(Tensor *const *in, void *flaw) { return flawed(in[0], *(float *)flaw); }

START_TEST(test_gradcheck_passes_right_gradients) {
    Rng rng = rng_seeded(1);
    Tensor *a = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3), -1, 1));
    Tensor *b = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3), -1, 1));
    char report[512] = "";
    float right = 1.0f;
    ck_assert_msg(gradcheck(fn_triple, &right, (Tensor *[]){a}, 1, NULL, report, sizeof report) == 0, "%s", report);
    ck_assert_msg(gradcheck(fn_product, NULL, (Tensor *[]){a, b}, 2, NULL, report, sizeof report) == 0, "%s", report);
    ck_assert_msg(gradcheck(fn_product, NULL, (Tensor *[]){a, a}, 2, NULL, report, sizeof report) == 0, "%s", report);
}
END_TEST

START_TEST(test_gradcheck_catches_wrong_gradients) {
    Rng rng = rng_seeded(2);
    Tensor *a = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3), -1, 1));
    char report[512] = "";
    float wrong = 1.1f; /* off by 10% */
    ck_assert_int_eq(gradcheck(fn_triple, &wrong, (Tensor *[]){a}, 1, NULL, report, sizeof report), -1);
    ck_assert_msg(strstr(report, "input 0 (shape (2,3)), element 0 at index (0,0): analytic"), "report: %s", report);
    ck_assert_msg(strstr(report, "numeric"), "report: %s", report);
    /* wrong in the last element alone, by a little, by nan, by infinity: every element is
     * compared, and a comparison with nan fails */
    const float flaws[] = {0.5f, NAN, INFINITY, 0.0f};
    for (int k = 0; k < 4; k++) {
        int want = flaws[k] == 0.0f ? 0 : -1;
        report[0] = '\0';
        ck_assert_msg(gradcheck(fn_flawed, (void *)&flaws[k], (Tensor *[]){a}, 1, NULL, report, sizeof report) == want,
                      "a last element off by %g: report: %s", (double)flaws[k], report);
        ck_assert_msg(want == 0 || strstr(report, "input 0 (shape (2,3)), element 5 at index (1,2): analytic"),
                      "report: %s", report);
    }
    /* a gradient sent to the wrong elements: a plain sum() would not notice, a random weight does */
    ck_assert_int_eq(gradcheck(fn_reverse_wrong, NULL, (Tensor *[]){a}, 1, NULL, report, sizeof report), -1);
    /* a backward that assigns (=) where it must add (+=): alone it is right, since nothing else
     * wrote the gradient first; gradcheck's second backward, onto a gradient that already holds
     * something, catches it, with a message that names the mistake */
    ck_assert_int_eq(gradcheck(fn_double_assigning, NULL, (Tensor *[]){a}, 1, NULL, report, sizeof report), -1);
    ck_assert_msg(strstr(report, "input 0 (shape (2,3)), element 0 at index (0,0): a second backward onto a gradient "
                                 "holding") &&
                      strstr(report, "a backward assigns (=) a gradient it must add to (+=)"),
                  "report: %s", report);
    /* a view as input is refused with a message */
    Tensor *view = tensor_as_strided(a, DIMS(3), STRIDES(1), 0);
    ck_assert_int_eq(gradcheck(fn_reverse_wrong, NULL, (Tensor *[]){view}, 1, NULL, report, sizeof report), -1);
    ck_assert_str_eq(report, "gradcheck: input 0 must be a contiguous leaf tensor");
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("tensor core");
    TCase *basics = add_test_case(s, "arena, shapes, errors");
    add_test(basics, test_ctx_owns_everything);
    add_test(basics, test_shape_format_like_numpy);
    add_test(basics, test_contiguous_strides_and_unravel);
    add_test(basics, test_get_checks_the_index);
    add_test(basics, test_making_tensors);
    add_test(basics, test_bad_inputs_are_errors);
    add_test(basics, test_null_input_keeps_first_message);
    TCase *views = add_test_case(s, "views and printing");
    add_test(views, test_as_strided_views);
    add_test(views, test_nditer_is_an_odometer);
    add_test(views, test_merged_dims_visit_the_same_offsets);
    TCase *tiles = add_large_test_case(s, "cache-blocked copies");
    tcase_set_timeout(tiles, 60);
    add_test(tiles, test_kernels_switch);
    add_test(tiles, test_size1_dims_and_bad_shapes);
    add_test(tiles, test_accumulate_overlapping);
    add_test(tiles, test_strided_loops_against_naive);
    add_test(tiles, test_contiguous_of_transposes);
    add_test(tiles, test_large_transposes_stream);
    add_test(views, test_print_nested_brackets);
    add_test(views, test_describe_shows_strides);
    TCase *autodiff = add_test_case(s, "autodiff");
    tcase_set_timeout(autodiff, 30);
    add_test(autodiff, test_backward_chain_and_accumulation);
    add_test(autodiff, test_backward_diamond_and_square);
    add_test(autodiff, test_gradients_in_reused_memory);
    add_test(autodiff, test_backward_long_chain);
    add_test(autodiff, test_backward_errors);
    add_test(autodiff, test_contiguous_backward);
    add_test(autodiff, test_gradcheck_passes_right_gradients);
    add_test(autodiff, test_gradcheck_catches_wrong_gradients);
    return run_core_tests(argc, argv, s);
}
