/*
 * test_bad_input.c - bad inputs: every public function of the tensor core and of the six
 * lessons against the inputs people get wrong: NULL tensors and pointers, wrong ranks, shapes
 * that do not fit, indices and axes out of range, invalid permutations, ranks above the
 * maximum, zero-size dims, sizes that overflow, NaN and infinities, and misuse of backward.
 *
 * Lesson 7 (train.h) adds its layers, the causal mask and the model: the same checks, and for
 * the model a config, a T or an optimizer setting it cannot take. Below the ops: the core's
 * loops and array functions, the gradient checker, and every fast path called directly with
 * what no op gives it (it hands the work back).
 *
 * Each test is one row of docs/bad-inputs.md. A call that must fail is checked three ways: it
 * returns NULL (or -1, or NaN), it records exactly the documented message, and it has no side
 * effect: it allocates nothing in the context (so it made no tensor and left no half-recorded
 * node on the tape), and the tensors every test watches (a leaf, a view of it and a loss, with
 * gradients) keep their shape, strides, values, gradients and place on the tape. Each test ends
 * by running backward through the watched loss again. A call that must succeed with a documented
 * number (the mean of nothing is nan) is checked for the number and for recording no error.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmm.h"
#include "broadcast.h"
#include "data.h"
#include "gather.h"
#include "harness.h"
#include "kernels.h"
#include "kernels_fast.h"
#include "permute.h"
#include "reduce.h"
#include "run.h"
#include "softmax.h"
#include "train.h"

/* Under SANITIZE=1, AddressSanitizer aborts on an allocation it cannot serve unless told to
 * return NULL as malloc does; the out-of-memory row needs the library to see that NULL. This
 * replaces the harness's (weak) options, so it repeats them: its exit code for a report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "exitcode=87:allocator_may_return_null=1"; }

#define BIG (INT64_C(1) << 40) /* BIG * BIG overflows int64 */

/* ==== what a failed call must leave behind: nothing ========================================= */

/* A tensor a test watches: its header, and copies of its storage and its gradient. */
typedef struct {
    const Tensor *t;
    Tensor header;
    int64_t size;
    const float *data;
    const Tensor *grad;
    const float *grad_data;
} Watched;

enum { MAX_WATCHED = 8 };
static Watched watched[MAX_WATCHED];
static int n_watched;

static const float *copy_of(const Storage *st) {
    float *copy = ctx_alloc(test_ctx, (size_t)st->size * sizeof *copy);
    ck_assert_ptr_nonnull(copy);
    if (st->size > 0) memcpy(copy, st->data, (size_t)st->size * sizeof *copy);
    return copy;
}

static void watch(const Tensor *t) {
    ck_assert_ptr_nonnull(t);
    ck_assert_int_lt(n_watched, MAX_WATCHED);
    Watched *w = &watched[n_watched++];
    *w = (Watched){t, *t, t->storage->size, copy_of(t->storage), t->grad, t->grad ? copy_of(t->grad->storage) : NULL};
}

/* Fails, naming `call`, if a watched tensor changed in any way. */
static void expect_unchanged_(const char *call, const char *file, int line) {
    for (int i = 0; i < n_watched; i++) {
        const Watched *w = &watched[i];
        const Tensor *t = w->t, *h = &w->header;
        const char *what = NULL;
        if (!shape_equal(t->shape, t->rank, h->shape, h->rank)) what = "its shape";
        else if (memcmp(t->strides, h->strides, sizeof t->strides) != 0 || t->offset != h->offset)
            what = "its strides or offset";
        else if (t->storage != h->storage || t->storage->size != w->size || t->is_view != h->is_view)
            what = "its storage";
        else if (memcmp(t->storage->data, w->data, (size_t)w->size * sizeof(float)) != 0) what = "its values";
        else if (t->requires_grad != h->requires_grad) what = "its requires_grad";
        else if (t->op != h->op || t->backward != h->backward || t->n_inputs != h->n_inputs ||
                 memcmp(t->inputs, h->inputs, sizeof t->inputs) != 0 || t->saved != h->saved ||
                 /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): untouched means the same bits */
                 memcmp(&t->param, &h->param, sizeof t->param) != 0)
            what = "its record on the tape";
        else if (t->grad != w->grad || (w->grad && memcmp(w->grad->storage->data, w->grad_data,
                                                          (size_t)w->grad->storage->size * sizeof(float)) != 0))
            what = "its gradient";
        if (what) {
            char s[SHAPE_STR_MAX];
            _ck_assert_failed(file, line, "Failed",
                              "%s changed %s of tensor #%d (shape %s); a failed call must leave "
                              "the tensors it was given as they were",
                              call, what, t->id, shape_format(t->shape, t->rank, s, sizeof s));
        }
    }
}

/* The checks of a call that must fail; see the macros below. */
static void expect_failed_(bool failed, const char *call, const char *message, size_t bytes_before, const char *file,
                           int line) {
    const char *error = tensor_error();
    if (!failed) _ck_assert_failed(file, line, "Failed", "%s succeeded, expected it to fail with: %s", call, message);
    if (!error || strcmp(error, message) != 0)
        _ck_assert_failed(file, line, "Failed", "%s failed with the wrong message\n    got      %s\n    expected %s",
                          call, error ? error : "(no message recorded)", message);
    if (ctx_bytes(test_ctx) != bytes_before)
        _ck_assert_failed(file, line, "Failed",
                          "%s failed, but allocated %zu bytes in the context first (a tensor "
                          "made, or a node recorded, before the inputs were checked)",
                          call, ctx_bytes(test_ctx) - bytes_before);
    expect_unchanged_(call, file, line);
}

#define FAILS_(earlier, failed_expr, call, message)                         \
    do {                                                                    \
        const char *earlier_ = (earlier);                                   \
        if (earlier_) tensor_set_error("%s", earlier_);                     \
        else tensor_clear_error();                                          \
        size_t bytes_ = ctx_bytes(test_ctx);                                \
        bool failed_ = (failed_expr);                                       \
        expect_failed_(failed_, call, message, bytes_, __FILE__, __LINE__); \
    } while (0)

/* `call` must fail with exactly `message` (an earlier message is cleared first), allocate
 * nothing and change no watched tensor. By what the call returns: */
#define EXPECT_NULL(call, message) FAILS_(NULL, (call) == NULL, #call, message)
#define EXPECT_MINUS_ONE(call, message) FAILS_(NULL, (call) == -1, #call, message)
#define EXPECT_NAN(call, message) FAILS_(NULL, isnan(call), #call, message)
#define EXPECT_FALSE(call, message) FAILS_(NULL, !(call), #call, message)
#define EXPECT_ZERO(call, message) FAILS_(NULL, (call) == 0, #call, message)
/* ... and for a function that returns nothing, a condition that says it did nothing */
#define EXPECT_VOID(call, did_nothing, message) FAILS_(NULL, ((call), (did_nothing)), #call, message)

/* A NULL input that comes from an earlier failure: the call fails too and keeps that message. */
#define EARLIER "add: operands could not be broadcast together with shapes (2,3) (2,4)"
#define KEEPS_(failed_expr, call) FAILS_(EARLIER, failed_expr, call, EARLIER)
#define KEEPS_NULL(call, message) KEEPS_((call) == NULL, #call)
#define KEEPS_MINUS_ONE(call, message) KEEPS_((call) == -1, #call)
#define KEEPS_NAN(call, message) KEEPS_(isnan(call), #call)

/* A call that must succeed (a documented result, not an error): returns its result after
 * checking that it is not NULL and that no error was recorded. */
#define RESULT(call) result_((tensor_clear_error(), (call)), #call, __FILE__, __LINE__)

static Tensor *result_(Tensor *t, const char *call, const char *file, int line) {
    if (!t) _ck_assert_failed(file, line, "Failed", "%s returned NULL: %s", call, tensor_error() ? tensor_error() : "");
    if (tensor_error())
        _ck_assert_failed(file, line, "Failed", "%s succeeded but recorded an error: %s", call, tensor_error());
    return t;
}

/* ==== the scene every test watches ========================================================== */

/* A leaf a (2,3) that requires grad, its transposed view t (3,2), and loss = sum(t * t), whose
 * backward has run once: a's gradient is 2a, and the tape holds a transpose, a mul and a sum. */
typedef struct {
    Tensor *a, *t, *loss;
} Scene;

static Scene scene(void) {
    n_watched = 0;
    Scene s;
    s.a = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6))); /* storage #1 */
    s.t = tensor_transpose(s.a, 0, 1);
    s.loss = tensor_sum(tensor_mul(s.t, s.t));
    ck_assert_int_eq(tensor_backward(s.loss), 0);
    watch(s.a);
    watch(s.t);
    watch(s.loss->inputs[0]);
    watch(s.loss);
    return s;
}

/* The end of every test: nothing watched changed, and the tape still works: a second
 * backward adds 2a to a's gradient again. */
#define EXPECT_TAPE_INTACT(s) expect_tape_intact_((s), __FILE__, __LINE__)

static void expect_tape_intact_(Scene s, const char *file, int line) {
    expect_unchanged_("this test's calls", file, line);
    tensor_clear_error();
    if (tensor_backward(s.loss) != 0)
        _ck_assert_failed(file, line, "Failed", "backward through the watched loss failed: %s", tensor_error());
    expect_values_(tensor_grad(s.a), VALUES(4, 8, 12, 16, 20, 24), 0,
                   "the watched leaf's gradient after a second backward", file, line);
}

static char *printed(char *buf, size_t size, const char *name, const Tensor *t, bool describe) {
    FILE *f = fmemopen(buf, size, "w");
    ck_assert_ptr_nonnull(f);
    if (describe) tensor_fdescribe(f, name, t);
    else tensor_fprint(f, name, t, NULL);
    fclose(f);
    return buf;
}

/* The model lesson 7 trains, small: V = 27, T = 8, C = 16, 2 heads, 2 layers, M = 64. */
static const ModelConfig model_config = {.vocab = 27, .context = 8, .width = 16, .heads = 2, .layers = 2, .mlp = 64};

/* The sum of a tensor, for gradcheck. */
static Tensor *sum_of_first(Tensor *const *inputs, void *arg) { return (void)arg, tensor_sum(inputs[0]); }
/* a function that marks its second input as requiring grad, which gradcheck sized its
 * buffers without */
static Tensor *marks_second(Tensor *const *inputs, void *arg) {
    (void)arg;
    tensor_requires_grad(inputs[1]);
    return tensor_sum(tensor_add(inputs[0], inputs[1]));
}

/* True if none of the n floats at p is anything but `value` (nothing was written there). */
static bool all_are(const float *p, int n, float value) {
    for (int i = 0; i < n; i++)
        if (p[i] != value) return false;
    return true;
}

/* ==== NULL ================================================================================== */

/* Every function that takes a tensor, given NULL. EXPECT_PTR, EXPECT_INT and EXPECT_FLOAT are
 * the checks for a pointer, an int and a float result. */
#define EVERY_OP_GIVEN_NULL(EXPECT_PTR, EXPECT_INT, EXPECT_FLOAT)                                     \
    EXPECT_PTR(tensor_requires_grad(NULL), "requires_grad: input t is NULL");                         \
    EXPECT_PTR(tensor_as_strided(NULL, DIMS(1), STRIDES(1), 0), "as_strided: input x is NULL");       \
    EXPECT_FLOAT(tensor_get(NULL, (int64_t[]){0}), "get: input t is NULL");                           \
    EXPECT_FLOAT(tensor_item(NULL), "item: input t is NULL");                                         \
    EXPECT_INT(tensor_to_array(NULL, buf, 6), "to_array: input t is NULL");                           \
    EXPECT_PTR(tensor_contiguous(NULL), "contiguous: input x is NULL");                               \
    EXPECT_PTR(tensor_record(NULL, "op", NULL, 0, NULL), "record: input out is NULL");                \
    EXPECT_INT(tensor_backward(NULL), "backward: input loss is NULL");                                \
    EXPECT_INT(tensor_backward_from(NULL, a), "backward: input loss is NULL");                        \
    EXPECT_PTR(tensor_grad(NULL), "grad: input t is NULL");                                           \
    EXPECT_PTR(tensor_grad_data(NULL), "grad_data: input t is NULL");                                 \
    EXPECT_PTR(tensor_expand(NULL, DIMS(3)), "expand: input x is NULL");                              \
    EXPECT_PTR(tensor_sum_to_shape(NULL, DIMS(3)), "sum_to_shape: input x is NULL");                  \
    EXPECT_PTR(tensor_sum(NULL), "sum: input x is NULL");                                             \
    EXPECT_PTR(tensor_add(NULL, a), "add: input a is NULL");                                          \
    EXPECT_PTR(tensor_add(a, NULL), "add: input b is NULL");                                          \
    EXPECT_PTR(tensor_sub(NULL, a), "sub: input a is NULL");                                          \
    EXPECT_PTR(tensor_sub(a, NULL), "sub: input b is NULL");                                          \
    EXPECT_PTR(tensor_mul(NULL, a), "mul: input a is NULL");                                          \
    EXPECT_PTR(tensor_mul(a, NULL), "mul: input b is NULL");                                          \
    EXPECT_PTR(tensor_div(NULL, a), "div: input a is NULL");                                          \
    EXPECT_PTR(tensor_div(a, NULL), "div: input b is NULL");                                          \
    EXPECT_PTR(tensor_add_scalar(NULL, 1), "add_scalar: input x is NULL");                            \
    EXPECT_PTR(tensor_mul_scalar(NULL, 1), "mul_scalar: input x is NULL");                            \
    EXPECT_PTR(tensor_pow_scalar(NULL, 2), "pow_scalar: input x is NULL");                            \
    EXPECT_PTR(tensor_sum_last_dim(NULL), "sum_last_dim: input x is NULL");                           \
    EXPECT_PTR(tensor_sum_axis(NULL, 0, false), "sum_axis: input x is NULL");                         \
    EXPECT_PTR(tensor_mean(NULL), "mean: input x is NULL");                                           \
    EXPECT_PTR(tensor_mean_axis(NULL, 0, true), "mean_axis: input x is NULL");                        \
    EXPECT_PTR(tensor_mse_loss(NULL, a), "mse_loss: input pred is NULL");                             \
    EXPECT_PTR(tensor_mse_loss(a, NULL), "mse_loss: input target is NULL");                           \
    EXPECT_PTR(tensor_softmax_last_dim(NULL), "softmax_last_dim: input x is NULL");                   \
    EXPECT_PTR(tensor_log_softmax_last_dim(NULL), "log_softmax_last_dim: input x is NULL");           \
    EXPECT_PTR(tensor_cross_entropy(NULL, (int64_t[]){0}, 1), "cross_entropy: input logits is NULL"); \
    EXPECT_PTR(tensor_permute(NULL, AXES(1, 0)), "permute: input x is NULL");                         \
    EXPECT_PTR(tensor_transpose(NULL, 0, 1), "transpose: input x is NULL");                           \
    EXPECT_PTR(tensor_reshape(NULL, DIMS(6)), "reshape: input x is NULL");                            \
    EXPECT_PTR(tensor_gather_rows(NULL, (int64_t[]){0}, 1), "gather_rows: input table is NULL");      \
    EXPECT_PTR(tensor_embedding(NULL, (int64_t[]){0}, DIMS(1)), "embedding: input table is NULL");    \
    EXPECT_PTR(tensor_matmul(NULL, a), "matmul: input a is NULL");                                    \
    EXPECT_PTR(tensor_matmul(a, NULL), "matmul: input b is NULL");                                    \
    EXPECT_PTR(tensor_gelu(NULL), "gelu: input x is NULL");                                           \
    EXPECT_PTR(tensor_layer_norm(NULL, a, a, 1e-5f), "layer_norm: input x is NULL");                  \
    EXPECT_PTR(tensor_layer_norm(a, NULL, a, 1e-5f), "layer_norm: input gamma is NULL");              \
    EXPECT_PTR(tensor_layer_norm(a, a, NULL, 1e-5f), "layer_norm: input beta is NULL");               \
    EXPECT_PTR(tensor_linear(NULL, a, a), "linear: input x is NULL");                                 \
    EXPECT_PTR(tensor_linear(a, NULL, a), "linear: input w is NULL");                                 \
    EXPECT_PTR(tensor_attention(NULL, a, a, a, a, a, a, 1), "attention: input x is NULL");            \
    EXPECT_PTR(tensor_attention(a, NULL, a, a, a, a, a, 1), "attention: input wq is NULL");           \
    EXPECT_PTR(tensor_attention(a, a, NULL, a, a, a, a, 1), "attention: input wk is NULL");           \
    EXPECT_PTR(tensor_attention(a, a, a, NULL, a, a, a, 1), "attention: input wv is NULL");           \
    EXPECT_PTR(tensor_attention(a, a, a, a, NULL, a, a, 1), "attention: input wo is NULL");           \
    EXPECT_PTR(tensor_attention(a, a, a, a, a, NULL, a, 1), "attention: input bo is NULL");           \
    EXPECT_PTR(tensor_attention(a, a, a, a, a, a, NULL, 1), "attention: input mask is NULL");         \
    EXPECT_PTR(tensor_attention_heads(NULL, a, a, a, 1), "attention_heads: input q is NULL");         \
    EXPECT_PTR(tensor_attention_heads(a, NULL, a, a, 1), "attention_heads: input k is NULL");         \
    EXPECT_PTR(tensor_attention_heads(a, a, NULL, a, 1), "attention_heads: input v is NULL");         \
    EXPECT_PTR(tensor_attention_heads(a, a, a, NULL, 1), "attention_heads: input mask is NULL")

START_TEST(test_null_tensor) {
    Scene s = scene();
    Tensor *a = s.a;
    float buf[6];
    EVERY_OP_GIVEN_NULL(EXPECT_NULL, EXPECT_MINUS_ONE, EXPECT_NAN);
    NdIter it;
    EXPECT_VOID(nditer_init_rows(&it, NULL), !nditer_next(&it), "nditer_init_rows: input x is NULL");
    /* tensor_grads_begin without its arrays: true (add), touching no gradient */
    bool accumulate;
    EXPECT_VOID(accumulate = tensor_grads_begin(1, &a, NULL, NULL), accumulate, "grads_begin: input grads is NULL");
    EXPECT_VOID(accumulate = tensor_grads_begin(1, NULL, NULL, (float *[]){NULL}), accumulate,
                "grads_begin: input inputs is NULL");

    /* accessors answer with a neutral value and record nothing */
    tensor_clear_error();
    ck_assert_int_eq(tensor_numel(NULL), 0);
    ck_assert(!tensor_is_contiguous(NULL));
    ck_assert_ptr_null(tensor_data(NULL));
    tensor_zero_grad(NULL);
    ck_assert_ptr_null(tensor_error());
    /* printing says so */
    char text[128];
    ck_assert_str_eq(printed(text, sizeof text, "x", NULL, false), "x = NULL (no error recorded)\n");
    ck_assert_str_eq(printed(text, sizeof text, "x", NULL, true), "x: NULL\n");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_null_keeps_the_first_message) {
    Scene s = scene();
    Tensor *a = s.a;
    float buf[6];
    EVERY_OP_GIVEN_NULL(KEEPS_NULL, KEEPS_MINUS_ONE, KEEPS_NAN);
    NdIter it;
    KEEPS_((nditer_init_rows(&it, NULL), !nditer_next(&it)), "nditer_init_rows(&it, NULL)");
    KEEPS_(tensor_grads_begin(1, &a, NULL, NULL), "tensor_grads_begin(1, &a, NULL, NULL)");
    /* a chained expression reports the first op that failed */
    Tensor *b = tensor_zeros(test_ctx, DIMS(2, 4));
    EXPECT_NULL(tensor_mean(tensor_softmax_last_dim(tensor_mul(tensor_add(a, b), a))), EARLIER);
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_null_ctx) {
    Scene s = scene();
    EXPECT_NULL(tensor_zeros(NULL, DIMS(2)), "tensor_zeros: ctx is NULL");
    EXPECT_NULL(tensor_from(NULL, DIMS(1), VALUES(1)), "tensor_from: ctx is NULL");
    EXPECT_NULL(tensor_scalar(NULL, 1), "tensor_scalar: ctx is NULL");
    EXPECT_NULL(ctx_alloc(NULL, 8), "ctx_alloc: ctx is NULL");
    EXPECT_NULL(causal_mask(NULL, 3), "causal_mask: ctx is NULL");
    Model m;
    EXPECT_MINUS_ONE(model_init(&m, NULL, &model_config, 1), "model_init: ctx is NULL");
    tensor_clear_error();
    ck_assert_uint_eq(ctx_bytes(NULL), 0);
    ctx_zero_grads(NULL);
    ctx_mark(NULL);
    ctx_reset(NULL);
    ctx_free(NULL);
    ck_assert_ptr_null(tensor_error());
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_null_pointers) {
    Scene s = scene();
    Tensor *a = s.a, *logits = tensor_zeros(test_ctx, DIMS(2, 3));
    int64_t out[TENSOR_MAX_RANK], map[8];
    int rank, axes[2];
    /* making and reading tensors */
    EXPECT_NULL(tensor_zeros(test_ctx, NULL, 2), "tensor_zeros: shape is NULL for rank 2");
    EXPECT_NULL(tensor_from(test_ctx, NULL, 1, VALUES(1)), "tensor_from: shape is NULL for rank 1");
    EXPECT_NULL(tensor_from(test_ctx, DIMS(2), NULL, 2), "tensor_from: values is NULL");
    EXPECT_NULL(tensor_as_strided(a, NULL, 1, STRIDES(1), 0), "as_strided: shape is NULL for rank 1");
    EXPECT_NULL(tensor_as_strided(a, DIMS(2), NULL, 0), "as_strided: strides is NULL for rank 1");
    EXPECT_NAN(tensor_get(a, NULL), "get: index is NULL for shape (2,3)");
    EXPECT_MINUS_ONE(tensor_to_array(a, NULL, 6), "to_array: out is NULL");
    /* the ops */
    EXPECT_NULL(tensor_expand(a, NULL, 2), "expand: shape is NULL for rank 2");
    EXPECT_NULL(tensor_sum_to_shape(a, NULL, 1), "sum_to_shape: shape is NULL for rank 1");
    EXPECT_NULL(tensor_reshape(a, NULL, 2), "reshape: shape is NULL for rank 2");
    EXPECT_NULL(tensor_permute(a, NULL, 2),
                "permute: 2 axes (NULL) given for a tensor of rank 2: give each of its 2 axes once");
    EXPECT_NULL(tensor_cross_entropy(logits, NULL, 2), "cross_entropy: targets is NULL");
    EXPECT_NULL(tensor_gather_rows(a, NULL, 2), "gather_rows: 2 indices given as NULL");
    EXPECT_NULL(tensor_embedding(a, NULL, DIMS(2)), "embedding: 2 indices given as NULL");
    EXPECT_NULL(tensor_embedding(a, (int64_t[]){0}, NULL, 1), "embedding: shape is NULL for rank 1");
    /* the pure functions */
    EXPECT_MINUS_ONE(broadcast_shapes(NULL, 1, DIMS(3), out, &rank), "broadcast_shapes: shape is NULL for rank 1");
    EXPECT_MINUS_ONE(broadcast_shapes(DIMS(3), DIMS(3), NULL, &rank),
                     "broadcast_shapes: out and out_rank must not be NULL");
    EXPECT_MINUS_ONE(broadcast_strides(DIMS(3), NULL, DIMS(2, 3), out),
                     "broadcast_strides: src_strides and out_strides must not be NULL");
    EXPECT_MINUS_ONE(broadcast_map(DIMS(2, 3), DIMS(3), NULL), "broadcast_map: map is NULL");
    EXPECT_MINUS_ONE(normalize_permutation("permute", NULL, 2, 2, axes),
                     "permute: 2 axes (NULL) given for a tensor of rank 2: give each of its 2 axes once");
    EXPECT_MINUS_ONE(permute_map(NULL, 2, (int[]){1, 0}, map), "permute_map: shape is NULL for rank 2");
    EXPECT_FALSE(shape_is_valid("op", NULL, 2), "op: shape is NULL for rank 2");
    /* the core's checks that ops share, on what they check and on NULL */
    EXPECT_FALSE(rank_is_valid("op", 9), "op: rank 9 is outside 0..8 (TENSOR_MAX_RANK)");
    EXPECT_FALSE(rank_is_valid("op", -1), "op: rank -1 is outside 0..8 (TENSOR_MAX_RANK)");
    int axis = 7;
    EXPECT_FALSE(axis_normalize("op", 2, 2, &axis), "op: axis 2 is out of bounds for array of dimension 2");
    EXPECT_FALSE(axis_normalize("op", -3, 2, &axis), "op: axis -3 is out of bounds for array of dimension 2");
    EXPECT_FALSE(axis_normalize("op", 0, 2, NULL), "op: out is NULL for axis 0");
    ck_assert_int_eq(axis, 7);
    ck_assert(axis_normalize("op", -1, 2, &axis) && axis == 1);
    EXPECT_FALSE(contexts_match("op", NULL, a, "the operands"), "op: input a is NULL");
    EXPECT_FALSE(contexts_match("op", a, NULL, "the operands"), "op: input b is NULL");
    EXPECT_MINUS_ONE(permute_map(DIMS(2, 3), (int[]){1, 0}, NULL), "permute_map: map is NULL");
    NdIter it;
    EXPECT_VOID(nditer_init(&it, 2, NULL, 1, (const int64_t *[]){a->strides}), !nditer_next(&it),
                "nditer_init: a shape or strides array is NULL for rank 2");
    EXPECT_VOID(nditer_init(&it, 2, a->shape, 1, (const int64_t *[]){NULL}), !nditer_next(&it),
                "nditer_init: a shape or strides array is NULL for rank 2");
    EXPECT_VOID(nditer_init(NULL, 2, a->shape, 1, (const int64_t *[]){a->strides}), true, "nditer_init: it is NULL");
    EXPECT_FALSE(nditer_next(NULL), "nditer_next: it is NULL");
    EXPECT_VOID(nditer_init_rows(NULL, a), true, "nditer_init_rows: it is NULL");
    int64_t merged_shape[TENSOR_MAX_RANK], merged[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK];
    EXPECT_MINUS_ONE(merge_dims(2, NULL, 1, (const int64_t *[]){a->strides}, merged_shape, merged),
                     "merge_dims: a shape or strides array is NULL for rank 2");
    EXPECT_MINUS_ONE(merge_dims(2, a->shape, 1, (const int64_t *[]){NULL}, merged_shape, merged),
                     "merge_dims: a shape or strides array is NULL for rank 2");
    EXPECT_MINUS_ONE(merge_dims(2, a->shape, 1, (const int64_t *[]){a->strides}, NULL, merged),
                     "merge_dims: a shape or strides array is NULL for rank 2");
    /* the core's array functions and loops, and the lessons' helpers on plain arrays */
    int64_t strides[2] = {7, 7}, index[2] = {7, 7};
    EXPECT_VOID(contiguous_strides(NULL, 2, strides), strides[0] == 7 && strides[1] == 7,
                "contiguous_strides: shape and strides must not be NULL for rank 2");
    EXPECT_VOID(contiguous_strides(DIMS(2, 3), NULL), true,
                "contiguous_strides: shape and strides must not be NULL for rank 2");
    EXPECT_VOID(unravel_index(4, NULL, 2, index), index[0] == 7 && index[1] == 7,
                "unravel_index: shape and index must not be NULL for rank 2");
    EXPECT_VOID(unravel_index(4, DIMS(2, 3), NULL), true, "unravel_index: shape and index must not be NULL for rank 2");
    EXPECT_FALSE(shape_equal(NULL, 2, DIMS(2, 3)), "shape_equal: shape a must not be NULL for rank 2");
    EXPECT_FALSE(shape_equal(DIMS(2, 3), NULL, 2), "shape_equal: shape b must not be NULL for rank 2");
    float dst[6] = {7, 7, 7, 7, 7, 7};
    const float src[6] = {1, 2, 3, 4, 5, 6};
    const int64_t shape23[2] = {2, 3};
    EXPECT_VOID(strided_copy(2, shape23, NULL, STRIDES(3, 1), src, STRIDES(3, 1)), true,
                "strided_copy: dst, src and their strides must not be NULL for shape (2,3)");
    EXPECT_VOID(strided_copy(2, shape23, dst, STRIDES(3, 1), NULL, STRIDES(3, 1)), all_are(dst, 6, 7),
                "strided_copy: dst, src and their strides must not be NULL for shape (2,3)");
    EXPECT_VOID(strided_copy(2, shape23, dst, NULL, src, STRIDES(3, 1)), all_are(dst, 6, 7),
                "strided_copy: dst, src and their strides must not be NULL for shape (2,3)");
    EXPECT_VOID(strided_accumulate(2, shape23, dst, STRIDES(3, 1), src, NULL), all_are(dst, 6, 7),
                "strided_accumulate: dst, src and their strides must not be NULL for shape (2,3)");
    EXPECT_VOID(strided_copy(2, NULL, dst, STRIDES(3, 1), src, STRIDES(3, 1)), all_are(dst, 6, 7),
                "strided_copy: shape is NULL for rank 2");
    EXPECT_MINUS_ONE(normalize_permutation("permute", (int[]){1, 0}, 2, 2, NULL), "permute: out is NULL for 2 axes");
    EXPECT_VOID(inverse_permutation((int[]){1, 0}, 2, NULL), true, "inverse_permutation: inv is NULL for 2 axes");
    EXPECT_VOID(softmax_naive_row(NULL, 3, dst), all_are(dst, 6, 7),
                "softmax_naive_row: x and out must not be NULL for a row of 3");
    EXPECT_VOID(softmax_naive_row(src, 3, NULL), true, "softmax_naive_row: x and out must not be NULL for a row of 3");
    EXPECT_ZERO(matmul_wrong_column_fold(NULL, src, 1, 1, 2, 2, dst),
                "matmul_wrong_column_fold: q, keys and out must not be NULL");
    EXPECT_ZERO(matmul_wrong_column_fold(src, src, 1, 1, 2, 2, NULL),
                "matmul_wrong_column_fold: q, keys and out must not be NULL");
    ck_assert(all_are(dst, 6, 7));
    /* NULL where nothing is needed is fine: no values for an empty tensor, no FILE to print to */
    ck_assert_int_eq(tensor_numel(RESULT(tensor_from(test_ctx, DIMS(0, 3), NULL, 0))), 0);
    tensor_fprint(NULL, "a", a, NULL);
    tensor_fdescribe(NULL, "a", a);
    /* the model: no model, a model never made, no config, no tokens, no targets, no optimizer */
    Model m, unmade;
    memset(&unmade, 0, sizeof unmade);
    int64_t tokens[2] = {0, 1};
    const AdamW opt = {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.1f};
    float p4[4] = {1, 1, 1, 1}, g4[4] = {1, 1, 1, 1}, m4[4] = {1, 1, 1, 1}, v4[4] = {1, 1, 1, 1};
    EXPECT_VOID(adamw_update(p4, g4, m4, v4, 4, 1, NULL, 0),
                all_are(p4, 4, 1) && all_are(m4, 4, 1) && all_are(v4, 4, 1), "adamw_update: opt is NULL");
    EXPECT_VOID(adamw_update(p4, NULL, m4, v4, 4, 1, &opt, 0),
                all_are(p4, 4, 1) && all_are(m4, 4, 1) && all_are(v4, 4, 1),
                "adamw_update: p, g, m and v must not be NULL for 4 floats");
    ck_assert_int_eq(model_init(&m, test_ctx, &model_config, 1), 0);
    EXPECT_FALSE(model_config_valid("model_init", NULL), "model_init: config is NULL");
    EXPECT_MINUS_ONE(model_init(NULL, test_ctx, &model_config, 1), "model_init: model is NULL");
    EXPECT_MINUS_ONE(model_init(&m, test_ctx, NULL, 1), "model_init: config is NULL");
    EXPECT_NULL(model_logits(NULL, tokens, 1, 2), "model_logits: the model is NULL or not made (model_init)");
    EXPECT_NULL(model_logits(&unmade, tokens, 1, 2), "model_logits: the model is NULL or not made (model_init)");
    EXPECT_NULL(model_logits(&m, NULL, 1, 2),
                "model_logits: tokens (B, T) = (1,2) given as NULL: needs B >= 1 and 1 <= T <= 8 (the context)");
    EXPECT_NULL(model_loss(NULL, tokens, tokens, 1, 2), "model_logits: the model is NULL or not made (model_init)");
    EXPECT_NULL(model_loss(&m, NULL, tokens, 1, 2),
                "model_logits: tokens (B, T) = (1,2) given as NULL: needs B >= 1 and 1 <= T <= 8 (the context)");
    EXPECT_NULL(model_loss(&m, tokens, NULL, 1, 2), "model_loss: targets given as NULL");
    EXPECT_MINUS_ONE(model_adamw_step(NULL, &opt), "adamw_step: the model is NULL or not made (model_init)");
    EXPECT_MINUS_ONE(model_adamw_step(&unmade, &opt), "adamw_step: the model is NULL or not made (model_init)");
    EXPECT_MINUS_ONE(model_adamw_step(&m, NULL),
                     "adamw_step: needs lr, eps and weight_decay >= 0 and betas in [0, 1) (opt is NULL)");
    ck_assert_int_eq(m.steps, 0);
    /* lesson 7's data helpers */
    int64_t few[3] = {0, 1, 0}, bx[8], by[8];
    TokenStream three = {few, 3, 1};
    Rng rng = rng_seeded(1);
    Bigram bigram;
    char word[8] = "x";
    EXPECT_MINUS_ONE(bigram_fit(NULL, &three), "bigram_fit: the model is NULL");
    EXPECT_MINUS_ONE(bigram_fit(&bigram, NULL), "bigram_fit: the stream is NULL");
    few[1] = 27;
    EXPECT_MINUS_ONE(bigram_fit(&bigram, &three), "bigram_fit: token 27 at position 1 is not in 0..26");
    few[1] = 1;
    EXPECT_MINUS_ONE(batch_sample(&three, 2, 4, &rng, bx, by),
                     "batch_sample: a batch of 2 windows of T = 4 from a stream of 3 tokens (it needs B >= 0, T >= 1 "
                     "and more than T tokens)");
    EXPECT_MINUS_ONE(batch_sample(&three, 2, 0, &rng, bx, by),
                     "batch_sample: a batch of 2 windows of T = 0 from a stream of 3 tokens (it needs B >= 0, T >= 1 "
                     "and more than T tokens)");
    EXPECT_MINUS_ONE(batch_sample(NULL, 2, 2, &rng, bx, by), "batch_sample: the stream is NULL");
    EXPECT_MINUS_ONE(batch_sample(&three, 2, 2, &rng, NULL, by), "batch_sample: x or y is NULL");
    EXPECT_NAN(model_eval(NULL, &three, 2, 0), "model_eval: the model is NULL");
    EXPECT_NAN(model_eval(&m, NULL, 2, 0), "model_eval: the stream is NULL");
    EXPECT_NAN(model_eval(&m, &three, 0, 0), "model_eval: the batch must be >= 1");
    EXPECT_MINUS_ONE(sample_word(NULL, &rng, word, 7), "sample_word: the model is NULL");
    EXPECT_MINUS_ONE(sample_word(&m, &rng, NULL, 7), "sample_word: out is NULL");
    ck_assert_int_eq(words_contains(NULL, "cat"), 0);
    run_beside(NULL, "model.ckpt", word, sizeof word);
    ck_assert_str_eq(word, "");
    run_beside("build/x", "model.ckpt", NULL, 16); /* nothing to write into: nothing written */
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== ranks, dims and sizes ================================================================= */

START_TEST(test_rank_above_max) {
    Scene s = scene();
    Tensor *a = s.a;
    const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 2, 3}, strides[9] = {0};
    const int dims9[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    int64_t out[16], map[8];
    int rank, axes[16];
    const char *r9 = "rank 9 is outside 0..8 (TENSOR_MAX_RANK)";
    char want[128];
#define WANT(op) (snprintf(want, sizeof want, "%s: %s", op, r9), want)
    EXPECT_NULL(tensor_zeros(test_ctx, nine, 9), WANT("tensor_zeros"));
    EXPECT_NULL(tensor_zeros(test_ctx, nine, -1), "tensor_zeros: rank -1 is outside 0..8 (TENSOR_MAX_RANK)");
    EXPECT_NULL(tensor_from(test_ctx, nine, 9, VALUES(1, 2, 3, 4, 5, 6)), WANT("tensor_from"));
    EXPECT_NULL(tensor_as_strided(a, nine, 9, strides, 0), WANT("as_strided"));
    EXPECT_NULL(tensor_expand(a, nine, 9), WANT("expand"));
    EXPECT_NULL(tensor_sum_to_shape(a, nine, 9), WANT("sum_to_shape"));
    EXPECT_NULL(tensor_reshape(a, nine, 9), WANT("reshape"));
    EXPECT_NULL(tensor_reshape(a, nine, -1), "reshape: rank -1 is outside 0..8 (TENSOR_MAX_RANK)");
    EXPECT_NULL(tensor_permute(a, dims9, 9),
                "permute: 9 axes given for a tensor of rank 2: give each of its 2 axes once");
    EXPECT_NULL(tensor_embedding(a, (int64_t[]){0}, nine, 9), WANT("embedding"));
    EXPECT_NULL(tensor_embedding(a, (int64_t[]){0}, DIMS(1, 1, 1, 1, 1, 1, 1, 1)),
                "embedding: indices of rank 8 give a result of rank 9, above the maximum 8");
    EXPECT_MINUS_ONE(broadcast_shapes(nine, 9, DIMS(3), out, &rank), WANT("broadcast_shapes"));
    EXPECT_MINUS_ONE(broadcast_strides(DIMS(3), STRIDES(1), nine, 9, out), WANT("broadcast_strides"));
    EXPECT_MINUS_ONE(broadcast_map(nine, 9, DIMS(3), map), WANT("broadcast_map"));
    EXPECT_MINUS_ONE(permute_map(nine, 9, dims9, map), WANT("permute_map"));
    EXPECT_MINUS_ONE(normalize_permutation("permute", dims9, 9, 9, axes), WANT("permute"));
    EXPECT_MINUS_ONE(normalize_permutation("permute", dims9, -1, -1, axes),
                     "permute: rank -1 is outside 0..8 (TENSOR_MAX_RANK)");
    int inv[16] = {0};
    EXPECT_VOID(inverse_permutation(dims9, 9, inv), inv[8] == 0, WANT("inverse_permutation"));
    EXPECT_FALSE(shape_is_valid("op", nine, 9), WANT("op"));
    NdIter it;
    EXPECT_VOID(nditer_init(&it, 9, nine, 1, (const int64_t *[]){strides}), !nditer_next(&it), WANT("nditer_init"));
    EXPECT_VOID(nditer_init(&it, -1, nine, 1, (const int64_t *[]){strides}), !nditer_next(&it),
                "nditer_init: rank -1 is outside 0..8 (TENSOR_MAX_RANK)");
    const int64_t *seven[7] = {strides, strides, strides, strides, strides, strides, strides};
    EXPECT_VOID(nditer_init(&it, 1, nine, 7, seven), !nditer_next(&it),
                "nditer_init: 7 operands, outside 0..6 (NDITER_MAX_OPERANDS)");
    float dst[2] = {0, 0};
    EXPECT_VOID(strided_accumulate(9, nine, dst, strides, dst, strides), dst[0] == 0 && dst[1] == 0,
                WANT("strided_accumulate"));
    EXPECT_VOID(strided_copy(9, nine, dst, strides, dst, strides), dst[0] == 0 && dst[1] == 0, WANT("strided_copy"));
    int64_t written[16];
    for (int d = 0; d < 16; d++) written[d] = 7;
    EXPECT_VOID(contiguous_strides(nine, 9, written), written[0] == 7 && written[8] == 7, WANT("contiguous_strides"));
    EXPECT_VOID(unravel_index(0, nine, 9, written), written[0] == 7 && written[8] == 7, WANT("unravel_index"));
    EXPECT_FALSE(shape_equal(nine, 9, nine, 9), WANT("shape_equal"));
    int64_t merged_shape[TENSOR_MAX_RANK], merged[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK];
    EXPECT_MINUS_ONE(merge_dims(9, nine, 1, (const int64_t *[]){strides}, merged_shape, merged), WANT("merge_dims"));
    EXPECT_MINUS_ONE(merge_dims(1, nine, 7, seven, merged_shape, merged),
                     "merge_dims: 7 operands, outside 0..6 (NDITER_MAX_OPERANDS)");
    EXPECT_MINUS_ONE(merge_dims(1, nine, -1, seven, merged_shape, merged),
                     "merge_dims: -1 operands, outside 0..6 (NDITER_MAX_OPERANDS)");
    tensor_clear_error();
    ck_assert_int_eq(shape_numel(nine, 9), -1); /* not a shape of this library; nor is a NULL one */
    ck_assert_int_eq(shape_numel(NULL, 2), -1);
    ck_assert_int_eq(shape_numel(nine, -1), -1);
#undef WANT
    /* rank 8, the maximum, is fine */
    ck_assert_int_eq(RESULT(tensor_reshape(a, DIMS(1, 1, 1, 1, 1, 1, 2, 3)))->rank, 8);
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_negative_dims) {
    Scene s = scene();
    Tensor *a = s.a;
    int64_t out[TENSOR_MAX_RANK], map[8];
    int rank;
    EXPECT_NULL(tensor_zeros(test_ctx, DIMS(2, -1)),
                "tensor_zeros: negative dimensions are not allowed, got shape (2,-1)");
    EXPECT_NULL(tensor_from(test_ctx, DIMS(-1), VALUES(1)),
                "tensor_from: negative dimensions are not allowed, got shape (-1,)");
    EXPECT_NULL(tensor_as_strided(a, DIMS(-1), STRIDES(1), 0),
                "as_strided: negative dimensions are not allowed, got shape (-1,)");
    EXPECT_NULL(tensor_expand(a, DIMS(-1, 3)), "expand: negative dimensions are not allowed, got shape (-1,3)");
    EXPECT_NULL(tensor_sum_to_shape(a, DIMS(-1, 3)),
                "sum_to_shape: negative dimensions are not allowed, got shape (-1,3)");
    EXPECT_NULL(tensor_reshape(a, DIMS(-2, -3)), "reshape: negative dimensions are not allowed, got shape (-2,-3)");
    EXPECT_NULL(tensor_embedding(a, (int64_t[]){0}, DIMS(-1)),
                "embedding: negative dimensions are not allowed, got shape (-1,)");
    EXPECT_MINUS_ONE(broadcast_shapes(DIMS(-2), DIMS(3), out, &rank),
                     "broadcast_shapes: negative dimensions are not allowed, got shape (-2,)");
    EXPECT_MINUS_ONE(broadcast_strides(DIMS(3), STRIDES(1), DIMS(-3), out),
                     "broadcast_strides: negative dimensions are not allowed, got shape (-3,)");
    EXPECT_MINUS_ONE(broadcast_map(DIMS(2, -3), DIMS(3), map),
                     "broadcast_map: negative dimensions are not allowed, got shape (2,-3)");
    EXPECT_MINUS_ONE(permute_map(DIMS(-2, 3), (int[]){1, 0}, map),
                     "permute_map: negative dimensions are not allowed, got shape (-2,3)");
    EXPECT_FALSE(shape_is_valid("op", DIMS(2, -1)), "op: negative dimensions are not allowed, got shape (2,-1)");
    /* the core's loops, below every op: a negative dim would be a negative-size copy */
    float dst[6] = {7, 7, 7, 7, 7, 7};
    const float src[6] = {1, 2, 3, 4, 5, 6};
    EXPECT_VOID(strided_copy(2, (const int64_t[]){2, -3}, dst, STRIDES(3, 1), src, STRIDES(3, 1)), all_are(dst, 6, 7),
                "strided_copy: negative dimensions are not allowed, got shape (2,-3)");
    EXPECT_VOID(strided_copy(1, (const int64_t[]){-6}, dst, STRIDES(1), src, STRIDES(1)), all_are(dst, 6, 7),
                "strided_copy: negative dimensions are not allowed, got shape (-6,)");
    EXPECT_VOID(strided_accumulate(2, (const int64_t[]){0, -3}, dst, STRIDES(3, 1), src, STRIDES(3, 1)),
                all_are(dst, 6, 7), "strided_accumulate: negative dimensions are not allowed, got shape (0,-3)");
    /* a negative count */
    EXPECT_ZERO(matmul_wrong_column_fold(src, src, -1, 2, 2, -2, dst),
                "matmul_wrong_column_fold: b, m, k and n must be >= 0, got -1, 2, 2 and -2");
    ck_assert(all_are(dst, 6, 7));
    tensor_clear_error();
    ck_assert_int_eq(shape_numel(DIMS(-2, 0)), -1); /* a negative dim is never ignored, even beside a 0 */
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_numel_overflow) {
    Scene s = scene();
    Tensor *a = s.a, *one = tensor_scalar(test_ctx, 1), *empty = tensor_zeros(test_ctx, DIMS(0));
    Tensor *tall = tensor_expand(one, DIMS(BIG, 1)), *wide = tensor_expand(one, DIMS(1, BIG)); /* stride-0 views */
    Tensor *table = tensor_expand(tensor_zeros(test_ctx, DIMS(1, 1)), DIMS(1, INT64_C(1) << 60));
    ck_assert_ptr_nonnull(tall);
    ck_assert_ptr_nonnull(wide);
    ck_assert_ptr_nonnull(table);
    int64_t map[8];
    /* a shape whose element count overflows int64; with a 0 in it, the other dims still count */
    EXPECT_NULL(tensor_zeros(test_ctx, DIMS(BIG, BIG)),
                "tensor_zeros: shape (1099511627776,1099511627776) has too many elements");
    EXPECT_NULL(tensor_zeros(test_ctx, DIMS(BIG, BIG, 0)),
                "tensor_zeros: shape (1099511627776,1099511627776,0) has too many elements");
    EXPECT_NULL(tensor_zeros(test_ctx, DIMS(0, BIG, BIG)),
                "tensor_zeros: shape (0,1099511627776,1099511627776) has too many elements");
    EXPECT_NULL(tensor_from(test_ctx, DIMS(BIG, BIG), VALUES(1)),
                "tensor_from: shape (1099511627776,1099511627776) has too many elements");
    EXPECT_NULL(tensor_as_strided(a, DIMS(BIG, BIG), STRIDES(0, 0), 0),
                "as_strided: shape (1099511627776,1099511627776) has too many elements");
    EXPECT_NULL(tensor_expand(one, DIMS(BIG, BIG)),
                "expand: shape (1099511627776,1099511627776) has too many elements");
    EXPECT_NULL(tensor_expand(one, DIMS(0, BIG, BIG)),
                "expand: shape (0,1099511627776,1099511627776) has too many elements");
    EXPECT_NULL(tensor_sum_to_shape(a, DIMS(BIG, BIG)),
                "sum_to_shape: shape (1099511627776,1099511627776) does not "
                "broadcast to the input's shape (2,3), so the input cannot be summed onto it");
    EXPECT_NULL(tensor_reshape(a, DIMS(BIG, BIG, 6)),
                "reshape: cannot reshape array of size 6 into shape (1099511627776,1099511627776,6)");
    EXPECT_NULL(tensor_reshape(empty, DIMS(0, BIG, BIG)),
                "reshape: shape (0,1099511627776,1099511627776) has too many elements");
    EXPECT_NULL(tensor_embedding(a, (int64_t[]){0}, DIMS(BIG, BIG)),
                "embedding: index shape (1099511627776,1099511627776) has too many elements");
    EXPECT_MINUS_ONE(broadcast_map(DIMS(BIG, BIG), DIMS(1), map),
                     "broadcast_map: shape (1099511627776,1099511627776) has too many elements");
    EXPECT_MINUS_ONE(permute_map(DIMS(BIG, BIG), (int[]){1, 0}, map),
                     "permute_map: shape (1099511627776,1099511627776) has too many elements");
    /* results that would overflow, from inputs that do not (expanded views hold no memory) */
    EXPECT_NULL(tensor_add(tall, wide), "add: shapes (1099511627776,1) (1,1099511627776) broadcast to "
                                        "(1099511627776,1099511627776), which has too many elements");
    EXPECT_NULL(tensor_sub(wide, tall), "sub: shapes (1,1099511627776) (1099511627776,1) broadcast to "
                                        "(1099511627776,1099511627776), which has too many elements");
    EXPECT_NULL(tensor_mul(tall, wide), "mul: shapes (1099511627776,1) (1,1099511627776) broadcast to "
                                        "(1099511627776,1099511627776), which has too many elements");
    EXPECT_NULL(tensor_div(tall, wide), "div: shapes (1099511627776,1) (1,1099511627776) broadcast to "
                                        "(1099511627776,1099511627776), which has too many elements");
    EXPECT_NULL(tensor_matmul(tall, wide),
                "matmul: shapes (1099511627776,1) and (1,1099511627776) give a result of shape "
                "(1099511627776,1099511627776), which has too many elements");
    const int64_t zeros8[8] = {0};
    EXPECT_NULL(tensor_gather_rows(table, zeros8, 8),
                "gather_rows: the result (8,1152921504606846976) has too many elements");
    EXPECT_NULL(tensor_embedding(table, zeros8, DIMS(2, 4)),
                "embedding: the result (2,4,1152921504606846976) has too many elements");
    tensor_clear_error();
    ck_assert_int_eq(shape_numel(DIMS(BIG, BIG)), -1);
    ck_assert_int_eq(shape_numel(DIMS(0, BIG, BIG)), -1);
    ck_assert_int_eq(shape_numel(DIMS(BIG, 0, 3)), 0);
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_too_large_for_memory) {
    Scene s = scene();
    const int64_t g = INT64_C(1) << 30; /* 2^60 floats: a valid count, 4 EiB of memory */
    Tensor *huge = tensor_expand(tensor_scalar(test_ctx, 1), DIMS(g, g));
    ck_assert_ptr_nonnull(huge);
    EXPECT_NULL(tensor_zeros(test_ctx, DIMS(g, g)),
                "tensor_zeros: cannot allocate 4611686018427387904 bytes for shape (1073741824,1073741824)");
    EXPECT_NULL(tensor_from(test_ctx, DIMS(g, g), VALUES(1)),
                "tensor_from: 1 values given for shape (1073741824,1073741824), which holds 1152921504606846976");
    EXPECT_NULL(tensor_contiguous(huge),
                "tensor_zeros: cannot allocate 4611686018427387904 bytes for shape (1073741824,1073741824)");
    EXPECT_NULL(tensor_softmax_last_dim(huge),
                "tensor_zeros: cannot allocate 4611686018427387904 bytes for shape (1073741824,1073741824)");
    /* more floats than half the address space: refused before asking for memory */
    EXPECT_NULL(tensor_zeros(test_ctx, DIMS(2 * g, 2 * g)),
                "tensor_zeros: shape (2147483648,2147483648) has too many elements");
    EXPECT_NULL(ctx_alloc(test_ctx, (size_t)1 << 62), "ctx_alloc: out of memory allocating 4611686018427387904 bytes");
    EXPECT_NULL(ctx_alloc(test_ctx, SIZE_MAX), "ctx_alloc: 18446744073709551615 bytes is more than can be allocated");
    /* backward needs a gradient of the view's full shape: it fails before any backward runs */
    Tensor *x = tensor_requires_grad(tensor_scalar(test_ctx, 2));
    Tensor *wide = tensor_expand(x, DIMS(g, g)), *upstream = tensor_expand(tensor_scalar(test_ctx, 1), DIMS(g, g));
    ck_assert_ptr_nonnull(tensor_grad(x)); /* made now, so that the failing call makes nothing */
    EXPECT_MINUS_ONE(tensor_backward_from(wide, upstream),
                     "tensor_zeros: cannot allocate 4611686018427387904 bytes for shape (1073741824,1073741824)");
    EXPECT_VALUES(tensor_grad(x), VALUES(0), 0, "the leaf's gradient after a backward that failed");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== shapes ================================================================================ */

START_TEST(test_shapes_that_do_not_broadcast) {
    Scene s = scene();
    Tensor *a = s.a, *b = tensor_zeros(test_ctx, DIMS(2, 4)), *v = tensor_zeros(test_ctx, DIMS(3));
    int64_t out[TENSOR_MAX_RANK], map[8];
    int rank;
    EXPECT_NULL(tensor_add(a, b), "add: operands could not be broadcast together with shapes (2,3) (2,4)");
    EXPECT_NULL(tensor_sub(b, a), "sub: operands could not be broadcast together with shapes (2,4) (2,3)");
    EXPECT_NULL(tensor_mul(s.t, a), "mul: operands could not be broadcast together with shapes (3,2) (2,3)");
    EXPECT_NULL(tensor_div(a, b), "div: operands could not be broadcast together with shapes (2,3) (2,4)");
    EXPECT_NULL(tensor_expand(a, DIMS(3)), "expand: shape (2,3) cannot be broadcast to (3,)");
    EXPECT_NULL(tensor_expand(v, DIMS(1)), "expand: shape (3,) cannot be broadcast to (1,)");
    EXPECT_NULL(tensor_expand(a, DIMS(4, 3)), "expand: shape (2,3) cannot be broadcast to (4,3)");
    EXPECT_NULL(
        tensor_sum_to_shape(a, DIMS(4)),
        "sum_to_shape: shape (4,) does not broadcast to the input's shape (2,3), so the input cannot be summed onto it");
    EXPECT_NULL(
        tensor_sum_to_shape(a, DIMS(1, 2, 3)),
        "sum_to_shape: shape (1,2,3) does not broadcast to the input's shape (2,3), so the input cannot be summed onto it");
    Tensor *b342 = tensor_zeros(test_ctx, DIMS(3, 4, 2)), *b425 = tensor_zeros(test_ctx, DIMS(4, 2, 5));
    EXPECT_NULL(
        tensor_matmul(b342, b425),
        "matmul: operands could not be broadcast together with shapes (3,) (4,): the batch dims of (3,4,2) and (4,2,5)");
    EXPECT_MINUS_ONE(broadcast_shapes(DIMS(2, 3), DIMS(2, 4), out, &rank),
                     "broadcast_shapes: operands could not be broadcast together with shapes (2,3) (2,4)");
    EXPECT_MINUS_ONE(broadcast_strides(DIMS(2, 3), STRIDES(3, 1), DIMS(3), out),
                     "broadcast_strides: shape (2,3) cannot be broadcast to (3,)");
    EXPECT_MINUS_ONE(broadcast_map(DIMS(3), DIMS(2, 3), map), "broadcast_map: shape (2,3) cannot be broadcast to (3,)");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_shapes_that_must_match) {
    Scene s = scene();
    Tensor *a = s.a, *row = tensor_zeros(test_ctx, DIMS(3)), *m45 = tensor_zeros(test_ctx, DIMS(4, 5));
    Tensor *v4 = tensor_zeros(test_ctx, DIMS(4)), *logits = tensor_zeros(test_ctx, DIMS(2, 3));
    EXPECT_NULL(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5)),
                "tensor_from: 5 values given for shape (2,3), which holds 6");
    /* mse_loss refuses shapes that differ even when they would broadcast */
    EXPECT_NULL(tensor_mse_loss(a, row),
                "mse_loss: pred has shape (2,3) but target has shape (3,); they must be the same");
    EXPECT_NULL(tensor_mse_loss(a, s.t),
                "mse_loss: pred has shape (2,3) but target has shape (3,2); they must be the same");
    EXPECT_NULL(tensor_matmul(a, m45),
                "matmul: shapes (2,3) and (4,5) do not match: the last dim of the left operand (3) "
                "must equal the second-to-last dim of the right one (4)");
    EXPECT_NULL(tensor_matmul(a, v4),
                "matmul: shapes (2,3) and (4,) do not match: the last dim of the left operand (3) "
                "must equal the length of the right one (4)");
    EXPECT_NULL(tensor_matmul(v4, a),
                "matmul: shapes (4,) and (2,3) do not match: the last dim of the left operand (4) "
                "must equal the second-to-last dim of the right one (2)");
    EXPECT_NULL(tensor_cross_entropy(logits, (int64_t[]){0}, 1),
                "cross_entropy: 1 targets for logits of shape (2,3); there must be one per row");
    EXPECT_NULL(tensor_cross_entropy(logits, (int64_t[]){0, 0, 0}, 3),
                "cross_entropy: 3 targets for logits of shape (2,3); there must be one per row");
    /* lesson 7: a gain and a bias (C,) for x (..., C), even where (1,) would broadcast; w (K, N) and b (N,) */
    Tensor *one = tensor_zeros(test_ctx, DIMS(1)), *w35 = tensor_zeros(test_ctx, DIMS(3, 5));
    const char *needs_c = "needs gamma and beta of shape (C,) for its last dim C > 0";
    char want[256];
#define LN_WANT(x, gamma, beta) \
    (snprintf(want, sizeof want, "layer_norm: x %s %s, got %s and %s", x, needs_c, gamma, beta), want)
    EXPECT_NULL(tensor_layer_norm(a, v4, row, 1e-5f), LN_WANT("(2,3)", "(4,)", "(3,)"));
    EXPECT_NULL(tensor_layer_norm(a, row, v4, 1e-5f), LN_WANT("(2,3)", "(3,)", "(4,)"));
    EXPECT_NULL(tensor_layer_norm(a, one, row, 1e-5f), LN_WANT("(2,3)", "(1,)", "(3,)"));
    EXPECT_NULL(tensor_layer_norm(s.t, row, row, 1e-5f), LN_WANT("(3,2)", "(3,)", "(3,)"));
#undef LN_WANT
    EXPECT_NULL(tensor_linear(a, m45, NULL), "linear: x (2,3) @ w (4,5) + b NULL: needs x (..., K), w (K, N), b (N,)");
    EXPECT_NULL(tensor_linear(s.t, w35, NULL),
                "linear: x (3,2) @ w (3,5) + b NULL: needs x (..., K), w (K, N), b (N,)");
    EXPECT_NULL(tensor_linear(a, w35, v4), "linear: x (2,3) @ w (3,5) + b (4,): needs x (..., K), w (K, N), b (N,)");
    /* attention: x (B, T, C) = (2,3,4) needs wq, wk, wv, wo (C, C), bo (C,), a (T, T) mask and heads dividing C */
    Tensor *x = tensor_zeros(test_ctx, DIMS(2, 3, 4)), *w = tensor_zeros(test_ctx, DIMS(4, 4));
    Tensor *w43 = tensor_zeros(test_ctx, DIMS(4, 3)), *mask = causal_mask(test_ctx, 3),
           *mask4 = causal_mask(test_ctx, 4);
    EXPECT_NULL(tensor_attention(x, w43, w, w, w, v4, mask, 2),
                "attention: wq must be (C, C) = (4,4) for x (2,3,4), got (4,3)");
    EXPECT_NULL(tensor_attention(x, w, m45, w, w, v4, mask, 2),
                "attention: wk must be (C, C) = (4,4) for x (2,3,4), got (4,5)");
    EXPECT_NULL(tensor_attention(x, w, w, v4, w, v4, mask, 2),
                "attention: wv must be (C, C) = (4,4) for x (2,3,4), got (4,)");
    EXPECT_NULL(tensor_attention(x, w, w, w, w43, v4, mask, 2),
                "attention: wo must be (C, C) = (4,4) for x (2,3,4), got (4,3)");
    EXPECT_NULL(tensor_attention(x, w, w, w, w, row, mask, 2),
                "attention: bo must be (C,) = (4,) for x (2,3,4), got (3,)");
    EXPECT_NULL(tensor_attention(x, w, w, w, w, v4, mask4, 2), "attention: the mask must be (T, T) = (3,3), got (4,4)");
    EXPECT_NULL(tensor_attention(x, w, w, w, w, v4, w, 2), "attention: the mask must be (T, T) = (3,3), got (4,4)");
    EXPECT_NULL(tensor_attention(x, w, w, w, w, v4, mask, 3),
                "attention: x must be (B, T, C) with C divisible by the 3 heads, got (2,3,4)");
    EXPECT_NULL(tensor_attention(x, w, w, w, w, v4, mask, 0),
                "attention: x must be (B, T, C) with C divisible by the 0 heads, got (2,3,4)");
    EXPECT_NULL(tensor_attention(x, w, w, w, w, v4, mask, -2),
                "attention: x must be (B, T, C) with C divisible by the -2 heads, got (2,3,4)");
    /* attention over the heads: q, k, v one (B, T, C), heads dividing C, a (T, T) mask without a gradient */
    Tensor *x5 = tensor_zeros(test_ctx, DIMS(2, 3, 5)), *x2 = tensor_zeros(test_ctx, DIMS(3, 4));
    EXPECT_NULL(tensor_attention_heads(x, x5, x, mask, 2),
                "attention_heads: q, k and v must be one shape (B, T, C), got q (2,3,4), k (2,3,5), v (2,3,4)");
    EXPECT_NULL(tensor_attention_heads(x, x, x5, mask, 2),
                "attention_heads: q, k and v must be one shape (B, T, C), got q (2,3,4), k (2,3,4), v (2,3,5)");
    EXPECT_NULL(tensor_attention_heads(x2, x2, x2, mask, 2),
                "attention_heads: q, k and v must be one shape (B, T, C), got q (3,4), k (3,4), v (3,4)");
    EXPECT_NULL(tensor_attention_heads(x, x, x, mask, 3),
                "attention_heads: C = 4 of q (2,3,4) must split into 3 heads of equal width");
    EXPECT_NULL(tensor_attention_heads(x, x, x, mask, 0),
                "attention_heads: C = 4 of q (2,3,4) must split into 0 heads of equal width");
    EXPECT_NULL(tensor_attention_heads(x, x, x, mask4, 2),
                "attention_heads: the mask must be (T, T) = (3,3) for q (2,3,4), got (4,4)");
    /* weights past what any memory holds, from views that hold one row: refused before anything is copied */
    int64_t big = (int64_t)1 << 20;
    Tensor *huge_q =
        tensor_as_strided(tensor_zeros(test_ctx, DIMS(8)), DIMS(big, big, 8), (const int64_t[]){0, 0, 1}, 0);
    Tensor *huge_mask = tensor_as_strided(tensor_zeros(test_ctx, DIMS(1)), DIMS(big, big), (const int64_t[]){0, 0}, 0);
    EXPECT_NULL(tensor_attention_heads(huge_q, huge_q, huge_q, huge_mask, 2),
                "attention_heads: the weights (B, H, T, T) = (1048576,2,1048576,1048576) are too many to hold");
    Tensor *learned_mask = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(3, 3)));
    EXPECT_NULL(tensor_attention(x, w, w, w, w, v4, learned_mask, 2),
                "attention: the mask takes no gradient (a constant, as causal_mask's is)");
    EXPECT_NULL(tensor_attention_heads(x, x, x, learned_mask, 2),
                "attention_heads: the mask takes no gradient (a constant, as causal_mask's is)");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_wrong_rank) {
    Scene s = scene();
    Tensor *a = s.a, *scalar = tensor_scalar(test_ctx, 7), *v = tensor_zeros(test_ctx, DIMS(3));
    Tensor *cube = tensor_zeros(test_ctx, DIMS(1, 2, 3));
    EXPECT_NULL(tensor_sum_last_dim(scalar), "sum_last_dim: a rank-0 tensor (a scalar) has no last dim to sum over");
    EXPECT_NULL(tensor_softmax_last_dim(scalar),
                "softmax_last_dim: a rank-0 tensor (a scalar) has no last dim to normalize over");
    EXPECT_NULL(tensor_log_softmax_last_dim(scalar),
                "log_softmax_last_dim: a rank-0 tensor (a scalar) has no last dim to normalize over");
    EXPECT_NULL(tensor_matmul(scalar, v),
                "matmul: shapes () and (3,): a rank-0 operand (a scalar) has no matrix dims; use tensor_mul to scale");
    EXPECT_NULL(tensor_matmul(a, scalar),
                "matmul: shapes (2,3) and (): a rank-0 operand (a scalar) has no matrix dims; use tensor_mul to scale");
    EXPECT_NULL(tensor_cross_entropy(v, (int64_t[]){0}, 1), "cross_entropy: logits must have shape (N, C), got (3,)");
    EXPECT_NULL(tensor_cross_entropy(cube, (int64_t[]){0}, 1),
                "cross_entropy: logits must have shape (N, C), got (1,2,3)");
    EXPECT_NULL(tensor_gather_rows(v, (int64_t[]){0}, 1), "gather_rows: the table must have shape (V, D), got (3,)");
    EXPECT_NULL(tensor_gather_rows(cube, (int64_t[]){0}, 1),
                "gather_rows: the table must have shape (V, D), got (1,2,3)");
    EXPECT_NULL(tensor_gather_rows(scalar, (int64_t[]){0}, 1), "gather_rows: the table must have shape (V, D), got ()");
    EXPECT_NULL(tensor_embedding(v, (int64_t[]){0}, DIMS(1)), "embedding: the table must have shape (V, D), got (3,)");
    NdIter it;
    EXPECT_VOID(nditer_init_rows(&it, scalar), !nditer_next(&it),
                "nditer_init_rows: a rank-0 tensor (a scalar) has no rows");
    /* lesson 7: layer norm of a scalar, a gain of rank 2; a weight of rank 1, a scalar input; attention of (T, C) */
    Tensor *one = tensor_zeros(test_ctx, DIMS(1)), *row13 = tensor_zeros(test_ctx, DIMS(1, 3));
    Tensor *w135 = tensor_zeros(test_ctx, DIMS(1, 3, 5)), *w35 = tensor_zeros(test_ctx, DIMS(3, 5));
    EXPECT_NULL(tensor_layer_norm(scalar, one, one, 1e-5f),
                "layer_norm: x () needs gamma and beta of shape (C,) for its last dim C > 0, got (1,) and (1,)");
    EXPECT_NULL(tensor_layer_norm(a, row13, v, 1e-5f),
                "layer_norm: x (2,3) needs gamma and beta of shape (C,) for its last dim C > 0, got (1,3) and (3,)");
    EXPECT_NULL(tensor_linear(a, v, NULL), "linear: x (2,3) @ w (3,) + b NULL: needs x (..., K), w (K, N), b (N,)");
    EXPECT_NULL(tensor_linear(a, w135, NULL),
                "linear: x (2,3) @ w (1,3,5) + b NULL: needs x (..., K), w (K, N), b (N,)");
    EXPECT_NULL(tensor_linear(scalar, row13, NULL),
                "linear: x () @ w (1,3) + b NULL: needs x (..., K), w (K, N), b (N,)");
    EXPECT_NULL(tensor_linear(a, w35, row13),
                "linear: x (2,3) @ w (3,5) + b (1,3): needs x (..., K), w (K, N), b (N,)");
    Tensor *w = tensor_zeros(test_ctx, DIMS(3, 3)), *mask = causal_mask(test_ctx, 2),
           *x4 = tensor_zeros(test_ctx, DIMS(1, 1, 2, 3));
    EXPECT_NULL(tensor_attention(a, w, w, w, w, v, mask, 1),
                "attention: x must be (B, T, C) with C divisible by the 1 heads, got (2,3)");
    EXPECT_NULL(tensor_attention(x4, w, w, w, w, v, mask, 1),
                "attention: x must be (B, T, C) with C divisible by the 1 heads, got (1,1,2,3)");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_axis_out_of_range) {
    Scene s = scene();
    Tensor *a = s.a, *scalar = tensor_scalar(test_ctx, 7);
    EXPECT_NULL(tensor_sum_axis(a, 2, false), "sum_axis: axis 2 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_sum_axis(a, -3, true), "sum_axis: axis -3 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_sum_axis(scalar, 0, false), "sum_axis: axis 0 is out of bounds for array of dimension 0");
    EXPECT_NULL(tensor_mean_axis(a, 2, true), "mean_axis: axis 2 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_mean_axis(a, -3, false), "mean_axis: axis -3 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_transpose(a, 0, 2), "transpose: axis 2 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_transpose(a, -3, 0), "transpose: axis -3 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_transpose(scalar, 0, 0), "transpose: axis 0 is out of bounds for array of dimension 0");
    /* negative axes in range count from the end, as in numpy */
    EXPECT_SHAPE(RESULT(tensor_sum_axis(a, -1, false)), DIMS(2), "sum_axis(a, -1)");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_invalid_permutation) {
    Scene s = scene();
    Tensor *a = s.a;
    int64_t map[8];
    int axes[TENSOR_MAX_RANK];
    EXPECT_NULL(tensor_permute(a, AXES(0, 0)), "permute: repeated axis 0 in (0,0)");
    EXPECT_NULL(tensor_permute(a, AXES(1, -1)), "permute: repeated axis 1 in (1,-1)");
    EXPECT_NULL(tensor_permute(a, AXES(0, 2)), "permute: axis 2 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_permute(a, AXES(-3, 0)), "permute: axis -3 is out of bounds for array of dimension 2");
    EXPECT_NULL(tensor_permute(a, AXES(0, 1, 2)),
                "permute: axes (0,1,2) don't match a tensor of rank 2: give each of its 2 axes once");
    EXPECT_NULL(tensor_permute(a, AXES(0)),
                "permute: axes (0,) don't match a tensor of rank 2: give each of its 2 axes once");
    EXPECT_NULL(tensor_permute(a, (int[]){0}, -1),
                "permute: -1 axes given for a tensor of rank 2: give each of its 2 axes once");
    EXPECT_MINUS_ONE(normalize_permutation("transpose", AXES(2, 2, 0), 3, axes),
                     "transpose: repeated axis 2 in (2,2,0)");
    EXPECT_MINUS_ONE(permute_map(DIMS(2, 3), (int[]){1, 1}, map), "permute_map: repeated axis 1 in (1,1)");
    EXPECT_MINUS_ONE(permute_map(DIMS(2, 3), (int[]){0, 5}, map),
                     "permute_map: axis 5 is out of bounds for array of dimension 2");
    /* inverse_permutation returns nothing: an invalid one leaves inv as it was, with a message */
    int inv[3] = {7, 7, 7};
    EXPECT_VOID(inverse_permutation((int[]){0, 5, 1}, 3, inv), inv[0] == 7 && inv[1] == 7 && inv[2] == 7,
                "inverse_permutation: axis 5 is out of bounds for array of dimension 3");
    EXPECT_VOID(inverse_permutation((int[]){1, 1, 0}, 3, inv), inv[0] == 7 && inv[1] == 7 && inv[2] == 7,
                "inverse_permutation: repeated axis 1 in (1,1,0)");
    /* not errors: swapping a dim with itself, and negative axes in range */
    Tensor *same = RESULT(tensor_transpose(a, 1, -1));
    ck_assert(same->storage == a->storage && same->strides[0] == 3 && same->strides[1] == 1);
    EXPECT_VALUES(RESULT(tensor_permute(a, AXES(-1, -2))), VALUES(1, 4, 2, 5, 3, 6), 0, "permute by (-1,-2)");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_reshape_errors) {
    Scene s = scene();
    Tensor *a = s.a;
    EXPECT_NULL(tensor_reshape(a, DIMS(4)), "reshape: cannot reshape array of size 6 into shape (4,)");
    EXPECT_NULL(tensor_reshape(s.t, DIMS(7)), "reshape: cannot reshape array of size 6 into shape (7,)");
    EXPECT_NULL(tensor_reshape(a, DIMS(-1, -1)), "reshape: can only specify one unknown dimension, got (-1,-1)");
    EXPECT_NULL(tensor_reshape(a, DIMS(-1, 4)), "reshape: cannot reshape array of size 6 into shape (-1,4)");
    EXPECT_NULL(tensor_reshape(a, DIMS(-1, 0)), "reshape: cannot reshape array of size 6 into shape (-1,0)");
    Tensor *e20 = tensor_zeros(test_ctx, DIMS(2, 0));
    EXPECT_NULL(tensor_reshape(e20, DIMS(-1, 0)),
                "reshape: cannot reshape array of size 0 into shape (-1,0)"); /* the -1 could be anything */
    EXPECT_NULL(tensor_reshape(a, DIMS(2, -2)), "reshape: negative dimensions are not allowed, got shape (2,-2)");
    EXPECT_SHAPE(RESULT(tensor_reshape(s.t, DIMS(-1))), DIMS(6), "reshape of the transposed view to (-1,)");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_index_out_of_range) {
    Scene s = scene();
    Tensor *a = s.a, *logits = tensor_zeros(test_ctx, DIMS(2, 3));
    EXPECT_NULL(tensor_gather_rows(a, (int64_t[]){0, 2}, 2),
                "gather_rows: index 2 at position 1 is out of range for a table of 2 rows (valid: 0 to 1)");
    EXPECT_NULL(tensor_gather_rows(a, (int64_t[]){-1}, 1),
                "gather_rows: index -1 at position 0 is out of range for a table of 2 rows (valid: 0 to 1)");
    EXPECT_NULL(
        tensor_gather_rows(a, (int64_t[]){1, 0, INT64_MIN}, 3),
        "gather_rows: index -9223372036854775808 at position 2 is out of range for a table of 2 rows (valid: 0 to 1)");
    EXPECT_NULL(
        tensor_gather_rows(s.t, (int64_t[]){INT64_MAX}, 1),
        "gather_rows: index 9223372036854775807 at position 0 is out of range for a table of 3 rows (valid: 0 to 2)");
    Tensor *no_rows = tensor_zeros(test_ctx, DIMS(0, 3));
    EXPECT_NULL(tensor_gather_rows(no_rows, (int64_t[]){0}, 1),
                "gather_rows: index 0 at position 0 is out of range for a table of 0 rows (it has no rows)");
    EXPECT_NULL(tensor_gather_rows(a, (int64_t[]){0}, -1), "gather_rows: -1 indices is not a count");
    EXPECT_NULL(tensor_embedding(a, (int64_t[]){0, 1, 5, 0}, DIMS(2, 2)),
                "embedding: index 5 at position (1,0) is out of range for a table of 2 rows (valid: 0 to 1)");
    EXPECT_NULL(tensor_embedding(a, (int64_t[]){0, 1, 1, -2, 0, 0}, DIMS(1, 3, 2)),
                "embedding: index -2 at position (0,1,1) is out of range for a table of 2 rows (valid: 0 to 1)");
    EXPECT_NULL(tensor_cross_entropy(logits, (int64_t[]){0, 3}, 2),
                "cross_entropy: target 3 at position 1 is out of range for 3 classes");
    EXPECT_NULL(tensor_cross_entropy(logits, (int64_t[]){-1, 0}, 2),
                "cross_entropy: target -1 at position 0 is out of range for 3 classes");
    EXPECT_NAN(tensor_get(a, (int64_t[]){2, 0}), "get: index 2 is out of range for dim 0 of shape (2,3)");
    EXPECT_NAN(tensor_get(s.t, (int64_t[]){0, -1}), "get: index -1 is out of range for dim 1 of shape (3,2)");
    /* the model's tokens and targets: characters 0 to 26 */
    Model m;
    ck_assert_int_eq(model_init(&m, test_ctx, &model_config, 1), 0);
    int64_t tokens[2][4] = {{0, 1, 2, 3}, {4, 27, 5, 6}}, targets[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    EXPECT_NULL(model_logits(&m, tokens[0], 2, 4),
                "embedding: index 27 at position (1,1) is out of range for a table of 27 rows (valid: 0 to 26)");
    tokens[1][1] = -1;
    EXPECT_NULL(model_loss(&m, tokens[0], targets[0], 2, 4),
                "embedding: index -1 at position (1,1) is out of range for a table of 27 rows (valid: 0 to 26)");
    tokens[1][1] = 0;
    targets[0][3] = 27;
    EXPECT_NULL(model_loss(&m, tokens[0], targets[0], 2, 4),
                "model_loss: target 27 at position (0,3) is out of range for 27 classes (valid: 0 to 26)");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_view_outside_storage) {
    Scene s = scene();
    Tensor *a = s.a;
    EXPECT_NULL(
        tensor_as_strided(a, DIMS(3, 3), STRIDES(3, 1), 0),
        "as_strided: a view with shape (3,3), strides (3,1) and offset 0 reaches outside storage #1 of 6 floats");
    EXPECT_NULL(
        tensor_as_strided(a, DIMS(2), STRIDES(-1), 0),
        "as_strided: a view with shape (2,), strides (-1,) and offset 0 reaches outside storage #1 of 6 floats");
    EXPECT_NULL(tensor_as_strided(a, DIMS(1), STRIDES(1), 6),
                "as_strided: a view with shape (1,), strides (1,) and offset 6 reaches outside storage #1 of 6 floats");
    EXPECT_NULL(
        tensor_as_strided(a, DIMS(2, 2), STRIDES(INT64_MAX, 1), 0),
        "as_strided: a view with shape (2,2), strides (9223372036854775807,1) and offset 0 reaches outside storage #1 of 6 floats");
    EXPECT_NULL(
        tensor_as_strided(a, DIMS(2), STRIDES(INT64_MIN), 5),
        "as_strided: a view with shape (2,), strides (-9223372036854775808,) and offset 5 reaches outside storage #1 of 6 floats");
    EXPECT_NULL(
        tensor_as_strided(a, DIMS(0), STRIDES(1), -1),
        "as_strided: a view with shape (0,), strides (1,) and offset -1 reaches outside storage #1 of 6 floats");
    /* one past either end: its last element would be 6 (2 + 3 or 3 + 3), its first -1 */
    EXPECT_NULL(tensor_as_strided(a, DIMS(2), STRIDES(3), 3),
                "as_strided: a view with shape (2,), strides (3,) and offset 3 reaches outside storage #1 of 6 floats");
    EXPECT_NULL(
        tensor_as_strided(a, DIMS(2), STRIDES(-3), 2),
        "as_strided: a view with shape (2,), strides (-3,) and offset 2 reaches outside storage #1 of 6 floats");
    EXPECT_VALUES(RESULT(tensor_as_strided(a, DIMS(2), STRIDES(3), 2)), VALUES(3, 6), 0,
                  "the view that ends on the last element");
    EXPECT_VALUES(RESULT(tensor_as_strided(a, DIMS(2), STRIDES(-3), 3)), VALUES(4, 1), 0,
                  "the view that ends on the first element");
    /* an empty view reaches nothing: any offset >= 0 is accepted, and one past the storage is kept at its end */
    Tensor *nothing = RESULT(tensor_as_strided(a, DIMS(2, 0), STRIDES(INT64_MAX, 1), INT64_MAX));
    ck_assert_int_eq(nothing->offset, 6);
    EXPECT_VALUES(RESULT(tensor_sum(nothing)), VALUES(0), 0, "the sum of an empty view");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== documented numeric results ============================================================ */

START_TEST(test_zero_size_dims) {
    Scene s = scene();
    Tensor *e = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(0)));
    Tensor *e20 = tensor_zeros(test_ctx, DIMS(2, 0)), *e03 = tensor_zeros(test_ctx, DIMS(0, 3));
    Tensor *table = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    /* reductions: the sum of nothing is 0, the mean of nothing is nan (0 * 1/0), as numpy and PyTorch */
    EXPECT_VALUES(RESULT(tensor_sum(e)), VALUES(0), 0, "sum of (0,)");
    EXPECT_VALUES(RESULT(tensor_mean(e)), VALUES(NAN), 0, "mean of (0,)");
    EXPECT_VALUES(RESULT(tensor_sum_last_dim(e20)), VALUES(0, 0), 0, "sum_last_dim of (2,0)");
    EXPECT_SHAPE(RESULT(tensor_sum_last_dim(e20)), DIMS(2, 1), "sum_last_dim of (2,0)");
    EXPECT_VALUES(RESULT(tensor_sum_axis(e20, 1, false)), VALUES(0, 0), 0, "sum_axis of (2,0) over axis 1");
    EXPECT_VALUES(RESULT(tensor_mean_axis(e20, 1, false)), VALUES(NAN, NAN), 0, "mean_axis of (2,0) over axis 1");
    EXPECT_SHAPE(RESULT(tensor_mean_axis(e20, 0, false)), DIMS(0), "mean_axis of (2,0) over axis 0");
    EXPECT_VALUES(RESULT(tensor_mse_loss(e, e)), VALUES(NAN), 0, "mse_loss of (0,)");
    /* softmax family: an empty row or no rows give an empty result; no rows give a nan loss */
    EXPECT_SHAPE(RESULT(tensor_softmax_last_dim(e20)), DIMS(2, 0), "softmax of (2,0)");
    EXPECT_SHAPE(RESULT(tensor_log_softmax_last_dim(e03)), DIMS(0, 3), "log_softmax of (0,3)");
    EXPECT_VALUES(RESULT(tensor_cross_entropy(e03, NULL, 0)), VALUES(NAN), 0, "cross_entropy of (0,3)");
    EXPECT_NULL(tensor_cross_entropy(e20, (int64_t[]){0, 0}, 2),
                "cross_entropy: target 0 at position 0 is out of range for 0 classes");
    /* matmul: an empty inner dim is an empty sum, so zeros */
    EXPECT_VALUES(RESULT(tensor_matmul(e20, e03)), VALUES(0, 0, 0, 0, 0, 0), 0, "(2,0) @ (0,3)");
    EXPECT_VALUES(RESULT(tensor_matmul(e, e)), VALUES(0), 0, "(0,) @ (0,)");
    Tensor *batches = tensor_expand(tensor_zeros(test_ctx, DIMS(1, 1, 3)), DIMS(BIG, 1, 3)),
           *none = tensor_zeros(test_ctx, DIMS(3, 0));
    EXPECT_SHAPE(RESULT(tensor_matmul(batches, none)), DIMS(BIG, 1, 0), "2^40 empty products: nothing to compute");
    /* gather, views, broadcasting */
    EXPECT_SHAPE(RESULT(tensor_gather_rows(table, NULL, 0)), DIMS(0, 2), "gather of no indices");
    EXPECT_SHAPE(RESULT(tensor_embedding(table, NULL, DIMS(2, 0))), DIMS(2, 0, 2), "embedding of (2,0) indices");
    EXPECT_SHAPE(RESULT(tensor_reshape(e20, DIMS(0, 5))), DIMS(0, 5), "reshape (2,0) to (0,5)");
    EXPECT_SHAPE(RESULT(tensor_reshape(e20, DIMS(-1, 3))), DIMS(0, 3), "reshape (2,0) to (-1,3)");
    EXPECT_SHAPE(RESULT(tensor_permute(tensor_zeros(test_ctx, DIMS(2, 0, 3)), AXES(2, 0, 1))), DIMS(3, 2, 0),
                 "permute (2,0,3)");
    EXPECT_SHAPE(RESULT(tensor_expand(tensor_zeros(test_ctx, DIMS(1)), DIMS(0))), DIMS(0), "expand (1,) to (0,)");
    Tensor *v1 = tensor_zeros(test_ctx, DIMS(1)), *v3 = tensor_zeros(test_ctx, DIMS(3));
    EXPECT_NULL(tensor_expand(v3, DIMS(0)), "expand: shape (3,) cannot be broadcast to (0,)");
    EXPECT_SHAPE(RESULT(tensor_add(e, v1)), DIMS(0), "(0,) + (1,)");
    EXPECT_NULL(tensor_add(e, v3), "add: operands could not be broadcast together with shapes (0,) (3,)");
    EXPECT_NAN(tensor_item(e), "item: only a one-element tensor has an item, got shape (0,)");
    /* backward through an empty tensor: the loss is nan, the gradient is empty */
    tensor_clear_error();
    ck_assert_int_eq(tensor_backward(tensor_mean(e)), 0);
    EXPECT_SHAPE(tensor_grad(e), DIMS(0), "the gradient of an empty leaf");
    /* lesson 7: no rows are fine, rows of no columns have no mean to take */
    Tensor *row3 = tensor_zeros(test_ctx, DIMS(3)), *none0 = tensor_zeros(test_ctx, DIMS(0));
    EXPECT_SHAPE(RESULT(tensor_gelu(e20)), DIMS(2, 0), "gelu of (2,0)");
    EXPECT_SHAPE(RESULT(tensor_layer_norm(e03, row3, row3, 1e-5f)), DIMS(0, 3), "layer_norm of (0,3)");
    EXPECT_NULL(tensor_layer_norm(e20, none0, none0, 1e-5f),
                "layer_norm: x (2,0) needs gamma and beta of shape (C,) for its last dim C > 0, got (0,) and (0,)");
    EXPECT_SHAPE(RESULT(tensor_linear(e03, tensor_zeros(test_ctx, DIMS(3, 2)), NULL)), DIMS(0, 2), "linear of (0,3)");
    EXPECT_SHAPE(RESULT(causal_mask(test_ctx, 0)), DIMS(0, 0), "causal_mask of T = 0");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_nan_and_inf) {
    Scene s = scene();
    Ctx *c = test_ctx;
    const float inf = INFINITY, nan = NAN;
    /* elementwise: IEEE, as numpy */
    Tensor *num = tensor_from(c, DIMS(3), VALUES(1, -1, 0)), *zero = tensor_zeros(c, DIMS(1));
    EXPECT_VALUES(RESULT(tensor_div(num, zero)), VALUES(inf, -inf, nan), 0, "x / 0");
    EXPECT_VALUES(RESULT(tensor_add(tensor_from(c, DIMS(3), VALUES(nan, inf, inf)),
                                    tensor_from(c, DIMS(3), VALUES(1, 1, -inf)))),
                  VALUES(nan, inf, nan), 0, "nan + 1, inf + 1, inf + -inf");
    EXPECT_VALUES(RESULT(tensor_mul_scalar(tensor_from(c, DIMS(2), VALUES(inf, 0)), 0)), VALUES(nan, 0), 0, "inf * 0");
    EXPECT_VALUES(RESULT(tensor_pow_scalar(tensor_from(c, DIMS(2), VALUES(-8, 0)), -1.0f / 3)), VALUES(nan, inf), 0,
                  "x ^ (-1/3)");
    /* reductions: a nan anywhere makes the sum nan; inf - inf is nan */
    EXPECT_VALUES(RESULT(tensor_sum(tensor_from(c, DIMS(3), VALUES(1, nan, 2)))), VALUES(nan), 0, "sum with a nan");
    EXPECT_VALUES(RESULT(tensor_sum(tensor_from(c, DIMS(2), VALUES(inf, -inf)))), VALUES(nan), 0,
                  "sum of inf and -inf");
    EXPECT_VALUES(RESULT(tensor_mean(tensor_from(c, DIMS(2), VALUES(inf, 1)))), VALUES(inf), 0, "mean with an inf");
    EXPECT_VALUES(RESULT(tensor_sum_last_dim(tensor_from(c, DIMS(2, 2), VALUES(1, nan, 1, 1)))), VALUES(nan, 2), 0,
                  "sum_last_dim: only the row with the nan");
    EXPECT_VALUES(RESULT(tensor_mse_loss(tensor_from(c, DIMS(2), VALUES(inf, 1)),
                                         tensor_from(c, DIMS(2), VALUES(inf, 1)))),
                  VALUES(nan), 0, "mse_loss of inf against inf");
    /* softmax family: lesson 3's rules */
    EXPECT_VALUES(RESULT(tensor_softmax_last_dim(tensor_from(c, DIMS(3), VALUES(1, -inf, 3)))),
                  VALUES(0.1192029f, 0, 0.8807971f), 1e-6f, "softmax with a masked entry");
    EXPECT_VALUES(RESULT(tensor_softmax_last_dim(tensor_from(c, DIMS(3), VALUES(-inf, -inf, -inf)))),
                  VALUES(nan, nan, nan), 0, "softmax of a fully masked row");
    EXPECT_VALUES(RESULT(tensor_softmax_last_dim(tensor_from(c, DIMS(2, 3), VALUES(1, nan, 3, 1, 2, 3)))),
                  VALUES(nan, nan, nan, 0.0900306f, 0.2447285f, 0.6652410f), 1e-6f,
                  "softmax: only the row with the nan");
    EXPECT_VALUES(RESULT(tensor_softmax_last_dim(tensor_from(c, DIMS(3), VALUES(1, inf, 3)))), VALUES(nan, nan, nan), 0,
                  "softmax with a +inf");
    EXPECT_VALUES(RESULT(tensor_log_softmax_last_dim(tensor_from(c, DIMS(3), VALUES(1, -inf, 3)))),
                  VALUES(-2.126928f, -inf, -0.126928f), 1e-6f, "log_softmax with a masked entry");
    EXPECT_VALUES(RESULT(tensor_log_softmax_last_dim(tensor_from(c, DIMS(3), VALUES(-inf, -inf, -inf)))),
                  VALUES(nan, nan, nan), 0, "log_softmax of a fully masked row");
    EXPECT_VALUES(RESULT(tensor_log_softmax_last_dim(tensor_from(c, DIMS(3), VALUES(1, inf, nan)))),
                  VALUES(nan, nan, nan), 0, "log_softmax with +inf and nan");
    Tensor *masked = tensor_requires_grad(tensor_from(c, DIMS(1, 3), VALUES(1, -inf, 3)));
    Tensor *loss = RESULT(tensor_cross_entropy(masked, (int64_t[]){1}, 1));
    EXPECT_VALUES(loss, VALUES(inf), 0, "cross_entropy when the target's logit is -inf");
    EXPECT_VALUES(RESULT(tensor_cross_entropy(masked, (int64_t[]){0}, 1)), VALUES(2.126928f), 1e-6f,
                  "cross_entropy when another logit is -inf");
    EXPECT_VALUES(RESULT(tensor_cross_entropy(tensor_from(c, DIMS(1, 3), VALUES(1, nan, 3)), (int64_t[]){0}, 1)),
                  VALUES(nan), 0, "cross_entropy with a nan");
    EXPECT_VALUES(RESULT(tensor_cross_entropy(tensor_from(c, DIMS(1, 3), VALUES(1, inf, 3)), (int64_t[]){1}, 1)),
                  VALUES(nan), 0, "cross_entropy with a +inf");
    /* the gradients stay finite where the values are: softmax minus the one-hot target */
    ck_assert_int_eq(tensor_backward(loss), 0);
    EXPECT_VALUES(tensor_grad(masked), VALUES(0.1192029f, -1, 0.8807971f), 1e-6f, "the gradient of an infinite loss");
    Tensor *x = tensor_requires_grad(tensor_from(c, DIMS(3), VALUES(1, -inf, 3)));
    ck_assert_int_eq(tensor_backward_from(RESULT(tensor_softmax_last_dim(x)), tensor_from(c, DIMS(3), VALUES(1, 2, 3))),
                     0);
    EXPECT_VALUES(tensor_grad(x), VALUES(-0.2099872f, 0, 0.2099872f), 1e-5f, "softmax's gradient with a masked entry");
    ck_assert_msg(tensor_data(tensor_grad(x))[1] == 0.0f, "the masked entry's gradient is %g, not exactly 0",
                  (double)tensor_data(tensor_grad(x))[1]);
    /* matmul: a nan reaches only the outputs that read it; inf * 0 is nan */
    EXPECT_VALUES(RESULT(tensor_matmul(tensor_from(c, DIMS(2, 2), VALUES(1, nan, 1, 1)),
                                       tensor_from(c, DIMS(2, 2), VALUES(1, 1, 1, 1)))),
                  VALUES(nan, nan, 2, 2), 0, "matmul with a nan in row 0");
    EXPECT_VALUES(RESULT(tensor_matmul(tensor_from(c, DIMS(1, 2), VALUES(inf, 0)),
                                       tensor_from(c, DIMS(2, 1), VALUES(0, 1)))),
                  VALUES(nan), 0, "matmul: inf * 0");
    /* gather and views copy nan and inf as they are */
    EXPECT_VALUES(RESULT(tensor_gather_rows(tensor_from(c, DIMS(2, 2), VALUES(nan, inf, 1, 2)), (int64_t[]){0, 0}, 2)),
                  VALUES(nan, inf, nan, inf), 0, "gather of nan and inf");
    /* pow's gradient: sqrt at 0 is inf, as in PyTorch; x^0 has gradient 0 */
    Tensor *p = tensor_requires_grad(tensor_from(c, DIMS(2), VALUES(0, 4)));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_pow_scalar(p, 0.5f))), 0);
    EXPECT_VALUES(tensor_grad(p), VALUES(inf, 0.25f), 0, "the gradient of sqrt at 0 and 4");
    tensor_zero_grad(p);
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_pow_scalar(p, 0))), 0);
    EXPECT_VALUES(tensor_grad(p), VALUES(0, 0), 0, "the gradient of x^0");
    /* an upstream gradient of nan and inf flows through */
    Tensor *u = tensor_requires_grad(tensor_from(c, DIMS(2), VALUES(1, 2)));
    ck_assert_int_eq(tensor_backward_from(tensor_mul_scalar(u, 2), tensor_from(c, DIMS(2), VALUES(nan, inf))), 0);
    EXPECT_VALUES(tensor_grad(u), VALUES(nan, inf), 0, "an upstream gradient of nan and inf");
    /* item returns a nan value as it is, with no error: tensor_error() tells the two nans apart */
    tensor_clear_error();
    ck_assert(isnan(tensor_item(tensor_scalar(c, nan))));
    ck_assert_ptr_null(tensor_error());
    /* gelu: x/2 * (1 + tanh(u)) at -inf is -inf * 0, nan, as in PyTorch; the tails are exact */
    EXPECT_VALUES(RESULT(tensor_gelu(tensor_from(c, DIMS(5), VALUES(-inf, inf, nan, -20, 20)))),
                  VALUES(nan, inf, nan, 0, 20), 0, "gelu of -inf, inf, nan, -20, 20");
    /* the textbook softmax overflows (lesson 3); it has no error channel */
    float naive[3];
    softmax_naive_row((const float[]){0, 1, 1000}, 3, naive);
    ck_assert(naive[0] == 0 && naive[1] == 0 && isnan(naive[2]));
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== lesson 7: settings a layer, the model or AdamW cannot take ============================== */

START_TEST(test_model_settings) {
    Scene s = scene();
    Tensor *a = s.a, *row = tensor_zeros(test_ctx, DIMS(3));
    EXPECT_NULL(tensor_layer_norm(a, row, row, 0), "layer_norm: eps must be > 0, got 0");
    EXPECT_NULL(tensor_layer_norm(a, row, row, -1e-5f), "layer_norm: eps must be > 0, got -1e-05");
    EXPECT_NULL(tensor_layer_norm(a, row, row, NAN), "layer_norm: eps must be > 0, got nan");
    EXPECT_NULL(causal_mask(test_ctx, -1), "causal_mask: T must be >= 0, got -1");
    /* a config: heads that do not divide the width, no layers, more than MODEL_MAX_LAYERS, an empty vocabulary */
    const char *not_a_model = "is not a model: every size >= 1, heads dividing width, 1 to 8 layers";
    char want[256];
#define CONFIG_WANT(op, v, h, l)                                                                                       \
    (snprintf(want, sizeof want, "%s: config vocab %d, context 8, width 16, heads %d, layers %d, mlp 64 %s", op, v, h, \
              l, not_a_model),                                                                                         \
     want)
    ModelConfig bad = model_config;
    Model m;
    ck_assert_int_eq(model_init(&m, test_ctx, &model_config, 1), 0);
    bad.heads = 3;
    EXPECT_FALSE(model_config_valid("model_init", &bad), CONFIG_WANT("model_init", 27, 3, 2));
    EXPECT_MINUS_ONE(model_init(&m, test_ctx, &bad, 1), CONFIG_WANT("model_init", 27, 3, 2));
    bad.heads = 0;
    EXPECT_MINUS_ONE(model_init(&m, test_ctx, &bad, 1), CONFIG_WANT("model_init", 27, 0, 2));
    bad = model_config, bad.layers = 0;
    EXPECT_MINUS_ONE(model_init(&m, test_ctx, &bad, 1), CONFIG_WANT("model_init", 27, 2, 0));
    bad.layers = MODEL_MAX_LAYERS + 1;
    EXPECT_MINUS_ONE(model_init(&m, test_ctx, &bad, 1), CONFIG_WANT("model_init", 27, 2, 9));
    bad = model_config, bad.vocab = 0;
    EXPECT_MINUS_ONE(model_init(&m, test_ctx, &bad, 1), CONFIG_WANT("model_init", 0, 2, 2));
#undef CONFIG_WANT
    ck_assert_int_eq(m.n_params, 6 + 13 * 2); /* a failed model_init left the model as it was */
    /* a batch the model cannot take: T above the context, no sequences, no characters */
    int64_t tokens[18] = {0};
    EXPECT_NULL(model_logits(&m, tokens, 2, 9),
                "model_logits: tokens (B, T) = (2,9): needs B >= 1 and 1 <= T <= 8 (the context)");
    EXPECT_NULL(model_loss(&m, tokens, tokens, 2, 9),
                "model_logits: tokens (B, T) = (2,9): needs B >= 1 and 1 <= T <= 8 (the context)");
    EXPECT_NULL(model_logits(&m, tokens, 0, 8),
                "model_logits: tokens (B, T) = (0,8): needs B >= 1 and 1 <= T <= 8 (the context)");
    EXPECT_NULL(model_logits(&m, tokens, 2, 0),
                "model_logits: tokens (B, T) = (2,0): needs B >= 1 and 1 <= T <= 8 (the context)");
    EXPECT_NULL(model_logits(&m, tokens, -1, 8),
                "model_logits: tokens (B, T) = (-1,8): needs B >= 1 and 1 <= T <= 8 (the context)");
    /* AdamW: a step that cannot be taken changes no parameter, no moment and not the count of steps */
    const AdamW good = {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.1f};
    watch(m.params[0]);
    watch(m.adam_m[0]);
    watch(m.adam_v[0]);
    const char *needs = "adamw_step: needs lr, eps and weight_decay >= 0 and betas in [0, 1)";
    AdamW opt = good;
    opt.lr = -0.01f;
    EXPECT_MINUS_ONE(model_adamw_step(&m, &opt), needs);
    opt.lr = NAN;
    EXPECT_MINUS_ONE(model_adamw_step(&m, &opt), needs);
    opt = good, opt.beta1 = 1;
    EXPECT_MINUS_ONE(model_adamw_step(&m, &opt), needs);
    opt = good, opt.beta2 = -0.5f;
    EXPECT_MINUS_ONE(model_adamw_step(&m, &opt), needs);
    opt = good, opt.eps = -1e-8f;
    EXPECT_MINUS_ONE(model_adamw_step(&m, &opt), needs);
    opt = good, opt.weight_decay = -0.1f;
    EXPECT_MINUS_ONE(model_adamw_step(&m, &opt), needs);
    ck_assert_int_eq(m.steps, 0);
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== backward ============================================================================== */

START_TEST(test_backward_non_scalar) {
    Scene s = scene();
    Tensor *y = tensor_mul_scalar(s.a, 2);
    EXPECT_MINUS_ONE(tensor_backward(y),
                     "backward: the loss must be a scalar (one element), got shape (2,3); reduce it first "
                     "(a sum or a mean of it) or use tensor_backward_from with an upstream gradient");
    EXPECT_MINUS_ONE(tensor_backward(s.t),
                     "backward: the loss must be a scalar (one element), got shape (3,2); reduce it first "
                     "(a sum or a mean of it) or use tensor_backward_from with an upstream gradient");
    Tensor *e = tensor_sum_axis(tensor_requires_grad(tensor_zeros(test_ctx, DIMS(2, 0))), 0, false);
    EXPECT_MINUS_ONE(tensor_backward(e),
                     "backward: the loss must be a scalar (one element), got shape (0,); reduce it first "
                     "(a sum or a mean of it) or use tensor_backward_from with an upstream gradient");
    /* one element of any rank is a scalar enough */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(1, 1, 1), VALUES(5)));
    tensor_clear_error();
    ck_assert_int_eq(tensor_backward(tensor_mul_scalar(x, 3)), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(3), 0, "the gradient of a (1,1,1) loss");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_backward_twice) {
    Scene s = scene();
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(1, 2)));
    Tensor *y = tensor_mul(x, x), *loss = tensor_sum(y);
    /* leaves accumulate, as in PyTorch with a kept graph; intermediate gradients restart */
    ck_assert_int_eq(tensor_backward(loss), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2, 4), 0, "x's gradient after one backward");
    ck_assert_int_eq(tensor_backward(loss), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(4, 8), 0, "x's gradient after two");
    EXPECT_VALUES(tensor_grad(y), VALUES(1, 1), 0, "an intermediate's gradient after two");
    tensor_zero_grad(x);
    ck_assert_int_eq(tensor_backward(loss), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2, 4), 0, "after tensor_zero_grad and one more");
    /* a leaf as its own loss: its gradient counts the calls */
    Tensor *leaf = tensor_requires_grad(tensor_scalar(test_ctx, 3));
    ck_assert_int_eq(tensor_backward(leaf), 0);
    ck_assert_int_eq(tensor_backward(leaf), 0);
    EXPECT_VALUES(tensor_grad(leaf), VALUES(2), 0, "a leaf's own gradient after two backward calls");
    /* none of this reached the watched graph: the test's last check sees 2a + 2a */
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_backward_from_upstream) {
    Scene s = scene();
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(1, 2)));
    Tensor *y = tensor_mul_scalar(x, 3);
    Tensor *up3 = tensor_zeros(test_ctx, DIMS(3)), *up12 = tensor_zeros(test_ctx, DIMS(1, 2)),
           *up1 = tensor_zeros(test_ctx, DIMS(1));
    EXPECT_MINUS_ONE(tensor_backward_from(y, up3),
                     "backward: upstream gradient has shape (3,) but the output has shape (2,)");
    EXPECT_MINUS_ONE(tensor_backward_from(y, up12),
                     "backward: upstream gradient has shape (1,2) but the output has shape (2,)");
    EXPECT_MINUS_ONE(tensor_backward_from(s.loss, up1),
                     "backward: upstream gradient has shape (1,) but the output has shape ()");
    /* any layout works: the upstream is read in row-major order of its shape */
    Tensor *up = tensor_from(test_ctx, DIMS(2), VALUES(1, 10));
    tensor_clear_error();
    ck_assert_int_eq(tensor_backward_from(y, tensor_expand(tensor_scalar(test_ctx, 1), DIMS(2))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(3, 3), 0, "an expanded upstream");
    /* an upstream that is a gradient the backward itself resets: y's own, from the last call */
    tensor_zero_grad(x);
    ck_assert_int_eq(tensor_backward_from(y, up), 0);
    ck_assert_int_eq(tensor_backward_from(y, tensor_grad(y)), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(6, 60), 0, "backward_from(y, grad(y)) seeds with grad(y) as it was");
    /* an upstream from another context is only read */
    Ctx *other = ctx_new();
    ck_assert_int_eq(tensor_backward_from(y, tensor_from(other, DIMS(2), VALUES(1, 1))), 0);
    ctx_free(other);
    EXPECT_VALUES(tensor_grad(x), VALUES(9, 63), 0, "an upstream from another context");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_grad_not_required) {
    Scene s = scene();
    char want[256];
    Tensor *c = tensor_from(test_ctx, DIMS(2), VALUES(1, 2));
    ck_assert_int_eq(c->id, 9); /* docs/bad-inputs.md quotes these messages with their numbers: #9 and #12 */
    snprintf(want, sizeof want,
             "grad: tensor #%d with shape (2,) does not require grad; call tensor_requires_grad() on it "
             "before building the computation",
             c->id);
    EXPECT_NULL(tensor_grad(c), want);
    Tensor *loss = tensor_sum(tensor_mul_scalar(c, 3));
    ck_assert_int_eq(loss->id, 12);
    snprintf(want, sizeof want,
             "backward: tensor #%d with shape () does not require grad: no input of its computation was "
             "marked with tensor_requires_grad()",
             loss->id);
    EXPECT_MINUS_ONE(tensor_backward(loss), want);
    /* marked after the computation was built: too late, as in PyTorch */
    tensor_requires_grad(c);
    EXPECT_MINUS_ONE(tensor_backward(loss), want);
    /* a leaf that requires grad but that the loss does not use: its gradient is zeros */
    Tensor *used = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(1, 2)));
    Tensor *unused = tensor_requires_grad(tensor_from(test_ctx, DIMS(2), VALUES(5, 6)));
    tensor_clear_error();
    ck_assert_int_eq(tensor_backward(tensor_sum(used)), 0);
    EXPECT_VALUES(tensor_grad(unused), VALUES(0, 0), 0, "the gradient of a leaf the loss does not use");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== reading values ======================================================================== */

START_TEST(test_item_and_to_array) {
    Scene s = scene();
    float out[8];
    EXPECT_NAN(tensor_item(s.a), "item: only a one-element tensor has an item, got shape (2,3)");
    Tensor *empty = tensor_zeros(test_ctx, DIMS(0, 1));
    EXPECT_NAN(tensor_item(empty), "item: only a one-element tensor has an item, got shape (0,1)");
    EXPECT_MINUS_ONE(tensor_to_array(s.a, out, 5), "to_array: room for 5 floats, but shape (2,3) holds 6");
    EXPECT_MINUS_ONE(tensor_to_array(s.t, out, -1), "to_array: room for -1 floats, but shape (3,2) holds 6");
    /* one element of any rank has an item; an empty tensor needs no room */
    tensor_clear_error();
    ck_assert_float_eq(tensor_item(tensor_from(test_ctx, DIMS(1, 1), VALUES(4))), 4);
    ck_assert_int_eq(tensor_to_array(tensor_zeros(test_ctx, DIMS(2, 0)), NULL, 0), 0);
    ck_assert_ptr_null(tensor_error());
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== misuse of the tape ==================================================================== */

static void nothing_backward(Tensor *out) { (void)out; }

START_TEST(test_mixed_contexts) {
    Scene s = scene();
    Ctx *other = ctx_new();
    Tensor *b = tensor_zeros(other, DIMS(2, 3)), *m = tensor_zeros(other, DIMS(3, 2));
    EXPECT_NULL(tensor_add(s.a, b), "add: a and b belong to different contexts");
    EXPECT_NULL(tensor_sub(b, s.a), "sub: a and b belong to different contexts");
    EXPECT_NULL(tensor_mul(s.a, b), "mul: a and b belong to different contexts");
    EXPECT_NULL(tensor_div(s.a, b), "div: a and b belong to different contexts");
    EXPECT_NULL(tensor_matmul(s.a, m), "matmul: a and b belong to different contexts");
    EXPECT_NULL(tensor_mse_loss(s.a, b), "mse_loss: pred and target belong to different contexts");
    Tensor *row = tensor_zeros(test_ctx, DIMS(3)), *other_row = tensor_zeros(other, DIMS(3));
    Tensor *w = tensor_zeros(test_ctx, DIMS(3, 2)), *other_bias = tensor_zeros(other, DIMS(2));
    EXPECT_NULL(tensor_layer_norm(s.a, other_row, row, 1e-5f), "layer_norm: x and gamma belong to different contexts");
    EXPECT_NULL(tensor_layer_norm(s.a, row, other_row, 1e-5f), "layer_norm: x and beta belong to different contexts");
    EXPECT_NULL(tensor_linear(s.a, m, NULL), "linear: x and w belong to different contexts");
    EXPECT_NULL(tensor_linear(s.a, w, other_bias), "linear: x and b belong to different contexts");
    Tensor *x = tensor_zeros(test_ctx, DIMS(1, 2, 4)), *other_x = tensor_zeros(other, DIMS(1, 2, 4));
    Tensor *w4 = tensor_zeros(test_ctx, DIMS(4, 4)), *other_w4 = tensor_zeros(other, DIMS(4, 4));
    Tensor *b4 = tensor_zeros(test_ctx, DIMS(4)), *mask = causal_mask(test_ctx, 2), *other_mask = causal_mask(other, 2);
    EXPECT_NULL(tensor_attention_heads(x, other_x, x, mask, 2),
                "attention_heads: q and k belong to different contexts");
    EXPECT_NULL(tensor_attention_heads(x, x, other_x, mask, 2),
                "attention_heads: q and v belong to different contexts");
    EXPECT_NULL(tensor_attention_heads(x, x, x, other_mask, 2),
                "attention_heads: q and mask belong to different contexts");
    EXPECT_NULL(tensor_attention(x, w4, other_w4, w4, w4, b4, mask, 2),
                "attention: x and wk belong to different contexts");
    EXPECT_NULL(tensor_attention(x, w4, w4, w4, w4, b4, other_mask, 2),
                "attention: x and mask belong to different contexts");
    Tensor *out = tensor_zeros(test_ctx, DIMS(2, 3));
    watch(out);
    EXPECT_NULL(tensor_record(out, "mine", nothing_backward, 2, (Tensor *[]){s.a, b}),
                "mine: input 1 belongs to a different context than the output");
    ctx_free(other);
    EXPECT_TAPE_INTACT(s);
}
END_TEST

START_TEST(test_record_misuse) {
    Scene s = scene();
    Tensor *out = tensor_zeros(test_ctx, DIMS(2, 3));
    watch(out);
    Tensor *five[5] = {s.a, s.a, s.a, s.a, s.a};
    EXPECT_NULL(tensor_record(out, "mine", nothing_backward, 5, five),
                "record: op mine with 5 inputs: give a name and 0..4 (TENSOR_MAX_INPUTS) inputs");
    EXPECT_NULL(tensor_record(out, "mine", nothing_backward, -1, five),
                "record: op mine with -1 inputs: give a name and 0..4 (TENSOR_MAX_INPUTS) inputs");
    EXPECT_NULL(tensor_record(out, "mine", nothing_backward, 1, NULL),
                "record: op mine with 1 inputs (NULL): give a name and 0..4 (TENSOR_MAX_INPUTS) inputs");
    EXPECT_NULL(tensor_record(out, NULL, nothing_backward, 1, five),
                "record: op NULL with 1 inputs: give a name and 0..4 (TENSOR_MAX_INPUTS) inputs");
    EXPECT_NULL(tensor_record(out, "mine", nothing_backward, 2, (Tensor *[]){s.a, NULL}), "mine: input 1 is NULL");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== the gradient checker ================================================================== */

/* Everything gradcheck is given is checked before any gradient is touched: the watched leaf,
 * given as the first input each time, keeps its gradient. The report says what the error says. */
START_TEST(test_gradcheck_misuse) {
    Scene s = scene();
    Tensor *a = s.a;
    char report[256] = "";
    EXPECT_MINUS_ONE(gradcheck(NULL, NULL, (Tensor *[]){a, a}, 2, NULL, report, sizeof report),
                     "gradcheck: fn is NULL");
    ck_assert_str_eq(report, "gradcheck: fn is NULL");
    EXPECT_MINUS_ONE(gradcheck(sum_of_first, NULL, NULL, 2, NULL, report, sizeof report),
                     "gradcheck: inputs is NULL for 2 inputs");
    ck_assert_str_eq(report, "gradcheck: inputs is NULL for 2 inputs");
    EXPECT_MINUS_ONE(gradcheck(sum_of_first, NULL, (Tensor *[]){a, NULL}, 2, NULL, NULL, 0),
                     "gradcheck: input 1 is NULL");
    EXPECT_MINUS_ONE(gradcheck(sum_of_first, NULL, (Tensor *[]){a, s.t}, 2, NULL, report, 8),
                     "gradcheck: input 1 must be a contiguous leaf tensor");
    ck_assert_str_eq(report, "gradche"); /* cut to the room given */
    EXPECT_MINUS_ONE(gradcheck(sum_of_first, NULL, (Tensor *[]){a}, -1, NULL, NULL, 0),
                     "gradcheck: -1 inputs is not a count");
    GradcheckOptions opt = {0, 1e-2, 1e-2, 1};
    EXPECT_MINUS_ONE(gradcheck(sum_of_first, NULL, (Tensor *[]){a}, 1, &opt, NULL, 0),
                     "gradcheck: needs eps > 0 and atol, rtol >= 0, got eps 0, atol 0.01, rtol 0.01");
    opt = (GradcheckOptions){1e-3, -1, 1e-2, 1};
    EXPECT_MINUS_ONE(gradcheck(sum_of_first, NULL, (Tensor *[]){a}, 1, &opt, NULL, 0),
                     "gradcheck: needs eps > 0 and atol, rtol >= 0, got eps 0.001, atol -1, rtol 0.01");
    opt = (GradcheckOptions){NAN, 1e-2, 1e-2, 1};
    EXPECT_MINUS_ONE(gradcheck(sum_of_first, NULL, (Tensor *[]){a}, 1, &opt, NULL, 0),
                     "gradcheck: needs eps > 0 and atol, rtol >= 0, got eps nan, atol 0.01, rtol 0.01");
    /* fn itself changing which inputs require grad, found once it has run (on leaves of their
     * own: gradcheck clears its inputs' gradients before it calls fn) */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3))),
           *y = tensor_zeros(test_ctx, DIMS(3));
    ck_assert_int_eq(gradcheck(marks_second, NULL, (Tensor *[]){x, y}, 2, NULL, report, sizeof report), -1);
    ck_assert_str_eq(report, "gradcheck: fn changed which inputs require grad");
    EXPECT_TAPE_INTACT(s);
}
END_TEST

/* ==== lesson 6's fold predicate, called directly ============================================= */

/* matmul_folds_into_rows hands back false for NULL batch arrays, without a message. */
START_TEST(test_fold_predicate_hands_back) {
    tensor_clear_error();
    ck_assert(!matmul_folds_into_rows(2, NULL, NULL, NULL, 2, 1) && !tensor_error());
}
END_TEST

/* ==== the pure functions ==================================================================== */

START_TEST(test_pure_helpers) {
    Scene s = scene();
    char buf[SHAPE_STR_MAX];
    tensor_clear_error();
    /* shape_format writes "()" for what is not a shape, and truncates to the buffer */
    ck_assert_str_eq(shape_format(DIMS(1, 1, 1, 1, 1, 1, 1, 1, 1), buf, sizeof buf), "()");
    ck_assert_str_eq(shape_format(NULL, 2, buf, sizeof buf), "()");
    ck_assert_str_eq(shape_format(DIMS(1234, 5678), buf, 6), "(1234");
    /* loops that are given nothing to do do nothing */
    float x[1] = {5}, out[1] = {7};
    softmax_naive_row(x, 0, out);
    ck_assert_float_eq(out[0], 7);
    ck_assert_int_eq(matmul_wrong_column_fold(x, x, 0, 1, 1, 1, out), 0);
    ck_assert(!matmul_folds_into_rows(0, NULL, NULL, NULL, 2, 1));
    int64_t map[1];
    ck_assert_int_eq(broadcast_map(DIMS(0), DIMS(1), map), 0);
    ck_assert_int_eq(permute_map(DIMS(0, 2), (int[]){1, 0}, NULL), 0);
    ck_assert_ptr_null(tensor_error());
    EXPECT_TAPE_INTACT(s);
}
END_TEST

int main(int argc, char **argv) {
    Suite *suite = suite_create("bad inputs");
    TCase *null = add_test_case(suite, "NULL");
    add_test(null, test_null_tensor);
    add_test(null, test_null_keeps_the_first_message);
    add_test(null, test_null_ctx);
    add_test(null, test_null_pointers);
    TCase *sizes = add_test_case(suite, "ranks, dims and sizes");
    add_test(sizes, test_rank_above_max);
    add_test(sizes, test_negative_dims);
    add_test(sizes, test_numel_overflow);
    add_test(sizes, test_too_large_for_memory);
    TCase *shapes = add_test_case(suite, "shapes, axes and indices");
    add_test(shapes, test_shapes_that_do_not_broadcast);
    add_test(shapes, test_shapes_that_must_match);
    add_test(shapes, test_wrong_rank);
    add_test(shapes, test_axis_out_of_range);
    add_test(shapes, test_invalid_permutation);
    add_test(shapes, test_reshape_errors);
    add_test(shapes, test_index_out_of_range);
    add_test(shapes, test_view_outside_storage);
    TCase *numbers = add_test_case(suite, "documented results");
    add_test(numbers, test_zero_size_dims);
    add_test(numbers, test_nan_and_inf);
    TCase *model = add_test_case(suite, "lesson 7's model and AdamW");
    add_test(model, test_model_settings);
    TCase *autodiff = add_test_case(suite, "backward and the tape");
    add_test(autodiff, test_backward_non_scalar);
    add_test(autodiff, test_backward_twice);
    add_test(autodiff, test_backward_from_upstream);
    add_test(autodiff, test_grad_not_required);
    add_test(autodiff, test_item_and_to_array);
    add_test(autodiff, test_mixed_contexts);
    add_test(autodiff, test_record_misuse);
    add_test(autodiff, test_pure_helpers);
    add_test(autodiff, test_gradcheck_misuse);
    TCase *fast = add_test_case(suite, "the fast paths, called directly");
    add_test(fast, test_fold_predicate_hands_back);
    return run_core_tests(argc, argv, suite);
}
