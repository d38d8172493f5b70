/*
 * test_exercises.c - checks lesson 6's exercises (exercises.c, or solutions.c for the
 * reference run). Expected answers come from the chapter, the notes and the library (bmm.c),
 * never from the file under test. The exercise table at the bottom declares each exercise's
 * id, title and points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bmm.h"
#include "broadcast.h"
#include "exercises.h"
#include "harness.h"

static const float MARK = -12345.0f; /* what an output holds before the call: no answer has it */
enum { UNWRITTEN = -99 };             /* the same for the dims and rank of 6.1 */

/* ==== 6.1 the result shape ================================================================ */

static void probe_6_1(void) {
    int64_t out[8];
    int rank;
    ex6_1_matmul_shape(DIMS(2, 3, 4), DIMS(2, 4, 5), out, &rank);
}

static void check_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, const char *context) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], sw[SHAPE_STR_MAX], sg[SHAPE_STR_MAX];
    shape_format(a, a_rank, sa, sizeof sa);
    shape_format(b, b_rank, sb, sizeof sb);
    Tensor *want = tensor_matmul(tensor_zeros(test_ctx, a, a_rank), tensor_zeros(test_ctx, b, b_rank));
    int64_t got[8];
    int got_rank = UNWRITTEN;
    for (int d = 0; d < 8; d++) got[d] = UNWRITTEN;
    int status = ex6_1_matmul_shape(a, a_rank, b, b_rank, got, &got_rank);
    if (!want) {
        ck_assert_msg(status == -1, "exercise 6.1%s: %s @ %s is not defined (%s), so the answer is -1, not %d", context, sa,
                      sb, tensor_error(), status);
        tensor_clear_error();
        return;
    }
    ck_assert_msg(status == 0, "exercise 6.1%s: %s @ %s returned %d, expected 0 and the shape %s", context, sa, sb, status,
                  shape_format(want->shape, want->rank, sw, sizeof sw));
    ck_assert_msg(got_rank != UNWRITTEN, "exercise 6.1%s: %s @ %s returned 0 but never set *out_rank (it still holds %d, "
                  "which the test put there before the call); expected the shape %s", context, sa, sb, UNWRITTEN,
                  shape_format(want->shape, want->rank, sw, sizeof sw));
    bool unwritten = false;
    for (int d = 0; d < got_rank && d < 8; d++) unwritten |= got[d] == UNWRITTEN;
    ck_assert_msg(got_rank == want->rank && shape_equal(got, got_rank, want->shape, want->rank),
                  "exercise 6.1%s: %s @ %s gave %s, expected %s%s", context, sa, sb,
                  got_rank >= 0 && got_rank <= 8 ? shape_format(got, got_rank, sg, sizeof sg) : "an impossible rank",
                  shape_format(want->shape, want->rank, sw, sizeof sw),
                  unwritten ? " (a -99 in it was never written: the test put it there before the call)" : "");
}

START_TEST(test_6_1_notes_and_chapter) {
    check_shape(DIMS(2, 1, 2), DIMS(2, 2, 1), " (the chapter)");
    check_shape(DIMS(2, 3, 4), DIMS(2, 4, 5), " (seed 001)");
    check_shape(DIMS(3, 1, 4, 2), DIMS(4, 2, 5), " (seed 001: batch (3,1) and (4,) broadcast to (3,4))");
    check_shape(DIMS(3, 4, 2), DIMS(4, 2, 5), " (seed 001: batch (3,) and (4,) do not broadcast)");
    check_shape(DIMS(2, 3), DIMS(3, 4), " (plain 2-D)");
    check_shape(DIMS(2, 3), DIMS(4, 5), " (inner dims 3 and 4 differ)");
}
END_TEST

START_TEST(test_6_1_vectors_and_random) {
    check_shape(DIMS(4), DIMS(4), " (two vectors: a scalar)");
    check_shape(DIMS(4), DIMS(4, 3), " (a vector on the left)");
    check_shape(DIMS(2, 4), DIMS(4), " (a vector on the right)");
    check_shape(DIMS(4), DIMS(5, 4, 3), " (a vector and a batch)");
    check_shape(DIMS(5, 2, 4), DIMS(4), "");
    check_shape(DIMS(3), DIMS(4), " (vectors of different lengths)");
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 61);
    char context[96];
    for (int trial = 0; trial < 300; trial++) {
        int64_t a[6], b[6];
        int ra = (int)rng_int(&rng, 1, 6), rb = (int)rng_int(&rng, 1, 6);
        random_shape(&rng, ra, 0, 3, a); /* a dim of 0 broadcasts with 1, to 0 */
        random_shape(&rng, rb, 0, 3, b);
        if (rng_int(&rng, 0, 3)) b[rb == 1 ? 0 : rb - 2] = a[ra - 1]; /* usually a defined product */
        for (int q = 1; q <= ra - 2 && q <= rb - 2; q++)             /* and usually broadcastable batches */
            if (rng_int(&rng, 0, 3)) b[rb - 2 - q] = rng_int(&rng, 0, 1) ? a[ra - 2 - q] : 1;
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_shape(a, ra, b, rb, context);
    }
}
END_TEST

/* ==== 6.2 the chapter's backward ========================================================== */

static void probe_6_2(void) {
    float a[2] = {1, 2}, b[2] = {3, 4}, g[1] = {1}, da[2] = {0}, db[2] = {0};
    ex6_2_bmm_backward(a, b, g, 1, 1, 2, 1, da, db);
}

/* Gradients added into a buffer that held 1 everywhere: an answer that is the gradient alone
 * overwrote it. */
static void expect_added(const float *got, const float *want, int64_t n, const char *what) {
    for (int64_t i = 0; i < n; i++) {
        if (fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i]))) continue;
        ck_assert_msg(fabsf(got[i] - (want[i] - 1.0f)) > 1e-4f * (1.0f + fabsf(want[i])), "%s: element %lld is %g, the new "
                      "gradient alone: add it to what the buffer already holds (+=), do not overwrite it", what,
                      (long long)i, (double)got[i]);
        return;
    }
}

/* A copy of t's values followed by nan, so a read past the end turns the answer into nan. */
static float *nan_guarded_copy(const Tensor *t) {
    float *copy = guarded_buffer(tensor_numel(t), NAN);
    memcpy(copy, tensor_data(t), (size_t)tensor_numel(t) * sizeof(float));
    return copy;
}

static void check_backward(int64_t batch, int64_t m, int64_t k, int64_t n, Rng *rng, const char *context) {
    Tensor *a = tensor_requires_grad(random_tensor(test_ctx, rng, DIMS(batch, m, k), -2, 2));
    Tensor *b = tensor_requires_grad(random_tensor(test_ctx, rng, DIMS(batch, k, n), -2, 2));
    Tensor *g = random_tensor(test_ctx, rng, DIMS(batch, m, n), -1, 1);
    ck_assert_int_eq(tensor_backward_from(EXPECT_OK(tensor_matmul(a, b)), g), 0);
    int64_t na = batch * m * k, nb = batch * k * n;
    float *a_in = nan_guarded_copy(a), *b_in = nan_guarded_copy(b), *g_in = nan_guarded_copy(g);
    float *da = guarded_buffer(na, MARK), *db = guarded_buffer(nb, MARK);
    float *want_a = malloc((size_t)na * sizeof(float) + 1), *want_b = malloc((size_t)nb * sizeof(float) + 1);
    for (int64_t i = 0; i < na; i++) da[i] = 1.0f, want_a[i] = 1.0f + tensor_data(tensor_grad(a))[i]; /* add, do not overwrite */
    for (int64_t i = 0; i < nb; i++) db[i] = 1.0f, want_b[i] = 1.0f + tensor_data(tensor_grad(b))[i];
    ex6_2_bmm_backward(a_in, b_in, g_in, batch, m, k, n, da, db);
    char what[384];
    snprintf(what, sizeof what, "exercise 6.2%s: batch %lld, m %lld, k %lld, n %lld, da (starting at all 1s; a, b and g are "
             "followed by nan, so a nan means a read past their end)", context, (long long)batch, (long long)m, (long long)k,
             (long long)n);
    expect_added(da, want_a, na, what);
    EXPECT_OUTPUT(da, na, MARK, want_a, 1e-4f, what);
    snprintf(what, sizeof what, "exercise 6.2%s: batch %lld, m %lld, k %lld, n %lld, db (starting at all 1s; a, b and g are "
             "followed by nan, so a nan means a read past their end)", context, (long long)batch, (long long)m, (long long)k,
             (long long)n);
    expect_added(db, want_b, nb, what);
    EXPECT_OUTPUT(db, nb, MARK, want_b, 1e-4f, what);
    free(want_a), free(want_b), free(a_in), free(b_in), free(g_in);
}

START_TEST(test_6_2_chapter) {
    /* the chapter's A (2,1,2) and B (2,2,1), upstream 1 */
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, g[2] = {1, 1}, da[4] = {0}, db[4] = {0};
    ex6_2_bmm_backward(a, b, g, 2, 1, 2, 1, da, db);
    EXPECT_ARRAY(da, ((const float[]){5, 6, 7, 8}), 4, 1e-6f, "exercise 6.2 (the chapter): dA for loss = sum(A @ B)");
    EXPECT_ARRAY(db, ((const float[]){1, 2, 3, 4}), 4, 1e-6f, "exercise 6.2 (the chapter): dB for loss = sum(A @ B)");
    Rng rng = rng_seeded(test_seed() + 62);
    check_backward(2, 3, 4, 5, &rng, "");
    check_backward(1, 1, 1, 1, &rng, " (all 1)");
}
END_TEST

START_TEST(test_6_2_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 620);
    char context[96];
    for (int trial = 0; trial < 60; trial++) {
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_backward(rng_int(&rng, 1, 3), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), &rng, context);
    }
}
END_TEST

/* ==== 6.3 a shared weight ================================================================= */

static void probe_6_3(void) {
    float x[2] = {1, 2}, g[1] = {1}, dw[2];
    ex6_3_shared_weight_grad(x, g, 1, 1, 2, 1, dw);
}

/* A wrong dw that is one batch's gradient alone (batch 0's, or the last one's, when dw was
 * zeroed or overwritten inside the batch loop) gets a message that says so. */
static void expect_every_batch(const float *dw, const float *want, const float *x, const float *g, int64_t batch,
                               int64_t m, int64_t k, int64_t n, const char *what) {
    bool wrong = false;
    for (int64_t q = 0; q < k * n; q++) wrong = wrong || !(fabsf(dw[q] - want[q]) <= 1e-4f * (1.0f + fabsf(want[q])));
    if (!wrong || batch < 2) return;
    const int64_t ends[2] = {0, batch - 1};
    for (int e = 0; e < 2; e++) {
        bool alone = true;
        for (int64_t p = 0; p < k && alone; p++)
            for (int64_t j = 0; j < n && alone; j++) {
                float one = 0.0f;
                for (int64_t i = 0; i < m; i++) one += x[(ends[e] * m + i) * k + p] * g[(ends[e] * m + i) * n + j];
                alone = fabsf(dw[p * n + j] - one) <= 1e-4f * (1.0f + fabsf(one));
            }
        ck_assert_msg(!alone, "%s: dw holds batch %lld's gradient alone: every batch used w, so dw is the sum of all %lld "
                      "batches' gradients (zero it once, before the loop over the batches)", what, (long long)ends[e],
                      (long long)batch);
    }
}

static void check_shared(int64_t batch, int64_t m, int64_t k, int64_t n, Rng *rng, const char *context) {
    Tensor *x = random_tensor(test_ctx, rng, DIMS(batch, m, k), -2, 2);
    Tensor *w = tensor_requires_grad(random_tensor(test_ctx, rng, DIMS(k, n), -2, 2));
    Tensor *g = random_tensor(test_ctx, rng, DIMS(batch, m, n), -1, 1);
    ck_assert_int_eq(tensor_backward_from(EXPECT_OK(tensor_matmul(x, w)), g), 0);
    float *dw = guarded_buffer(k * n, 777.0f); /* garbage the student must overwrite */
    ex6_3_shared_weight_grad(tensor_data(x), tensor_data(g), batch, m, k, n, dw);
    char what[256];
    snprintf(what, sizeof what, "exercise 6.3%s: x (%lld,%lld,%lld) @ a shared w (%lld,%lld): dw (starting at 777)", context, (long long)batch,
             (long long)m, (long long)k, (long long)k, (long long)n);
    expect_every_batch(dw, tensor_data(tensor_grad(w)), tensor_data(x), tensor_data(g), batch, m, k, n, what);
    EXPECT_OUTPUT(dw, k * n, 777.0f, tensor_data(tensor_grad(w)), 1e-4f, what);
}

START_TEST(test_6_3_examples) {
    /* x (2,1,2) = [[[1, 2]], [[3, 4]]] @ w (2,1), upstream 1: dw = [1+3, 2+4] */
    float dw[2] = {9, 9};
    ex6_3_shared_weight_grad((const float[]){1, 2, 3, 4}, (const float[]){1, 1}, 2, 1, 2, 1, dw);
    const char *what = "exercise 6.3: x = [[[1, 2]], [[3, 4]]] @ a shared w (2,1), upstream 1, dw starting at [9, 9] "
                       "(both batches add into dw, which must be zeroed first)";
    const float want[2] = {4, 6};
    expect_every_batch(dw, want, (const float[]){1, 2, 3, 4}, (const float[]){1, 1}, 2, 1, 2, 1, what);
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(dw[i] != 9.0f, "%s: dw[%d] was never written (it still holds 9, from before the call)", what, i);
        ck_assert_msg(dw[i] != 9.0f + want[i], "%s: dw[%d] is %g: the 9 it held before the call plus the gradient, %g. Set "
                      "dw to 0 before adding the batches into it", what, i, (double)dw[i], (double)want[i]);
    }
    EXPECT_ARRAY(dw, want, 2, 1e-6f, what);
    Rng rng = rng_seeded(test_seed() + 63);
    check_shared(3, 2, 4, 5, &rng, "");
    check_shared(1, 3, 2, 2, &rng, " (one batch)");
}
END_TEST

START_TEST(test_6_3_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 630);
    char context[96];
    for (int trial = 0; trial < 60; trial++) {
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_shared(rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), &rng, context);
    }
}
END_TEST

/* ==== 6.4 the bug hunt ==================================================================== */

static void probe_6_4(void) {
    float q[6] = {0}, keys[60] = {0}, out[40];
    ex6_4_shared_queries_matmul(q, keys, 4, 2, 3, 5, out);
}

/* Every batch, every element: a fix that only gets batch 0 right (as the bug does) fails. */
static void check_shared_queries(int64_t b, int64_t m, int64_t k, int64_t n, Rng *rng, bool ramp, const char *context) {
    Tensor *queries = tensor_zeros(test_ctx, DIMS(1, m, k)), *keys = tensor_zeros(test_ctx, DIMS(b, k, n));
    for (int64_t i = 0; i < m * k; i++) tensor_data(queries)[i] = ramp ? (float)i : rng_float(rng, -2, 2);
    for (int64_t i = 0; i < b * k * n; i++) tensor_data(keys)[i] = ramp ? 0.01f * (float)i : rng_float(rng, -2, 2);
    Tensor *want = EXPECT_OK(tensor_matmul(tensor_expand(queries, DIMS(b, m, k)), keys));
    float *out = guarded_buffer(b * m * n, MARK);
    ex6_4_shared_queries_matmul(tensor_data(queries), tensor_data(keys), b, m, k, n, out);
    /* name the first wrong batch: the bug is right on batch 0 and wrong after it */
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t t = 0; t < m * n; t++) {
            float got = out[bi * m * n + t], w = tensor_data(want)[bi * m * n + t];
            if (fabsf(got - w) <= 1e-4f * (1 + fabsf(w))) continue;
            char value[96];
            if (got == MARK)
                snprintf(value, sizeof value, "was never written (it still holds %g from before the call)", (double)MARK);
            else
                snprintf(value, sizeof value, "is %g", (double)got);
            ck_abort_msg("exercise 6.4%s: b %lld, m %lld, k %lld, n %lld: batch %lld, row %lld, column %lld %s, expected %g%s",
                         context, (long long)b, (long long)m, (long long)k, (long long)n, (long long)bi, (long long)(t / n),
                         (long long)(t % n), value, (double)w,
                         bi > 0 ? " (the batches before it are right: check every batch, not just batch 0)" : "");
        }
    char what[160];
    snprintf(what, sizeof what, "exercise 6.4%s", context);
    EXPECT_OUTPUT(out, b * m * n, MARK, tensor_data(want), 1e-4f, what);
}

START_TEST(test_6_4_seed_002) {
    Rng rng = rng_seeded(1);
    check_shared_queries(4, 2, 3, 5, &rng, true, " (seed 002's case: queries 0..5, keys 0..59 times 0.01)");
    check_shared_queries(1, 2, 3, 5, &rng, false, " (one batch)");
}
END_TEST

START_TEST(test_6_4_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 64);
    char context[96];
    for (int trial = 0; trial < 60; trial++) {
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_shared_queries(rng_int(&rng, 1, 5), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), rng_int(&rng, 1, 5), &rng, false,
                             context);
    }
}
END_TEST

int main(int argc, char **argv) {
    const Exercise exercises[] = {
        {"6.1", "the result shape of N-D matmul", 3, probe_6_1, {test_6_1_notes_and_chapter, test_6_1_vectors_and_random}},
        {"6.2", "the chapter's batched backward", 3, probe_6_2, {test_6_2_chapter, test_6_2_random}},
        {"6.3", "the gradient of a weight shared by the batch", 2, probe_6_3, {test_6_3_examples, test_6_3_random}},
        {"6.4", "bug hunt: scores for shared queries", 3, probe_6_4, {test_6_4_seed_002, test_6_4_random}},
    };
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
