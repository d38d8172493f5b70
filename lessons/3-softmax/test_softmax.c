/*
 * test_softmax.c - lesson 3's core tests. They mirror the chapter's section 4 (its
 * test_softmax: the values of softmax([1,2,3]) and a sum of 1), then go past it: the naive
 * formula's overflow, stability for logits of size 1e4, the edge cases softmax.h decides
 * (-inf, all -inf, nan, +inf, D = 1, D = 0), views, log-softmax, cross-entropy and its
 * errors, a gradient check of every op, and seeded random rows against a double-precision
 * reference. Then the fast path (softmax_fast.c): the vector exp of every build over the whole
 * float range, and every COURSE_KERNELS setting on every layout and on lengths around the vector
 * width, against the same reference.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "gradcheck.h"
#include "harness.h"
#include "kernels.h"
#include "softmax.h"

/* The reference: softmax of one row in double precision, the stable way. */
static void reference_softmax(const float *x, int64_t d, double *p) {
    double m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < d; j++) m = x[j] > m ? x[j] : m;
    for (int64_t j = 0; j < d; j++) sum += p[j] = exp((double)x[j] - m);
    for (int64_t j = 0; j < d; j++) p[j] /= sum;
}

/* ==== the chapter ======================================================================== */

START_TEST(test_softmax) {
    Tensor *x = tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3));
    Tensor *s = EXPECT_OK(tensor_softmax_last_dim(x));
    EXPECT_VALUES(s, VALUES(0.0900f, 0.2447f, 0.6652f), 2e-4f, "softmax([1, 2, 3])");
    float sum = tensor_data(s)[0] + tensor_data(s)[1] + tensor_data(s)[2];
    ck_assert_float_eq_tol(sum, 1.0f, 1e-6f);
    /* and every row of a batch on its own */
    Tensor *batch = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 3, 2, 1));
    EXPECT_VALUES(tensor_softmax_last_dim(batch), VALUES(0.0900f, 0.2447f, 0.6652f, 0.6652f, 0.2447f, 0.0900f), 2e-4f,
                  "softmax of two rows");
}
END_TEST

START_TEST(test_naive_overflows_stable_does_not) {
    /* e^x passes float32's largest value, ~3.4e38, just above x = 88.72 */
    ck_assert(isfinite(expf(88.72f)));
    ck_assert(isinf(expf(88.73f)));
    ck_assert_float_eq_tol(logf(FLT_MAX), 88.7228f, 1e-3f);
    float small[3] = {1, 2, 3}, big[3] = {99, 100, 101}, out[3];
    softmax_naive_row(small, 3, out);
    ck_assert_float_eq_tol(out[2], 0.6652f, 1e-4f);
    softmax_naive_row(big, 3, out);
    ck_assert_msg(isnan(out[0]) && isnan(out[2]), "the naive softmax of [99, 100, 101] should be nan (inf / inf)");
    Tensor *s = tensor_softmax_last_dim(tensor_from(test_ctx, DIMS(3), VALUES(99, 100, 101)));
    EXPECT_VALUES(s, VALUES(0.0900f, 0.2447f, 0.6652f), 2e-4f, "the stable softmax of [99, 100, 101]");
}
END_TEST

START_TEST(test_stable_for_huge_logits) {
    Tensor *x = tensor_from(test_ctx, DIMS(4, 3),
                            VALUES(1e4f, 1e4f - 1, 1e4f - 2, -1e4f, -1e4f + 1, -1e4f + 2, 1e4f, 0, -1e4f, -1e5f,
                                   -1e5f + 1, -1e5f + 2));
    Tensor *s = EXPECT_OK(tensor_softmax_last_dim(x));
    EXPECT_VALUES(s, VALUES(0.6652f, 0.2447f, 0.0900f, 0.0900f, 0.2447f, 0.6652f, 1, 0, 0, 0.0900f, 0.2447f, 0.6652f),
                  2e-4f, "softmax of logits of size 1e4 and 1e5");
    Tensor *y = EXPECT_OK(tensor_log_softmax_last_dim(tensor_from(test_ctx, DIMS(2), VALUES(0, 1e4f))));
    EXPECT_VALUES(y, VALUES(-1e4f, 0), 1e-6f, "log_softmax of [0, 1e4]");
    /* log-probabilities keep their digits next to logits of 1e4 and 1e6: (x - m) - log(sum)
     * is computed without ever adding m back in */
    Tensor *far = tensor_from(test_ctx, DIMS(2, 3), VALUES(1e4f, 1e4f - 1, 1e4f - 2, 1e6f, 1e6f - 1, 1e6f - 2));
    EXPECT_VALUES(tensor_log_softmax_last_dim(far),
                  VALUES(-0.407606f, -1.407606f, -2.407606f, -0.407606f, -1.407606f, -2.407606f), 1e-6f,
                  "log_softmax of [1e4, 1e4-1, 1e4-2], [1e6, ...]");
    ck_assert_float_eq_tol(tensor_item(tensor_cross_entropy(far, (const int64_t[]){0, 2}, 2)),
                           (0.407606f + 2.407606f) / 2, 1e-6f);
}
END_TEST

/* The walk-through's 4.3: a row entirely below -1e4, where a max started at a finite sentinel
 * is never replaced and every exp underflows to 0 (0 / 0 = nan). */
START_TEST(test_max_starts_at_minus_inf) {
    Tensor *s = EXPECT_OK(tensor_softmax_last_dim(tensor_from(test_ctx, DIMS(3), VALUES(-20000, -30000, -25000))));
    EXPECT_VALUES(s, VALUES(1, 0, 0), 0,
                  "softmax([-20000, -30000, -25000]) (a max started above every entry gives nan)");
}
END_TEST

/* The walk-through's 4.4: the backward is J^T g with J = diag(s) - s s^T, for rows of several
 * lengths and upstream gradients that are not one-hot. */
START_TEST(test_backward_is_jacobian_transpose_times_g) {
    const float x[7] = {0.5f, -1.0f, 2.0f, 0.25f, -3.0f, 1.5f, 0.0f},
                g[7] = {0.3f, -1.2f, 0.7f, 2.0f, -0.4f, 0.1f, 1.0f};
    for (int64_t d = 1; d <= 7; d++) {
        Tensor *xt = tensor_requires_grad(tensor_from(test_ctx, DIMS(d), x, d));
        Tensor *s = EXPECT_OK(tensor_softmax_last_dim(xt));
        ck_assert_int_eq(tensor_backward_from(s, tensor_from(test_ctx, DIMS(d), g, d)), 0);
        const float *sv = tensor_data(s), *dx = tensor_data(tensor_grad(xt));
        for (int64_t j = 0; j < d; j++) {
            double jt_g = 0.0; /* (J^T g)_j = sum_i (s_i [i == j] - s_i s_j) g_i */
            for (int64_t i = 0; i < d; i++) jt_g += ((i == j ? (double)sv[i] : 0.0) - (double)sv[i] * sv[j]) * g[i];
            ck_assert_msg(fabs(dx[j] - jt_g) < 1e-6, "row of length %lld: dx[%lld] = %.8g, but (J^T g)[%lld] = %.8g",
                          (long long)d, (long long)j, (double)dx[j], (long long)j, jt_g);
        }
    }
}
END_TEST

/* ==== edge cases ========================================================================= */

START_TEST(test_edge_cases) {
    Tensor *x = tensor_from(test_ctx, DIMS(5, 3),
                            VALUES(1, -INFINITY, 3,                 /* a masked entry */
                                   -INFINITY, -INFINITY, -INFINITY, /* nothing left */
                                   1, NAN, 3,                       /* nan */
                                   1, INFINITY, 3,                  /* +inf */
                                   5, 6, 7));                       /* an ordinary row */
    Tensor *s = EXPECT_OK(tensor_softmax_last_dim(x));
    const float *p = tensor_data(s);
    ck_assert_msg(p[1] == 0.0f, "a masked (-inf) entry gets exactly 0, got %g", (double)p[1]);
    ck_assert_float_eq_tol(p[0], 0.1192f, 1e-4f);
    ck_assert_float_eq_tol(p[2], 0.8808f, 1e-4f);
    for (int k = 3; k < 12; k++) ck_assert_msg(isnan(p[k]), "element %d: rows with all -inf, nan or +inf are nan", k);
    EXPECT_VALUES_ARRAY(tensor_as_strided(s, DIMS(3), STRIDES(1), 12), ((const float[]){0.0900f, 0.2447f, 0.6652f}), 3,
                        2e-4f, "a bad row leaves the other rows alone");
    Tensor *y = EXPECT_OK(tensor_log_softmax_last_dim(x));
    ck_assert(isinf(tensor_data(y)[1]) && tensor_data(y)[1] < 0);
    ck_assert(isnan(tensor_data(y)[3]) && isnan(tensor_data(y)[7]));
    /* D = 1: the only entry has probability 1 (and log-probability 0), whatever it is */
    EXPECT_VALUES(tensor_softmax_last_dim(tensor_from(test_ctx, DIMS(3, 1), VALUES(-50, 0, 1e4f))), VALUES(1, 1, 1), 0,
                  "softmax with D = 1");
    EXPECT_VALUES(tensor_log_softmax_last_dim(tensor_from(test_ctx, DIMS(2, 1), VALUES(-50, 7))), VALUES(0, 0), 0,
                  "log_softmax with D = 1");
    /* D = 0 and no rows: empty results, and a backward that does nothing */
    Tensor *empty = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(2, 0)));
    EXPECT_SHAPE(tensor_softmax_last_dim(empty), DIMS(2, 0), "softmax of (2,0)");
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_softmax_last_dim(empty))), 0);
    EXPECT_SHAPE(tensor_log_softmax_last_dim(tensor_zeros(test_ctx, DIMS(0, 4))), DIMS(0, 4), "log_softmax of (0,4)");
}
END_TEST

START_TEST(test_views) {
    /* the transpose of [[1,3],[2,2],[3,1]] has rows [1,2,3] and [3,2,1] */
    Tensor *base = tensor_requires_grad(tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 3, 2, 2, 3, 1)));
    Tensor *t = tensor_as_strided(base, DIMS(2, 3), STRIDES(1, 2), 0);
    t->requires_grad = true; /* a leaf view: its own gradient is checked */
    Tensor *st = EXPECT_OK(tensor_softmax_last_dim(t));
    EXPECT_VALUES(st, VALUES(0.0900f, 0.2447f, 0.6652f, 0.6652f, 0.2447f, 0.0900f), 2e-4f,
                  "softmax of a transposed view");
    const float s0 = 0.09003057f, s1 = 0.24472847f, s2 = 0.66524096f;
    ck_assert_int_eq(tensor_backward_from(st, tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 0, 0, 1, 0, 0))), 0);
    EXPECT_VALUES(tensor_grad(t), VALUES(s0 * (1 - s0), -s0 * s1, -s0 * s2, s2 * (1 - s2), -s2 * s1, -s2 * s0), 1e-5f,
                  "gradient through softmax of a transposed view");
    /* rows read backwards from an offset (a negative stride): [3,2,1] then [6,5,4] */
    Tensor *flat = tensor_from(test_ctx, DIMS(6), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *back = tensor_requires_grad(tensor_as_strided(flat, DIMS(2, 3), STRIDES(3, -1), 2));
    Tensor *sb = EXPECT_OK(tensor_softmax_last_dim(back));
    EXPECT_VALUES(sb, VALUES(s2, s1, s0, s2, s1, s0), 1e-5f, "softmax of a negative-stride view");
    ck_assert_int_eq(tensor_backward_from(sb, tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 0, 0, 0, 0, 1))), 0);
    EXPECT_VALUES(tensor_grad(back), VALUES(s2 * (1 - s2), -s2 * s1, -s2 * s0, -s0 * s2, -s0 * s1, s0 * (1 - s0)),
                  1e-5f, "gradient through softmax of a negative-stride view");
    /* cross-entropy of transposed logits */
    Tensor *lt = tensor_requires_grad(tensor_as_strided(base, DIMS(2, 3), STRIDES(1, 2), 0));
    Tensor *ce = EXPECT_OK(tensor_cross_entropy(lt, (const int64_t[]){2, 0}, 2));
    ck_assert_float_eq_tol(tensor_item(ce), 0.407606f, 1e-5f); /* both targets are the row's largest */
    ck_assert_int_eq(tensor_backward(ce), 0);
    EXPECT_VALUES(tensor_grad(lt), VALUES(s0 / 2, s1 / 2, (s2 - 1) / 2, (s2 - 1) / 2, s1 / 2, s0 / 2), 1e-5f,
                  "cross-entropy gradient of transposed logits");
    /* an expanded view: the same row twice */
    Tensor *row = tensor_requires_grad(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)));
    Tensor *s = EXPECT_OK(tensor_softmax_last_dim(tensor_expand(row, DIMS(2, 3))));
    EXPECT_VALUES(s, VALUES(0.0900f, 0.2447f, 0.6652f, 0.0900f, 0.2447f, 0.6652f), 2e-4f,
                  "softmax of an expanded view");
    /* the gradient of the two copies adds up in the row: with upstream [1,0,0] twice, it is
     * twice the gradient of s0 = [s0 (1 - s0), -s0 s1, -s0 s2] */
    ck_assert_int_eq(tensor_backward_from(s, tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 0, 0, 1, 0, 0))), 0);
    EXPECT_VALUES(tensor_grad(row), VALUES(2 * s0 * (1 - s0), -2 * s0 * s1, -2 * s0 * s2), 1e-5f,
                  "gradient through softmax and expand");
}
END_TEST

/* ==== log-softmax and cross-entropy ======================================================= */

START_TEST(test_log_softmax) {
    Tensor *y = EXPECT_OK(tensor_log_softmax_last_dim(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3))));
    EXPECT_VALUES(y, VALUES(-2.4076f, -1.4076f, -0.4076f), 1e-4f, "log_softmax([1, 2, 3])");
    /* where log(softmax(x)) gives log(0) = -inf, log-sum-exp stays exact */
    Tensor *x = tensor_from(test_ctx, DIMS(2), VALUES(0, 200));
    float naive = logf(tensor_data(tensor_softmax_last_dim(x))[0]);
    ck_assert_msg(isinf(naive), "log(softmax([0, 200]))[0] underflows to -inf in float32, got %g", (double)naive);
    EXPECT_VALUES(tensor_log_softmax_last_dim(x), VALUES(-200, 0), 1e-6f, "log_softmax([0, 200])");
}
END_TEST

START_TEST(test_cross_entropy) {
    /* logits [[1,2,3],[1,2,3]], targets [2, 0]: loss = (0.4076 + 2.4076) / 2 */
    Tensor *logits = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 1, 2, 3)));
    Tensor *loss = EXPECT_OK(tensor_cross_entropy(logits, (const int64_t[]){2, 0}, 2));
    ck_assert_int_eq(loss->rank, 0);
    ck_assert_float_eq_tol(tensor_item(loss), 1.4076f, 1e-4f);
    ck_assert_int_eq(tensor_backward(loss), 0);
    /* (softmax - onehot) / N */
    EXPECT_VALUES(tensor_grad(logits), VALUES(0.0450f, 0.1224f, -0.1674f, -0.4550f, 0.1224f, 0.3326f), 1e-4f,
                  "d cross_entropy / d logits");
    /* a confident right answer costs almost nothing; a confident wrong one, a lot */
    Tensor *sure = tensor_from(test_ctx, DIMS(1, 2), VALUES(0, 1e4f));
    ck_assert_float_eq_tol(tensor_item(tensor_cross_entropy(sure, (const int64_t[]){1}, 1)), 0.0f, 1e-6f);
    ck_assert_float_eq_tol(tensor_item(tensor_cross_entropy(sure, (const int64_t[]){0}, 1)), 1e4f, 1.0f);
    /* no rows: the mean of nothing is nan */
    ck_assert(isnan(tensor_item(tensor_cross_entropy(tensor_zeros(test_ctx, DIMS(0, 3)), NULL, 0))));
}
END_TEST

START_TEST(test_errors) {
    Tensor *logits = tensor_zeros(test_ctx, DIMS(2, 3));
    tensor_clear_error();
    ck_assert_ptr_null(tensor_cross_entropy(logits, (const int64_t[]){0, 3}, 2));
    ck_assert_str_eq(tensor_error(), "cross_entropy: target 3 at position 1 is out of range for 3 classes");
    ck_assert_ptr_null(tensor_cross_entropy(logits, (const int64_t[]){-1, 0}, 2));
    ck_assert_str_eq(tensor_error(), "cross_entropy: target -1 at position 0 is out of range for 3 classes");
    ck_assert_ptr_null(tensor_cross_entropy(logits, (const int64_t[]){0}, 1));
    ck_assert_str_eq(tensor_error(), "cross_entropy: 1 targets for logits of shape (2,3); there must be one per row");
    ck_assert_ptr_null(tensor_cross_entropy(tensor_zeros(test_ctx, DIMS(3)), (const int64_t[]){0}, 1));
    ck_assert_str_eq(tensor_error(), "cross_entropy: logits must have shape (N, C), got (3,)");
    ck_assert_ptr_null(tensor_cross_entropy(logits, NULL, 2));
    ck_assert_str_eq(tensor_error(), "cross_entropy: targets is NULL");
    ck_assert_ptr_null(tensor_softmax_last_dim(tensor_scalar(test_ctx, 1)));
    ck_assert_str_eq(tensor_error(), "softmax_last_dim: a rank-0 tensor (a scalar) has no last dim to normalize over");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_log_softmax_last_dim(NULL));
    ck_assert_str_eq(tensor_error(), "log_softmax_last_dim: input x is NULL");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_cross_entropy(NULL, NULL, 0));
    ck_assert_str_eq(tensor_error(), "cross_entropy: input logits is NULL");
}
END_TEST

/* ==== gradients ========================================================================== */

static Tensor *fn_softmax(Tensor *const *in, void *arg) { return (void)arg, tensor_softmax_last_dim(in[0]); }
static Tensor *fn_log_softmax(Tensor *const *in, void *arg) { return (void)arg, tensor_log_softmax_last_dim(in[0]); }
static Tensor *fn_cross_entropy(Tensor *const *in, void *targets) { return tensor_cross_entropy(in[0], targets, 4); }
/* softmax of an expanded view of the input */
static Tensor *fn_softmax_of_view(Tensor *const *in, void *arg) {
    return (void)arg, tensor_softmax_last_dim(tensor_expand(in[0], DIMS(2, 3, 4)));
}

START_TEST(test_gradcheck_every_op) {
    Rng rng = rng_seeded(test_seed());
    Tensor *row = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(5), -3, 3));
    Tensor *m = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(3, 4), -3, 3));
    Tensor *c = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3, 4), -3, 3));
    Tensor *big = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3), 500, 510)); /* large logits */
    EXPECT_GRADCHECK(fn_softmax, NULL, (Tensor *[]){row}, 1, "softmax (5,)");
    EXPECT_GRADCHECK(fn_softmax, NULL, (Tensor *[]){m}, 1, "softmax (3,4)");
    EXPECT_GRADCHECK(fn_softmax, NULL, (Tensor *[]){c}, 1, "softmax (2,3,4)");
    EXPECT_GRADCHECK(fn_softmax_of_view, NULL, (Tensor *[]){m}, 1, "softmax of an expanded view");
    EXPECT_GRADCHECK(fn_log_softmax, NULL, (Tensor *[]){m}, 1, "log_softmax (3,4)");
    EXPECT_GRADCHECK(fn_log_softmax, NULL, (Tensor *[]){c}, 1, "log_softmax (2,3,4)");
    GradcheckOptions coarse = {1e-2, 2e-2, 2e-2, test_seed()}; /* float spacing near 500 is 3e-5 */
    char report[512];
    ck_assert_msg(gradcheck(fn_softmax, NULL, (Tensor *[]){big}, 1, &coarse, report, sizeof report) == 0,
                  "softmax of logits near 500: %s", report);
    ck_assert_msg(gradcheck(fn_log_softmax, NULL, (Tensor *[]){big}, 1, &coarse, report, sizeof report) == 0,
                  "log_softmax of logits near 500: %s", report);
    Tensor *logits = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(4, 5), -3, 3));
    int64_t targets[4] = {0, 4, 2, 2};
    EXPECT_GRADCHECK(fn_cross_entropy, targets, (Tensor *[]){logits}, 1, "cross_entropy (4,5)");
}
END_TEST

/* ==== random rows against a double-precision reference ==================================== */

START_TEST(test_random_against_reference) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 200; trial++) {
        int64_t shape[4];
        int rank = (int)rng_int(&rng, 1, 4);
        random_shape(&rng, rank, 1, 4, shape);
        shape[rank - 1] = rng_int(&rng, 1, 8);
        float scale = rng_float(&rng, 0.1f, 60.0f);
        Tensor *x = tensor_requires_grad(random_tensor(test_ctx, &rng, shape, rank, -scale, scale));
        char sx[SHAPE_STR_MAX], context[256];
        snprintf(context, sizeof context, "COURSE_SEED=%llu case %d: softmax of %s, logits in +-%g",
                 (unsigned long long)seed, trial, shape_format(shape, rank, sx, sizeof sx), (double)scale);
        Tensor *s = tensor_softmax_last_dim(x);
        ck_assert_msg(s != NULL, "%s: %s", context, tensor_error());
        Tensor *g = random_tensor(test_ctx, &rng, shape, rank, -1, 1);
        ck_assert_int_eq(tensor_backward_from(s, g), 0);

        int64_t d = shape[rank - 1], rows = tensor_numel(x) / d;
        double p[8];
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = tensor_data(x) + r * d, *gr = tensor_data(g) + r * d;
            reference_softmax(xr, d, p);
            double dot = 0.0;
            for (int64_t j = 0; j < d; j++) dot += (double)gr[j] * p[j];
            for (int64_t j = 0; j < d; j++) {
                double want = p[j], want_grad = p[j] * ((double)gr[j] - dot);
                float got = tensor_data(s)[r * d + j], got_grad = tensor_data(tensor_grad(x))[r * d + j];
                ck_assert_msg(fabs(got - want) <= 1e-6 + 1e-5 * want,
                              "%s: row %lld, entry %lld is %.9g, reference %.9g", context, (long long)r, (long long)j,
                              (double)got, want);
                ck_assert_msg(fabs(got_grad - want_grad) <= 1e-6,
                              "%s: gradient of row %lld, entry %lld is %.9g, reference %.9g", context, (long long)r,
                              (long long)j, (double)got_grad, want_grad);
            }
        }

        /* log_softmax of the same rows, and cross-entropy with random targets */
        Tensor *y = EXPECT_OK(tensor_log_softmax_last_dim(x));
        Tensor *logits = EXPECT_OK(tensor_as_strided(x, DIMS(rows, d), STRIDES(d, 1), 0)); /* the rows, as (N, C) */
        int64_t *targets = malloc((size_t)rows * sizeof *targets);
        for (int64_t r = 0; r < rows; r++) targets[r] = rng_int(&rng, 0, d - 1);
        Tensor *ce = EXPECT_OK(tensor_cross_entropy(logits, targets, rows));
        double want_ce = 0.0;
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = tensor_data(x) + r * d;
            double m = -INFINITY, sum = 0.0;
            for (int64_t j = 0; j < d; j++) m = xr[j] > m ? xr[j] : m;
            for (int64_t j = 0; j < d; j++) sum += exp((double)xr[j] - m);
            for (int64_t j = 0; j < d; j++) {
                double want = ((double)xr[j] - m) - log(sum);
                float got = tensor_data(y)[r * d + j];
                ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)),
                              "%s: log_softmax of row %lld, entry %lld is %.9g, "
                              "reference %.9g",
                              context, (long long)r, (long long)j, (double)got, want);
            }
            /* cppcheck-suppress invalidFunctionArg ; d > 0 here, so sum >= 1 (the max adds e^0) */
            want_ce -= (((double)xr[targets[r]] - m) - log(sum)) / (double)rows;
        }
        ck_assert_msg(fabs(tensor_item(ce) - want_ce) <= 1e-5 * (1 + fabs(want_ce)),
                      "%s: cross_entropy is %.9g, reference %.9g", context, (double)tensor_item(ce), want_ce);
        free(targets);
    }
}
END_TEST

/* ==== the fast paths ====================================================================== */

/* The distance between adjacent floats at |f| (a subnormal's, below FLT_MIN). */
static double ulp_of(float f) {
    int e;
    f = fabsf(f);
    if (f < FLT_MIN) return ldexp(1.0, -149);
    frexpf(f, &e);
    return ldexp(1.0, e - 24);
}

/* The table's exp under one setting (a build of the fast kernels' vector exp), on every
 * stride-th float by bit pattern */
static void check_vector_exp(const char *setting, uint64_t stride) {
    const char *name = use_kernels(setting);
    /* Every stride-th float: 131,000 or more, from every binade, positive and negative,
     * including subnormals, infinities and nans, and the edges of the range. The reference is
     * exp in double; the error is in units in the last place of the float nearest to it. */
    enum { CHUNK = 4096 };
    static const float edges[] = {0.0f,       -0.0f,         INFINITY,     -INFINITY,     NAN,          1.0f,
                                  -1.0f,      FLT_MIN,       FLT_TRUE_MIN, -FLT_TRUE_MIN, 88.7228317f,  88.7228394f,
                                  88.72284f,  89.0f,         100.0f,       1e30f,         -87.3365479f, -87.34f,
                                  -103.2789f, -103.9720764f, -103.98f,     -104.0f,       -1000.0f,     -1e30f,
                                  1e-8f,      -1e-8f,        0.34657359f};
    float x[CHUNK], y[CHUNK];
    double worst = 0.0;
    float worst_x = 0.0f;
    uint64_t bits = 0, count = 0;
    int n_edges = (int)(sizeof edges / sizeof edges[0]);
    while (bits < ((uint64_t)1 << 32)) {
        int n = 0;
        if (count == 0)
            for (; n < n_edges; n++) x[n] = edges[n];
        for (; n < CHUNK && bits < ((uint64_t)1 << 32); n++, bits += stride) {
            uint32_t b = (uint32_t)bits;
            memcpy(&x[n], &b, sizeof b);
        }
        kernels()->exp(x, n, y);
        for (int i = 0; i < n; i++, count++) {
            double want = exp((double)x[i]);
            float nearest = (float)want;
            if (isnan(x[i]) || isinf(nearest) || isinf(y[i])) {
                ck_assert_msg(isnan(x[i]) ? isnan(y[i]) : y[i] == nearest, "exp(%.9g) is %.9g, expected %.9g",
                              (double)x[i], (double)y[i], (double)nearest);
                continue;
            }
            double error = fabs((double)y[i] - want) / ulp_of(nearest);
            if (error > worst) worst = error, worst_x = x[i];
        }
    }
    ck_assert_msg(worst <= 2.0,
                  "the vector exp (%s) is off by %.3f units in the last place at x = %.9g (%llu floats tried)", name,
                  worst, (double)worst_x, (unsigned long long)count);
    /* exact where it must be: a masked score gives exactly 0, a shift of 0 exactly 1 */
    float special[4] = {-INFINITY, 0.0f, -200.0f, INFINITY}, e[4];
    kernels()->exp(special, 4, e);
    ck_assert(e[0] == 0.0f && e[1] == 1.0f && e[2] == 0.0f && isinf(e[3]));
    /* a value's exp does not depend on where it sits: the tail of a short array (fewer than 8
     * floats) gets the same answer as the body of a long one */
    float long_x[24], long_y[24], short_y[24];
    for (int i = 0; i < 24; i++) long_x[i] = -3.7f + 0.77f * (float)i;
    kernels()->exp(long_x, 24, long_y);
    for (int len = 1; len <= 17; len++) {
        kernels()->exp(long_x, len, short_y);
        for (int i = 0; i < len; i++)
            ck_assert_msg(short_y[i] == long_y[i], "exp(%.9g) (%s): %.9g in an array of %d, %.9g in one of 24",
                          (double)long_x[i], name, (double)short_y[i], len, (double)long_y[i]);
    }
}

START_TEST(test_vector_exp) {
    for (const char *const *mode = test_kernel_modes(); *mode; mode++)
        if (strcmp(*mode, "reference") != 0) /* the native build on every 4099th float, the others on fewer */
            check_vector_exp(*mode, strcmp(*mode, "native") == 0 ? 4099 : 32771);
}
END_TEST

/* A (rows, d) view holding the values v (row-major) in one of six layouts. */
static Tensor *layout_view(int64_t rows, int64_t d, int layout, const float *v, const char **kind) {
    static const char *const kinds[] = {"contiguous",
                                        "transposed",
                                        "an offset window into a padded buffer",
                                        "walked backwards (negative strides)",
                                        "one row expanded (stride 0 between rows)",
                                        "expanded along the last dim (stride 0)"};
    int64_t n = rows * d, size, s0, s1, offset = 0;
    *kind = kinds[layout];
    switch (layout) {
    case 1: size = n, s0 = 1, s1 = rows; break;
    case 2: size = (rows + 2) * (d + 3), s0 = d + 3, s1 = 1, offset = n ? d + 5 : 0; break;
    case 3: size = n, s0 = -d, s1 = -1, offset = n ? n - 1 : 0; break;
    case 4: size = d, s0 = 0, s1 = 1; break;
    case 5: size = rows, s0 = 1, s1 = 0; break;
    default: size = n, s0 = d, s1 = 1; break;
    }
    Tensor *base = tensor_zeros(test_ctx, DIMS(size > 0 ? size : 1));
    Tensor *x = tensor_as_strided(base, DIMS(rows, d), STRIDES(s0, s1), offset);
    ck_assert_msg(x != NULL, "%s", tensor_error());
    for (int64_t r = 0; r < rows; r++) /* where one float is read many times, the last write wins */
        for (int64_t j = 0; j < d; j++) tensor_data(x)[r * s0 + j * s1] = v[r * d + j];
    return x;
}

/* |got - want| <= tol_abs + tol_rel |want|, and nan or an infinity exactly where the reference has one */
static void expect_near(double got, double want, double tol_abs, double tol_rel, const char *context, const char *what,
                        int64_t r, int64_t j) {
    bool ok = isnan(want) ? isnan(got) : isinf(want) ? got == want : fabs(got - want) <= tol_abs + tol_rel * fabs(want);
    ck_assert_msg(ok, "%s: %s of row %lld, entry %lld is %.9g, reference %.9g", context, what, (long long)r,
                  (long long)j, got, want);
}

/* softmax, log-softmax and cross-entropy of x, every row against the double-precision reference */
static void check_row_ops(Tensor *x, Rng *rng, const char *context) {
    int64_t rows = x->shape[0], d = x->shape[1];
    float *v = malloc((size_t)(rows * d + 1) * sizeof *v);
    ck_assert_int_eq(tensor_to_array(x, v, rows * d), rows * d);
    Tensor *s = EXPECT_OK(tensor_softmax_last_dim(x)), *y = EXPECT_OK(tensor_log_softmax_last_dim(x));
    int64_t *targets = malloc((size_t)(rows + 1) * sizeof *targets);
    double want_ce = 0.0;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = v + r * d;
        double m = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < d; j++) m = xr[j] > m ? xr[j] : m;
        for (int64_t j = 0; j < d; j++) sum += exp((double)xr[j] - m);
        for (int64_t j = 0; j < d; j++) {
            double p = exp((double)xr[j] - m) / sum, log_p = ((double)xr[j] - m) - log(sum);
            float got = tensor_data(s)[r * d + j];
            if (p == 0.0) /* a masked entry: exactly 0, and its log exactly -inf */
                ck_assert_msg(got == 0.0f, "%s: masked entry (%lld, %lld) is %g, not 0", context, (long long)r,
                              (long long)j, (double)got);
            expect_near(got, p, 1e-44, 1e-5, context, "softmax", r, j);
            expect_near(tensor_data(y)[r * d + j], log_p, 1e-6, 1e-5, context, "log_softmax", r, j);
        }
        targets[r] = d > 0 ? rng_int(rng, 0, d - 1) : 0;
        if (d > 0) want_ce -= (((double)xr[targets[r]] - m) - log(sum)) / (double)rows;
    }
    if (d > 0) {
        Tensor *ce = EXPECT_OK(tensor_cross_entropy(x, targets, rows));
        expect_near(tensor_item(ce), rows ? want_ce : NAN, 1e-6, 1e-5, context, "cross_entropy", 0, 0);
    }
    free(v);
    free(targets);
}

START_TEST(test_fast_paths_against_reference) {
    /* Every COURSE_KERNELS setting, six layouts, lengths around the vector widths of 8 and 16
     * and a long row of 4096+3, row counts around the block of 64 rows that strided views are
     * copied in; logits of three scales, and special rows: masked entries, a row with nothing
     * left, a nan, a +inf. */
    const int64_t lengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 33, 4099}, row_counts[] = {1, 5, 70};
    const int n_lengths = (int)(sizeof lengths / sizeof *lengths);
    Rng rng = rng_seeded(test_seed());
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *name = use_kernels(*mode);
        for (int li = 0; li < n_lengths; li++) {
            for (int ri = 0; ri < 3; ri++) {
                int64_t d = lengths[li], rows = row_counts[ri];
                if (d > 33 && rows > 5) continue; /* keeps the test quick under valgrind */
                float scale = ri == 0 ? 1.0f : ri == 1 ? 30.0f : 1e4f;
                float *v = malloc((size_t)(rows * d + 1) * sizeof *v);
                for (int64_t i = 0; i < rows * d; i++) v[i] = rng_float(&rng, -scale, scale);
                if (rows >= 5 && d >= 2) {
                    for (int64_t j = 0; j < d; j += 3) v[j] = -INFINITY;  /* row 0: masked entries */
                    for (int64_t j = 0; j < d; j++) v[d + j] = -INFINITY; /* row 1: nothing left */
                    v[2 * d + d / 2] = NAN;                               /* row 2 */
                    v[3 * d + d - 1] = INFINITY;                          /* row 3 */
                }
                for (int layout = 0; layout < 6; layout++) {
                    const char *kind;
                    char context[256];
                    Tensor *x = layout_view(rows, d, layout, v, &kind);
                    snprintf(context, sizeof context, "COURSE_SEED=%llu, %s kernels: (%lld,%lld), %s, logits in +-%g",
                             (unsigned long long)test_seed(), name, (long long)rows, (long long)d, kind, (double)scale);
                    check_row_ops(x, &rng, context);
                }
                free(v);
            }
        }
    }
}
END_TEST

START_TEST(test_both_kernels_agree) {
    /* the reference and the vectorized rows differ only by their exp (expf or the polynomial)
     * and the order of the sum: a few units in the last place */
    Rng rng = rng_seeded(test_seed());
    Tensor *x = random_tensor(test_ctx, &rng, DIMS(6, 4099), -20, 20);
    use_kernels("reference");
    Tensor *plain = EXPECT_OK(tensor_softmax_last_dim(x)), *plain_log = EXPECT_OK(tensor_log_softmax_last_dim(x));
    const char *fast_name = use_kernels("native");
    Tensor *fast = EXPECT_OK(tensor_softmax_last_dim(x)), *fast_log = EXPECT_OK(tensor_log_softmax_last_dim(x));
    for (int64_t i = 0; i < tensor_numel(x); i++) {
        float a = tensor_data(plain)[i], b = tensor_data(fast)[i];
        ck_assert_msg(fabs((double)a - b) <= 4 * ulp_of(a), "softmax element %lld: %.9g (reference) and %.9g (%s)",
                      (long long)i, (double)a, (double)b, fast_name);
        a = tensor_data(plain_log)[i], b = tensor_data(fast_log)[i];
        ck_assert_msg(fabs((double)a - b) <= 4 * ulp_of(a), "log_softmax element %lld: %.9g (reference) and %.9g (%s)",
                      (long long)i, (double)a, (double)b, fast_name);
    }
}
END_TEST

/* A transposed view of more than 16 MB: the fast path copies it whole into the output with
 * streaming stores, then works on each row in place. Softmax and log-softmax of every row, and
 * the cross-entropy of all of them, against the reference's on the same view. */
START_TEST(test_large_transposed_view) {
    Rng rng = rng_seeded(test_seed());
    const int64_t n = 2100;
    Tensor *stored = random_tensor(test_ctx, &rng, DIMS(n, n), -20, 20);
    Tensor *x = tensor_as_strided(stored, DIMS(n, n), STRIDES(1, n), 0); /* the transpose */
    int64_t *targets = malloc((size_t)n * sizeof *targets);
    for (int64_t i = 0; i < n; i++) targets[i] = rng_int(&rng, 0, n - 1);
    use_kernels("reference");
    Tensor *s0 = EXPECT_OK(tensor_softmax_last_dim(x)), *l0 = EXPECT_OK(tensor_log_softmax_last_dim(x));
    float ce0 = tensor_item(tensor_cross_entropy(x, targets, n));
    const char *name = use_kernels("native");
    Tensor *s1 = EXPECT_OK(tensor_softmax_last_dim(x)), *l1 = EXPECT_OK(tensor_log_softmax_last_dim(x));
    float ce1 = tensor_item(tensor_cross_entropy(x, targets, n));
    for (int64_t i = 0; i < n * n; i++) {
        float a = tensor_data(s0)[i], b = tensor_data(s1)[i], c = tensor_data(l0)[i], e = tensor_data(l1)[i];
        if (fabs((double)a - b) > 4 * ulp_of(a) || fabs((double)c - e) > 4 * ulp_of(c))
            ck_abort_msg("(%lld,%lld) transposed, %s kernels: element %lld: softmax %.9g (reference %.9g), "
                         "log_softmax %.9g (reference %.9g)",
                         (long long)n, (long long)n, name, (long long)i, (double)b, (double)a, (double)e, (double)c);
    }
    ck_assert_msg(fabs((double)ce0 - ce1) <= 1e-5 * fabs((double)ce0), "cross_entropy %.9g, reference %.9g",
                  (double)ce1, (double)ce0);
    free(targets);
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("lesson 3: softmax");
    TCase *chapter = add_test_case(s, "chapter");
    add_test(chapter, test_softmax);
    add_test(chapter, test_naive_overflows_stable_does_not);
    add_test(chapter, test_stable_for_huge_logits);
    add_test(chapter, test_max_starts_at_minus_inf);
    add_test(chapter, test_backward_is_jacobian_transpose_times_g);
    TCase *edges = add_test_case(s, "edge cases and views");
    add_test(edges, test_edge_cases);
    add_test(edges, test_views);
    TCase *more = add_test_case(s, "log-softmax and cross-entropy");
    add_test(more, test_log_softmax);
    add_test(more, test_cross_entropy);
    add_test(more, test_errors);
    TCase *grads = add_test_case(s, "gradients");
    add_test(grads, test_gradcheck_every_op);
    TCase *random = add_large_test_case(s, "random");
    tcase_set_timeout(random, 30);
    add_test(random, test_random_against_reference);
    TCase *fast = add_large_test_case(s, "fast paths");
    tcase_set_timeout(fast, 60);
    add_test(fast, test_vector_exp);
    add_test(fast, test_fast_paths_against_reference);
    add_test(fast, test_both_kernels_agree);
    add_test(fast, test_large_transposed_view);
    return run_core_tests(argc, argv, s);
}
