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
enum { UNWRITTEN = -99 };            /* the same for the dims and rank of 6.1 */

/* ==== 6.1 the result shape ================================================================ */

static void probe_6_1(void) {
    int64_t out[8];
    int rank;
    ex6_1_matmul_shape(DIMS(2, 3, 4), DIMS(2, 4, 5), out, &rank);
}

/* The rule with one of the usual mistakes, for the messages: the batch dims lined up from the
 * left, or the dim that promoting a vector added kept in the result. Returns 0 or -1 as 6.1. */
static int matmul_shape_variant(const int64_t *a, int a_rank, const int64_t *b, int b_rank, bool from_left,
                                bool keep_promoted, int64_t *out, int *out_rank) {
    int64_t pa[8] = {1}, pb[8] = {0, 1};
    int ra = a_rank < 2 ? 2 : a_rank, rb = b_rank < 2 ? 2 : b_rank;
    memcpy(pa + (a_rank == 1), a, (size_t)a_rank * sizeof *a);
    memcpy(pb, b, (size_t)b_rank * sizeof *b);
    if (pa[ra - 1] != pb[rb - 2]) return -1;
    int na = ra - 2, nb = rb - 2, n = na > nb ? na : nb;
    for (int q = 0; q < n; q++) { /* q counts from the left or from the right */
        int ia = from_left ? q : na - 1 - q, ib = from_left ? q : nb - 1 - q, at = from_left ? q : n - 1 - q;
        int64_t da = ia >= 0 && ia < na ? pa[ia] : 1, db = ib >= 0 && ib < nb ? pb[ib] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[at] = da == 1 ? db : da;
    }
    int r = n;
    if (a_rank > 1 || keep_promoted) out[r++] = pa[ra - 2];
    if (b_rank > 1 || keep_promoted) out[r++] = pb[rb - 1];
    *out_rank = r;
    return 0;
}

static void check_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, const char *context) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], sw[SHAPE_STR_MAX], sg[SHAPE_STR_MAX];
    shape_format(a, a_rank, sa, sizeof sa);
    shape_format(b, b_rank, sb, sizeof sb);
    Tensor *want = tensor_matmul(tensor_zeros(test_ctx, a, a_rank), tensor_zeros(test_ctx, b, b_rank));
    int64_t got[8], left[8], kept[8];
    int got_rank = UNWRITTEN, left_rank = 0, kept_rank = 0;
    for (int d = 0; d < 8; d++) got[d] = UNWRITTEN;
    int status = ex6_1_matmul_shape(a, a_rank, b, b_rank, got, &got_rank);
    int left_status = matmul_shape_variant(a, a_rank, b, b_rank, true, false, left, &left_rank);
    int kept_status = matmul_shape_variant(a, a_rank, b, b_rank, false, true, kept, &kept_rank);
    const char *from_right = "compare the batch dims from the right, as lesson 1's broadcasting does: the last batch "
                             "dim of a with the last of b, and so on leftwards, a missing dim counting as 1";
    bool as_left = left_status == 0 && got_rank == left_rank && shape_equal(got, got_rank, left, left_rank);
    bool as_kept = kept_status == 0 && got_rank == kept_rank && shape_equal(got, got_rank, kept, kept_rank);
    if (!want) {
        ck_assert_msg(!(status == 0 && as_left),
                      "exercise 6.1%s: %s @ %s is not defined (%s), but the answer lined the "
                      "batch dims up from the left and gave %s: %s",
                      context, sa, sb, tensor_error(), shape_format(left, left_rank, sg, sizeof sg), from_right);
        ck_assert_msg(status == -1, "exercise 6.1%s: %s @ %s is not defined (%s), so the answer is -1, not %d", context,
                      sa, sb, tensor_error(), status);
        tensor_clear_error();
        return;
    }
    if (status != 0) { /* say what makes the product defined: the batch dims, or else the inner dims */
        char batch_a[SHAPE_STR_MAX], batch_b[SHAPE_STR_MAX], hint[512];
        if (a_rank > 2 && b_rank > 2)
            snprintf(hint, sizeof hint, ": the batch dims %s and %s do broadcast: %s",
                     shape_format(a, a_rank - 2, batch_a, sizeof batch_a),
                     shape_format(b, b_rank - 2, batch_b, sizeof batch_b), from_right);
        else if (a_rank > 2 || b_rank > 2)
            snprintf(hint, sizeof hint,
                     ": one operand has no batch dims, so the other's batch dims %s are the result's",
                     a_rank > 2 ? shape_format(a, a_rank - 2, batch_a, sizeof batch_a)
                                : shape_format(b, b_rank - 2, batch_b, sizeof batch_b));
        else
            snprintf(hint, sizeof hint, ": the inner dims agree (a's last dim is b's %s)",
                     b_rank == 1 ? "only dim" : "second-to-last");
        ck_abort_msg("exercise 6.1%s: %s @ %s returned %d, expected 0 and the shape %s%s", context, sa, sb, status,
                     shape_format(want->shape, want->rank, sw, sizeof sw), hint);
    }
    ck_assert_msg(got_rank != UNWRITTEN,
                  "exercise 6.1%s: %s @ %s returned 0 but never set *out_rank (it still holds %d, "
                  "which the test put there before the call); expected the shape %s",
                  context, sa, sb, UNWRITTEN, shape_format(want->shape, want->rank, sw, sizeof sw));
    bool right = got_rank == want->rank && shape_equal(got, got_rank, want->shape, want->rank);
    shape_format(want->shape, want->rank, sw, sizeof sw);
    ck_assert_msg(right || !as_left,
                  "exercise 6.1%s: %s @ %s gave %s, expected %s: the batch dims were lined up from the "
                  "left; %s",
                  context, sa, sb, shape_format(got, got_rank, sg, sizeof sg), sw, from_right);
    ck_assert_msg(
        right || !as_kept,
        "exercise 6.1%s: %s @ %s gave %s, expected %s: promoting a vector to a matrix (a "
        "row (1, k) on the left, a column (k, 1) on the right) added a dim of 1; remove the 1 it added from the "
        "result",
        context, sa, sb, shape_format(got, got_rank, sg, sizeof sg), sw);
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
        for (int q = 1; q <= ra - 2 && q <= rb - 2; q++)              /* and usually broadcastable batches */
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
        ck_assert_msg(fabsf(got[i] - (want[i] - 1.0f)) > 1e-4f * (1.0f + fabsf(want[i])),
                      "%s: element %lld is %g, the new "
                      "gradient alone: add it to what the buffer already holds (+=), do not overwrite it",
                      what, (long long)i, (double)got[i]);
        return;
    }
}

/* A copy of t's values between runs of nan, so a read outside it turns the answer into nan. */
static const float *nan_guarded_copy(const Tensor *t) { return guarded_input(tensor_data(t), tensor_numel(t)); }

/* The usual index mistakes of one gradient of 6.2: the batch stride of another tensor, for the
 * gradient written or the operand read (0: no batch offset at all), or a matrix indexed with
 * its rows and columns swapped. */
typedef enum { WRONG_OUT_STRIDE, WRONG_IN_STRIDE, OUT_SWAPPED, IN_SWAPPED } BmmSlip;

typedef struct {
    BmmSlip slip;
    int64_t stride; /* for the stride slips */
    const char *stride_name;
} BmmMistake;

static float read_or_nan(const float *v, int64_t n, int64_t i) { return i >= 0 && i < n ? v[i] : NAN; }

/* da (for_db false) or db as the mistake computes it, added into `start`; a read outside an
 * input gives nan, as its guard does, and a write outside the gradient is dropped. */
static void bmm_mistake(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                        bool for_db, BmmMistake mistake, float start, float *out) {
    int64_t rows = for_db ? k : m, cols = for_db ? n : k, inner = for_db ? m : n, size = batch * rows * cols;
    int64_t out_stride = mistake.slip == WRONG_OUT_STRIDE ? mistake.stride : rows * cols;
    int64_t in_stride = mistake.slip == WRONG_IN_STRIDE ? mistake.stride : for_db ? m * k : k * n;
    for (int64_t q = 0; q < size; q++) out[q] = start;
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++) {
                float s = 0.0f; /* da[r=i, c=p] sums g[i, j] b[p, j]; db[r=p, c=j] sums a[i, p] g[i, j] */
                for (int64_t t = 0; t < inner; t++) {
                    bool swapped = mistake.slip == IN_SWAPPED;
                    int64_t in_batch = for_db ? (swapped ? r * m + t : t * k + r) : (swapped ? t * k + c : c * n + t);
                    int64_t at = in_stride * bi + in_batch;
                    float other = read_or_nan(for_db ? a : b, batch * k * (for_db ? m : n), at);
                    s += other * read_or_nan(g, batch * m * n, bi * m * n + (for_db ? t * n + c : r * n + t));
                }
                int64_t at = out_stride * bi + (mistake.slip == OUT_SWAPPED ? c * rows + r : r * cols + c);
                if (at >= 0 && at < size) out[at] += s;
            }
}

/* At a wrong da or db, fails naming the index mistake it matches, if any. */
static void expect_no_index_slip(const float *got, const float *want, const float *a, const float *b, const float *g,
                                 int64_t batch, int64_t m, int64_t k, int64_t n, bool for_db, float start,
                                 const char *what) {
    int64_t size = for_db ? batch * k * n : batch * m * k;
    if (values_close(got, want, size, 1e-4f)) return;
    const BmmMistake mistakes[] = {
        {WRONG_OUT_STRIDE, for_db ? m * k : k * n, for_db ? "m * k, a's" : "k * n, b's"},
        {WRONG_OUT_STRIDE, m * n, "m * n, g's"},
        {WRONG_OUT_STRIDE, 0, NULL},
        {WRONG_IN_STRIDE, for_db ? k * n : m * k, for_db ? "k * n, b's" : "m * k, a's"},
        {WRONG_IN_STRIDE, m * n, "m * n, g's"},
        {WRONG_IN_STRIDE, 0, NULL},
        {OUT_SWAPPED, 0, NULL},
        {IN_SWAPPED, 0, NULL},
    };
    const char *grad = for_db ? "db" : "da", *operand = for_db ? "a" : "b", *grad_stride = for_db ? "k * n" : "m * k";
    const char *operand_stride = for_db ? "m * k" : "k * n";
    float *simulated = malloc((size_t)size * sizeof *simulated + 1);
    ck_assert_ptr_nonnull(simulated);
    for (size_t v = 0; v < sizeof mistakes / sizeof *mistakes; v++) {
        bmm_mistake(a, b, g, batch, m, k, n, for_db, mistakes[v], start, simulated);
        if (!values_close(got, simulated, size, 1e-4f)) continue;
        const BmmMistake *w = &mistakes[v];
        if (w->slip == WRONG_OUT_STRIDE && w->stride_name)
            ck_abort_msg(
                "%s: %s's batch bi starts at bi * %s (%s is %s, like %s), but this answer stepped %s's batches "
                "by %s batch size",
                what, grad, grad_stride, grad, for_db ? "(batch, k, n)" : "(batch, m, k)", for_db ? "b" : "a", grad,
                w->stride_name);
        if (w->slip == WRONG_OUT_STRIDE)
            ck_abort_msg("%s: every batch's gradient was added into batch 0 of %s: %s's batch bi starts at bi * %s",
                         what, grad, grad, grad_stride);
        if (w->slip == WRONG_IN_STRIDE && w->stride_name)
            ck_abort_msg("%s: %s's batch bi starts at bi * %s, but this answer read %s's batches %s batch size apart",
                         what, operand, operand_stride, operand, w->stride_name);
        if (w->slip == WRONG_IN_STRIDE)
            ck_abort_msg("%s: every batch read batch 0 of %s: %s's batch bi starts at bi * %s", what, operand, operand,
                         operand_stride);
        if (w->slip == OUT_SWAPPED)
            ck_abort_msg(
                "%s: %s[bi, %s] goes at %s of its batch, but this answer wrote it at %s, as if %s were (batch, "
                "%s)",
                what, grad, for_db ? "p, j" : "i, p", for_db ? "p * n + j" : "i * k + p",
                for_db ? "j * k + p" : "p * m + i", grad, for_db ? "n, k" : "k, m");
        ck_abort_msg("%s: %s reads %s[bi, %s] at %s of its batch, but this answer read it at %s, as if %s were (%s): "
                     "that is %s, where the gradient is %s",
                     what, grad, operand, for_db ? "i, p" : "p, j", for_db ? "i * k + p" : "p * n + j",
                     for_db ? "p * m + i" : "j * k + p", operand, for_db ? "k, m" : "n, k", for_db ? "a @ g" : "g @ b",
                     for_db ? "a^T @ g" : "g @ b^T");
    }
    free(simulated);
}

static void check_backward(int64_t batch, int64_t m, int64_t k, int64_t n, Rng *rng, const char *context) {
    Tensor *a = tensor_requires_grad(random_tensor(test_ctx, rng, DIMS(batch, m, k), -2, 2));
    Tensor *b = tensor_requires_grad(random_tensor(test_ctx, rng, DIMS(batch, k, n), -2, 2));
    Tensor *g = random_tensor(test_ctx, rng, DIMS(batch, m, n), -1, 1);
    ck_assert_int_eq(tensor_backward_from(EXPECT_OK(tensor_matmul(a, b)), g), 0);
    int64_t na = batch * m * k, nb = batch * k * n;
    const float *a_in = nan_guarded_copy(a), *b_in = nan_guarded_copy(b), *g_in = nan_guarded_copy(g);
    float *da = guarded_buffer(na, MARK), *db = guarded_buffer(nb, MARK);
    float *want_a = malloc((size_t)na * sizeof(float) + 1), *want_b = malloc((size_t)nb * sizeof(float) + 1);
    for (int64_t i = 0; i < na; i++)
        da[i] = 1.0f, want_a[i] = 1.0f + tensor_data(tensor_grad(a))[i]; /* add, do not overwrite */
    for (int64_t i = 0; i < nb; i++) db[i] = 1.0f, want_b[i] = 1.0f + tensor_data(tensor_grad(b))[i];
    ex6_2_bmm_backward(a_in, b_in, g_in, batch, m, k, n, da, db);
    char what[384];
    snprintf(what, sizeof what,
             "exercise 6.2%s: batch %lld, m %lld, k %lld, n %lld, da (starting at all 1s; a, b and g are "
             "followed by nan, so a nan means a read past their end)",
             context, (long long)batch, (long long)m, (long long)k, (long long)n);
    expect_added(da, want_a, na, what);
    expect_no_index_slip(da, want_a, a_in, b_in, g_in, batch, m, k, n, false, 1.0f, what);
    EXPECT_OUTPUT(da, na, MARK, want_a, 1e-4f, what);
    snprintf(what, sizeof what,
             "exercise 6.2%s: batch %lld, m %lld, k %lld, n %lld, db (starting at all 1s; a, b and g are "
             "followed by nan, so a nan means a read past their end)",
             context, (long long)batch, (long long)m, (long long)k, (long long)n);
    expect_added(db, want_b, nb, what);
    expect_no_index_slip(db, want_b, a_in, b_in, g_in, batch, m, k, n, true, 1.0f, what);
    EXPECT_OUTPUT(db, nb, MARK, want_b, 1e-4f, what);
    free(want_a), free(want_b);
}

START_TEST(test_6_2_chapter) {
    /* the chapter's A (2,1,2) and B (2,2,1), upstream 1 */
    const float *a = guarded_input((const float[]){1, 2, 3, 4}, 4), *b = guarded_input((const float[]){5, 6, 7, 8}, 4);
    const float *g = guarded_input((const float[]){1, 1}, 2), want_a[4] = {5, 6, 7, 8}, want_b[4] = {1, 2, 3, 4};
    float da[4] = {0}, db[4] = {0};
    ex6_2_bmm_backward(a, b, g, 2, 1, 2, 1, da, db);
    const char *what_a = "exercise 6.2 (the chapter): dA for loss = sum(A @ B)", *what_b =
                                                                                     "exercise 6.2 (the chapter): "
                                                                                     "dB for loss = sum(A @ B)";
    expect_no_index_slip(da, want_a, a, b, g, 2, 1, 2, 1, false, 0.0f, what_a);
    EXPECT_ARRAY(da, want_a, 4, 1e-6f, what_a);
    expect_no_index_slip(db, want_b, a, b, g, 2, 1, 2, 1, true, 0.0f, what_b);
    EXPECT_ARRAY(db, want_b, 4, 1e-6f, what_b);
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
        check_backward(rng_int(&rng, 1, 3), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), &rng,
                       context);
    }
}
END_TEST

/* ==== 6.3 a shared weight ================================================================= */

static void probe_6_3(void) {
    float x[2] = {1, 2}, g[1] = {1}, dw[2];
    ex6_3_shared_weight_grad(x, g, 1, 1, 2, 1, dw);
}

/* A wrong dw that is one batch's gradient alone (batch 0's, or the last one's, when dw was
 * zeroed or overwritten inside the batch loop), the mean over the batches, or batch 0's x
 * paired with every batch's g gets a message that says so. */
static void expect_every_batch(const float *dw, const float *want, const float *x, const float *g, int64_t batch,
                               int64_t m, int64_t k, int64_t n, const char *what) {
    bool wrong = false;
    for (int64_t q = 0; q < k * n; q++) wrong = wrong || !(fabsf(dw[q] - want[q]) <= 1e-4f * (1.0f + fabsf(want[q])));
    if (!wrong || batch < 2) return;
    bool mean = true, first_x = true;
    for (int64_t p = 0; p < k; p++)
        for (int64_t j = 0; j < n; j++) {
            float w = want[p * n + j] / (float)batch, first = 0.0f;
            mean = mean && fabsf(dw[p * n + j] - w) <= 1e-4f * (1.0f + fabsf(w));
            for (int64_t bi = 0; bi < batch; bi++)
                for (int64_t i = 0; i < m; i++) first += x[i * k + p] * g[(bi * m + i) * n + j];
            first_x = first_x && fabsf(dw[p * n + j] - first) <= 1e-4f * (1.0f + fabsf(first));
        }
    ck_assert_msg(!mean,
                  "%s: dw is the sum of the batches' gradients divided by the batch size, %lld: w's gradient is "
                  "their sum, as each batch's use of w adds to the loss",
                  what, (long long)batch);
    ck_assert_msg(!first_x,
                  "%s: dw paired batch 0's x with every batch's g: read x's batch bi at "
                  "x[(bi * m + i) * k + p], as g's is at g[(bi * m + i) * n + j]",
                  what);
    const int64_t ends[2] = {0, batch - 1};
    for (int e = 0; e < 2; e++) {
        bool alone = true;
        for (int64_t p = 0; p < k && alone; p++)
            for (int64_t j = 0; j < n && alone; j++) {
                float one = 0.0f;
                for (int64_t i = 0; i < m; i++) one += x[(ends[e] * m + i) * k + p] * g[(ends[e] * m + i) * n + j];
                alone = fabsf(dw[p * n + j] - one) <= 1e-4f * (1.0f + fabsf(one));
            }
        ck_assert_msg(!alone,
                      "%s: dw holds batch %lld's gradient alone: every batch used w, so dw is the sum of all %lld "
                      "batches' gradients (zero it once, before the loop over the batches)",
                      what, (long long)ends[e], (long long)batch);
    }
}

static void check_shared(int64_t batch, int64_t m, int64_t k, int64_t n, Rng *rng, const char *context) {
    Tensor *x = random_tensor(test_ctx, rng, DIMS(batch, m, k), -2, 2);
    Tensor *w = tensor_requires_grad(random_tensor(test_ctx, rng, DIMS(k, n), -2, 2));
    Tensor *g = random_tensor(test_ctx, rng, DIMS(batch, m, n), -1, 1);
    ck_assert_int_eq(tensor_backward_from(EXPECT_OK(tensor_matmul(x, w)), g), 0);
    float *dw = guarded_buffer(k * n, 777.0f); /* garbage the student must overwrite */
    ex6_3_shared_weight_grad(nan_guarded_copy(x), nan_guarded_copy(g), batch, m, k, n, dw);
    char what[256];
    snprintf(what, sizeof what, "exercise 6.3%s: x (%lld,%lld,%lld) @ a shared w (%lld,%lld): dw (starting at 777)",
             context, (long long)batch, (long long)m, (long long)k, (long long)k, (long long)n);
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
        ck_assert_msg(dw[i] != 9.0f + want[i],
                      "%s: dw[%d] is %g: the 9 it held before the call plus the gradient, %g. Set "
                      "dw to 0 before adding the batches into it",
                      what, i, (double)dw[i], (double)want[i]);
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

/* The usual slips of a fix, each a way to read the wrong queries or keys for batch bi. */
typedef enum { QUERIES_BY_BATCH, KEYS_OF_BATCH_0, KEYS_SIDE_BY_SIDE, QUERY_SLIPS } QuerySlip;

static const char *const query_slips[QUERY_SLIPS] = {
    "read queries past their end (they are followed by nan): there is one queries matrix (m, k), shared by every "
    "batch, so queries[i * k + p] with no batch offset",
    "holds batch 0's scores again: it read batch 0's keys. keys is (b, k, n), batch-major: keys' batch bi starts at "
    "keys + bi * k * n",
    "is what keys read as one (k, b * n) matrix gives, the batches side by side: keys is (b, k, n), batch-major, so "
    "batch bi's (p, j) is keys[(bi * k + p) * n + j]",
};

/* At batch bi, the first wrong one, fails naming the slip its values match, if any; a read
 * outside queries or keys gives nan, as their guards do. */
static void expect_no_batch_slip(const float *got, const float *queries, const float *keys, int64_t bi, int64_t b,
                                 int64_t m, int64_t k, int64_t n, const char *context) {
    float *slipped = malloc((size_t)(m * n) * sizeof *slipped + 1);
    ck_assert_ptr_nonnull(slipped);
    for (int slip = 0; slip < QUERY_SLIPS; slip++) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++) {
                    int64_t q = slip == QUERIES_BY_BATCH ? (bi * m + i) * k + p : i * k + p;
                    int64_t key = slip == KEYS_OF_BATCH_0     ? p * n + j
                                  : slip == KEYS_SIDE_BY_SIDE ? p * b * n + bi * n + j
                                                              : (bi * k + p) * n + j;
                    s += read_or_nan(queries, m * k, q) * read_or_nan(keys, b * k * n, key);
                }
                slipped[i * n + j] = s;
            }
        ck_assert_msg(!values_close(got, slipped, m * n, 1e-4f),
                      "exercise 6.4%s: b %lld, m %lld, k %lld, n %lld: batch "
                      "%lld %s",
                      context, (long long)b, (long long)m, (long long)k, (long long)n, (long long)bi,
                      query_slips[slip]);
    }
    free(slipped);
}

/* Every batch, every element: a fix that only gets batch 0 right (as the bug does) fails. */
static void check_shared_queries(int64_t b, int64_t m, int64_t k, int64_t n, Rng *rng, bool ramp, const char *context) {
    Tensor *queries = tensor_zeros(test_ctx, DIMS(1, m, k)), *keys = tensor_zeros(test_ctx, DIMS(b, k, n));
    for (int64_t i = 0; i < m * k; i++) tensor_data(queries)[i] = ramp ? (float)i : rng_float(rng, -2, 2);
    for (int64_t i = 0; i < b * k * n; i++) tensor_data(keys)[i] = ramp ? 0.01f * (float)i : rng_float(rng, -2, 2);
    Tensor *want = EXPECT_OK(tensor_matmul(tensor_expand(queries, DIMS(b, m, k)), keys));
    float *out = guarded_buffer(b * m * n, MARK);
    ex6_4_shared_queries_matmul(nan_guarded_copy(queries), nan_guarded_copy(keys), b, m, k, n, out);
    /* name the first wrong batch: the bug is right on batch 0 and wrong after it */
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t t = 0; t < m * n; t++) {
            float got = out[bi * m * n + t], w = tensor_data(want)[bi * m * n + t];
            if (fabsf(got - w) <= 1e-4f * (1 + fabsf(w))) continue;
            expect_no_batch_slip(out + bi * m * n, tensor_data(queries), tensor_data(keys), bi, b, m, k, n, context);
            char value[96];
            if (got == MARK)
                snprintf(value, sizeof value, "was never written (it still holds %g from before the call)",
                         (double)MARK);
            else snprintf(value, sizeof value, "is %g", (double)got);
            ck_abort_msg(
                "exercise 6.4%s: b %lld, m %lld, k %lld, n %lld: batch %lld, row %lld, column %lld %s, expected %g%s",
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
        check_shared_queries(rng_int(&rng, 1, 5), rng_int(&rng, 1, 4), rng_int(&rng, 1, 4), rng_int(&rng, 1, 5), &rng,
                             false, context);
    }
}
END_TEST

int main(int argc, char **argv) {
    /* clang-format off */
    const Exercise exercises[] = {
        {"6.1", "the result shape of N-D matmul", 3, probe_6_1, {test_6_1_notes_and_chapter, test_6_1_vectors_and_random}},
        {"6.2", "the chapter's batched backward", 3, probe_6_2, {test_6_2_chapter, test_6_2_random}},
        {"6.3", "the gradient of a weight shared by the batch", 2, probe_6_3, {test_6_3_examples, test_6_3_random}},
        {"6.4", "bug hunt: scores for shared queries", 3, probe_6_4, {test_6_4_seed_002, test_6_4_random}},
    };
    /* clang-format on */
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
