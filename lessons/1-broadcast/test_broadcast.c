/*
 * test_broadcast.c - lesson 1's core tests. They mirror the chapter's section 2 (its
 * test_broadcast_add, its tables), then go past it: numpy's rule on valid and invalid pairs
 * (rank 0, size 1, size 0, rank up to 4), the error contract, a gradient check of every op,
 * and seeded random shapes and views against a naive reference loop.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "gradcheck.h"
#include "harness.h"
#include "kernels.h"

/* ==== the chapter ======================================================================== */

START_TEST(test_broadcast_add) {
    /* [2,3] + [3]: every element of b is shared by both rows */
    Tensor *a = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *b = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(10, 20, 30)));
    Tensor *c = EXPECT_OK(tensor_add(a, b));
    EXPECT_SHAPE(c, DIMS(2, 3), "a + b");
    EXPECT_VALUES(c, VALUES(11, 22, 33, 14, 25, 36), 0, "a + b");
    Tensor *loss = EXPECT_OK(tensor_sum(c));
    EXPECT_VALUES(loss, VALUES(141), 0, "(a + b).sum()");
    ck_assert_int_eq(tensor_backward(loss), 0);
    EXPECT_VALUES(tensor_grad(b), VALUES(2, 2, 2), 0, "b.grad: each element was broadcast twice");
    EXPECT_VALUES(tensor_grad(a), VALUES(1, 1, 1, 1, 1, 1), 0, "a.grad");
}
END_TEST

/* The walk-through's 2.1: the linear layer's bias, [B, out] + [out]; its gradient sums g's rows. */
START_TEST(test_linear_layer_bias) {
    Tensor *xw = tensor_from(test_ctx, DIMS(2, 2), VALUES(4, 5, 10, 11)); /* x (2,3) @ W (3,2) */
    Tensor *b = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(100, 200)));
    Tensor *y = EXPECT_OK(tensor_add(xw, b));
    EXPECT_SHAPE(y, DIMS(2, 2), "y = xW + b, [2, 2] + [2]");
    EXPECT_VALUES(y, VALUES(104, 205, 110, 211), 0, "y = xW + b");
    ck_assert_int_eq(tensor_backward_from(y, tensor_from(test_ctx, DIMS(2, 2), VALUES(1, 2, 3, 4))), 0);
    EXPECT_VALUES(tensor_grad(b), VALUES(4, 6), 0, "b.grad: the upstream gradient's rows, summed");
}
END_TEST

/* The walk-through's 2.5, the chapter's exercise 1: [2,3] + [1,3]. */
START_TEST(test_chapter_exercise_one) {
    Tensor *a = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *b = tensor_requires_grad(tensor_from(test_ctx, DIMS(1, 3), VALUES(100, 200, 300)));
    Tensor *c = EXPECT_OK(tensor_add(a, b));
    EXPECT_SHAPE(c, DIMS(2, 3), "[2,3] + [1,3]");
    EXPECT_VALUES(c, VALUES(101, 202, 303, 104, 205, 306), 0, "[2,3] + [1,3]");
    int64_t map[6];
    broadcast_map(c->shape, c->rank, b->shape, b->rank, map);
    for (int t = 0; t < 6; t++)
        ck_assert_msg(map[t] == t % 3, "c's element %d reads b's element %lld, not %d", t, (long long)map[t], t % 3);
    ck_assert_int_eq(tensor_backward(tensor_sum(c)), 0);
    EXPECT_SHAPE(tensor_grad(b), DIMS(1, 3), "b.grad keeps b's shape");
    EXPECT_VALUES(tensor_grad(b), VALUES(2, 2, 2), 0, "b.grad: two copies of each element");
    EXPECT_VALUES(tensor_grad(a), VALUES(1, 1, 1, 1, 1, 1), 0, "a.grad");
}
END_TEST

static void expect_broadcast(const int64_t *a, int a_rank, const int64_t *b, int b_rank, const int64_t *want,
                             int want_rank) {
    int64_t out[TENSOR_MAX_RANK];
    int rank = -1;
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], so[SHAPE_STR_MAX], sw[SHAPE_STR_MAX];
    shape_format(a, a_rank, sa, sizeof sa);
    shape_format(b, b_rank, sb, sizeof sb);
    ck_assert_msg(broadcast_shapes(a, a_rank, b, b_rank, out, &rank) == 0, "broadcast_shapes(%s, %s) failed: %s", sa,
                  sb, tensor_error());
    ck_assert_msg(shape_equal(out, rank, want, want_rank), "broadcast_shapes(%s, %s) = %s, expected %s", sa, sb,
                  shape_format(out, rank, so, sizeof so), shape_format(want, want_rank, sw, sizeof sw));
    /* the rule is symmetric */
    /* NOLINTNEXTLINE(readability-suspicious-call-argument): the operands swapped on purpose (broadcasting is symmetric) */
    ck_assert_int_eq(broadcast_shapes(b, b_rank, a, a_rank, out, &rank), 0);
    ck_assert_msg(shape_equal(out, rank, want, want_rank), "broadcast_shapes(%s, %s) is not symmetric", sb, sa);
}

static void expect_no_broadcast(const int64_t *a, int a_rank, const int64_t *b, int b_rank) {
    int64_t out[TENSOR_MAX_RANK];
    int rank;
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], msg[512];
    shape_format(a, a_rank, sa, sizeof sa);
    shape_format(b, b_rank, sb, sizeof sb);
    tensor_clear_error();
    ck_assert_msg(broadcast_shapes(a, a_rank, b, b_rank, out, &rank) == -1, "broadcast_shapes(%s, %s) should fail", sa,
                  sb);
    snprintf(msg, sizeof msg, "operands could not be broadcast together with shapes %s %s", sa, sb);
    EXPECT_ERROR(msg, "broadcast_shapes's message");
}

START_TEST(test_chapter_rules_table) {
    expect_broadcast(DIMS(2, 3), DIMS(3), DIMS(2, 3));
    expect_broadcast(DIMS(2, 3), DIMS(2, 1), DIMS(2, 3));
    expect_broadcast(DIMS(3), DIMS(1), DIMS(3));
    expect_no_broadcast(DIMS(2, 3), DIMS(2, 4));
}
END_TEST

START_TEST(test_numpy_scenarios) {
    /* seed 001's scenarios 1-4 */
    expect_broadcast(DIMS(2, 3), DIMS(2, 3), DIMS(2, 3));
    expect_broadcast(DIMS(3, 4), DIMS(4), DIMS(3, 4));
    expect_broadcast(DIMS(2, 1, 3), DIMS(4, 3), DIMS(2, 4, 3));
    expect_no_broadcast(DIMS(3, 2), DIMS(4, 2));
}
END_TEST

START_TEST(test_unravel_flat_index) {
    int64_t index[2];
    unravel_index(4, DIMS(2, 3), index); /* the chapter: flat 4 of [2,3] is (1,1) */
    ck_assert_int_eq(index[0], 1);
    ck_assert_int_eq(index[1], 1);
    unravel_index(5, DIMS(2, 3), index);
    ck_assert_int_eq(index[0], 1);
    ck_assert_int_eq(index[1], 2);
}
END_TEST

START_TEST(test_chapter_map_table) {
    int64_t map[6];
    ck_assert_int_eq(broadcast_map(DIMS(2, 3), DIMS(3), map), 0);
    const int64_t want[6] = {0, 1, 2, 0, 1, 2};
    for (int t = 0; t < 6; t++)
        ck_assert_msg(map[t] == want[t], "map[%d] = %lld, expected %lld", t, (long long)map[t], (long long)want[t]);
    ck_assert_int_eq(broadcast_map(DIMS(2, 3), DIMS(2, 1), map), 0);
    const int64_t rows[6] = {0, 0, 0, 1, 1, 1};
    for (int t = 0; t < 6; t++) ck_assert_int_eq(map[t], rows[t]);
    ck_assert_int_eq(broadcast_map(DIMS(2, 3), DIMS(4), map), -1);
}
END_TEST

/* ==== numpy's rule, beyond the chapter ==================================================== */

START_TEST(test_rule_edge_cases) {
    expect_broadcast(NULL, 0, NULL, 0, NULL, 0);       /* () & () */
    expect_broadcast(NULL, 0, DIMS(2, 3), DIMS(2, 3)); /* a scalar goes anywhere */
    expect_broadcast(DIMS(1), NULL, 0, DIMS(1));
    expect_broadcast(DIMS(0), DIMS(1), DIMS(0)); /* size 0 matches 1 ... */
    expect_broadcast(DIMS(0), DIMS(0), DIMS(0)); /* ... and 0 */
    expect_no_broadcast(DIMS(0), DIMS(2));       /* ... and nothing else */
    expect_broadcast(DIMS(2, 0), DIMS(1), DIMS(2, 0));
    expect_broadcast(DIMS(1, 0), DIMS(3, 1), DIMS(3, 0));
    expect_broadcast(DIMS(8, 1, 6, 1), DIMS(7, 1, 5), DIMS(8, 7, 6, 5)); /* numpy's docs */
    expect_broadcast(DIMS(5, 4), DIMS(1), DIMS(5, 4));
    expect_broadcast(DIMS(15, 3, 5), DIMS(15, 1, 5), DIMS(15, 3, 5));
    expect_broadcast(DIMS(1, 1, 1, 1), DIMS(2), DIMS(1, 1, 1, 2));
    expect_no_broadcast(DIMS(3), DIMS(4));
    expect_no_broadcast(DIMS(2, 1), DIMS(8, 4, 3));
    expect_no_broadcast(DIMS(2, 3, 4, 5), DIMS(2, 3, 1, 4));
    expect_no_broadcast(DIMS(4, 3), DIMS(4));
}
END_TEST

START_TEST(test_error_messages) {
    Tensor *a = tensor_zeros(test_ctx, DIMS(2, 3)), *b = tensor_zeros(test_ctx, DIMS(2, 4));
    tensor_clear_error();
    ck_assert_ptr_null(tensor_add(a, b));
    ck_assert_str_eq(tensor_error(), "add: operands could not be broadcast together with shapes (2,3) (2,4)");
    ck_assert_ptr_null(tensor_mul(tensor_zeros(test_ctx, DIMS(3, 2)), tensor_zeros(test_ctx, DIMS(4, 2))));
    ck_assert_str_eq(tensor_error(), "mul: operands could not be broadcast together with shapes (3,2) (4,2)");
    ck_assert_ptr_null(tensor_div(tensor_zeros(test_ctx, DIMS(3)), tensor_zeros(test_ctx, DIMS(4))));
    ck_assert_str_eq(tensor_error(), "div: operands could not be broadcast together with shapes (3,) (4,)");

    /* a chained expression reports the first thing that went wrong */
    tensor_clear_error();
    Tensor *bad = tensor_sub(a, b);
    Tensor *chained = tensor_pow_scalar(tensor_mul_scalar(tensor_add(bad, a), 2.0f), 2.0f);
    ck_assert_ptr_null(chained);
    ck_assert_ptr_null(tensor_sum(chained));
    ck_assert_str_eq(tensor_error(), "sub: operands could not be broadcast together with shapes (2,3) (2,4)");

    /* a NULL input with nothing recorded before names the op */
    tensor_clear_error();
    ck_assert_ptr_null(tensor_add(NULL, a));
    EXPECT_ERROR("add: input a is NULL", "NULL input");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_expand(NULL, DIMS(2)));
    EXPECT_ERROR("expand: input x is NULL", "NULL input");

    /* expand and sum_to_shape only go one way */
    ck_assert_ptr_null(tensor_expand(tensor_zeros(test_ctx, DIMS(3)), DIMS(1)));
    ck_assert_str_eq(tensor_error(), "expand: shape (3,) cannot be broadcast to (1,)");
    ck_assert_ptr_null(tensor_expand(tensor_zeros(test_ctx, DIMS(2, 3)), DIMS(3)));
    ck_assert_str_eq(tensor_error(), "expand: shape (2,3) cannot be broadcast to (3,)");
    ck_assert_ptr_null(tensor_sum_to_shape(a, DIMS(4)));
    EXPECT_ERROR("sum_to_shape: shape (4,) does not broadcast to the input's shape (2,3)", "sum_to_shape");
    ck_assert_ptr_null(tensor_expand(a, DIMS(1, 1, 1, 1, 1, 1, 1, 2, 3)));
    ck_assert_str_eq(tensor_error(), "expand: rank 9 is outside 0..8 (TENSOR_MAX_RANK)");
    ck_assert_ptr_null(tensor_expand(tensor_zeros(test_ctx, DIMS(1)), DIMS(-3)));
    ck_assert_str_eq(tensor_error(), "expand: negative dimensions are not allowed, got shape (-3,)");
    ck_assert_ptr_null(tensor_expand(tensor_zeros(test_ctx, DIMS(1)), DIMS(INT64_MAX, 4)));
    ck_assert_str_eq(tensor_error(), "expand: shape (9223372036854775807,4) has too many elements");
    ck_assert_ptr_null(tensor_sum_to_shape(a, DIMS(-1)));
    EXPECT_ERROR("sum_to_shape: negative dimensions", "a negative target dim");

    /* the pure shape functions check their arguments too */
    int64_t out[TENSOR_MAX_RANK];
    int out_rank;
    ck_assert_int_eq(broadcast_shapes(DIMS(-1), DIMS(1), out, &out_rank), -1);
    ck_assert_str_eq(tensor_error(), "broadcast_shapes: negative dimensions are not allowed, got shape (-1,)");
    ck_assert_int_eq(broadcast_shapes(NULL, 2, DIMS(1), out, &out_rank), -1);
    ck_assert_str_eq(tensor_error(), "broadcast_shapes: shape is NULL for rank 2");
    ck_assert_int_eq(broadcast_shapes(DIMS(2), DIMS(1), NULL, NULL), -1);
    ck_assert_int_eq(broadcast_strides(DIMS(2), NULL, DIMS(2), out), -1);
    ck_assert_int_eq(broadcast_map(DIMS(2), DIMS(3), NULL), -1);

    /* tensors from different contexts do not mix */
    Ctx *other = ctx_new();
    ck_assert_ptr_null(tensor_add(a, tensor_zeros(other, DIMS(2, 3))));
    EXPECT_ERROR("add: a and b belong to different contexts", "two contexts");
    ctx_free(other);
}
END_TEST

/* ==== views ============================================================================== */

START_TEST(test_expand_is_a_view) {
    Tensor *b = tensor_from(test_ctx, DIMS(3), VALUES(10, 20, 30));
    size_t before = ctx_bytes(test_ctx);
    Tensor *wide = EXPECT_OK(tensor_expand(b, DIMS(1000, 3)));
    ck_assert_msg(ctx_bytes(test_ctx) - before < 1000, "expand allocated %zu bytes: it must copy nothing",
                  ctx_bytes(test_ctx) - before);
    ck_assert_ptr_eq(wide->storage, b->storage);
    ck_assert(wide->is_view);
    ck_assert_int_eq(wide->strides[0], 0); /* the broadcast dim */
    ck_assert_int_eq(wide->strides[1], 1);
    ck_assert(!tensor_is_contiguous(wide));
    int64_t index[2] = {999, 2};
    ck_assert_float_eq(tensor_get(wide, index), 30.0f);

    /* (2,1) -> (2,3): the size-1 dim gets stride 0, the matching one keeps its stride */
    Tensor *col = tensor_from(test_ctx, DIMS(2, 1), VALUES(1, 2));
    Tensor *cols = EXPECT_OK(tensor_expand(col, DIMS(4, 2, 3)));
    ck_assert_int_eq(cols->strides[0], 0);
    ck_assert_int_eq(cols->strides[1], 1);
    ck_assert_int_eq(cols->strides[2], 0);
    EXPECT_VALUES(tensor_contiguous(cols),
                  VALUES(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2), 0,
                  "contiguous copy of (2,1) expanded to (4,2,3)");

    /* a scalar expands to anything, with all strides 0 */
    Tensor *s = tensor_scalar(test_ctx, 7);
    Tensor *sv = EXPECT_OK(tensor_expand(s, DIMS(2, 2)));
    ck_assert_int_eq(sv->strides[0], 0);
    ck_assert_int_eq(sv->strides[1], 0);
    EXPECT_VALUES(sv, VALUES(7, 7, 7, 7), 0, "scalar expanded");
}
END_TEST

START_TEST(test_map_and_strides_agree) {
    /* The index map and the stride-0 view address the same source element, everywhere. */
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 300; trial++) {
        int64_t target[4], src[4], src_strides[4], strides[4], index[4];
        int target_rank = (int)rng_int(&rng, 0, 4), src_rank = (int)rng_int(&rng, 0, target_rank);
        random_shape(&rng, target_rank, 1, 4, target);
        for (int d = 0; d < src_rank; d++) src[d] = rng_int(&rng, 0, 1) ? 1 : target[target_rank - src_rank + d];
        int64_t n = shape_numel(target, target_rank), map[256];
        ck_assert_int_eq(broadcast_map(target, target_rank, src, src_rank, map), 0);
        contiguous_strides(src, src_rank, src_strides);
        ck_assert_int_eq(broadcast_strides(src, src_rank, src_strides, target, target_rank, strides), 0);
        for (int64_t t = 0; t < n; t++) {
            unravel_index(t, target, target_rank, index);
            int64_t offset = 0;
            for (int d = 0; d < target_rank; d++) offset += index[d] * strides[d];
            ck_assert_msg(offset == map[t], "COURSE_SEED=%llu case %d: element %lld: map says %lld, strides say %lld",
                          (unsigned long long)seed, trial, (long long)t, (long long)map[t], (long long)offset);
        }
    }
}
END_TEST

START_TEST(test_sum_to_shape_values) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    EXPECT_VALUES(tensor_sum_to_shape(x, DIMS(3)), VALUES(5, 7, 9), 0, "column sums");
    EXPECT_VALUES(tensor_sum_to_shape(x, DIMS(1, 3)), VALUES(5, 7, 9), 0, "column sums, keeping the dim");
    EXPECT_VALUES(tensor_sum_to_shape(x, DIMS(2, 1)), VALUES(6, 15), 0, "row sums");
    EXPECT_VALUES(tensor_sum_to_shape(x, DIMS(2, 3)), VALUES(1, 2, 3, 4, 5, 6), 0, "nothing summed");
    Tensor *total = EXPECT_OK(tensor_sum(x));
    ck_assert_int_eq(total->rank, 0);
    ck_assert_float_eq(tensor_item(total), 21.0f);
    /* an empty tensor sums to 0 */
    EXPECT_VALUES(tensor_sum(tensor_zeros(test_ctx, DIMS(0, 3))), VALUES(0), 0, "sum of a (0,3) tensor");
    EXPECT_VALUES(tensor_sum_to_shape(tensor_zeros(test_ctx, DIMS(0, 3)), DIMS(3)), VALUES(0, 0, 0), 0,
                  "(0,3) -> (3,)");
    /* a view: the sum of a stride-0 view counts each copy */
    Tensor *wide = tensor_expand(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)), DIMS(4, 3));
    EXPECT_VALUES(tensor_sum(wide), VALUES(24), 0, "sum of (3,) expanded to (4,3)");
}
END_TEST

START_TEST(test_zero_size_and_scalars) {
    Tensor *empty = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(0, 3)));
    Tensor *row = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)));
    Tensor *c = EXPECT_OK(tensor_add(empty, row));
    EXPECT_SHAPE(c, DIMS(0, 3), "(0,3) + (3,)");
    ck_assert_int_eq(tensor_backward(tensor_sum(c)), 0);
    EXPECT_VALUES(tensor_grad(row), VALUES(0, 0, 0), 0, "the gradient through zero rows");

    Tensor *s = tensor_requires_grad(tensor_scalar(test_ctx, 3));
    Tensor *t = tensor_requires_grad(tensor_scalar(test_ctx, 4));
    Tensor *p = EXPECT_OK(tensor_mul(s, t));
    ck_assert_int_eq(p->rank, 0);
    ck_assert_int_eq(tensor_backward(p), 0);
    ck_assert_float_eq(tensor_item(tensor_grad(s)), 4.0f);
    ck_assert_float_eq(tensor_item(tensor_grad(t)), 3.0f);
}
END_TEST

START_TEST(test_numeric_edge_values) {
    /* IEEE, as numpy: x/0 is +-inf, 0/0 is nan; nan propagates */
    Tensor *x = tensor_from(test_ctx, DIMS(3), VALUES(1, -1, 0));
    EXPECT_VALUES(tensor_div(x, tensor_scalar(test_ctx, 0)), VALUES(INFINITY, -INFINITY, NAN), 0, "x / 0");
    EXPECT_VALUES(tensor_add_scalar(x, NAN), VALUES(NAN, NAN, NAN), 0, "x + nan");
    EXPECT_VALUES(tensor_pow_scalar(x, 2), VALUES(1, 1, 0), 0, "x ^ 2");
    EXPECT_VALUES(tensor_pow_scalar(x, 0), VALUES(1, 1, 1), 0, "x ^ 0");
}
END_TEST

/* ==== gradients ========================================================================== */

typedef Tensor *(*BinaryFn)(Tensor *, Tensor *);
static Tensor *call_binary(Tensor *const *in, void *fn) { return (*(BinaryFn *)fn)(in[0], in[1]); }

static void gradcheck_binary(BinaryFn fn, const char *name, const int64_t *a_shape, int a_rank, const int64_t *b_shape,
                             int b_rank, uint64_t seed) {
    Rng rng = rng_seeded(seed);
    /* inputs kept away from 0 so that div's gradient is well conditioned */
    Tensor *a = tensor_requires_grad(random_tensor(test_ctx, &rng, a_shape, a_rank, 0.5f, 2.0f));
    Tensor *b = tensor_requires_grad(random_tensor(test_ctx, &rng, b_shape, b_rank, 0.5f, 2.0f));
    char report[512], sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX];
    GradcheckOptions opt = {1e-3, 1e-2, 1e-2, seed};
    int status = gradcheck(call_binary, &fn, (Tensor *[]){a, b}, 2, &opt, report, sizeof report);
    ck_assert_msg(status == 0, "%s kernels: %s with shapes %s %s: %s", kernels_name(), name,
                  shape_format(a_shape, a_rank, sa, sizeof sa), shape_format(b_shape, b_rank, sb, sizeof sb), report);
}

/* Under every setting of COURSE_KERNELS: the reference kernels (broadcast.c's loops) and the
 * fast ones each get their gradients checked. */
START_TEST(test_gradcheck_binary_ops) {
    /* cppcheck-suppress uninitvar ; cppcheck 2.10 misreads an array of function pointers initialised with functions */
    const BinaryFn fns[] = {tensor_add, tensor_sub, tensor_mul, tensor_div};
    const char *names[] = {"add", "sub", "mul", "div"};
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        use_kernels(*mode);
        for (int k = 0; k < 4; k++) {
            gradcheck_binary(fns[k], names[k], DIMS(2, 3), DIMS(2, 3), 1);
            gradcheck_binary(fns[k], names[k], DIMS(2, 3), DIMS(3), 2);
            gradcheck_binary(fns[k], names[k], DIMS(3), DIMS(2, 3), 3);
            gradcheck_binary(fns[k], names[k], DIMS(2, 1, 3), DIMS(4, 3), 4);
            gradcheck_binary(fns[k], names[k], DIMS(3, 1), DIMS(1, 4), 5);
            gradcheck_binary(fns[k], names[k], NULL, 0, DIMS(2, 2), 6);
            gradcheck_binary(fns[k], names[k], DIMS(2, 1, 3, 1), DIMS(2, 1, 2), 7);
        }
    }
}
END_TEST

static Tensor *fn_expand(Tensor *const *in, void *shape) { return tensor_expand(in[0], (const int64_t *)shape, 3); }
static Tensor *fn_sum_to(Tensor *const *in, void *shape) {
    return tensor_sum_to_shape(in[0], (const int64_t *)shape, 2);
}
static Tensor *fn_sum(Tensor *const *in, void *arg) { return (void)arg, tensor_sum(in[0]); }
static Tensor *fn_add_scalar(Tensor *const *in, void *arg) { return (void)arg, tensor_add_scalar(in[0], 1.5f); }
static Tensor *fn_mul_scalar(Tensor *const *in, void *arg) { return (void)arg, tensor_mul_scalar(in[0], -2.5f); }
static Tensor *fn_pow(Tensor *const *in, void *p) { return tensor_pow_scalar(in[0], *(float *)p); }
static Tensor *fn_contiguous(Tensor *const *in, void *arg) {
    return (void)arg, tensor_contiguous(tensor_expand(in[0], DIMS(2, 3)));
}
/* expand then a weighted reduction, through views both ways */
static Tensor *fn_views(Tensor *const *in, void *arg) {
    (void)arg;
    Tensor *wide = tensor_expand(in[0], DIMS(4, 2, 3));
    return tensor_sum_to_shape(tensor_mul(wide, in[1]), DIMS(2, 1));
}

static void expect_gradcheck(GradcheckFn fn, void *arg, Tensor *const *inputs, int n, const char *what) {
    char report[512];
    GradcheckOptions opt = {1e-3, 1e-2, 1e-2, test_seed()};
    ck_assert_msg(gradcheck(fn, arg, inputs, n, &opt, report, sizeof report) == 0, "%s: %s", what, report);
}

START_TEST(test_gradcheck_unary_ops) {
    Rng rng = rng_seeded(test_seed());
    Tensor *x = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3), 0.5f, 2.0f));
    Tensor *col = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 1), -1, 1));
    Tensor *y = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(4, 2, 3), -1, 1));
    int64_t wide[3] = {4, 2, 3}, rows[2] = {2, 1}, cols[2] = {1, 3};
    expect_gradcheck(fn_expand, wide, (Tensor *[]){col}, 1, "expand (2,1) -> (4,2,3)");
    expect_gradcheck(fn_sum_to, rows, (Tensor *[]){x}, 1, "sum_to_shape (2,3) -> (2,1)");
    expect_gradcheck(fn_sum_to, cols, (Tensor *[]){x}, 1, "sum_to_shape (2,3) -> (1,3)");
    expect_gradcheck(fn_sum, NULL, (Tensor *[]){y}, 1, "sum");
    expect_gradcheck(fn_add_scalar, NULL, (Tensor *[]){x}, 1, "add_scalar");
    expect_gradcheck(fn_mul_scalar, NULL, (Tensor *[]){x}, 1, "mul_scalar");
    float powers[] = {2.0f, 3.0f, 0.5f, -1.0f, 0.0f};
    for (int k = 0; k < 5; k++) expect_gradcheck(fn_pow, &powers[k], (Tensor *[]){x}, 1, "pow_scalar");
    expect_gradcheck(fn_contiguous, NULL,
                     (Tensor *[]){tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3), -1, 1))}, 1,
                     "contiguous of an expanded view");
    expect_gradcheck(fn_views, NULL, (Tensor *[]){x, y}, 2, "expand, mul, sum_to_shape");
}
END_TEST

/* expand's backward writes into x's gradient, which is contiguous in x's shape, whatever x's
 * own layout: its strides are the gradient's, not x's data strides. Two views whose data
 * strides differ from their gradient's, (3,2) read down the columns of a (2,3) and (3,2) cut
 * from the columns of a (3,3), are expanded to (4,3,2); each element's gradient is the sum of
 * the upstream over the 4 copies, worked out here by a plain loop. */
START_TEST(test_expand_backward_of_views) {
    Rng rng = rng_seeded(test_seed());
    Tensor *data = random_tensor(test_ctx, &rng, DIMS(9), -1, 1);
    const struct {
        const char *what;
        int64_t strides[2];
    } views[] = {{"a transposed view, strides (1,3)", {1, 3}}, {"a column slice, strides (3,1)", {3, 1}}};
    for (int v = 0; v < 2; v++) {
        Tensor *x = EXPECT_OK(tensor_as_strided(data, DIMS(3, 2), views[v].strides, 0));
        x->requires_grad = true; /* a raw view has no backward: its own gradient is checked */
        Tensor *upstream = random_tensor(test_ctx, &rng, DIMS(4, 3, 2), -1, 1);
        ck_assert_int_eq(tensor_backward_from(EXPECT_OK(tensor_expand(x, DIMS(4, 3, 2))), upstream), 0);
        float want[6] = {0};
        for (int b = 0; b < 4; b++)
            for (int i = 0; i < 6; i++) want[i] += tensor_data(upstream)[b * 6 + i];
        EXPECT_VALUES_ARRAY(tensor_grad(x), want, 6, 1e-6f, views[v].what);
    }
}
END_TEST

START_TEST(test_same_tensor_twice) {
    /* x * x: both paths add into x's gradient, 2x */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(x, x))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2, 4, 6), 0, "d sum(x*x) / dx");

    /* x + x broadcast against itself as a column: (3,) + (3,1) -> (3,3) */
    tensor_zero_grad(x);
    Tensor *column = tensor_expand(x, DIMS(1, 3));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_add(x, tensor_sum_to_shape(column, DIMS(3))))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2, 2, 2), 0, "d sum(x + x) / dx");

    /* a shared subexpression: y = a * b used twice, loss = sum(y * y + y) */
    Tensor *a = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(1, 2)));
    Tensor *b = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(3, 4)));
    Tensor *y = tensor_mul(a, b);
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_add(tensor_mul(y, y), y))), 0);
    /* d/dy (y^2 + y) = 2y + 1 = [7, 17]; times b = [21, 68]; times a = [7, 34] */
    EXPECT_VALUES(tensor_grad(a), VALUES(21, 68), 0, "a.grad through a shared subexpression");
    EXPECT_VALUES(tensor_grad(b), VALUES(7, 34), 0, "b.grad through a shared subexpression");

    /* z * z, z = a * b an intermediate that nothing has reached before: a gradient nothing has
     * reached is stored, not added to, but not when both inputs are z (two terms an element) */
    tensor_zero_grad(a), tensor_zero_grad(b);
    Tensor *z = tensor_mul(a, b);
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(z, z))), 0);
    /* d/dz z^2 = 2z = [6, 16]; times b = [18, 64]; times a = [6, 32] */
    EXPECT_VALUES(tensor_grad(a), VALUES(18, 64), 0, "a.grad of sum(z * z), z = a * b");
    EXPECT_VALUES(tensor_grad(b), VALUES(6, 32), 0, "b.grad of sum(z * z), z = a * b");

    /* m + r with r = 2a broadcast down 3 rows: r's gradient, reached first here, sums 3 terms
     * an element, so it is never stored */
    tensor_zero_grad(a);
    Tensor *m = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_add(m, tensor_mul_scalar(a, 2)))), 0);
    EXPECT_VALUES(tensor_grad(a), VALUES(6, 6), 0, "a.grad of sum(m + 2a), 2a broadcast down 3 rows");
}
END_TEST

START_TEST(test_only_some_inputs_need_grad) {
    Tensor *w = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)));
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 1, 1, 2, 2, 2));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(x, w))), 0);
    EXPECT_VALUES(tensor_grad(w), VALUES(3, 3, 3), 0, "w.grad");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_grad(x));
    EXPECT_ERROR("does not require grad", "the gradient of a constant");
}
END_TEST

/* ==== random shapes and views against a naive loop ======================================= */

/* A random view of a fresh tensor: plain, transposed (strides reversed), offset into a
 * larger storage, or expanded from size-1 dims. */
static Tensor *random_view(Rng *rng, const int64_t *shape, int rank, char *kind, size_t kind_size) {
    int choice = (int)rng_int(rng, 0, 3);
    if (choice == 0 || rank == 0) {
        snprintf(kind, kind_size, "contiguous");
        return random_tensor(test_ctx, rng, shape, rank, -2, 2);
    }
    if (choice == 1) { /* a transposed base, permuted back by strides */
        int64_t reversed[TENSOR_MAX_RANK] = {0}, base_strides[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
        for (int d = 0; d < rank; d++) reversed[d] = shape[rank - 1 - d];
        Tensor *base = random_tensor(test_ctx, rng, reversed, rank, -2, 2);
        contiguous_strides(reversed, rank, base_strides);
        for (int d = 0; d < rank; d++) strides[d] = base_strides[rank - 1 - d];
        snprintf(kind, kind_size, "transposed");
        return tensor_as_strided(base, shape, rank, strides, 0);
    }
    if (choice == 2) { /* every element of a bigger storage, skipping some at the front */
        int64_t n = shape_numel(shape, rank), strides[TENSOR_MAX_RANK];
        Tensor *base = random_tensor(test_ctx, rng, DIMS(2 * n + 3), -2, 2);
        contiguous_strides(shape, rank, strides);
        for (int d = 0; d < rank; d++) strides[d] *= 2;
        snprintf(kind, kind_size, "offset 3, stride x2");
        return tensor_as_strided(base, shape, rank, strides, 3);
    }
    /* expanded: the last dim comes from a size-1 dim */
    int64_t small[TENSOR_MAX_RANK];
    memcpy(small, shape, (size_t)rank * sizeof *small);
    small[rank - 1] = 1;
    snprintf(kind, kind_size, "expanded");
    return tensor_expand(random_tensor(test_ctx, rng, small, rank, -2, 2), shape, rank);
}

/* The naive reference: for each output index, find each input's element by hand. */
static float naive_read(const Tensor *t, const int64_t *out_index, int out_rank) {
    int64_t index[TENSOR_MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
        int64_t i = out_index[out_rank - t->rank + d];
        index[d] = t->shape[d] == 1 ? 0 : i;
    }
    return tensor_get(t, index);
}

START_TEST(test_random_against_naive) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 200; trial++) {
        int64_t out_shape[4], a_shape[4], b_shape[4];
        int rank = (int)rng_int(&rng, 0, 4);
        random_shape(&rng, rank, 0, 3, out_shape);
        int a_rank = (int)rng_int(&rng, 0, rank), b_rank = (int)rng_int(&rng, 0, rank);
        for (int d = 0; d < a_rank; d++) a_shape[d] = rng_int(&rng, 0, 2) ? out_shape[rank - a_rank + d] : 1;
        for (int d = 0; d < b_rank; d++) b_shape[d] = rng_int(&rng, 0, 2) ? out_shape[rank - b_rank + d] : 1;
        char ka[32], kb[32], sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], context[256];
        Tensor *a = tensor_requires_grad(random_view(&rng, a_shape, a_rank, ka, sizeof ka));
        Tensor *b = tensor_requires_grad(random_view(&rng, b_shape, b_rank, kb, sizeof kb));
        snprintf(context, sizeof context, "COURSE_SEED=%llu case %d: %s (%s) * %s (%s)", (unsigned long long)seed,
                 trial, shape_format(a_shape, a_rank, sa, sizeof sa), ka, shape_format(b_shape, b_rank, sb, sizeof sb),
                 kb);
        ck_assert_msg(a && b, "%s: %s", context, tensor_error());
        Tensor *c = tensor_mul(a, b);
        ck_assert_msg(c != NULL, "%s: %s", context, tensor_error());

        /* forward, and the gradient of sum(w * c) with a random w, by the naive loop */
        Tensor *w = random_tensor(test_ctx, &rng, c->shape, c->rank, -1, 1);
        int64_t n = tensor_numel(c), index[TENSOR_MAX_RANK];
        float *ga = calloc((size_t)tensor_numel(a) + 1, sizeof(float)),
              *gb = calloc((size_t)tensor_numel(b) + 1, sizeof(float));
        for (int64_t t = 0; t < n; t++) {
            unravel_index(t, c->shape, c->rank, index);
            float x = naive_read(a, index, c->rank), y = naive_read(b, index, c->rank), wt = tensor_data(w)[t];
            ck_assert_msg(fabsf(tensor_get(c, index) - x * y) <= 1e-6f, "%s: forward element %lld is %g, expected %g",
                          context, (long long)t, (double)tensor_get(c, index), (double)(x * y));
            /* the element of a (b) this output read, as a flat index of a's own shape */
            int64_t fa = 0, fb = 0;
            for (int d = 0; d < a->rank; d++)
                fa = fa * a->shape[d] + (a->shape[d] == 1 ? 0 : index[c->rank - a->rank + d]);
            for (int d = 0; d < b->rank; d++)
                fb = fb * b->shape[d] + (b->shape[d] == 1 ? 0 : index[c->rank - b->rank + d]);
            ga[fa] += wt * y;
            gb[fb] += wt * x;
        }
        ck_assert_msg(tensor_backward(tensor_sum(tensor_mul(w, c))) == 0, "%s: %s", context, tensor_error());
        char what[300];
        snprintf(what, sizeof what, "%s: a.grad", context);
        EXPECT_VALUES_ARRAY(tensor_grad(a), ga, tensor_numel(a), 1e-5f, what);
        snprintf(what, sizeof what, "%s: b.grad", context);
        EXPECT_VALUES_ARRAY(tensor_grad(b), gb, tensor_numel(b), 1e-5f, what);
        free(ga);
        free(gb);
    }
}
END_TEST

/* ==== the fast paths on large views ======================================================= */

/* A view of shape `shape` over a fresh random tensor, in a layout large enough for the core to
 * cut into tiles: its dims stored in reverse order (a transpose), optionally walked backwards
 * (negative strides) and offset into a padded storage. */
static Tensor *transposed_view(Rng *rng, const int64_t *shape, int rank, bool flipped) {
    int64_t strides[TENSOR_MAX_RANK], step = 1, lo = 0, hi = 0;
    for (int d = 0; d < rank; d++) { /* dim 0 varies fastest in memory, with a gap of 1 after each dim */
        strides[d] = flipped ? -step : step;
        int64_t reach = strides[d] * (shape[d] > 0 ? shape[d] - 1 : 0);
        if (reach > 0) hi += reach;
        else lo += reach;
        step *= shape[d] + 1;
    }
    Tensor *base = random_tensor(test_ctx, rng, DIMS(hi - lo + 3), 0.5f, 2.0f);
    return tensor_as_strided(base, shape, rank, strides, 2 - lo);
}

/* add, sub, mul and div of large transposed, flipped, offset and expanded operands, and
 * sum_to_shape of a transposed one, against reading every element by hand; each case under
 * the next COURSE_KERNELS setting in turn (reference, portable, native). */
START_TEST(test_tiled_ops_against_naive) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    /* cppcheck-suppress uninitvar ; as in test_gradcheck_binary_ops: initialised right here */
    Tensor *(*const ops[4])(Tensor *, Tensor *) = {tensor_add, tensor_sub, tensor_mul, tensor_div};
    const char *names[4] = {"add", "sub", "mul", "div"};
    const char *const *modes = test_kernel_modes();
    int n_modes = 0;
    while (modes[n_modes]) n_modes++;
    ck_assert_int_gt(n_modes, 0);
    for (int trial = 0; trial < 60; trial++) {
        const char *kernels = use_kernels(modes[trial % n_modes]);
        int rank = (int)rng_int(&rng, 2, 3);
        int64_t shape[3], b_shape[3];
        for (int d = 0; d < rank; d++)
            shape[d] = rng_int(&rng, 0, 5) == 0 ? rng_int(&rng, 0, 1) : rng_int(&rng, 2, 150);
        if (rank == 3) shape[0] = rng_int(&rng, 1, 3);
        int b_kind = (int)rng_int(&rng, 0, 3); /* b: transposed too, a row (expanded), a column, contiguous */
        for (int d = 0; d < rank; d++) b_shape[d] = shape[d];
        if (b_kind == 1) b_shape[rank - 2] = 1;
        if (b_kind == 2) b_shape[rank - 1] = 1;
        Tensor *a = transposed_view(&rng, shape, rank, trial % 4 >= 2);
        Tensor *b = b_kind == 0 ? transposed_view(&rng, b_shape, rank, trial % 3 == 0)
                                : random_tensor(test_ctx, &rng, b_shape, rank, 0.5f, 2.0f);
        char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX];
        bool swapped = trial % 5 >= 3; /* the transposed operand on the right: op(b, a) */
        for (int k = 0; k < 4; k++) {
            Tensor *c = swapped ? ops[k](b, a) : ops[k](a, b);
            ck_assert_msg(c != NULL, "%s: %s", names[k], tensor_error());
            int64_t n = tensor_numel(c), index[3];
            for (int64_t t = 0; t < n; t++) {
                unravel_index(t, c->shape, c->rank, index);
                float x = naive_read(a, index, rank), y = naive_read(b, index, rank);
                if (swapped) {
                    float u = x;
                    x = y;
                    y = u;
                }
                float want = k == 0 ? x + y : k == 1 ? x - y : k == 2 ? x * y : x / y;
                if (tensor_data(c)[t] != want)
                    ck_abort_msg("COURSE_SEED=%llu case %d (%s kernels): %s(%s): a is %s transposed%s, b is %s %s: "
                                 "element %lld is %g, expected %g",
                                 (unsigned long long)seed, trial, kernels, names[k], swapped ? "b, a" : "a, b",
                                 shape_format(shape, rank, sa, sizeof sa), trial % 4 >= 2 ? " and flipped" : "",
                                 shape_format(b_shape, rank, sb, sizeof sb), b_kind == 0 ? "transposed" : "contiguous",
                                 (long long)t, (double)tensor_data(c)[t], (double)want);
            }
        }
        /* sum_to_shape of the transposed a onto its last dim: a reduction through tiles */
        Tensor *s = tensor_sum_to_shape(a, shape + rank - 1, 1);
        ck_assert_msg(s != NULL, "sum_to_shape: %s", tensor_error());
        for (int64_t j = 0; j < shape[rank - 1]; j++) {
            double want = 0;
            int64_t index[3] = {0, 0, 0};
            for (int64_t i = 0; i < tensor_numel(a) / shape[rank - 1]; i++) {
                unravel_index(i * shape[rank - 1] + j, shape, rank, index);
                want += tensor_get(a, index);
            }
            if (fabs(tensor_data(s)[j] - want) > 1e-4 * (1 + fabs(want)))
                ck_abort_msg("COURSE_SEED=%llu case %d (%s kernels): sum_to_shape(%s transposed) element %lld is %g, "
                             "expected %g",
                             (unsigned long long)seed, trial, kernels, shape_format(shape, rank, sa, sizeof sa),
                             (long long)j, (double)tensor_data(s)[j], want);
        }
    }
}
END_TEST

/* A tiled result of more than 16 MB is streamed past the cache by the fast path: sub and div
 * (the order matters) of a transposed (2100,2100) with a row on either side, with a contiguous
 * operand on either side (two passes), with another transposed one, flipped (both inputs
 * copied into tiles), and after an (R,1) column. Against reading every element by hand. */
static void check_large_tiled_ops(const char *mode) {
    const char *kernels = use_kernels(mode);
    Rng rng = rng_seeded(test_seed());
    const int64_t n = 2100, shape[2] = {n, n};
    Tensor *a = transposed_view(&rng, shape, 2, false);
    Tensor *row = random_tensor(test_ctx, &rng, DIMS(n), 0.5f, 2.0f);
    Tensor *plain = random_tensor(test_ctx, &rng, DIMS(n, n), 0.5f, 2.0f);
    Tensor *other = transposed_view(&rng, shape, 2, true),
           *column = random_tensor(test_ctx, &rng, DIMS(n, 1), 0.5f, 2.0f);
    struct {
        Tensor *x, *y;
        const char *what;
    } cases[] = {{a, row, "a transposed - a row"},
                 {row, a, "a row - a transposed"},
                 {plain, a, "contiguous - a transposed"},
                 {a, plain, "a transposed - contiguous"},
                 {a, other, "a transposed - another, flipped"},
                 {column, a, "an (R,1) column - a transposed"}};
    for (int c = 0; c < 6; c++)
        for (int k = 0; k < 2; k++) {
            Tensor *out = k == 0 ? tensor_sub(cases[c].x, cases[c].y) : tensor_div(cases[c].x, cases[c].y);
            ck_assert_msg(out != NULL, "%s", tensor_error());
            int64_t index[2];
            for (index[0] = 0; index[0] < n; index[0]++)
                for (index[1] = 0; index[1] < n; index[1]++) {
                    float x = naive_read(cases[c].x, index, 2), y = naive_read(cases[c].y, index, 2);
                    float want = k == 0 ? x - y : x / y, got = tensor_data(out)[index[0] * n + index[1]];
                    if (got != want)
                        ck_abort_msg("%s of (%lld,%lld), %s kernels: %s: element [%lld,%lld] is %g, expected %g",
                                     k ? "div" : "sub", (long long)n, (long long)n, kernels, cases[c].what,
                                     (long long)index[0], (long long)index[1], (double)got, (double)want);
                }
        }
}

/* (Not under "native" where that differs from "avx2": it adds AVX-512 to lesson 6 alone.) */
START_TEST(test_large_tiled_ops_stream) {
    for (const char *const *mode = test_kernel_modes(); *mode; mode++)
        if (strcmp(*mode, "reference") != 0 && strcmp(*mode, "native") != 0) check_large_tiled_ops(*mode);
}
END_TEST

/* The sum of 4M floats, contiguous and through views that walk the same storage backwards or
 * transposed, against the exact sum (the values are multiples of 1/8 below 128, so a double
 * adds them exactly). The fast paths add in chunks; eight float running sums over the whole
 * tensor drift by about 1e-5 here, and the reference's one running sum, the chapter's loop,
 * further still (docs/2-reduce.md), so it is not held to this. */
static void check_sum_large(const char *mode) {
    const char *kernels = use_kernels(mode);
    const int64_t r = 2048, c = 2048, n = r * c;
    Tensor *base = tensor_zeros(test_ctx, DIMS(r, c));
    float *v = tensor_data(base);
    double exact = 0.0;
    /* random multiples of 1/8 below 128: no pattern that would make two parts of the tensor
     * sum alike, so a part added twice, or left out, shows */
    Rng rng = rng_seeded(test_seed());
    for (int64_t i = 0; i < n; i++) exact += v[i] = (float)rng_int(&rng, 0, 1023) * 0.125f;
    struct {
        Tensor *x;
        const char *what;
    } views[] = {
        {base, "contiguous"},
        {tensor_as_strided(base, DIMS(r, c), STRIDES(-c, -1), n - 1), "both dims reversed"},
        {tensor_as_strided(base, DIMS(r, c), STRIDES(c, -1), c - 1), "each row reversed"},
        {tensor_as_strided(base, DIMS(c, r), STRIDES(1, c), 0), "transposed"},
    };
    for (int k = 0; k < 4; k++) {
        Tensor *sum = tensor_sum(views[k].x);
        ck_assert_msg(sum != NULL, "%s", tensor_error());
        double got = tensor_item(sum), error = fabs(got - exact) / exact;
        ck_assert_msg(error < 1e-6, "sum of (%lld,%lld), %s, %s kernels: %.1f, exact %.1f (relative error %.1e)",
                      (long long)r, (long long)c, views[k].what, kernels, got, exact, error);
    }
}

START_TEST(test_sum_large_and_reversed) {
    for (const char *const *mode = test_kernel_modes(); *mode; mode++)
        if (strcmp(*mode, "reference") != 0 && strcmp(*mode, "native") != 0) check_sum_large(*mode);
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("lesson 1: broadcasting");
    TCase *chapter = add_test_case(s, "chapter");
    add_test(chapter, test_broadcast_add);
    add_test(chapter, test_linear_layer_bias);
    add_test(chapter, test_chapter_exercise_one);
    add_test(chapter, test_chapter_rules_table);
    add_test(chapter, test_numpy_scenarios);
    add_test(chapter, test_unravel_flat_index);
    add_test(chapter, test_chapter_map_table);
    TCase *rule = add_test_case(s, "rule and errors");
    add_test(rule, test_rule_edge_cases);
    add_test(rule, test_error_messages);
    TCase *views = add_test_case(s, "views and values");
    add_test(views, test_expand_is_a_view);
    add_test(views, test_map_and_strides_agree);
    add_test(views, test_sum_to_shape_values);
    add_test(views, test_zero_size_and_scalars);
    add_test(views, test_numeric_edge_values);
    TCase *grads = add_test_case(s, "gradients");
    add_test(grads, test_gradcheck_binary_ops);
    add_test(grads, test_gradcheck_unary_ops);
    add_test(grads, test_expand_backward_of_views);
    add_test(grads, test_same_tensor_twice);
    add_test(grads, test_only_some_inputs_need_grad);
    TCase *random = add_large_test_case(s, "random");
    tcase_set_timeout(random, 30);
    add_test(random, test_random_against_naive);
    add_test(random, test_tiled_ops_against_naive);
    add_test(random, test_large_tiled_ops_stream);
    add_test(random, test_sum_large_and_reversed);
    return run_core_tests(argc, argv, s);
}
