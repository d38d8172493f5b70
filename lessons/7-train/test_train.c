/*
 * test_train.c - lesson 7's core tests: the arena's mark and reset, GELU, layer norm,
 * attention, the whole model against PyTorch (tests/golden/model.txt) and against central
 * differences, AdamW, the data, the checkpoint format, and a short training run.
 */
#define _DARWIN_C_SOURCE /* mkdtemp, which macOS hides under _POSIX_C_SOURCE alone */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bmm.h"
#include "broadcast.h"
#include "data.h"
#include "harness.h"
#include "kernels.h"
#include "permute.h"
#include "reduce.h"
#include "softmax.h"
#include "train.h"

static const ModelConfig TINY = {.vocab = 27, .context = 4, .width = 8, .heads = 2, .layers = 2, .mlp = 16};

/* ==== the arena: parameters outlive each step ============================================= */

START_TEST(test_mark_and_reset) {
    Ctx *ctx = ctx_new();
    Tensor *w = tensor_requires_grad(tensor_from(ctx, DIMS(2), VALUES(1, 2)));
    ck_assert_ptr_nonnull(tensor_grad(w)); /* made before the mark: it stays */
    ctx_mark(ctx);
    size_t bytes = ctx_bytes(ctx);
    for (int step = 0; step < 50; step++) {
        Tensor *big = tensor_zeros(ctx, DIMS(300, 300)); /* a block of its own */
        Tensor *loss = tensor_sum(tensor_mul(tensor_mul_scalar(w, 3), tensor_add_scalar(w, 1)));
        ck_assert_ptr_nonnull(big);
        const float *z = tensor_data(big);
        int64_t i = 0, n = tensor_numel(big);
        while (i < n && z[i] == 0.0f) i++;
        ck_assert_msg(i == n, "step %d: tensor_zeros after ctx_reset gave %g at %lld", step, (double)z[i < n ? i : 0],
                      (long long)i);
        tensor_data(big)[7] = 5.0f; /* dirty it: the next step's zeros must not see this */
        ck_assert_int_eq(tensor_backward(loss), 0);
        ctx_reset(ctx);
        ck_assert_msg(ctx_bytes(ctx) == bytes, "step %d: ctx holds %zu bytes after ctx_reset, %zu at the mark", step,
                      ctx_bytes(ctx), bytes);
    }
    /* d/dw sum(3w (w + 1)) = 6w + 3, 50 times over */
    EXPECT_VALUES(tensor_grad(w), VALUES(50 * 9, 50 * 15), 1e-3f, "the kept gradient, accumulated over 50 steps");
    EXPECT_VALUES(w, VALUES(1, 2), 0, "a parameter made before the mark");
    /* every gradient zeroed right after a reset: only the tensors that live on are walked (a
     * header of the step, in memory the reset took back, would be reported under SANITIZE=1) */
    ctx_zero_grads(ctx);
    EXPECT_VALUES(tensor_grad(w), VALUES(0, 0), 0, "the kept gradient after ctx_zero_grads");

    /* a gradient made after the mark is dropped with the step */
    Tensor *late = tensor_requires_grad(tensor_from(ctx, DIMS(1), VALUES(4)));
    ctx_mark(ctx);
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(late, late))), 0);
    ck_assert_ptr_nonnull(late->grad);
    ctx_reset(ctx);
    ck_assert_msg(late->grad == NULL, "a gradient made after the mark survived ctx_reset (it lives in freed memory)");
    EXPECT_VALUES(tensor_grad(late), VALUES(0), 0, "the gradient made again after the reset");
    ctx_free(ctx);

    /* no mark: everything goes, the ctx stays usable */
    Ctx *c2 = ctx_new();
    tensor_zeros(c2, DIMS(100000));
    ctx_reset(c2);
    ck_assert_uint_eq(ctx_bytes(c2), 0);
    EXPECT_VALUES(EXPECT_OK(tensor_from(c2, DIMS(2), VALUES(3, 4))), VALUES(3, 4), 0, "a tensor after a full reset");
    ctx_free(c2);
    ctx_mark(NULL);
    ctx_reset(NULL);
}
END_TEST

/* ==== GELU ================================================================================= */

static Tensor *gelu_fn(Tensor *const *in, void *arg) { return (void)arg, tensor_gelu(in[0]); }

START_TEST(test_gelu) {
    /* PyTorch 1.13, F.gelu(x, approximate="tanh") */
    Tensor *x = tensor_from(test_ctx, DIMS(6), VALUES(-3, -1, 0, 0.5f, 1, 3));
    const float want[6] = {-0.00363739808f, -0.158808023f, 0.0f, 0.345714003f, 0.841191947f, 2.99636269f};
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        char what[64];
        snprintf(what, sizeof what, "gelu with %s kernels", use_kernels(*mode));
        EXPECT_VALUES_ARRAY(EXPECT_OK(tensor_gelu(x)), want, 6, 2e-6f, what);
        /* a transposed view goes through the reference's odometer: the same values */
        Rng rng = rng_seeded(test_seed());
        Tensor *m = random_tensor(test_ctx, &rng, DIMS(5, 7), -4, 4);
        Tensor *mt = tensor_transpose(m, 0, 1), *copy = tensor_contiguous(mt);
        Tensor *a = tensor_gelu(mt), *b = tensor_gelu(copy);
        EXPECT_VALUES_ARRAY(a, tensor_data(b), 35, 1e-6f, "gelu of a transposed view, against its contiguous copy");
        /* the backward of each path, the reference's too (COURSE_KERNELS=reference) */
        rng = rng_seeded(test_seed() + 1);
        Tensor *g = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3, 4), -3, 3));
        snprintf(what, sizeof what, "gelu with %s kernels", *mode);
        EXPECT_GRADCHECK(gelu_fn, NULL, &g, 1, what);
        Tensor *v = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 2, 3), -3, 3));
        snprintf(what, sizeof what, "gelu of a (2,2,3) tensor with %s kernels", *mode);
        EXPECT_GRADCHECK(gelu_fn, NULL, &v, 1, what);
    }
}
END_TEST

/* The fast backward (contiguous) and the reference (any view) agree. */
START_TEST(test_gelu_backward_paths) {
    Rng rng = rng_seeded(test_seed() + 2);
    Tensor *base = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(6, 9), -5, 5));
    Tensor *u = random_tensor(test_ctx, &rng, DIMS(9, 6), -1, 1);
    float reference[54];
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        use_kernels(*mode);
        tensor_zero_grad(base);
        ck_assert_int_eq(tensor_backward_from(tensor_gelu(tensor_transpose(base, 0, 1)), u), 0);
        float *gv = tensor_data(tensor_grad(base));
        if (mode == test_kernel_modes()) memcpy(reference, gv, sizeof reference);
        EXPECT_ARRAY(gv, reference, 54, 1e-5f, *mode);
        tensor_zero_grad(base);
        Tensor *ut = tensor_contiguous(tensor_transpose(u, 0, 1));
        ck_assert_int_eq(tensor_backward_from(tensor_gelu(base), ut), 0);
        EXPECT_ARRAY(tensor_data(tensor_grad(base)), reference, 54, 1e-5f, "the contiguous input's gradient");
    }
}
END_TEST

/* ==== layer norm, linear, attention ======================================================== */

static Tensor *layer_norm_fn(Tensor *const *in, void *arg) {
    (void)arg;
    return tensor_layer_norm(in[0], in[1], in[2], 1e-5f);
}

START_TEST(test_layer_norm) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 4), VALUES(1, 2, 3, 4, -2, 0, 2, 8));
    Tensor *gain = tensor_from(test_ctx, DIMS(4), VALUES(1, 2, 1, 1)),
           *bias = tensor_from(test_ctx, DIMS(4), VALUES(0, 0, 0, 10));
    /* PyTorch 1.13: F.layer_norm(x, (4,), gain, bias, 1e-5) */
    EXPECT_VALUES(EXPECT_OK(tensor_layer_norm(x, gain, bias, 1e-5f)),
                  VALUES(-1.34163547f, -0.894423664f, 0.44721183f, 11.3416357f, -1.06904387f, -1.06904387f, 0.0f,
                         11.6035795f),
                  1e-5f, "layer_norm of [[1,2,3,4],[-2,0,2,8]]");
    Rng rng = rng_seeded(test_seed());
    Tensor *in[] = {tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3, 5), -2, 2)),
                    tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(5), 0.5f, 1.5f)),
                    tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(5), -1, 1))};
    EXPECT_GRADCHECK(layer_norm_fn, NULL, in, 3, "layer_norm of x (2,3,5), gain and bias (5,)");
    ck_assert_ptr_null(tensor_layer_norm(x, tensor_zeros(test_ctx, DIMS(3)), bias, 1e-5f));
    EXPECT_ERROR("layer_norm: x (2,4) needs gamma and beta of shape (C,)", "a gain of the wrong length");
}
END_TEST

/* The definition, op by op (exercise 7.3's composition): what the fused op must equal. */
static Tensor *layer_norm_composed(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    Tensor *centered = tensor_sub(x, tensor_mean_axis(x, -1, true));
    Tensor *var = tensor_mean_axis(tensor_mul(centered, centered), -1, true);
    Tensor *normed = tensor_mul(centered, tensor_pow_scalar(tensor_add_scalar(var, eps), -0.5f));
    return tensor_add(tensor_mul(normed, gamma), beta);
}

/* The fused op against the composition: values, and every gradient from one upstream gradient,
 * for rows the fast kernel takes (C = 64, as in the model) and rows it hands back (C = 5, and
 * C = 1032, past a chunk of the summation policy), a view whose rows are strided, and an x that
 * is also its own gain and bias. */
START_TEST(test_layer_norm_matches_composition) {
    const int64_t shapes[][3] = {{4, 16, 64}, {2, 3, 5}, {1, 1, 64}, {4, 16, 64}, {1, 3, 1032}};
    const char *what[] = {"x (4,16,64)", "x (2,3,5)", "x (64,), which is also gamma and beta",
                          "a view x (4,16,64) with its last dim strided", "x (1,3,1032)"};
    const char *names[] = {"the values", "x's gradient", "gamma's gradient", "beta's gradient"};
    for (int s = 0; s < 5; s++) {
        const int64_t *d = shapes[s];
        bool shared = s == 2, transposed = s == 3;
        Tensor *results[2], *in[2][3];
        for (int way = 0; way < 2; way++) { /* the same inputs twice, from the same seed */
            Rng rng = rng_seeded(test_seed() + (uint64_t)s);
            Tensor *x = random_tensor(test_ctx, &rng, d, 3, -3, 5), *up = random_tensor(test_ctx, &rng, d, 3, -1, 1);
            if (transposed) x = tensor_transpose(tensor_contiguous(tensor_transpose(x, 1, 2)), 1, 2);
            Tensor *gamma = random_tensor(test_ctx, &rng, DIMS(d[2]), 0.5f, 1.5f);
            Tensor *beta = random_tensor(test_ctx, &rng, DIMS(d[2]), -1, 1);
            if (shared) x = gamma = beta = tensor_reshape(x, DIMS(d[2])), up = tensor_reshape(up, DIMS(d[2]));
            Tensor **t = in[way];
            t[0] = tensor_requires_grad(x), t[1] = tensor_requires_grad(gamma), t[2] = tensor_requires_grad(beta);
            results[way] = way ? EXPECT_OK(layer_norm_composed(t[0], t[1], t[2], 1e-5f))
                               : EXPECT_OK(tensor_layer_norm(t[0], t[1], t[2], 1e-5f));
            ck_assert_int_eq(tensor_backward_from(results[way], up), 0);
        }
        int64_t n = tensor_numel(results[0]), c = d[2];
        for (int part = 0; part < 4; part++) {
            const float *got = part ? tensor_data(tensor_grad(in[0][part - 1])) : tensor_data(results[0]);
            const float *want = part ? tensor_data(tensor_grad(in[1][part - 1])) : tensor_data(results[1]);
            char context[160];
            snprintf(context, sizeof context, "layer_norm of %s against the composition: %s", what[s], names[part]);
            EXPECT_ARRAY(got, want, part < 2 ? n : c, 2e-4f, context);
        }
    }
}
END_TEST

static Tensor *linear_fn(Tensor *const *in, void *with_bias) {
    return tensor_linear(in[0], in[1], with_bias ? in[2] : NULL);
}

/* The fused op against its composition (lesson 6's matmul, lesson 1's broadcast add): values
 * and every gradient, for the model's shapes and for views of x, w and b, no bias, a 1-D x,
 * and an empty K; then central differences. */
START_TEST(test_linear_matches_composition) {
    enum { CASES = 10 };
    const int64_t shapes[CASES][4] = {/* rows of x (B, T), K, N */
                                      {4, 16, 64, 48}, {2, 3, 5, 7}, {2, 3, 5, 7}, {2, 3, 5, 7}, {2, 3, 5, 7},
                                      {1, 1, 9, 4},    {2, 3, 0, 4}, {1, 5, 5, 5}, {2, 3, 5, 7}, {0, 3, 5, 7}};
    const char *what[CASES] = {"x (4,16,64) @ w (64,48) + b",
                               "x (2,3,5) @ w (5,7), no bias",
                               "a transposed view x",
                               "a transposed view w",
                               "b a strided view",
                               "a 1-D x (9,)",
                               "K = 0",
                               "x (5,5), which is also w",
                               "w walked backwards (negative strides)",
                               "no rows"};
    const char *names[] = {"the values", "x's gradient", "w's gradient", "b's gradient"};
    for (int c = 0; c < CASES; c++) {
        const int64_t *d = shapes[c];
        bool bias = c != 1;
        Tensor *results[2], *in[2][3];
        for (int way = 0; way < 2; way++) { /* the same inputs twice, from the same seed */
            Rng rng = rng_seeded(test_seed() + (uint64_t)c);
            Tensor *x = c == 5 ? random_tensor(test_ctx, &rng, DIMS(d[2]), -2, 2)
                               : random_tensor(test_ctx, &rng, DIMS(d[0], d[1], d[2]), -2, 2);
            Tensor *w = random_tensor(test_ctx, &rng, DIMS(d[2], d[3]), -1, 1);
            Tensor *b = random_tensor(test_ctx, &rng, DIMS(d[3], 2), -1, 1); /* b is its first column */
            b = tensor_as_strided(b, DIMS(d[3]), STRIDES(2), 0);
            if (c != 4) b = tensor_contiguous(b);
            if (c == 2) x = tensor_transpose(tensor_contiguous(tensor_transpose(x, 0, 1)), 0, 1);
            if (c == 3) w = tensor_transpose(tensor_contiguous(tensor_transpose(w, 0, 1)), 0, 1);
            if (c == 7) x = w;
            if (c == 8) /* w's elements in reverse order, as a view of a copy laid out the other way round */
                w = tensor_as_strided(tensor_contiguous(w), DIMS(d[2], d[3]), STRIDES(-d[3], -1), d[2] * d[3] - 1);
            Tensor **t = in[way];
            t[0] = tensor_requires_grad(x), t[1] = tensor_requires_grad(w), t[2] = tensor_requires_grad(b);
            results[way] =
                way ? EXPECT_OK(bias ? tensor_add(tensor_matmul(t[0], t[1]), t[2]) : tensor_matmul(t[0], t[1]))
                    : EXPECT_OK(tensor_linear(t[0], t[1], bias ? t[2] : NULL));
            Tensor *up = random_tensor(test_ctx, &rng, results[way]->shape, results[way]->rank, -1, 1);
            ck_assert_int_eq(tensor_backward_from(results[way], up), 0);
        }
        EXPECT_SHAPE(results[0], results[1]->shape, results[1]->rank, what[c]);
        for (int part = 0; part < (bias ? 4 : 3); part++) {
            const float *got = part ? tensor_data(tensor_grad(in[0][part - 1])) : tensor_data(results[0]);
            const float *want = part ? tensor_data(tensor_grad(in[1][part - 1])) : tensor_data(results[1]);
            int64_t n = part ? tensor_numel(in[0][part - 1]) : tensor_numel(results[0]);
            char context[160];
            snprintf(context, sizeof context, "linear of %s against matmul and add: %s", what[c], names[part]);
            EXPECT_ARRAY(got, want, n, 1e-4f, context);
        }
    }
    Rng rng = rng_seeded(test_seed());
    Tensor *g_in[] = {tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3, 4), -1, 1)),
                      tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(4, 5), -1, 1)),
                      tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(5), -1, 1))};
    EXPECT_GRADCHECK(linear_fn, g_in, g_in, 3, "linear of x (2,3,4), w (4,5), b (5,)");
}
END_TEST

typedef struct {
    int64_t heads;
    Tensor *mask;
} AttentionArg;

static Tensor *attention_fn(Tensor *const *in, void *arg) {
    const AttentionArg *a = arg;
    return tensor_attention(in[0], in[1], in[2], in[3], in[4], in[5], a->mask, a->heads);
}

START_TEST(test_attention) {
    Rng rng = rng_seeded(test_seed());
    int64_t b = 2, t = 3, c = 4;
    Tensor *in[6];
    in[0] = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(b, t, c), -1, 1));
    for (int i = 1; i < 5; i++) in[i] = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(c, c), -1, 1));
    in[5] = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(c), -1, 1));
    AttentionArg arg = {2, causal_mask(test_ctx, t)};
    EXPECT_GRADCHECK(attention_fn, &arg, in, 6, "attention of 2 heads, x (2,3,4)");

    /* causal: changing the last position changes nothing before it */
    Tensor *y1 = EXPECT_OK(attention_fn(in, &arg));
    Tensor *x2 = tensor_contiguous(tensor_mul_scalar(in[0], 1));
    x2 = tensor_from(test_ctx, in[0]->shape, 3, tensor_data(x2), b * t * c);
    for (int64_t j = 0; j < c; j++) tensor_data(x2)[(t - 1) * c + j] += 5.0f; /* batch 0, last position */
    Tensor *in2[6] = {x2, in[1], in[2], in[3], in[4], in[5]};
    Tensor *y2 = EXPECT_OK(attention_fn(in2, &arg));
    for (int64_t i = 0; i < (t - 1) * c; i++)
        ck_assert_msg(tensor_data(y1)[i] == tensor_data(y2)[i],
                      "position %lld of batch 0 changed when only the last position's input did: the mask leaks",
                      (long long)(i / c));
    ck_assert_msg(tensor_data(y1)[(t - 1) * c] != tensor_data(y2)[(t - 1) * c], "the last position did not change");

    /* one head by hand, as the walk-through describes it, against the library's */
    AttentionArg one = {1, arg.mask};
    Tensor *y = EXPECT_OK(attention_fn(in, &one));
    Tensor *q = tensor_matmul(in[0], in[1]), *k = tensor_matmul(in[0], in[2]), *v = tensor_matmul(in[0], in[3]);
    Tensor *w = tensor_softmax_last_dim(
        tensor_add(tensor_mul_scalar(tensor_matmul(q, tensor_transpose(k, -1, -2)), 1.0f / sqrtf((float)c)), arg.mask));
    Tensor *want = tensor_add(tensor_matmul(tensor_matmul(w, v), in[4]), in[5]);
    EXPECT_VALUES_ARRAY(y, tensor_data(want), b * t * c, 1e-5f,
                        "one head against softmax(q k^T / sqrt(C) + mask) v wo + bo");
    ck_assert_ptr_null(tensor_attention(in[0], in[1], in[2], in[3], in[4], in[5], arg.mask, 3));
    EXPECT_ERROR("divisible by the 3 heads", "3 heads for a width of 4");
}
END_TEST

/* tensor_attention's lines from the reshape to the last reshape, in the lessons' ops */
static Tensor *attention_heads_composed(Tensor *q, Tensor *k, Tensor *v, Tensor *mask, int64_t heads) {
    int64_t b = q->shape[0], t = q->shape[1], c = q->shape[2], d = c / heads;
    Tensor *split[3], *in[3] = {q, k, v};
    for (int i = 0; i < 3; i++)
        split[i] = tensor_permute(tensor_reshape(in[i], DIMS(b, t, heads, d)), AXES(0, 2, 1, 3));
    Tensor *scores =
        tensor_mul_scalar(tensor_matmul(split[0], tensor_transpose(split[1], -1, -2)), 1.0f / sqrtf((float)d));
    Tensor *y = tensor_matmul(tensor_softmax_last_dim(tensor_add(scores, mask)), split[2]);
    return tensor_reshape(tensor_permute(y, AXES(0, 2, 1, 3)), DIMS(b, t, c));
}

static Tensor *attention_heads_fn(Tensor *const *in, void *arg) {
    const AttentionArg *a = arg;
    return tensor_attention_heads(in[0], in[1], in[2], a->mask, a->heads);
}

/* The op against the composition, with every kernel setting: values, and q's, k's and v's
 * gradients from one upstream gradient. Sizes the fast kernel takes (T and C/H multiples of 8,
 * up to 64; multiples of 16 run in sixteen lanes with AVX-512) and sizes it hands to the
 * reference; a causal mask and a mask of finite values; q,
 * k and v one tensor (their gradients add up); and q's gradient reached before the op's
 * backward runs (the op adds to it, and stores none). Then central differences. */
START_TEST(test_attention_heads_matches_composition) {
    enum { CASES = 8 };
    const int64_t sizes[CASES][4] = {/* B, T, C, H */
                                     {2, 3, 4, 2},  {2, 16, 32, 2}, {3, 8, 16, 2},   {2, 16, 32, 2},
                                     {2, 8, 16, 2}, {1, 24, 48, 2}, {1, 64, 128, 2}, {1, 72, 16, 2}};
    const char *what[CASES] = {"(2,3,4), 2 heads",
                               "(2,16,32), 2 heads",
                               "(3,8,16), 2 heads, a mask of finite values",
                               "(2,16,32), q = k = v",
                               "(2,8,16), plus q after the op",
                               "(1,24,48), 2 heads",
                               "(1,64,128), 2 heads",
                               "(1,72,16), 2 heads (T past the fast kernel's 64)"};
    const char *parts[] = {"the values", "q's gradient", "k's gradient", "v's gradient"};
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        use_kernels(*mode);
        for (int cs = 0; cs < CASES; cs++) {
            const int64_t *z = sizes[cs];
            bool finite_mask = cs == 2, same = cs == 3, plus_q = cs == 4;
            Tensor *out[2], *in[2][3];
            for (int way = 0; way < 2; way++) {
                Rng rng = rng_seeded(test_seed() + (uint64_t)cs);
                Tensor **x = in[way];
                for (int i = 0; i < 3; i++)
                    x[i] = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(z[0], z[1], z[2]), -2, 2));
                if (same) x[1] = x[2] = x[0];
                Tensor *mask =
                    finite_mask ? random_tensor(test_ctx, &rng, DIMS(z[1], z[1]), -3, 3) : causal_mask(test_ctx, z[1]);
                Tensor *up = random_tensor(test_ctx, &rng, DIMS(z[0], z[1], z[2]), -1, 1);
                out[way] = way ? EXPECT_OK(attention_heads_composed(x[0], x[1], x[2], mask, z[3]))
                               : EXPECT_OK(tensor_attention_heads(x[0], x[1], x[2], mask, z[3]));
                if (plus_q) out[way] = tensor_add(out[way], x[0]);
                ck_assert_int_eq(tensor_backward_from(out[way], up), 0);
            }
            int64_t n = z[0] * z[1] * z[2];
            for (int part = 0; part < 4; part++) {
                const float *got = part ? tensor_data(tensor_grad(in[0][part - 1])) : tensor_data(out[0]);
                const float *want = part ? tensor_data(tensor_grad(in[1][part - 1])) : tensor_data(out[1]);
                char context[200];
                snprintf(context, sizeof context, "attention_heads of %s with %s kernels against the composition: %s",
                         what[cs], *mode, parts[part]);
                EXPECT_ARRAY(got, want, n, 1e-4f, context);
            }
        }
        /* k and v made by an op, q reached first by another op (so the op adds), and the backward
         * run twice with only the leaves cleared between: the second finds k's and v's gradients
         * holding the first's values, and the op must clear them before it adds */
        Tensor *leaf[2][3];
        for (int way = 0; way < 2; way++) {
            Rng rng = rng_seeded(test_seed() + 99);
            for (int i = 0; i < 3; i++)
                leaf[way][i] = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 8, 16), -2, 2));
            Tensor *k = tensor_mul_scalar(leaf[way][1], 1.0f), *v = tensor_mul_scalar(leaf[way][2], 1.0f);
            Tensor *mask = causal_mask(test_ctx, 8), *up = random_tensor(test_ctx, &rng, DIMS(2, 8, 16), -1, 1);
            Tensor *y = way ? attention_heads_composed(leaf[way][0], k, v, mask, 2)
                            : tensor_attention_heads(leaf[way][0], k, v, mask, 2);
            Tensor *sum = EXPECT_OK(tensor_add(y, leaf[way][0]));
            for (int twice = 0; twice < 2; twice++) {
                for (int i = 0; i < 3; i++) tensor_zero_grad(leaf[way][i]);
                ck_assert_int_eq(tensor_backward_from(sum, up), 0);
            }
        }
        for (int part = 1; part < 4; part++) {
            char context[160];
            snprintf(context, sizeof context, "attention_heads with %s kernels, the second of two backwards: %s", *mode,
                     parts[part]);
            EXPECT_ARRAY(tensor_data(tensor_grad(leaf[0][part - 1])), tensor_data(tensor_grad(leaf[1][part - 1])),
                         2 * 8 * 16, 1e-4f, context);
        }
        Rng rng = rng_seeded(test_seed());
        Tensor *in[3];
        for (int i = 0; i < 3; i++) in[i] = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 8, 16), -1, 1));
        AttentionArg arg = {2, causal_mask(test_ctx, 8)};
        char context[120];
        snprintf(context, sizeof context, "attention_heads of (2,8,16), 2 heads, with %s kernels", *mode);
        EXPECT_GRADCHECK(attention_heads_fn, &arg, in, 3, context);
    }
}
END_TEST

/* ==== the whole model ====================================================================== */

static Tensor *model_fn(Tensor *const *in, void *arg) {
    (void)in; /* the inputs are the model's own parameters, perturbed in place */
    Model *m = arg;
    static const int64_t tokens[8] = {0, 5, 13, 13, 0, 15, 12, 9}, targets[8] = {5, 13, 13, 1, 15, 12, 9, 22};
    return model_loss(m, tokens, targets, 2, 4);
}

START_TEST(test_model_gradcheck) {
    Model m;
    ck_assert_int_eq(model_init(&m, test_ctx, &TINY, test_seed()), 0);
    /* larger weights than the initialization's, so that every gradient is far above float32's noise */
    Rng rng = rng_seeded(test_seed() + 3);
    for (int i = 0; i < m.n_params; i++)
        for (int64_t k = 0; k < tensor_numel(m.params[i]); k++) tensor_data(m.params[i])[k] = rng_float(&rng, -1, 1);
    char report[512];
    GradcheckOptions opt = {.eps = 1e-2, .atol = 2e-3, .rtol = 2e-2, .seed = test_seed()};
    int status = gradcheck(model_fn, &m, m.params, m.n_params, &opt, report, sizeof report);
    ck_assert_msg(status == 0, "the whole model (every one of its %d parameters, %lld numbers): %s", m.n_params,
                  (long long)model_param_count(&m), report);
}
END_TEST

/* ---- against PyTorch: tests/golden/model.txt (tests/golden/generate.py) ---- */

static float *read_floats(FILE *f, int64_t n) {
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fscanf(f, "%f", &v[i]) == 1, "tests/golden/model.txt: a value is missing");
    return v;
}

static void expect_near(const char *what, const float *got, const float *want, int64_t n, float atol, float rtol) {
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(got[i] - want[i]) <= atol + rtol * fabsf(want[i]),
                      "%s, element %lld: the C model gives %.9g, PyTorch %.9g (tolerance %g + %g * |PyTorch|)", what,
                      (long long)i, (double)got[i], (double)want[i], (double)atol, (double)rtol);
}

START_TEST(test_model_against_pytorch) {
    FILE *f = fopen("tests/golden/model.txt", "r");
    ck_assert_msg(f != NULL, "tests/golden/model.txt is missing: run make golden (needs python3-torch)");
    char word[64], name[64];
    ModelConfig c;
    long long b, t;
    float lr, b1, b2, eps, wd;
    int steps;
    ck_assert_int_eq(fscanf(f, " #%*[^\n]"), 0);
    ck_assert_int_eq(fscanf(f, " config %lld %lld %lld %lld %lld %lld", (long long *)&c.vocab, (long long *)&c.context,
                            (long long *)&c.width, (long long *)&c.heads, (long long *)&c.layers, (long long *)&c.mlp),
                     6);
    ck_assert_int_eq(fscanf(f, " batch %lld %lld", &b, &t), 2);
    int64_t *tokens = malloc((size_t)(2 * b * t) * sizeof *tokens), *targets = tokens + b * t;
    ck_assert_int_eq(fscanf(f, " tokens :"), 0);
    for (int64_t i = 0; i < b * t; i++) ck_assert_int_eq(fscanf(f, "%lld", (long long *)&tokens[i]), 1);
    ck_assert_int_eq(fscanf(f, " targets :"), 0);
    for (int64_t i = 0; i < b * t; i++) ck_assert_int_eq(fscanf(f, "%lld", (long long *)&targets[i]), 1);
    ck_assert_int_eq(fscanf(f, " adamw %f %f %f %f %f %d", &lr, &b1, &b2, &eps, &wd, &steps), 6);
    Model m;
    ck_assert_int_eq(model_init(&m, test_ctx, &c, 0), 0);
    ctx_mark(test_ctx);
    for (int i = 0; i < m.n_params; i++) {
        int rank;
        ck_assert_int_eq(fscanf(f, " param %63s %d", name, &rank), 2);
        ck_assert_msg(!strcmp(name, m.names[i]), "parameter %d is %s in the file and %s in the model", i, name,
                      m.names[i]);
        for (int d = 0; d < rank; d++) ck_assert_int_eq(fscanf(f, "%*d"), 0);
        ck_assert_int_eq(fscanf(f, " :"), 0);
        float *v = read_floats(f, tensor_numel(m.params[i]));
        memcpy(tensor_data(m.params[i]), v, (size_t)tensor_numel(m.params[i]) * sizeof *v);
        free(v);
    }
    int rank;
    ck_assert_int_eq(fscanf(f, " logits %d", &rank), 1);
    for (int d = 0; d < rank; d++) ck_assert_int_eq(fscanf(f, "%*d"), 0);
    ck_assert_int_eq(fscanf(f, " :"), 0);
    const int64_t n_logits = b * t * c.vocab;
    float *logits = read_floats(f, n_logits), loss_want;
    ck_assert_int_eq(fscanf(f, " loss : %f", &loss_want), 1);

    Tensor *loss = EXPECT_OK(model_loss(&m, tokens, targets, b, t));
    Tensor *got_logits = EXPECT_OK(model_logits(&m, tokens, b, t));
    /* float32 sums in another order: about 1e-6 of logits of size ~1 */
    expect_near("the logits", tensor_data(got_logits), logits, n_logits, 1e-5f, 1e-5f);
    expect_near("the loss", tensor_data(loss), &loss_want, 1, 1e-5f, 1e-5f);
    ck_assert_int_eq(tensor_backward(loss), 0);
    for (int i = 0; i < m.n_params; i++) {
        ck_assert_int_eq(fscanf(f, " grad %63s :", name), 1);
        const int64_t n = tensor_numel(m.params[i]);
        float *want = read_floats(f, n);
        char what[96];
        snprintf(what, sizeof what, "the gradient of %s", m.names[i]);
        /* gradients are ~1e-3..1e-1 here; the error is float32's, times the depth of the chain */
        expect_near(what, tensor_data(tensor_grad(m.params[i])), want, n, 2e-6f, 1e-4f);
        free(want);
    }
    ctx_reset(test_ctx);
    /* the optimizer: `steps` AdamW steps on the same batch, from the same start */
    AdamW opt = {lr, b1, b2, eps, wd};
    for (int s = 1; s < steps; s++) { /* the first step's gradients are the ones above */
        ck_assert_int_eq(model_adamw_step(&m, &opt), 0);
        ctx_zero_grads(test_ctx);
        ck_assert_int_eq(tensor_backward(EXPECT_OK(model_loss(&m, tokens, targets, b, t))), 0);
        ctx_reset(test_ctx);
    }
    ck_assert_int_eq(model_adamw_step(&m, &opt), 0);
    for (int i = 0; i < m.n_params; i++) {
        ck_assert_int_eq(fscanf(f, " after %63s :", name), 1);
        const int64_t n = tensor_numel(m.params[i]);
        float *want = read_floats(f, n);
        char what[96];
        snprintf(what, sizeof what, "%s after %d AdamW steps", m.names[i], steps);
        /* AdamW moves each weight by about lr per step whatever the gradient's size, so a
         * parameter is compared to lr's scale: 1e-5 of a 1e-2 step */
        expect_near(what, tensor_data(m.params[i]), want, n, 2e-6f + 1e-3f * lr, 1e-5f);
        free(want);
    }
    ck_assert_int_eq(fscanf(f, " %63s", word), 1);
    ck_assert_str_eq(word, "end");
    free(logits), free(tokens);
    fclose(f);
}
END_TEST

/* ==== AdamW ================================================================================= */

START_TEST(test_adamw) {
    /* one step by hand: g = 0.5, m = 0.05, v = 0.0025 (beta2 0.99), bias-corrected m/sqrt(v) = 1 */
    float p[2] = {1.0f, -2.0f}, g[2] = {0.5f, -0.25f}, m[2] = {0}, v[2] = {0};
    AdamW opt = {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 0.0f, .weight_decay = 0.0f};
    adamw_update(p, g, m, v, 2, 1, &opt, 0.5f);
    /* decay first: 1 - 0.1*0.5*1 = 0.95, then -0.1 * sign(g) */
    EXPECT_ARRAY(p, ((const float[]){0.95f - 0.1f, -1.9f + 0.1f}), 2, 1e-6f, "one AdamW step with decay 0.5");
    /* the fast path against the reference, over several steps of random values */
    Rng rng = rng_seeded(test_seed());
    enum { N = 37 };
    float start[N], grads[5][N], reference[N];
    for (int i = 0; i < N; i++) start[i] = rng_float(&rng, -1, 1);
    for (int s = 0; s < 5; s++)
        for (int i = 0; i < N; i++) grads[s][i] = rng_float(&rng, -1, 1);
    AdamW o = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f};
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        use_kernels(*mode);
        float q[N], mm[N] = {0}, vv[N] = {0};
        memcpy(q, start, sizeof q);
        for (int s = 0; s < 5; s++) adamw_update(q, grads[s], mm, vv, N, s + 1, &o, o.weight_decay);
        if (mode == test_kernel_modes()) memcpy(reference, q, sizeof q);
        EXPECT_ARRAY(q, reference, N, 1e-6f, *mode);
    }
    Model model;
    ck_assert_int_eq(model_init(&model, test_ctx, &TINY, 1), 0);
    AdamW bad = {.lr = 1e-3f, .beta1 = 1.0f, .beta2 = 0.99f, .eps = 1e-8f};
    ck_assert_int_eq(model_adamw_step(&model, &bad), -1);
    EXPECT_ERROR("adamw_step: needs lr, eps and weight_decay >= 0 and betas in [0, 1)", "beta1 = 1");
}
END_TEST

/* ==== data ================================================================================== */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_words) {
    char path[] = "/tmp/course-words-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_file(path, "Emma\nemma\nAda's\nzoe\nbob\nCAT\ncat\nx-ray\n\nana\nbo\nkim\nlee\nmo\nnan\nolaf\ncafé\npia\n");
    Words w;
    ck_assert_int_eq(words_load(&w, path, 1), 0);
    /* kept: emma zoe bob cat ana bo kim lee mo nan olaf pia = 12 (Ada's, x-ray, café, "" dropped; Emma, CAT once) */
    ck_assert_int_eq(w.read, 18);
    ck_assert_int_eq(w.n_words, 12);
    ck_assert_int_eq(w.train.words, 9);
    ck_assert_int_eq(w.val.words, 1);
    ck_assert_int_eq(w.test.words, 2);
    ck_assert(words_contains(&w, "emma") && words_contains(&w, "cat") && !words_contains(&w, "ada"));
    /* each split is ".w.w.w." */
    const TokenStream *splits[3] = {&w.train, &w.val, &w.test};
    int64_t letters = 0;
    for (int k = 0; k < 3; k++) {
        const TokenStream *s = splits[k];
        ck_assert_int_eq(s->tokens[0], 0);
        ck_assert_int_eq(s->tokens[s->n - 1], 0);
        int64_t boundaries = 0;
        for (int64_t i = 0; i < s->n; i++) boundaries += s->tokens[i] == 0;
        ck_assert_int_eq(boundaries, s->words + 1);
        letters += s->n - boundaries;
    }
    ck_assert_int_eq(letters, 4 + 3 + 3 + 3 + 3 + 2 + 3 + 3 + 2 + 3 + 4 + 3);
    /* the bigram of ".ab.ab." by hand: after '.', 'a' has (2+1)/(2+27); after 'a', 'b' (2+1)/(2+27) */
    TokenStream s = {(int64_t[]){0, 1, 2, 0, 1, 2, 0}, 7, 2};
    Bigram bg;
    bigram_fit(&bg, &s);
    ck_assert_msg(fabs(bg.prob[0][1] - 3.0 / 29.0) < 1e-12 && fabs(bg.prob[3][5] - 1.0 / 27.0) < 1e-12,
                  "bigram counts");
    double want = -(2 * log(3.0 / 29.0) + 2 * log(3.0 / 29.0) + 2 * log(3.0 / 29.0)) / 6.0;
    ck_assert_msg(fabs(bigram_loss(&bg, &s) - want) < 1e-12, "bigram loss %g, expected %g", bigram_loss(&bg, &s), want);
    /* batches: y is x moved on by one */
    Rng rng = rng_seeded(3);
    int64_t x[3 * 4], y[3 * 4];
    batch_sample(&w.train, 3, 4, &rng, x, y);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) ck_assert_int_eq(y[i * 4 + j], x[i * 4 + j + 1]);
    /* every window of the stream is drawn, the last one too, and none past it: from 7 tokens
     * (0..6), windows of T = 4 start at 0, 1 or 2 */
    TokenStream counting = {(int64_t[]){0, 1, 2, 3, 4, 5, 6}, 7, 7};
    bool drawn[3] = {false, false, false};
    for (int k = 0; k < 200; k++) {
        ck_assert_int_eq(batch_sample(&counting, 1, 4, &rng, x, y), 0);
        ck_assert_msg(x[0] >= 0 && x[0] <= 2, "a window of 4 of 7 tokens starts at %lld", (long long)x[0]);
        for (int j = 0; j < 4; j++) ck_assert(x[j] == x[0] + j && y[j] == x[0] + j + 1);
        drawn[x[0]] = true;
    }
    ck_assert_msg(drawn[0] && drawn[1] && drawn[2], "in 200 draws, windows started at 0: %d, 1: %d, 2: %d", drawn[0],
                  drawn[1], drawn[2]);
    words_free(&w);
    unlink(path);
    ck_assert_int_eq(words_load(&w, "/nonexistent/words", 1), -1);
    EXPECT_ERROR("cannot read /nonexistent/words (", "a missing word list");
    words_free(&w);
    /* the course's own list is found from the top directory only, and its error says so */
    ck_assert_int_eq(words_load(&w, NULL, 1), 0);
    ck_assert_int_eq(w.read, 73445);
    ck_assert_int_eq(w.n_words, 73445);
    words_free(&w);
    ck_assert_int_eq(chdir("/"), 0);
    ck_assert_int_eq(words_load(&w, NULL, 1), -1);
    EXPECT_ERROR("cannot read lessons/7-train/words.txt (", "the course's list, from elsewhere");
    EXPECT_ERROR("run the program from the course's top directory", "the course's list, from elsewhere");
    words_free(&w);
}
END_TEST

/* model_eval predicts every pair of the stream exactly once */
START_TEST(test_model_eval) {
    Model m;
    ck_assert_int_eq(model_init(&m, test_ctx, &TINY, 2), 0);
    ctx_mark(test_ctx);
    int64_t tokens[11] = {0, 3, 1, 20, 0, 4, 15, 7, 0, 1, 0};
    /* streams of 11, 10 and 9 tokens: after the full windows [0,4) and [4,8) of T = 4 pairs, 2
     * pairs are left over, then a single one, then none */
    for (int64_t n = 11; n >= 9; n--) {
        TokenStream s = {tokens, n, 3};
        double sum = 0.0; /* by hand: every pair once, in windows of at most 4 */
        for (int64_t start = 0; start < n - 1; start += 4) {
            int64_t len = n - 1 - start < 4 ? n - 1 - start : 4;
            sum += (double)tensor_item(model_loss(&m, tokens + start, tokens + start + 1, 1, len)) * (double)len;
        }
        /* in batches of one window, of two, and of more windows than there are (a last batch
         * that is not full must count, as must the pairs after the last full window) */
        const int64_t batches[] = {1, 2, 3, 64};
        for (int k = 0; k < 4; k++) {
            double got = model_eval(&m, &s, batches[k], 0);
            ck_assert_msg(fabs(got - sum / (double)(n - 1)) < 1e-6,
                          "model_eval of %lld tokens in batches of %lld gave %g, the mean over every one of its %lld "
                          "pairs is %g",
                          (long long)n, (long long)batches[k], got, (long long)(n - 1), sum / (double)(n - 1));
        }
    }
}
END_TEST

/* ==== checkpoints =========================================================================== */

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void copy_prefix(const char *from, const char *to, long n, long flip) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    ck_assert(in && out);
    for (long i = 0; i < n; i++) {
        int c = fgetc(in);
        ck_assert_int_ne(c, EOF);
        fputc(i == flip ? c ^ 0x10 : c, out);
    }
    fclose(in), fclose(out);
}

/* Loading `file` into m fails with a message containing `needle` and leaves m as it was. */
static void expect_load_fails(Model *m, const char *file, const char *needle, const char *what) {
    int64_t n = model_param_count(m);
    float *before = malloc((size_t)n * sizeof *before), *p = before;
    ck_assert_ptr_nonnull(before);
    for (int i = 0; i < m->n_params; i++, p += tensor_numel(m->params[i - 1]))
        memcpy(p, tensor_data(m->params[i]), (size_t)tensor_numel(m->params[i]) * sizeof *p);
    tensor_clear_error();
    ck_assert_msg(model_load(m, file) == -1, "model_load accepted %s", what);
    EXPECT_ERROR(needle, what);
    p = before;
    for (int i = 0; i < m->n_params; p += tensor_numel(m->params[i]), i++)
        ck_assert_msg(!memcmp(p, tensor_data(m->params[i]), (size_t)tensor_numel(m->params[i]) * sizeof *p),
                      "model_load changed %s although it failed on %s", m->names[i], what);
    free(before);
}

START_TEST(test_checkpoint) {
    char dir[] = "/tmp/course-ckpt-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128], bad[128], what[160];
    snprintf(path, sizeof path, "%s/model.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    Model a, b;
    ck_assert_int_eq(model_init(&a, test_ctx, &TINY, 5), 0);
    ck_assert_int_eq(model_init(&b, test_ctx, &TINY, 6), 0);
    ck_assert_int_eq(model_save(&a, path), 0);
    /* the documented layout: a 64-byte header, each parameter's rank, dims and floats, a hash */
    long size = 64 + 8;
    for (int i = 0; i < a.n_params; i++) size += 4 + 8 * a.params[i]->rank + 4 * tensor_numel(a.params[i]);
    ck_assert_int_eq(file_size(path), size);
    ck_assert_int_eq(model_load(&b, path), 0);
    for (int i = 0; i < a.n_params; i++)
        ck_assert_msg(!memcmp(tensor_data(a.params[i]), tensor_data(b.params[i]),
                              (size_t)tensor_numel(a.params[i]) * 4),
                      "%s differs after a save and a load", a.names[i]);
    ck_assert_int_eq(model_init(&b, test_ctx, &TINY, 6), 0);
    /* truncated anywhere: inside the magic, the version, the config, a rank, the floats, the hash */
    const long cuts[] = {0, 5, 10, 40, 63, 66, 100, size / 2, size - 9, size - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        copy_prefix(path, bad, cuts[k], -1);
        snprintf(what, sizeof what, "a checkpoint cut to %ld of its %ld bytes", cuts[k], size);
        expect_load_fails(&b, bad, "is truncated", what);
    }
    write_file(bad, "this is a text file, not a checkpoint at all\n");
    expect_load_fails(&b, bad, "is not a lesson 7 checkpoint", "a text file");
    copy_prefix(path, bad, size, 8);
    expect_load_fails(&b, bad, "has format version 17; this code reads version 1", "another version");
    copy_prefix(path, bad, size, size - 10); /* a bit of the last float */
    expect_load_fails(&b, bad, "is damaged: its checksum does not match", "a checkpoint with one bit changed");
    copy_prefix(path, bad, size, -1);
    FILE *f = fopen(bad, "ab");
    fputc(0, f);
    fclose(f);
    expect_load_fails(&b, bad, "has bytes after the end", "a checkpoint with a byte appended");
    ModelConfig wide = TINY;
    wide.width = 16;
    Model w;
    ck_assert_int_eq(model_init(&w, test_ctx, &wide, 5), 0);
    ck_assert_int_eq(model_save(&w, bad), 0);
    expect_load_fails(&b, bad, "was saved from a model with width 16; this model has width 8",
                      "another model's checkpoint");
    snprintf(bad, sizeof bad, "%s/missing.ckpt", dir);
    expect_load_fails(&b, bad, "model_load: cannot read", "a file that does not exist");
    ck_assert_int_eq(model_load(&b, NULL), -1);
    ck_assert_int_eq(model_save(NULL, path), -1);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    unlink(path), unlink(bad), rmdir(dir);
}
END_TEST

/* A short run on the real words learns: well below the uniform loss, on the way to the bigram. */
START_TEST(test_short_training) {
    Words w;
    if (words_load(&w, getenv("COURSE_WORDS"), 7) < 0) ck_abort_msg("%s", tensor_error());
    ModelConfig c = {.vocab = 27, .context = 8, .width = 16, .heads = 2, .layers = 1, .mlp = 32};
    Model m;
    ck_assert_int_eq(model_init(&m, test_ctx, &c, 1), 0);
    ctx_mark(test_ctx);
    Rng rng = rng_seeded(9);
    int64_t x[16 * 8], y[16 * 8];
    AdamW opt = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.01f};
    double before = model_eval(&m, &w.val, 64, 4096);
    for (int step = 0; step < 150; step++) {
        batch_sample(&w.train, 16, 8, &rng, x, y);
        ctx_zero_grads(test_ctx);
        ck_assert_int_eq(tensor_backward(EXPECT_OK(model_loss(&m, x, y, 16, 8))), 0);
        ck_assert_int_eq(model_adamw_step(&m, &opt), 0);
        ctx_reset(test_ctx);
    }
    double after = model_eval(&m, &w.val, 64, 4096);
    ck_assert_msg(before > 3.2 && after < 2.9,
                  "150 steps of a tiny model took the validation loss from %.4f to %.4f; "
                  "expected from about ln 27 = 3.30 to below 2.9",
                  before, after);
    char word[32];
    ck_assert_int_ge(sample_word(&m, &rng, word, 30), 0);
    words_free(&w);
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("lesson 7: train");
    TCase *core = add_test_case(s, "the arena and the new op");
    add_test(core, test_mark_and_reset);
    add_test(core, test_gelu);
    add_test(core, test_gelu_backward_paths);
    TCase *blocks = add_test_case(s, "compositions");
    add_test(blocks, test_layer_norm);
    add_test(blocks, test_layer_norm_matches_composition);
    add_test(blocks, test_linear_matches_composition);
    add_test(blocks, test_attention);
    add_test(blocks, test_attention_heads_matches_composition);
    TCase *model = add_large_test_case(s, "the model");
    tcase_set_timeout(model, 60);
    add_test(model, test_model_gradcheck);
    add_test(model, test_model_against_pytorch);
    add_test(model, test_adamw);
    TCase *data = add_test_case(s, "data and checkpoints");
    add_test(data, test_words);
    add_test(data, test_model_eval);
    add_test(data, test_checkpoint);
    add_test(data, test_short_training);
    return run_core_tests(argc, argv, s);
}
