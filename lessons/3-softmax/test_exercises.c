/*
 * test_exercises.c - checks lesson 3's exercises (exercises.c, or solutions.c for the
 * reference run). Expected answers come from the chapter and from the library (softmax.c),
 * never from the file under test. The exercise table at the bottom declares each exercise's
 * id, title and points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exercises.h"
#include "harness.h"
#include "softmax.h"

static const float MARK = -12345.0f;

/* The library's softmax of one row, and its gradient for upstream g, for holding answers against. */
static void library_row(const float *x, int64_t d, const float *g, float *s, float *gx) {
    Tensor *t = tensor_requires_grad(EXPECT_OK(tensor_from(test_ctx, DIMS(d), x, d)));
    Tensor *out = EXPECT_OK(tensor_softmax_last_dim(t));
    memcpy(s, tensor_data(out), (size_t)d * sizeof(float));
    if (g) {
        ck_assert_int_eq(tensor_backward_from(out, EXPECT_OK(tensor_from(test_ctx, DIMS(d), g, d))), 0);
        memcpy(gx, tensor_data(tensor_grad(t)), (size_t)d * sizeof(float));
    }
}

/* A loop that runs to j <= d reads the nan after the row, which a max loop's comparisons skip, so out can still be
 * right: fn runs again with a large score on each side of the row (inside the guarded input, so that the grader sends
 * it too), and fails if its answer changes. */
static void expect_reads_row_only(void (*fn)(const float *, int64_t, float *), const float *x, int64_t d,
                                  const float *out, const char *what) {
    float padded[64 + 2];
    ck_assert_int_le(d, 64); /* the tests' rows */
    padded[0] = padded[d + 1] = 1e30f;
    memcpy(padded + 1, x, (size_t)d * sizeof(float));
    float *again = guarded_buffer(d, MARK);
    fn(guarded_input(padded, d + 2) + 1, d, again);
    bool same = values_close(again, out, d, 1e-6f); /* a read of 1e30 changes it grossly; alignment may round */
    free(again);
    ck_assert_msg(same,
                  "%s: the answer changes when the memory right before x[0] and right after x[d - 1] holds a "
                  "large score, so the code reads outside x: does a loop run to j <= d?",
                  what);
}

/* ==== 3.1 d = 2 by hand ================================================================== */

static void probe_3_1(void) {
    float dx0, dx1;
    ex3_1_softmax2_backward(0.5f, 0.5f, 1, 0, &dx0, &dx1);
}

static void check_3_1(float x0, float x1, float g0, float g1) {
    float s[2], want[2], got[2] = {MARK, MARK};
    library_row((const float[]){x0, x1}, 2, (const float[]){g0, g1}, s, want);
    ex3_1_softmax2_backward(s[0], s[1], g0, g1, &got[0], &got[1]);
    char what[256];
    snprintf(what, sizeof what, "exercise 3.1: s = (%.6g, %.6g) (the softmax of (%g, %g)), g = (%g, %g): (dx0, dx1)",
             (double)s[0], (double)s[1], (double)x0, (double)x1, (double)g0, (double)g1);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(got[i] != MARK,
                      "%s: *dx%d was never written (it still holds %g, which the test put there before the "
                      "call)",
                      what, i, (double)MARK);
    /* the usual mistakes: both signs flipped, or only the diagonal of the Jacobian (dx_i = g_i ds_i/dx_i) */
    const float negated[2] = {-want[0], -want[1]}, diagonal[2] = {s[0] * s[1] * g0, s[0] * s[1] * g1};
    bool wrong = !values_close(got, want, 2, 1e-5f);
    ck_assert_msg(!wrong || !values_close(got, negated, 2, 1e-5f),
                  "%s: (%g, %g) are the negatives of the right values: "
                  "check the signs. Raising x0 raises s0 (ds0/dx0 > 0) and lowers s1 (ds1/dx0 < 0), and the other way "
                  "round for x1 (docs 4.4)",
                  what, (double)got[0], (double)got[1]);
    ck_assert_msg(!wrong || !values_close(got, diagonal, 2, 1e-5f),
                  "%s: (%g, %g) are g0 ds0/dx0 and g1 ds1/dx1 alone, "
                  "the diagonal of the Jacobian. x0 moves s1 as well (ds1/dx0 = -s0 s1), so g1 reaches dx0 too: dx0 = "
                  "g0 ds0/dx0 + g1 ds1/dx0, and the same for dx1 (docs 4.4)",
                  what, (double)got[0], (double)got[1]);
    EXPECT_ARRAY(got, want, 2, 1e-5f, what);
}

START_TEST(test_3_1_examples) {
    check_3_1(0, 0, 1, 0); /* s = (0.5, 0.5): (0.25, -0.25) */
    check_3_1(0, 0, 0, 1);
    check_3_1(1, 2, 1, 0);
    check_3_1(1, 2, 1, 1); /* the same push on both: no change at all */
    check_3_1(-3, 2, 0.5f, -2);
}
END_TEST

START_TEST(test_3_1_random) {
    Rng rng = rng_seeded(test_seed() + 31);
    for (int trial = 0; trial < 100; trial++)
        check_3_1(rng_float(&rng, -4, 4), rng_float(&rng, -4, 4), rng_float(&rng, -2, 2), rng_float(&rng, -2, 2));
}
END_TEST

/* ==== 3.2 a stable row ==================================================================== */

static void probe_3_2(void) {
    float out[3];
    ex3_2_softmax_row((const float[]){1, 2, 3}, 3, out);
}

/* The softmax of x with its max taken over x[0] .. x[d - 2] alone, as a max loop that stops one
 * short computes it (a row whose last score is the largest then overflows, or has no max). */
static void softmax_short_max(const float *x, int64_t d, float *out) {
    float largest = -INFINITY, total = 0.0f;
    for (int64_t j = 0; j < d - 1; j++) largest = x[j] > largest ? x[j] : largest;
    for (int64_t j = 0; j < d; j++) total += out[j] = expf(x[j] - largest);
    for (int64_t j = 0; j < d; j++) out[j] /= total;
}

/* Runs 3.2 on x with a guard region behind out, and compares with the library's softmax. */
static void check_3_2(const float *x, int64_t d, const char *context) {
    float want[64];
    library_row(x, d, NULL, want, NULL);
    x = guarded_input(x, d);
    float *out = guarded_buffer(d, MARK);
    ex3_2_softmax_row(x, d, out);
    char what[512], xs[256];
    snprintf(what, sizeof what, "exercise 3.2%s: x = %s", context, format_floats(x, d, xs, sizeof xs));
    expect_reads_row_only(ex3_2_softmax_row, x, d, out, what);
    /* the usual mistakes divide by something other than the sum of the same exps (the unshifted exps' sum, or
     * nothing): every value is then the right one times the same factor, the row's sum */
    float total = 0.0f;
    bool scaled = !values_close(out, want, d, 1e-5f);
    for (int64_t j = 0; j < d + OUTPUT_GUARD; j++) {
        scaled &= j < d ? isfinite(out[j]) && isfinite(want[j]) : out[j] == MARK;
        total += j < d && scaled ? out[j] : 0.0f;
    }
    for (int64_t j = 0; j < d && scaled; j++) scaled = total > 0 && fabsf(out[j] - total * want[j]) <= 1e-4f * total;
    ck_assert_msg(!scaled,
                  "%s: the row sums to %g, not 1: each value is the right one times %g. Divide each "
                  "exp(x_j - max) by the sum of those same exps, over the whole row",
                  what, (double)total, (double)total);
    float short_max[64];
    softmax_short_max(x, d, short_max);
    ck_assert_msg(values_close(out, want, d, 1e-5f) || !values_close(out, short_max, d, 1e-5f),
                  "%s: this is the softmax with the max taken over x[0] .. x[d - 2] only: does the max's loop stop "
                  "one short, at j < d - 1? Its bound must be j < d, so that x[d - 1] counts too",
                  what);
    EXPECT_OUTPUT(out, d, MARK, want, 1e-5f, what);
}

START_TEST(test_3_2_chapter_and_stability) {
    check_3_2((const float[]){1, 2, 3}, 3, " (the chapter: [0.0900, 0.2447, 0.6652])");
    check_3_2((const float[]){5}, 1, " (one entry)");
    check_3_2((const float[]){1000, 1001, 1002}, 3, " (exp(1000) overflows: subtract the max first)");
    check_3_2((const float[]){1e4f, 0, -1e4f}, 3, " (logits of size 1e4)");
    check_3_2((const float[]){-1e5f, -1e5f + 1, -1e5f + 2}, 3,
              " (every score is below -10000: start the max at -INFINITY, not at a sentinel)");
}
END_TEST

START_TEST(test_3_2_masks_and_random) {
    check_3_2((const float[]){1, -INFINITY, 3}, 3, " (a masked entry must get exactly 0)");
    check_3_2((const float[]){-INFINITY, -INFINITY}, 2, " (all masked: nan)");
    check_3_2((const float[]){-INFINITY, 0}, 2, " (a masked entry first)");
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 32);
    char context[96];
    float x[16];
    for (int trial = 0; trial < 100; trial++) {
        int64_t d = rng_int(&rng, 1, 16);
        float scale = rng_float(&rng, 0.1f, 200.0f);
        for (int64_t j = 0; j < d; j++) x[j] = rng_float(&rng, -scale, scale);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_3_2(x, d, context);
    }
}
END_TEST

/* ==== 3.3 a row's backward =============================================================== */

static void probe_3_3(void) {
    float dx[3] = {0};
    ex3_3_softmax_row_backward((const float[]){0.2f, 0.3f, 0.5f}, (const float[]){1, 0, 0}, 3, dx);
}

static void check_3_3(const float *x, const float *g_in, int64_t d, const char *context) {
    /* s and g between runs of nan, so a loop that reads outside them shows up as nan */
    float s_row[64], want[64], got[64 + OUTPUT_GUARD];
    library_row(x, d, g_in, s_row, want);
    const float *s = guarded_input(s_row, d), *g = guarded_input(g_in, d);
    for (int64_t j = 0; j < d; j++) {
        got[j] = 10.0f + (float)j; /* gradients already there: add, do not overwrite */
        want[j] += 10.0f + (float)j;
    }
    for (int64_t j = d; j < d + OUTPUT_GUARD; j++) got[j] = MARK;
    guard_hint(got, (size_t)(d + OUTPUT_GUARD) * sizeof *got);
    ex3_3_softmax_row_backward(s, g, d, got);
    char what[768], ss[256], gs[256];
    snprintf(what, sizeof what,
             "exercise 3.3%s: s = %s, g = %s, dx starting at [10, 11, ...] (s and g lie between "
             "nans: a nan in dx means a read outside them)",
             context, format_floats(s, d, ss, sizeof ss), format_floats(g, d, gs, sizeof gs));
    bool past_end = false;
    for (int64_t j = d; j < d + OUTPUT_GUARD; j++) past_end |= got[j] != MARK;
    ck_assert_msg(!past_end, "%s: wrote past the end of dx (dx has %lld floats)", what, (long long)d);
    expect_read_inside(got, want, d, what); /* before the checks below, which a nan would mislead */
    ck_assert_msg(fabsf(got[0] - (want[0] - 10.0f)) > 1e-6f,
                  "%s: dx[0] is %g, the new gradient alone: add it to what dx already holds (+=), do not overwrite dx",
                  what, (double)got[0]);
    /* the usual mistakes, from what was added to dx: s_i g_i (no sum term), s_i (1 - s_i) g_i (the Jacobian's
     * diagonal alone), or the right gradient negated */
    float added[64], no_sum[64], diagonal[64], negated[64];
    for (int64_t j = 0; j < d; j++) {
        added[j] = got[j] - (10.0f + (float)j);
        no_sum[j] = s[j] * g[j];
        diagonal[j] = s[j] * (1.0f - s[j]) * g[j];
        negated[j] = -(want[j] - (10.0f + (float)j));
    }
    bool wrong = !values_close(got, want, d, 1e-5f);
    ck_assert_msg(
        !wrong || !values_close(added, no_sum, d, 2e-5f),
        "%s: each dx_i got s_i * g_i added: the sum_j g_j "
        "s_j term is missing, or it came out 0 (does its loop skip a j, say j = 0?). Every s_j depends on x_i, "
        "so subtract that sum from g_i: s_i * (g_i - sum_j g_j s_j)",
        what);
    ck_assert_msg(!wrong || !values_close(added, diagonal, d, 2e-5f),
                  "%s: each dx_i got s_i (1 - s_i) g_i added, which "
                  "is only the diagonal of softmax's Jacobian: every s_j depends on x_i (ds_j/dx_i = -s_i s_j for j != "
                  "i), and the sum_j g_j s_j term is what brings those in: s_i * (g_i - sum_j g_j s_j)",
                  what);
    ck_assert_msg(!wrong || !values_close(added, negated, d, 2e-5f),
                  "%s: each dx_i got the negative of its gradient "
                  "added: the sign is flipped. It is s_i * (g_i - sum_j g_j s_j), g_i first",
                  what);
    for (int64_t j = 0; j < d; j++) {
        if (fabsf(got[j] - want[j]) <= 1e-5f * (1.0f + fabsf(want[j]))) continue;
        ck_assert_msg(got[j] != 10.0f + (float)j,
                      "%s: dx[%lld] is still %g, what it held before the call: nothing "
                      "was added to it. Does the loop over dx skip j = %lld? Add each dx_j's gradient into it",
                      what, (long long)j, (double)got[j], (long long)j);
        break;
    }
    EXPECT_ARRAY(got, want, d, 1e-5f, what);
}

START_TEST(test_3_3_examples) {
    check_3_3((const float[]){1, 2, 3}, (const float[]){1, 0, 0}, 3, " (loss = s0)");
    check_3_3((const float[]){1, 2, 3}, (const float[]){1, 1, 1}, 3, " (the same upstream everywhere: no change)");
    check_3_3((const float[]){0.5f}, (const float[]){3}, 1, " (one entry)");
}
END_TEST

START_TEST(test_3_3_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 33);
    char context[96];
    float x[16], g[16];
    for (int trial = 0; trial < 100; trial++) {
        int64_t d = rng_int(&rng, 1, 16);
        for (int64_t j = 0; j < d; j++) x[j] = rng_float(&rng, -5, 5), g[j] = rng_float(&rng, -2, 2);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_3_3(x, g, d, context);
    }
}
END_TEST

/* ==== 3.4 log-softmax via log-sum-exp ===================================================== */

static void probe_3_4(void) {
    float out[3];
    ex3_4_log_softmax_row((const float[]){1, 2, 3}, 3, out);
}

/* Checks one row against log-softmax in double precision, rounded to float. The hint comes
 * from what went wrong: inf or nan where the answer is finite gets `if_not_finite` (what this
 * case was chosen to catch); an error of a few roundings of the row's largest score is
 * x - (m + log(sum)), where m + log(sum) is rounded to m's size first. */
static void check_3_4(const float *x, int64_t d, const char *context, const char *if_not_finite) {
    x = guarded_input(x, d);
    double m = -INFINITY, sum = 0.0;
    float want[64], largest = 0.0f;
    for (int64_t j = 0; j < d; j++) m = x[j] > m ? x[j] : m;
    for (int64_t j = 0; j < d; j++) sum += exp((double)x[j] - m);
    for (int64_t j = 0; j < d; j++) want[j] = (float)(((double)x[j] - m) - log(sum));
    for (int64_t j = 0; j < d; j++)
        if (isfinite(x[j]) && fabsf(x[j]) > largest) largest = fabsf(x[j]);
    float top = largest + (float)log((double)d + 1.0), rounding = 4.0f * (nextafterf(top, INFINITY) - top);
    float *out = guarded_buffer(d, MARK);
    ex3_4_log_softmax_row(x, d, out);
    char what[768], xs[256];
    snprintf(what, sizeof what, "exercise 3.4%s: x = %s", context, format_floats(x, d, xs, sizeof xs));
    expect_reads_row_only(ex3_4_log_softmax_row, x, d, out, what);
    const char *hint = "";
    /* the usual mistakes move every entry by the same amount, the row's max m or -m: which one says what is missing */
    double shift = NAN;
    bool shifted = false;
    for (int64_t j = 0; j < d; j++) {
        if (!isfinite(want[j])) continue;
        shifted |= fabsf(out[j] - want[j]) > 1e-5f * (1.0f + fabsf(want[j]));
        if (isnan(shift)) shift = (double)out[j] - want[j];
        if (!isfinite(out[j]) || fabs((double)out[j] - want[j] - shift) > 1e-4 * (1.0 + fabs(shift)) + rounding)
            shift = INFINITY; /* not one shift for the whole row */
    }
    shifted = shifted && isfinite(shift) && fabs(m) > 1e-4 * (1.0 + fabs(m)) + rounding;
    if (shifted && fabs(shift - m) <= 1e-4 * (1.0 + fabs(m)) + rounding)
        hint = " (every entry is off by the row's max m: out_j = (x_j - m) - log(sum of exp(x_k - m)), so subtract m "
               "from x_j too, not only inside the exps)";
    else if (shifted && fabs(shift + m) <= 1e-4 * (1.0 + fabs(m)) + rounding)
        hint =
            " (every entry is off by minus the row's max m: m is subtracted twice. Is the sum of exp(x_k) unshifted? "
            "Its log already holds m, and it overflows for large scores: sum exp(x_k - m))";
    for (int64_t j = 0; j < d && !*hint; j++) {
        if (!isfinite(want[j]) || fabsf(out[j] - want[j]) <= 1e-5f * (1.0f + fabsf(want[j])) || out[j] == MARK)
            continue;
        if (!isfinite(out[j]))
            hint = if_not_finite ? if_not_finite
                                 : " (inf or nan where the answer is finite: subtract the row's max before exp, and "
                                   "take the log of the sum, not of a softmax whose small entries round to 0: "
                                   "(x_j - m) - log(sum_k exp(x_k - m)), log-sum-exp)";
        else if (fabsf(out[j] - want[j]) <= rounding)
            hint =
                " (off by about a rounding of the largest score: compute (x - m) - log(sum), not x - (m + log(sum)), "
                "which rounds m + log(sum) to the size of m first)";
        break;
    }
    snprintf(what, sizeof what, "exercise 3.4%s: x = %s%s", context, format_floats(x, d, xs, sizeof xs), hint);
    EXPECT_OUTPUT(out, d, MARK, want, 1e-5f, what);
}

START_TEST(test_3_4_examples) {
    check_3_4((const float[]){1, 2, 3}, 3, "", NULL);
    check_3_4((const float[]){0, 200}, 2, "",
              " (log(softmax(x)) gives log(0) = -inf here: use log-sum-exp, (x - m) - log(sum of exp(x - m)))");
    check_3_4((const float[]){1e4f, -1e4f}, 2, " (logits of size 1e4)",
              " (exp(1e4) overflows: subtract the max first)");
    check_3_4((const float[]){-INFINITY, 0, 1}, 3, " (a masked entry: -inf)", NULL);
    check_3_4((const float[]){7}, 1, " (one entry: log 1 = 0)", NULL);
    check_3_4((const float[]){1e4f, 1e4f - 1, 1e4f - 2}, 3, " (logits of 1e4)",
              " (exp(1e4) overflows: subtract the max first)");
    check_3_4((const float[]){-1e5f, -1e5f + 1}, 2, " (every score is below -10000)",
              " (where does the max start? At -INFINITY: a sentinel such as -10000 is above every score here, so "
              "every exp underflows to 0)");
    check_3_4((const float[]){-INFINITY, -INFINITY}, 2, " (all masked: nan)", NULL);
}
END_TEST

START_TEST(test_3_4_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 34);
    char context[96];
    float x[16];
    for (int trial = 0; trial < 100; trial++) {
        int64_t d = rng_int(&rng, 1, 16);
        float scale = rng_float(&rng, 0.1f, 300.0f);
        for (int64_t j = 0; j < d; j++) x[j] = rng_float(&rng, -scale, scale);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_3_4(x, d, context, NULL);
    }
}
END_TEST

int main(int argc, char **argv) {
    /* clang-format off */
    const Exercise exercises[] = {
        {"3.1", "softmax of two scores: the gradient by hand", 2, probe_3_1, {test_3_1_examples, test_3_1_random}},
        {"3.2", "a stable softmax row", 3, probe_3_2, {test_3_2_chapter_and_stability, test_3_2_masks_and_random}},
        {"3.3", "softmax's backward for a row", 3, probe_3_3, {test_3_3_examples, test_3_3_random}},
        {"3.4", "log-softmax through log-sum-exp", 3, probe_3_4, {test_3_4_examples, test_3_4_random}},
    };
    /* clang-format on */
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
