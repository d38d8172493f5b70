/*
 * test_exercises.c - checks lesson 7's exercises (exercises.c, or solutions.c for the
 * reference run). Expected answers come from the chapter, from PyTorch (constants, each with
 * where it came from) and from the library (train.c and the earlier lessons' ops), never from
 * the file under test. Where an answer is wrong, the tests also work out the usual mistakes
 * for the same inputs and name the one it matches. The exercise table at the bottom declares
 * each exercise's id, title and points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bmm.h"
#include "broadcast.h"
#include "exercises.h"
#include "harness.h"
#include "permute.h"
#include "softmax.h"
#include "train.h"

static const float MARK = -12345.0f; /* what an output holds before the call: no answer has it */

static bool all_finite(const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

static float max_abs(const float *v, int64_t n) {
    float m = 0.0f;
    for (int64_t i = 0; i < n; i++) m = fabsf(v[i]) > m ? fabsf(v[i]) : m;
    return m;
}

/* Fails unless t was made by `function`, whose tape records `op`: checks that an exercise
 * composes the ops it was asked to. */
static void expect_op(const Tensor *t, const char *function, const char *op, const char *exercise, const char *what) {
    ck_assert_msg(t != NULL, "exercise %s returned NULL: %s", exercise, tensor_error() ? tensor_error() : "(no error)");
    ck_assert_msg(!strcmp(t->op, op),
                  "exercise %s: %s should come from %s (the op \"%s\" on the tape), but it was made "
                  "by the op \"%s\"",
                  exercise, what, function, op, t->op);
}

/* True when the tape behind t records `op` anywhere (a walk over the inputs, at most `budget`
 * tensors visited: an exercise's graph is a few dozen). */
static bool tape_uses(const Tensor *t, const char *op, int *budget) {
    if (!t || --*budget < 0) return false;
    if (t->op && !strcmp(t->op, op)) return true;
    for (int i = 0; i < t->n_inputs; i++)
        if (tape_uses(t->inputs[i], op, budget)) return true;
    return false;
}

/* A new leaf with t's shape and values that requires grad: the library's answer is built on
 * copies, so that its gradients and the exercise's do not add up in one place. */
static Tensor *leaf_copy(const Tensor *t, bool grad) {
    Tensor *c = EXPECT_OK(tensor_from(test_ctx, t->shape, t->rank, tensor_data(t), tensor_numel(t)));
    return grad ? tensor_requires_grad(c) : c;
}

/* t's values, row-major, in a malloc'd array (freed by the caller). */
static float *values_of(const Tensor *t) {
    int64_t n = tensor_numel(t);
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    tensor_to_array(t, v, n);
    return v;
}

/* ==== 7.1 the causal mask ================================================================== */

static void probe_7_1(void) {
    float mask[4];
    ex7_1_causal_mask(2, mask);
}

static void check_mask(int64_t t, const char *context) {
    Tensor *want = EXPECT_OK(causal_mask(test_ctx, t));
    const float *w = tensor_data(want);
    int64_t n = t * t;
    float *got = guarded_buffer(n, MARK);
    ex7_1_causal_mask(t, got);
    char what[160];
    snprintf(what, sizeof what, "exercise 7.1%s: the (%lld, %lld) mask", context, (long long)t, (long long)t);
    for (int64_t i = n; i < n + OUTPUT_GUARD; i++)
        ck_assert_msg(got[i] == MARK,
                      "%s: wrote past the end of the mask: element %lld was written, but the mask has "
                      "t * t = %lld floats (row r, column c is mask[r * t + c])",
                      what, (long long)i, (long long)n);
    bool transposed = t > 1;
    for (int64_t r = 0; r < t; r++)
        for (int64_t c = 0; c < t; c++) transposed = transposed && got[r * t + c] == w[c * t + r];
    ck_assert_msg(!transposed,
                  "%s is the transpose of the causal mask: -inf belongs above the diagonal, at column c > "
                  "row r (a later position, which row r must not see), and 0 on and below it",
                  what);
    for (int64_t r = 0; r < t; r++)
        for (int64_t c = 0; c < t; c++) {
            float g = got[r * t + c];
            if (g == w[r * t + c]) continue;
            ck_assert_msg(g != MARK,
                          "%s: row %lld, column %lld was never written (it still holds %g from before the "
                          "call): write all t * t cells",
                          what, (long long)r, (long long)c, (double)MARK);
            ck_assert_msg(r != c,
                          "%s: row %lld, column %lld, on the diagonal, is %g, expected 0: a position may look at "
                          "itself (0 where c <= r, -inf only where c > r)",
                          what, (long long)r, (long long)c, (double)g);
            ck_assert_msg(!(c > r && isfinite(g) && g < -1.0f),
                          "%s: row %lld, column %lld is %g, expected -inf: write -INFINITY (math.h), not a large "
                          "negative number. With -inf the softmax gives a masked position a weight of exactly 0 "
                          "whatever the scores, and the library's softmax handles it (its max starts at -INFINITY, "
                          "docs/3-softmax.md); a finite stand-in is only as good as the scores are small beside it. "
                          "causal_mask and PyTorch mask with -inf too",
                          what, (long long)r, (long long)c, (double)g);
            ck_assert_msg(c > r,
                          "%s: row %lld, column %lld is %g, expected 0: column %lld <= row %lld is an earlier "
                          "position, which row %lld may see",
                          what, (long long)r, (long long)c, (double)g, (long long)c, (long long)r, (long long)r);
            ck_abort_msg("%s: row %lld, column %lld is %g, expected -inf: column %lld > row %lld is a later position, "
                         "masked",
                         what, (long long)r, (long long)c, (double)g, (long long)c, (long long)r);
        }
    EXPECT_OUTPUT(got, n, MARK, w, 0.0f, what);
}

START_TEST(test_7_1_chapter) {
    /* the chapter's (4, 4) mask: row r sees columns 0..r */
    float got[4 * 4 + OUTPUT_GUARD];
    for (int i = 0; i < 4 * 4 + OUTPUT_GUARD; i++) got[i] = MARK;
    guard_hint(got, sizeof got);
    ex7_1_causal_mask(4, got);
    const float inf = INFINITY;
    const float want[16] = {0, -inf, -inf, -inf, 0, 0, -inf, -inf, 0, 0, 0, -inf, 0, 0, 0, 0};
    check_mask(4, " (the chapter)");
    EXPECT_ARRAY(got, want, 16, 0.0f,
                 "exercise 7.1 (the chapter): the (4, 4) mask, [[0, -inf, -inf, -inf], [0, 0, "
                 "-inf, -inf], ...]");
    check_mask(2, "");
    check_mask(1, " (one position: [0])");
    check_mask(0, " (no positions: nothing to write)");
}
END_TEST

START_TEST(test_7_1_sizes) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 71);
    char context[96];
    for (int trial = 0; trial < 30; trial++) {
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_mask(rng_int(&rng, 2, 40), context);
    }
}
END_TEST

/* ==== 7.2 one attention head ================================================================ */

static void probe_7_2(void) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 2), VALUES(1, 0, 0, 1));
    Tensor *w = tensor_from(test_ctx, DIMS(2, 2), VALUES(1, 0, 0, 1));
    ex7_2_attention_head(x, w, w, w);
}

/* The head as the docs write it, and the usual ways to get it wrong, all from library ops. */
typedef enum {
    HEAD_RIGHT,
    HEAD_NO_SCALE,
    HEAD_SCALE_1_OVER_D,
    HEAD_NO_MASK,
    HEAD_MASK_TRANSPOSED,
    HEAD_SOFTMAX_OVER_COLUMNS,
    HEAD_SOFTMAX_OF_TRANSPOSE,
    HEAD_SCORES_TRANSPOSED,
    HEAD_K_NOT_TRANSPOSED,
    HEAD_SCALE_1_OVER_SQRT_C,
    HEAD_K_FROM_WQ,
    HEAD_VARIANTS
} HeadVariant;

static Tensor *head_variant(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv, HeadVariant variant) {
    int64_t t = x->shape[0], c = x->shape[1], d = wq->shape[1];
    if (variant == HEAD_K_NOT_TRANSPOSED && t != d) return NULL; /* q @ k would not multiply */
    Tensor *q = tensor_matmul(x, wq), *v = tensor_matmul(x, wv);
    Tensor *k = tensor_matmul(x, variant == HEAD_K_FROM_WQ ? wq : wk);
    float scale = variant == HEAD_NO_SCALE              ? 1.0f
                  : variant == HEAD_SCALE_1_OVER_D      ? 1.0f / (float)d
                  : variant == HEAD_SCALE_1_OVER_SQRT_C ? 1.0f / sqrtf((float)c)
                                                        : 1.0f / sqrtf((float)d);
    Tensor *product = variant == HEAD_K_NOT_TRANSPOSED    ? tensor_matmul(q, k)
                      : variant == HEAD_SCORES_TRANSPOSED ? tensor_matmul(k, tensor_transpose(q, 0, 1))
                                                          : tensor_matmul(q, tensor_transpose(k, 0, 1));
    Tensor *scores = tensor_mul_scalar(product, scale);
    Tensor *mask = causal_mask(test_ctx, t);
    if (variant == HEAD_MASK_TRANSPOSED) mask = tensor_transpose(mask, 0, 1);
    if (variant != HEAD_NO_MASK) scores = tensor_add(scores, mask);
    Tensor *weights = variant == HEAD_SOFTMAX_OVER_COLUMNS
                          ? tensor_transpose(tensor_softmax_last_dim(tensor_transpose(scores, 0, 1)), 0, 1)
                      : variant == HEAD_SOFTMAX_OF_TRANSPOSE ? tensor_softmax_last_dim(tensor_transpose(scores, 0, 1))
                                                             : tensor_softmax_last_dim(scores);
    return tensor_matmul(weights, v);
}

static void head_mistake(HeadVariant variant, int64_t c, int64_t d, char *buf, size_t size) {
    double sqrt_d = sqrt((double)d);
    switch (variant) {
    case HEAD_NO_SCALE:
        snprintf(buf, size,
                 "the scores were not scaled: multiply q @ k^T by 1/sqrt(D), here 1/sqrt(%lld) = %g, before "
                 "the mask and the softmax (unscaled, the scores grow with D and the softmax saturates)",
                 (long long)d, 1.0 / sqrt_d);
        break;
    case HEAD_SCALE_1_OVER_D:
        snprintf(buf, size,
                 "the scores were scaled by 1/D = %g; the scale is 1/sqrt(D) = %g (it keeps the scores' "
                 "variance near 1 when the entries of q and k have variance 1)",
                 1.0 / (double)d, 1.0 / sqrt_d);
        break;
    case HEAD_NO_MASK:
        snprintf(buf, size,
                 "there is no causal mask: each position also looked at the later ones. Add the (T, T) "
                 "causal mask (causal_mask(x->ctx, T)) to the scores before the softmax");
        break;
    case HEAD_MASK_TRANSPOSED:
        snprintf(buf, size,
                 "the mask is on the wrong side of the diagonal: position i looked at positions i..T-1 (the "
                 "future) instead of 0..i. -inf goes where column > row, as in causal_mask");
        break;
    case HEAD_SOFTMAX_OVER_COLUMNS:
        snprintf(buf, size,
                 "the softmax normalized the columns of the scores instead of the rows: each row of the "
                 "weights (one query against every key) must sum to 1, which is what tensor_softmax_last_dim does "
                 "to the (T, T) scores as they are, with no transpose around it");
        break;
    case HEAD_SOFTMAX_OF_TRANSPOSE:
        snprintf(buf, size,
                 "the softmax was taken over the transposed scores (the columns of q @ k^T + mask): each "
                 "row of the weights (one query against every key) must sum to 1, which is what "
                 "tensor_softmax_last_dim does to the (T, T) scores as they are, with no transpose");
        break;
    case HEAD_SCORES_TRANSPOSED:
        snprintf(buf, size,
                 "the scores are transposed: k @ q^T instead of q @ k^T. Row i of the scores is query i "
                 "against every key");
        break;
    case HEAD_K_NOT_TRANSPOSED:
        snprintf(buf, size,
                 "the scores are q @ k, not q @ k^T: transpose k first (tensor_transpose(k, 0, 1)). T and "
                 "D are equal here, so the shapes let it through");
        break;
    case HEAD_SCALE_1_OVER_SQRT_C:
        snprintf(buf, size,
                 "the scores were scaled by 1/sqrt(C) = %g, with C = %lld the width of x; the scale is "
                 "1/sqrt(D) = %g, with D = %lld the width of q and k (wq->shape[1], or q->shape[1])",
                 1.0 / sqrt((double)c), (long long)c, 1.0 / sqrt_d, (long long)d);
        break;
    case HEAD_K_FROM_WQ:
        snprintf(buf, size, "the scores are q @ q^T: k was computed from wq (k = x @ wq); k = x @ wk");
        break;
    default: snprintf(buf, size, "?");
    }
}

/* x (T, C), wq, wk, wv (C, D): the values against the library's composition (naming the
 * mistake they match when they differ), the tape, then the gradient of all four inputs. */
static void check_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv, Rng *rng, const char *context) {
    int64_t t = x->shape[0], c = x->shape[1], d = wq->shape[1];
    char what[256], message[1024];
    snprintf(what, sizeof what, "exercise 7.2%s: x (%lld,%lld), wq, wk and wv (%lld,%lld)", context, (long long)t,
             (long long)c, (long long)c, (long long)d);
    Tensor *got = ex7_2_attention_head(x, wq, wk, wv);
    if (!got) {
        const char *error = tensor_error() ? tensor_error() : "(no error recorded)";
        ck_abort_msg("%s: returned NULL: %s%s", what, error,
                     strstr(error, "matmul") ? ". (The scores are q @ k^T, (T, D) @ (D, T): tensor_transpose(k, 0, 1) "
                                               "gives k^T)"
                                             : "");
    }
    snprintf(message, sizeof message, "%s: the result (weights (T, T) @ v (T, D))", what);
    expect_shape_(got, DIMS(t, d), message, __FILE__, __LINE__);

    Tensor *copies[4] = {leaf_copy(x, true), leaf_copy(wq, true), leaf_copy(wk, true), leaf_copy(wv, true)};
    Tensor *want = EXPECT_OK(head_variant(copies[0], copies[1], copies[2], copies[3], HEAD_RIGHT));
    int64_t n = t * d;
    float *got_values = values_of(got);
    if (!values_close(got_values, tensor_data(want), n, 1e-4f)) {
        ck_assert_msg(!all_finite(tensor_data(want), n) || all_finite(got_values, n),
                      "%s: the result holds inf or nan: -inf reached the output. The mask goes on the scores, before "
                      "the softmax, which turns each -inf into a weight of exactly 0",
                      what);
        Tensor *plain[4] = {leaf_copy(x, false), leaf_copy(wq, false), leaf_copy(wk, false), leaf_copy(wv, false)};
        for (int variant = HEAD_RIGHT + 1; variant < HEAD_VARIANTS; variant++) {
            Tensor *wrong = head_variant(plain[0], plain[1], plain[2], plain[3], (HeadVariant)variant);
            tensor_clear_error();
            if (!wrong || !values_close(got_values, tensor_data(wrong), n, 1e-4f)) continue;
            char mistake[512];
            head_mistake((HeadVariant)variant, c, d, mistake, sizeof mistake);
            ck_abort_msg("%s: %s", what, mistake);
        }
    }
    free(got_values);
    snprintf(message, sizeof message, "%s: softmax(q @ k^T / sqrt(D) + mask) @ v", what);
    EXPECT_VALUES_ARRAY(got, tensor_data(want), n, 1e-4f, message);
    expect_op(got, "tensor_matmul", "matmul", "7.2", "the result (the weights @ v)");
    expect_op(got->inputs[0], "tensor_softmax_last_dim", "softmax_last_dim", "7.2", "the weights (what multiplies v)");

    /* the gradients, from a random upstream: those of the library's composition */
    Tensor *u = random_tensor(test_ctx, rng, got->shape, got->rank, -1, 1);
    Tensor *inputs[4] = {x, wq, wk, wv};
    for (int i = 0; i < 4; i++) tensor_zero_grad(inputs[i]);
    ck_assert_msg(tensor_backward_from(got, u) == 0, "%s: backward from the result failed: %s", what,
                  tensor_error() ? tensor_error() : "(no error recorded)");
    ck_assert_int_eq(tensor_backward_from(want, u), 0);
    const char *names[4] = {"x", "wq", "wk", "wv"};
    char us[512];
    format_literal(tensor_data(u), u->shape, u->rank, us, sizeof us);
    for (int i = 0; i < 4; i++) {
        snprintf(message, sizeof message, "%s: the gradient of %s, upstream %s", what, names[i], us);
        EXPECT_VALUES_ARRAY(tensor_grad(inputs[i]), tensor_data(tensor_grad(copies[i])), tensor_numel(inputs[i]), 1e-4f,
                            message);
    }
}

START_TEST(test_7_2_chapter) {
    /* The chapter's head: T = 3, C = 2, D = 4, so the scores are scaled by 1/sqrt(4) = 1/2:
     * q @ k^T / 2 = [[0.5, 0.5, 1], [0, 1, 1], [0.5, 1.5, 2]]. Row 0 sees only itself: its
     * output is v[0] = [1, 2, 3, 4]. Row 1 weighs v[0] and v[1] by softmax([0, 1]). */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 0, 0, 1, 1, 1)));
    Tensor *wq = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 4), VALUES(1, 0, 1, 0, 0, 1, 0, 1)));
    Tensor *wk = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 4), VALUES(1, 0, 0, 0, 0, 1, 1, 1)));
    Tensor *wv = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 4), VALUES(1, 2, 3, 4, -1, 0, 1, 2)));
    Rng rng = rng_seeded(test_seed() + 72);
    check_head(x, wq, wk, wv, &rng, " (the chapter)");
    /* from PyTorch 1.13: torch.softmax(q @ k.T / 2 + mask, -1) @ v */
    const float want[12] = {
        1,           2,          3,          4, -0.462117165f, 0.537882864f, 1.53788292f, 2.5378828f, -0.209547296f,
        1.33700204f, 2.8835516f, 4.43010092f};
    EXPECT_VALUES_ARRAY(ex7_2_attention_head(x, wq, wk, wv), want, 12, 1e-5f,
                        "exercise 7.2 (the chapter): the head's output, against PyTorch's");
}
END_TEST

START_TEST(test_7_2_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 720);
    char context[96];
    for (int trial = 0; trial < 16; trial++) {
        int64_t t = rng_int(&rng, 1, 6), c = rng_int(&rng, 1, 5), d = rng_int(&rng, 1, 4);
        if (trial % 4 == 1) d = t = rng_int(&rng, 2, 4); /* where q @ k would multiply too */
        if (trial % 4 == 2) t = rng_int(&rng, 2, 6), d = rng_int(&rng, 2, 4);
        Tensor *x = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(t, c), -1.5f, 1.5f));
        Tensor *wq = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(c, d), -1.5f, 1.5f));
        Tensor *wk = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(c, d), -1.5f, 1.5f));
        Tensor *wv = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(c, d), -1.5f, 1.5f));
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_head(x, wq, wk, wv, &rng, context);
    }
}
END_TEST

/* ==== 7.3 layer norm ========================================================================= */

static void probe_7_3(void) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 2), VALUES(1, 2, 3, 5));
    Tensor *gamma = tensor_from(test_ctx, DIMS(2), VALUES(1, 1)), *beta = tensor_from(test_ctx, DIMS(2), VALUES(0, 0));
    ex7_3_layer_norm(x, gamma, beta, 1e-5f);
}

/* The usual ways to get layer norm wrong, computed in double from the definition. */
typedef enum {
    LN_UNBIASED,
    LN_EPS_OUTSIDE,
    LN_VAR_NOT_STD,
    LN_STD_FOR_VAR,
    LN_NOT_CENTERED,
    LN_GAMMA_BETA_SWAPPED,
    LN_NO_GAMMA_BETA,
    LN_NO_EPS,
    LN_FIRST_AXIS,
    LN_VARIANTS
} LayerNormVariant;

static const char *const layer_norm_mistakes[LN_VARIANTS] = {
    "the variance was divided by C - 1 (the unbiased sample variance, numpy's var(ddof=1)); layer norm divides by C: "
    "mean((x - mu)^2), as tensor_mean_axis gives it",
    "eps was added outside the square root, (x - mu) / (sqrt(var) + eps); it goes inside: (x - mu) / sqrt(var + eps), "
    "as in PyTorch's layer_norm (the two differ most where a row's variance is near 0)",
    "the rows were divided by var + eps, not by its square root: (x - mu) / sqrt(var + eps) has variance 1 "
    "(tensor_pow_scalar(var + eps, -0.5))",
    "the standard deviation was used where the variance belongs, (x - mu) / sqrt(std + eps): var = mean((x - mu)^2) "
    "goes under the square root, with no square root of its own",
    "x was not centered: subtract the row's mean mu before dividing by sqrt(var + eps)",
    "gamma and beta are swapped: gamma scales the normalized row and beta shifts it, y = normed * gamma + beta",
    "gamma and beta were not applied: y = normed * gamma + beta",
    "eps was left out, (x - mu) / sqrt(var); it goes under the square root, (x - mu) / sqrt(var + eps) "
    "(tensor_add_scalar(var, eps)): it keeps a row of nearly equal values from being divided by a variance near 0",
    "the mean and the variance were taken over axis 0, down the columns; layer norm normalizes each row over the "
    "last dim, C: tensor_mean_axis(..., -1, true)",
};

static void layer_norm_variant(const float *x, int64_t rows, int64_t c, int64_t outer, const float *gamma,
                               const float *beta, float eps, LayerNormVariant variant, float *out) {
    /* each statistic is over `length` values `step` apart: the last dim's C, or for
     * LN_FIRST_AXIS axis 0's `outer`, at every position of the other dims */
    bool first_axis = variant == LN_FIRST_AXIS;
    int64_t n = rows * c, length = first_axis ? outer : c, step = first_axis ? n / outer : 1, groups = n / length;
    for (int64_t r = 0; r < groups; r++) {
        int64_t start = first_axis ? r : r * c;
        const float *row = x + start;
        double mu = 0.0, ss = 0.0;
        for (int64_t j = 0; j < length; j++) mu += row[j * step];
        mu /= (double)length;
        for (int64_t j = 0; j < length; j++) ss += (row[j * step] - mu) * (row[j * step] - mu);
        double var = ss / (double)(variant == LN_UNBIASED ? length - 1 : length);
        double denominator = variant == LN_EPS_OUTSIDE   ? sqrt(var) + eps
                             : variant == LN_VAR_NOT_STD ? var + eps
                             : variant == LN_STD_FOR_VAR ? sqrt(sqrt(var) + eps)
                             : variant == LN_NO_EPS      ? sqrt(var)
                                                         : sqrt(var + eps);
        for (int64_t j = 0; j < length; j++) {
            int64_t at = start + j * step, col = at % c;
            double normed = (row[j * step] - (variant == LN_NOT_CENTERED ? 0.0 : mu)) / denominator;
            double y = variant == LN_GAMMA_BETA_SWAPPED ? normed * beta[col] + gamma[col]
                       : variant == LN_NO_GAMMA_BETA    ? normed
                                                        : normed * gamma[col] + beta[col];
            out[at] = (float)y;
        }
    }
}

/* The values against tensor_layer_norm (naming the mistake they match when they differ), then
 * the gradients of x, gamma and beta from a random upstream. */
static void check_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps, Rng *rng, const char *context) {
    char what[384], message[1024], s[SHAPE_STR_MAX];
    int64_t c = x->shape[x->rank - 1], n = tensor_numel(x), rows = c > 0 ? n / c : 0;
    snprintf(what, sizeof what, "exercise 7.3%s: x of shape %s, eps %g", context,
             shape_format(x->shape, x->rank, s, sizeof s), (double)eps);
    Tensor *got = ex7_3_layer_norm(x, gamma, beta, eps);
    ck_assert_msg(got != NULL, "%s: returned NULL: %s", what, tensor_error() ? tensor_error() : "(no error recorded)");
    snprintf(message, sizeof message, "%s: the result (the shape of x)", what);
    expect_shape_(got, x->shape, x->rank, message, __FILE__, __LINE__);

    Tensor *copies[3] = {leaf_copy(x, true), leaf_copy(gamma, true), leaf_copy(beta, true)};
    Tensor *want = EXPECT_OK(tensor_layer_norm(copies[0], copies[1], copies[2], eps));
    float *got_values = values_of(got);
    if (!values_close(got_values, tensor_data(want), n, 1e-4f)) {
        float *wrong = malloc((size_t)n * sizeof *wrong + 1);
        ck_assert_ptr_nonnull(wrong);
        for (int variant = 0; variant < LN_VARIANTS; variant++) {
            if (variant == LN_UNBIASED && c == 1) continue; /* 0 / 0 */
            layer_norm_variant(tensor_data(x), rows, c, x->shape[0], tensor_data(gamma), tensor_data(beta), eps,
                               (LayerNormVariant)variant, wrong);
            if (values_close(got_values, wrong, n, 1e-4f)) ck_abort_msg("%s: %s", what, layer_norm_mistakes[variant]);
        }
        free(wrong);
    }
    free(got_values);
    char xs[512];
    snprintf(message, sizeof message, "%s: (x - mean) / sqrt(var + eps) * gamma + beta, x = %s", what,
             format_literal(tensor_data(x), x->shape, x->rank, xs, sizeof xs));
    EXPECT_VALUES_ARRAY(got, tensor_data(want), n, 1e-4f, message);

    ck_assert_msg(got->requires_grad,
                  "%s: the values are right, but the result does not require grad: it was not "
                  "computed from x, gamma and beta by the library's ops, so backward cannot reach them. Values written "
                  "into a new tensor by a loop have no backward (their gradients would be zero): compose "
                  "tensor_mean_axis, tensor_sub, tensor_mul, tensor_add_scalar, tensor_pow_scalar and tensor_add",
                  what);
    int budget = 10000;
    ck_assert_msg(!tape_uses(got, "layer_norm", &budget),
                  "%s: the values are right, but they come from "
                  "tensor_layer_norm, the library's op (\"layer_norm\" on the tape): the exercise is to build layer "
                  "norm from lessons 1 and 2's ops: compose tensor_mean_axis, tensor_sub, tensor_mul, "
                  "tensor_add_scalar, tensor_pow_scalar and tensor_add",
                  what);
    Tensor *u = random_tensor(test_ctx, rng, got->shape, got->rank, -1, 1);
    Tensor *inputs[3] = {x, gamma, beta};
    for (int i = 0; i < 3; i++) tensor_zero_grad(inputs[i]);
    ck_assert_msg(tensor_backward_from(got, u) == 0, "%s: backward from the result failed: %s", what,
                  tensor_error() ? tensor_error() : "(no error recorded)");
    ck_assert_int_eq(tensor_backward_from(want, u), 0);
    const char *names[3] = {"x", "gamma", "beta"};
    char us[512];
    format_literal(tensor_data(u), u->shape, u->rank, us, sizeof us);
    for (int i = 0; i < 3; i++) {
        const float *g = tensor_data(tensor_grad(inputs[i])), *expected = tensor_data(tensor_grad(copies[i]));
        int64_t m = tensor_numel(inputs[i]);
        ck_assert_msg(!(max_abs(g, m) == 0.0f && max_abs(expected, m) > 1e-3f),
                      "%s: the gradient of %s came back all zero: part of the result was computed off the tape (a "
                      "loop writing values into a tensor has no backward, so nothing flows back through it). Build "
                      "every step from the library's ops",
                      what, names[i]);
        snprintf(message, sizeof message, "%s: the gradient of %s, upstream %s", what, names[i], us);
        EXPECT_VALUES_ARRAY(tensor_grad(inputs[i]), expected, m, 1e-4f, message);
    }
}

START_TEST(test_7_3_chapter) {
    /* two rows of C = 4 with PyTorch's default eps */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 4), VALUES(1, 2, 3, 4, 2, 2, 2, 6)));
    Tensor *gamma = tensor_requires_grad(tensor_from(test_ctx, DIMS(4), VALUES(1, 1, 2, 0.5f)));
    Tensor *beta = tensor_requires_grad(tensor_from(test_ctx, DIMS(4), VALUES(0, 0.5f, 0, -1)));
    Rng rng = rng_seeded(test_seed() + 73);
    check_layer_norm(x, gamma, beta, 1e-5f, &rng, " (the chapter)");
    /* from PyTorch 1.13: torch.nn.functional.layer_norm(x, (4,), gamma, beta, eps=1e-5) */
    const float want[8] = {-1.34163547f,  0.0527881384f,  0.894423604f, -0.329182267f,
                           -0.577349305f, -0.0773493052f, -1.15469861f, -0.133976042f};
    EXPECT_VALUES_ARRAY(ex7_3_layer_norm(x, gamma, beta, 1e-5f), want, 8, 1e-5f,
                        "exercise 7.3 (the chapter): x = [[1, 2, 3, 4], [2, 2, 2, 6]], gamma = [1, 1, 2, 0.5], "
                        "beta = [0, 0.5, 0, -1], against PyTorch's layer_norm");
    /* a row of nearly equal values, where eps decides the scale */
    Tensor *flat = tensor_requires_grad(tensor_from(test_ctx, DIMS(1, 4), VALUES(1, 1.1f, 0.9f, 1)));
    check_layer_norm(flat, gamma, beta, 0.01f, &rng, " (a row of nearly equal values)");
}
END_TEST

START_TEST(test_7_3_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 730);
    const float eps[4] = {1e-5f, 0.01f, 0.1f, 0.5f};
    char context[96];
    for (int trial = 0; trial < 16; trial++) {
        int64_t shape[3];
        int rank = (int)rng_int(&rng, 1, 3);
        random_shape(&rng, rank, 1, 4, shape);
        shape[rank - 1] = trial == 3 ? 1 : rng_int(&rng, 2, 7); /* C = 1: every row is its own mean */
        Tensor *x = tensor_requires_grad(random_tensor(test_ctx, &rng, shape, rank, -2, 2));
        Tensor *gamma = tensor_requires_grad(random_tensor(test_ctx, &rng, &shape[rank - 1], 1, 0.5f, 2));
        Tensor *beta = tensor_requires_grad(random_tensor(test_ctx, &rng, &shape[rank - 1], 1, -1, 1));
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_layer_norm(x, gamma, beta, eps[trial % 4], &rng, context);
    }
}
END_TEST

static Tensor *layer_norm_of(Tensor *const *inputs, void *eps) {
    return ex7_3_layer_norm(inputs[0], inputs[1], inputs[2], *(const float *)eps);
}

START_TEST(test_7_3_gradcheck) {
    /* your function's backward against central differences of your function: no library answer */
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 731);
    const int64_t shapes[2][2] = {{2, 3}, {1, 5}};
    float eps[2] = {0.1f, 1e-5f};
    for (int k = 0; k < 2; k++) {
        Tensor *inputs[3] = {tensor_requires_grad(random_tensor(test_ctx, &rng, shapes[k], 2, -2, 2)),
                             tensor_requires_grad(random_tensor(test_ctx, &rng, &shapes[k][1], 1, 0.5f, 2)),
                             tensor_requires_grad(random_tensor(test_ctx, &rng, &shapes[k][1], 1, -1, 1))};
        char what[256], s[SHAPE_STR_MAX];
        snprintf(what, sizeof what,
                 "exercise 7.3: gradcheck of your layer norm at x of shape %s, eps %g (inputs 0, 1, 2 "
                 "are x, gamma, beta; COURSE_SEED=%llu)",
                 shape_format(shapes[k], 2, s, sizeof s), (double)eps[k], (unsigned long long)seed);
        EXPECT_GRADCHECK(layer_norm_of, &eps[k], inputs, 3, what);
    }
}
END_TEST

/* ==== 7.4 AdamW ================================================================================= */

static void probe_7_4(void) {
    float p[2] = {1, 2}, g[2] = {0.1f, -0.2f}, m[2] = {0}, v[2] = {0};
    ex7_4_adamw_step(p, g, m, v, 2, 1, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f);
}

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
} Hyper;

/* The usual ways to get AdamW wrong: param, m and v after one step from the given state. */
typedef enum {
    ADAM_NO_BIAS_CORRECTION,
    ADAM_BIAS_STEP_MINUS_1,
    ADAM_BIAS_STEP_PLUS_1,
    ADAM_L2_IN_GRADIENT,
    ADAM_DECAY_AFTER,
    ADAM_DECAY_WITHOUT_LR,
    ADAM_EPS_INSIDE_SQRT,
    ADAM_V_NOT_CORRECTED,
    ADAM_VARIANTS
} AdamVariant;

static const char *const adam_mistakes[ADAM_VARIANTS] = {
    "there is no bias correction: the update used m and v as they are. Divide them by 1 - beta1^step and "
    "1 - beta2^step: both moments start at 0, so early on they are too small (after step 1, m is (1 - beta1) grad)",
    "the bias correction used step - 1 (counting the steps from 0): step already counts from 1, so the first call "
    "divides by 1 - beta1^1, not by 1 - beta1^0 = 0",
    "the bias correction used step + 1: step already counts from 1, so use beta1^step and beta2^step as given",
    "the weight decay went into the gradient (grad + weight_decay * param: Adam with L2, torch.optim.Adam's "
    "weight_decay). AdamW decouples it: param -= lr * weight_decay * param on its own, and the moments see the "
    "gradient alone",
    "the weight decay came after the Adam update; PyTorch's AdamW decays first: param -= lr * weight_decay * param, "
    "then the moments and the update",
    "the decay was weight_decay * param; AdamW's is lr * weight_decay * param (scaled by the learning rate)",
    "eps was added inside the square root, sqrt(vhat + eps); AdamW adds it outside: sqrt(vhat) + eps",
    "m was bias-corrected but v was not: the update divides by sqrt(vhat) + eps, with vhat = v / (1 - beta2^step), "
    "as mhat = m / (1 - beta1^step)",
};

static void adamw_variant(AdamVariant variant, float *p, const float *g, float *m, float *v, int64_t n, int64_t step,
                          const Hyper *h) {
    int64_t s = variant == ADAM_BIAS_STEP_MINUS_1 ? step - 1 : variant == ADAM_BIAS_STEP_PLUS_1 ? step + 1 : step;
    float bias1 = variant == ADAM_NO_BIAS_CORRECTION ? 1.0f : 1.0f - powf(h->beta1, (float)s);
    bool v_uncorrected = variant == ADAM_NO_BIAS_CORRECTION || variant == ADAM_V_NOT_CORRECTED;
    float bias2 = v_uncorrected ? 1.0f : 1.0f - powf(h->beta2, (float)s);
    for (int64_t i = 0; i < n; i++) {
        float gi = g[i];
        if (variant == ADAM_L2_IN_GRADIENT) gi += h->weight_decay * p[i];
        else if (variant == ADAM_DECAY_WITHOUT_LR) p[i] -= h->weight_decay * p[i];
        else if (variant != ADAM_DECAY_AFTER) p[i] -= h->lr * h->weight_decay * p[i];
        m[i] = h->beta1 * m[i] + (1.0f - h->beta1) * gi;
        v[i] = h->beta2 * v[i] + (1.0f - h->beta2) * gi * gi;
        float denominator =
            variant == ADAM_EPS_INSIDE_SQRT ? sqrtf(v[i] / bias2 + h->eps) : sqrtf(v[i] / bias2) + h->eps;
        p[i] -= h->lr * (m[i] / bias1) / denominator;
        if (variant == ADAM_DECAY_AFTER) p[i] -= h->lr * h->weight_decay * p[i];
    }
}

static float *copy_of(const float *v, int64_t n) {
    float *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    ck_assert_ptr_nonnull(c);
    if (n > 0) memcpy(c, v, (size_t)n * sizeof *c);
    return c;
}

static void expect_guard(const float *buf, int64_t n, float marker, const char *what, const char *name) {
    for (int64_t i = n; i < n + OUTPUT_GUARD; i++)
        ck_assert_msg(buf[i] == marker || (isnan(marker) && isnan(buf[i])),
                      "%s: wrote past the end of %s: element %lld was written, but it has n = %lld floats", what, name,
                      (long long)i, (long long)n);
}

/* One optimizer: the student's state (param, m, v, each followed by a guard) and the library's
 * (adamw_update, model.c) side by side, from the same start. */
typedef struct {
    int64_t n;
    Hyper h;
    float *param, *grad, *m, *v;      /* the exercise's, guarded */
    float *ref_param, *ref_m, *ref_v; /* the library's */
} Adam;

static Adam adam_new(const float *param, const float *m, const float *v, int64_t n, Hyper h) {
    Adam a = {n,
              h,
              guarded_buffer(n, MARK),
              guarded_buffer(n, NAN),
              guarded_buffer(n, MARK),
              guarded_buffer(n, MARK),
              copy_of(param, n),
              copy_of(m, n),
              copy_of(v, n)};
    for (int64_t i = 0; i < n; i++) a.param[i] = param[i], a.m[i] = m[i], a.v[i] = v[i];
    return a;
}

static void adam_free(Adam *a) {
    free(a->param), free(a->grad), free(a->m), free(a->v), free(a->ref_param), free(a->ref_m), free(a->ref_v);
}

/* Takes step `step` with gradient g on both, then holds the exercise's param, m and v to the
 * library's, naming the mistake the param matches when it differs. */
static void adam_step(Adam *a, const float *g, int64_t step, const char *context) {
    int64_t n = a->n;
    const Hyper *h = &a->h;
    for (int64_t i = 0; i < n; i++) a->grad[i] = g[i];
    float *before_p = copy_of(a->ref_param, n), *before_m = copy_of(a->ref_m, n), *before_v = copy_of(a->ref_v, n);
    AdamW opt = {h->lr, h->beta1, h->beta2, h->eps, h->weight_decay};
    adamw_update(a->ref_param, g, a->ref_m, a->ref_v, n, step, &opt, h->weight_decay);
    size_t bytes = (size_t)(n + OUTPUT_GUARD) * sizeof(float);
    guard_hint(a->param, bytes), guard_hint(a->grad, bytes), guard_hint(a->m, bytes), guard_hint(a->v, bytes);
    ex7_4_adamw_step(a->param, a->grad, a->m, a->v, n, step, h->lr, h->beta1, h->beta2, h->eps, h->weight_decay);

    char what[384], message[1024], gs[256];
    snprintf(what, sizeof what,
             "exercise 7.4%s: step %lld (lr %g, beta1 %g, beta2 %g, eps %g, weight_decay %g), n %lld", context,
             (long long)step, (double)h->lr, (double)h->beta1, (double)h->beta2, (double)h->eps,
             (double)h->weight_decay, (long long)n);
    expect_guard(a->param, n, MARK, what, "param");
    expect_guard(a->m, n, MARK, what, "m");
    expect_guard(a->v, n, MARK, what, "v");
    const float tol = 1e-5f;
    if (!values_close(a->param, a->ref_param, n, tol) || !values_close(a->m, a->ref_m, n, tol) ||
        !values_close(a->v, a->ref_v, n, tol)) {
        for (int variant = 0; variant < ADAM_VARIANTS; variant++) {
            float *p = copy_of(before_p, n), *m = copy_of(before_m, n), *v = copy_of(before_v, n);
            adamw_variant((AdamVariant)variant, p, g, m, v, n, step, h);
            if (values_close(a->param, p, n, tol) && values_close(a->m, m, n, tol) && values_close(a->v, v, n, tol))
                ck_abort_msg("%s: %s", what, adam_mistakes[variant]);
            free(p), free(m), free(v);
        }
    }
    snprintf(message, sizeof message,
             "%s: param (grad is followed by nan: a nan here means a read past its end), "
             "grad %s",
             what, format_floats(g, n, gs, sizeof gs));
    EXPECT_ARRAY(a->param, a->ref_param, n, tol, message);

    /* the moments: kept from step to step, as they are (not bias-corrected) */
    float bias1 = 1.0f - powf(h->beta1, (float)step), bias2 = 1.0f - powf(h->beta2, (float)step);
    const float *moments[2][3] = {{a->m, a->ref_m, before_m}, {a->v, a->ref_v, before_v}};
    const char *names[2] = {"m", "v"};
    for (int k = 0; k < 2; k++) {
        const float *got = moments[k][0], *want = moments[k][1], *before = moments[k][2];
        if (values_close(got, want, n, tol)) continue;
        float *corrected = copy_of(want, n);
        for (int64_t i = 0; i < n; i++) corrected[i] /= k == 0 ? bias1 : bias2;
        ck_assert_msg(!values_close(got, corrected, n, tol),
                      "%s: %s holds the bias-corrected %s (divided by 1 - beta%d^step): "
                      "keep the moment itself in %s, and correct a copy of it for the update, or the next step starts "
                      "from the wrong moment",
                      what, names[k], k == 0 ? "mhat" : "vhat", k + 1, names[k]);
        ck_assert_msg(!(n > 0 && values_close(got, before, n, 0.0f)),
                      "%s: %s was not updated: it carries the moment to the "
                      "next step, so write it back (%s)",
                      what, names[k],
                      k == 0 ? "m[i] = beta1 * m[i] + (1 - beta1) * grad[i]"
                             : "v[i] = beta2 * v[i] + (1 - beta2) * grad[i]^2");
        free(corrected);
        snprintf(message, sizeof message, "%s: the moment %s after the step, grad %s", what, names[k], gs);
        EXPECT_ARRAY(got, want, n, tol, message);
    }
    free(before_p), free(before_m), free(before_v);
}

START_TEST(test_7_4_pytorch) {
    /* Three steps of torch.optim.AdamW([p], lr=0.1, betas=(0.9, 0.999), eps=1e-8,
     * weight_decay=0.1), from PyTorch 1.13: p after each step, and its state's exp_avg (m) and
     * exp_avg_sq (v). The last parameter starts at 0 with a gradient of 0: nothing moves it. */
    const float start[4] = {0.5f, -1.0f, 2.0f, 0.0f}, zeros[4] = {0};
    const float grads[3][4] = {{0.1f, -0.2f, 0.3f, 0.0f}, {-0.4f, 0.5f, 0.3f, 1.0f}, {0.2f, 0.2f, -0.6f, -1.0f}};
    const float torch_p[3][4] = {{0.395000011f, -0.889999986f, 1.88f, 0.0f},
                                 {0.447000355f, -0.925321519f, 1.76119995f, -0.0744136795f},
                                 {0.453547716f, -0.970362604f, 1.75115287f, -0.0691513196f}};
    const float torch_m[3][4] = {{0.0100000007f, -0.0200000014f, 0.0300000012f, 0.0f},
                                 {-0.0310000014f, 0.0319999978f, 0.0570000038f, 0.100000001f},
                                 {-0.00790000055f, 0.0487999991f, -0.00870000292f, -0.0100000054f}};
    const float torch_v[3][4] = {{1.00000007e-05f, 4.00000026e-05f, 9.00000086e-05f, 0.0f},
                                 {0.000169990017f, 0.000289960008f, 0.000179910014f, 0.00100000005f},
                                 {0.000209820035f, 0.00032967006f, 0.000539730128f, 0.00199900009f}};
    Adam a = adam_new(start, zeros, zeros, 4, (Hyper){0.1f, 0.9f, 0.999f, 1e-8f, 0.1f});
    for (int s = 0; s < 3; s++) {
        adam_step(&a, grads[s], s + 1, " (PyTorch's example)");
        char what[160];
        snprintf(what, sizeof what, "exercise 7.4 (PyTorch's example): after step %d, against torch.optim.AdamW's",
                 s + 1);
        char which[200];
        snprintf(which, sizeof which, "%s param", what);
        EXPECT_ARRAY(a.param, torch_p[s], 4, 1e-5f, which);
        snprintf(which, sizeof which, "%s exp_avg (m)", what);
        EXPECT_ARRAY(a.m, torch_m[s], 4, 1e-5f, which);
        snprintf(which, sizeof which, "%s exp_avg_sq (v)", what);
        EXPECT_ARRAY(a.v, torch_v[s], 4, 1e-5f, which);
    }
    adam_free(&a);
    /* n = 0: nothing to read or write */
    Adam empty = adam_new(start, zeros, zeros, 0, (Hyper){0.1f, 0.9f, 0.999f, 1e-8f, 0.1f});
    adam_step(&empty, grads[0], 1, " (n = 0)");
    adam_free(&empty);
}
END_TEST

START_TEST(test_7_4_random) {
    /* each run draws new values; the settings cycle through these, so every run has large
     * steps and decays (where decay order shows), a large eps (where eps's place shows), and
     * moments that carry over from an earlier step 7 */
    const Hyper settings[6] = {{1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f}, {0.1f, 0.9f, 0.999f, 1e-3f, 0.5f},
                               {0.05f, 0.8f, 0.99f, 0.1f, 0.0f},    {0.3f, 0.5f, 0.9f, 1e-2f, 0.2f},
                               {0.1f, 0.9f, 0.95f, 1e-8f, 0.1f},    {0.01f, 0.95f, 0.999f, 1e-6f, 1.0f}};
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 74);
    char context[96];
    for (int trial = 0; trial < 12; trial++) {
        int64_t n = rng_int(&rng, 1, 37), first = trial % 3 == 2 ? 7 : 1;
        float *param = malloc((size_t)n * sizeof *param), *m = calloc((size_t)n, sizeof *m),
              *v = calloc((size_t)n, sizeof *v), *g = malloc((size_t)n * sizeof *g);
        ck_assert(param && m && v && g);
        for (int64_t i = 0; i < n; i++) {
            param[i] = rng_float(&rng, -2, 2);
            if (first > 1) m[i] = rng_float(&rng, -0.5f, 0.5f), v[i] = rng_float(&rng, 0, 0.5f);
        }
        Adam a = adam_new(param, m, v, n, settings[trial % 6]);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        for (int64_t step = first; step < first + 4; step++) {
            for (int64_t i = 0; i < n; i++) g[i] = rng_int(&rng, 0, 9) ? rng_float(&rng, -1, 1) : 0.0f;
            adam_step(&a, g, step, context);
        }
        adam_free(&a);
        free(param), free(m), free(v), free(g);
    }
}
END_TEST

int main(int argc, char **argv) {
    /* clang-format off */
    const Exercise exercises[] = {
        {"7.1", "the causal mask", 2, probe_7_1, {test_7_1_chapter, test_7_1_sizes}},
        {"7.2", "one causal attention head from library ops", 4, probe_7_2, {test_7_2_chapter, test_7_2_random}},
        {"7.3", "layer norm from means and broadcasts", 3, probe_7_3, {test_7_3_chapter, test_7_3_random, test_7_3_gradcheck}},
        {"7.4", "one AdamW step, as PyTorch takes it", 3, probe_7_4, {test_7_4_pytorch, test_7_4_random}},
    };
    /* clang-format on */
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
