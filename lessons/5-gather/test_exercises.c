/*
 * test_exercises.c - checks lesson 5's exercises (exercises.c, or solutions.c for the
 * reference run). Expected answers come from the chapter and from the library (gather.c),
 * never from the file under test. The exercise table at the bottom declares each exercise's
 * id, title and points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "exercises.h"
#include "gather.h"
#include "harness.h"
#include "reduce.h"

static const float MARK = -12345.0f; /* what an output holds before the call: no answer has it */
enum { UNWRITTEN = -99 };            /* the same for an int64_t output */

static void random_indices(Rng *rng, int64_t n, int64_t v, int64_t *indices) {
    for (int64_t i = 0; i < n; i++) indices[i] = rng_int(rng, 0, v - 1);
}

/* ==== 5.1 by hand ======================================================================== */

static void probe_5_1(void) {
    GatherByHand answer = {0};
    ex5_1_gather_by_hand(&answer);
}

/* An answer whose every field holds MARK: a field the exercise leaves alone shows. */
static GatherByHand unwritten_5_1(void) {
    GatherByHand a;
    for (int i = 0; i < 6; i++) a.out[i] = a.grad_sum[i] = a.grad_weighted[i] = a.grad_if_assigned[i] = MARK;
    return a;
}

static void check_floats_5_1(const float *got, const float *want, int n, const char *field, const char *hint) {
    char g[256];
    for (int i = 0; i < n; i++) {
        ck_assert_msg(got[i] != MARK,
                      "exercise 5.1: %s[%d] was never written (it still holds %g, which the test put there "
                      "before the call)\n    your %s: %s\n    %s",
                      field, i, (double)MARK, field, format_floats(got, n, g, sizeof g), hint);
        ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-5f,
                      "exercise 5.1: %s[%d] is %g, which is not right\n    your %s: %s\n    %s", field, i,
                      (double)got[i], field, format_floats(got, n, g, sizeof g), hint);
    }
}

/* Fails with `message` when a by-hand field holds exactly `pattern`, the answer a usual
 * mistake gives: the student reads what went wrong, still without the number. */
static void check_not_5_1(const float *got, const float *pattern, const char *field, const char *message) {
    char g[256];
    /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): the same bits are the mistake looked for */
    ck_assert_msg(memcmp(got, pattern, 6 * sizeof *got) != 0, "exercise 5.1: your %s, %s, %s", field,
                  format_floats(got, 6, g, sizeof g), message);
}

START_TEST(test_5_1_forward_and_sum) {
    GatherByHand got = unwritten_5_1();
    ex5_1_gather_by_hand(&got);
    Tensor *table = tensor_requires_grad(tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *out = EXPECT_OK(tensor_gather_rows(table, (const int64_t[]){0, 0, 2}, 3));
    check_floats_5_1(got.out, tensor_data(out), 6, "out",
                     "expected out row i to be a copy of table row indices[i] (docs 6.1)");
    ck_assert_int_eq(tensor_backward(tensor_sum(out)), 0);
    check_not_5_1(got.grad_sum, (const float[]){1, 1, 0, 0, 1, 1}, "grad_sum",
                  "gives row 0 what it gives row 2, but "
                  "indices [0, 0, 2] copy row 0 twice and row 2 once: each copy sends back its own gradient, and the "
                  "copies add (docs 6.2)");
    check_floats_5_1(
        got.grad_sum, tensor_data(tensor_grad(table)), 6, "grad_sum",
        "expected d sum(out) / d table: each copy of a row sends back 1 per element, and the copies add (docs 6.2)");
}
END_TEST

START_TEST(test_5_1_weighted_and_assigned) {
    GatherByHand got = unwritten_5_1();
    ex5_1_gather_by_hand(&got);
    Tensor *table = tensor_requires_grad(tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *out = EXPECT_OK(tensor_gather_rows(table, (const int64_t[]){0, 0, 2}, 3));
    Tensor *w = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(w, out))), 0);
    check_not_5_1(
        got.grad_weighted, tensor_data(w), "grad_weighted",
        "is w itself: that is d loss / d out, one row per "
        "output row. d loss / d table has one row per table row: each output row's w row goes back to the table "
        "row it was copied from, and a row copied twice collects both (docs 6.2)");
    check_floats_5_1(got.grad_weighted, tensor_data(tensor_grad(table)), 6, "grad_weighted",
                     "expected d sum(w * out) / d table: each table row collects the w rows of every output row that "
                     "copied it (docs 6.2)");
    /* the wrong backward, written out: table row indices[i] = w row i, in order */
    float assigned[6] = {0};
    const int64_t idx[3] = {0, 0, 2};
    for (int i = 0; i < 3; i++) memcpy(assigned + idx[i] * 2, tensor_data(w) + i * 2, 2 * sizeof(float));
    check_not_5_1(got.grad_if_assigned, (const float[]){1, 2, 0, 0, 5, 6}, "grad_if_assigned",
                  "keeps what output row 0 "
                  "wrote into table row 0, but output row 1 also came from row 0 and is visited after it: with = the "
                  "last write to a row is the one that stays (docs 6.2)");
    check_floats_5_1(got.grad_if_assigned, assigned, 6, "grad_if_assigned",
                     "expected what '=' leaves: visiting output rows 0, 1, 2 in order, each one overwrites the table "
                     "row it came from (docs 6.2)");
}
END_TEST

/* ==== 5.2 scatter-add ===================================================================== */

static void probe_5_2(void) {
    float g[4] = {1, 1, 1, 1}, gtable[6] = {0};
    ex5_2_scatter_add(g, (const int64_t[]){0, 2}, 2, 2, gtable);
}

static void check_scatter(const float *g, const int64_t *indices, int64_t n, int64_t v, int64_t d,
                          const char *context) {
    /* what the library's backward gives, added to a table gradient that already holds values */
    Tensor *table = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(v, d)));
    Tensor *out = EXPECT_OK(tensor_gather_rows(table, indices, n));
    ck_assert_int_eq(tensor_backward_from(out, EXPECT_OK(tensor_from(test_ctx, DIMS(n, d), g, n * d))), 0);
    int64_t size = v * d;
    g = guarded_input(g, n * d);
    float *got = guarded_buffer(size, MARK), *want = malloc((size_t)(size + 1) * sizeof *want);
    ck_assert_ptr_nonnull(want);
    for (int64_t k = 0; k < size; k++) {
        got[k] = 100.0f + (float)k; /* gradients already there: add, do not overwrite */
        want[k] = 100.0f + (float)k + tensor_data(tensor_grad(table))[k];
    }
    ex5_2_scatter_add(g, indices, n, d, got);
    char what[768], is[256], gs[512];
    snprintf(what, sizeof what, "exercise 5.2%s: indices %s, rows of %lld, g = %s, gtable starting at [100, 101, ...]",
             context, format_ints(indices, n, is, sizeof is), (long long)d,
             format_literal(g, DIMS(n, d), gs, sizeof gs));
    expect_read_inside(got, want, size, what); /* g read at the table's row, past its n rows */
    /* The usual mistakes, each told by what it leaves: = for += (each named row holds the last
     * gradient row sent to it), the named rows zeroed before adding (they hold the sum of their
     * gradients alone; the same as = while no row is named twice), and row r found at
     * gtable[r] rather than gtable[r * d]. */
    float *last = malloc((size_t)(size + 1) * sizeof *last), *sum = malloc((size_t)(size + 1) * sizeof *sum),
          *unscaled = malloc((size_t)(size + 1) * sizeof *unscaled);
    ck_assert(last && sum && unscaled);
    for (int64_t k = 0; k < size; k++) last[k] = sum[k] = unscaled[k] = 100.0f + (float)k;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) sum[indices[i] * d + j] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) {
            last[indices[i] * d + j] = g[i * d + j];
            sum[indices[i] * d + j] += g[i * d + j];
            unscaled[indices[i] + j] += g[i * d + j];
        }
    bool right = values_close(got, want, size, 1e-5f), assigned = !right && n > 0 && values_close(got, last, size, 0);
    bool zeroed = !right && n > 0 && values_close(got, sum, size, 1e-5f);
    bool no_stride = !right && d > 1 && values_close(got, unscaled, size, 1e-5f);
    free(last), free(sum), free(unscaled);
    ck_assert_msg(
        !(assigned && zeroed),
        "%s: each named row of gtable holds only the gradient sent to it, and nothing of "
        "what it held before the call: add every output row's gradient into it (+=) instead of overwriting it "
        "with = or zeroing it first",
        what);
    ck_assert_msg(!assigned,
                  "%s: each named row of gtable holds only the last gradient row sent to it: add every output "
                  "row's gradient into it (+=) instead of overwriting it with =",
                  what);
    ck_assert_msg(!zeroed,
                  "%s: each named row of gtable holds the sum of the gradients sent to it, but nothing of what it "
                  "held before the call: gtable may already hold gradients (from other uses of the table), so add into "
                  "it instead of zeroing it first",
                  what);
    ck_assert_msg(!no_stride,
                  "%s: the gradients went to gtable[indices[i] + j], which is row indices[i] only when rows "
                  "have 1 float: gtable's rows have d = %lld, so row r starts at gtable[r * d]",
                  what, (long long)d);
    for (int64_t k = 0; k < size; k++) {
        if (fabsf(got[k] - want[k]) <= 1e-5f * (1.0f + fabsf(want[k]))) continue;
        ck_assert_msg(got[k] != 100.0f + (float)k,
                      "%s: gtable[%lld] (row %lld) is still %g, what it held before the call: "
                      "add into it the gradient of every output row that copied row %lld",
                      what, (long long)k, (long long)(k / d), (double)got[k], (long long)(k / d));
        break;
    }
    EXPECT_OUTPUT(got, size, MARK, want, 1e-5f, what);
    free(want);
}

START_TEST(test_5_2_chapter_and_duplicates) {
    const float ones[4] = {1, 1, 1, 1};
    check_scatter(ones, (const int64_t[]){0, 2}, 2, 3, 2, " (the chapter: rows 0 and 2 get 1, row 1 nothing)");
    check_scatter(ones, (const int64_t[]){0, 0}, 2, 3, 2,
                  " (row 0 named twice: its gradient must be 2, add do not assign)");
    check_scatter((const float[]){1, 2, 3, 4, 5, 6}, (const int64_t[]){2, 1, 2}, 3, 3, 2, "");
    check_scatter(NULL, NULL, 0, 3, 2, " (no indices: nothing changes)");
}
END_TEST

START_TEST(test_5_2_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 52);
    char context[96];
    float g[64];
    int64_t indices[16];
    for (int trial = 0; trial < 200; trial++) {
        int64_t v = rng_int(&rng, 1, 6), d = rng_int(&rng, 1, 4), n = rng_int(&rng, 0, 16);
        random_indices(&rng, n, v, indices);
        for (int64_t k = 0; k < n * d; k++) g[k] = (float)rng_int(&rng, -9, 9);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_scatter(g, indices, n, v, d, context);
    }
}
END_TEST

/* ==== 5.3 a checked gather ================================================================ */

static void probe_5_3(void) {
    float out[4];
    int64_t bad = -1;
    ex5_3_gather_rows_checked((const float[]){1, 2, 3, 4, 5, 6}, 3, 2, (const int64_t[]){0, 2}, 2, out, &bad);
}

/* What (int)index holds on this machine: index's low 32 bits, as a signed number. */
static int64_t low_32_bits(int64_t index) {
    int64_t low = (int64_t)((uint64_t)index & 0xffffffffu);
    return low >= 0x80000000 ? low - 0x100000000 : low;
}

/* One call on a table of v rows of d floats: either every index is in range and the rows are
 * copied, or the answer is -1, the first bad position, and out untouched. */
static void check_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n,
                          const char *context) {
    int64_t size = n * d, bad = UNWRITTEN;
    table = guarded_input(table, v * d);
    float *got = guarded_buffer(size, MARK);
    char what[768], is[256], ts[384];
    snprintf(what, sizeof what, "exercise 5.3%s: indices %s into the table %s (%lld rows of %lld)", context,
             format_ints(indices, n, is, sizeof is), format_literal(table, DIMS(v, d), ts, sizeof ts), (long long)v,
             (long long)d);
    Tensor *want = tensor_gather_rows(EXPECT_OK(tensor_from(test_ctx, DIMS(v, d), table, v * d)), indices, n);
    tensor_clear_error();
    int status = ex5_3_gather_rows_checked(table, v, d, indices, n, got, &bad);
    if (!want) { /* an index is out of range */
        int64_t first = 0;
        while (indices[first] >= 0 && indices[first] < v) first++;
        int64_t as_int = low_32_bits(indices[first]);
        char hint[256] = "";
        if (as_int >= 0 && as_int < v)
            snprintf(hint, sizeof hint,
                     ". Cut to 32 bits, as (int) or an int variable does, it would be %lld, which is in "
                     "range: compare the whole int64_t",
                     (long long)as_int);
        else if (indices[first] == v) /* the bound checked with > v, not >= v */
            snprintf(hint, sizeof hint,
                     ": the rows are 0 to %lld, so %lld, the number of rows, is one past the last. An "
                     "index must be < v: reject index >= v, not only index > v",
                     (long long)(v - 1), (long long)v);
        ck_assert_msg(status == -1, "%s: returned %d, expected -1: index %lld at position %lld is out of range%s", what,
                      status, (long long)indices[first], (long long)first, hint);
        ck_assert_msg(bad != UNWRITTEN,
                      "%s: returned -1 but never set *bad_position (it still holds %d, which the test put "
                      "there before the call); expected %lld, the position of the first bad index",
                      what, UNWRITTEN, (long long)first);
        ck_assert_msg(bad == first, "%s: *bad_position is %lld, expected %lld (the first bad index)", what,
                      (long long)bad, (long long)first);
        for (int64_t k = 0; k < size + OUTPUT_GUARD; k++)
            ck_assert_msg(got[k] == MARK,
                          "%s: out[%lld] was written, but on an error out must be left untouched: check "
                          "every index before copying anything",
                          what, (long long)k);
        free(got);
        return;
    }
    ck_assert_msg(status == 0, "%s: returned %d, expected 0: every index is in range", what, status);
    for (int64_t k = 0; k < size; k++)
        ck_assert_msg(got[k] != MARK,
                      "%s: out[%lld] (row %lld) was never written (it still holds %g, which the test put "
                      "there before the call)",
                      what, (long long)k, (long long)(k / d), (double)MARK);
    EXPECT_OUTPUT(got, size, MARK, tensor_data(want), 0, what);
}

/* A table of v rows of d random values, in a malloc'd array (freed by the caller). */
static float *random_table(Rng *rng, int64_t v, int64_t d) {
    float *table = malloc((size_t)(v * d + 1) * sizeof *table);
    ck_assert_ptr_nonnull(table);
    for (int64_t k = 0; k < v * d; k++) table[k] = rng_float(rng, -9, 9);
    return table;
}

static const float table_3x2[6] = {1, 2, 3, 4, 5, 6};

START_TEST(test_5_3_in_range) {
    check_checked(table_3x2, 3, 2, (const int64_t[]){0, 2}, 2, " (the chapter: [[1, 2], [5, 6]])");
    check_checked(table_3x2, 3, 2, (const int64_t[]){0, 0}, 2, " (the same row twice)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){2, 1, 0, 1}, 4, "");
    check_checked(table_3x2, 3, 2, (const int64_t[]){0}, 0, " (no indices)");
    /* other tables: an answer that knows only the chapter's 3 rows of 2 fails these */
    const float table_4x3[12] = {0.5f, -1, 2, 3, 4.25f, -5, 6, 7, 8, 9, 10, 11}, table_6x1[6] = {6, 5, 4, 3, 2, 1};
    check_checked(table_4x3, 4, 3, (const int64_t[]){3, 0, 3}, 3, " (row 3 of 4)");
    check_checked(table_6x1, 6, 1, (const int64_t[]){5, 4, 0}, 3, "");
    check_checked(table_4x3, 1, 12, (const int64_t[]){0, 0}, 2, " (one row of 12)");
    check_checked(table_3x2, 3, 0, (const int64_t[]){2, 0}, 2, " (rows of 0 floats: nothing to copy)");
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 53);
    char context[96];
    int64_t indices[8];
    for (int trial = 0; trial < 100; trial++) {
        int64_t v = rng_int(&rng, 1, 8), d = rng_int(&rng, 1, 5), n = rng_int(&rng, 0, 8);
        float *table = random_table(&rng, v, d);
        random_indices(&rng, n, v, indices);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_checked(table, v, d, indices, n, context);
        free(table);
    }
}
END_TEST

START_TEST(test_5_3_out_of_range) {
    check_checked(table_3x2, 3, 2, (const int64_t[]){0, 3}, 2, " (3 is one past the last row)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){-1}, 1, " (a negative index)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){1, 2, 0, 7, 1}, 5, " (a bad index after good ones)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){1, 99, -5}, 3, " (two bad indices: report the first)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){INT64_MAX}, 1, " (a huge index)");
    const float table_5x2[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    check_checked(table_5x2, 5, 2, (const int64_t[]){4, 5}, 2, " (5 is one past the last of 5 rows)");
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 530);
    char context[96];
    int64_t indices[8];
    for (int trial = 0; trial < 100; trial++) {
        int64_t v = rng_int(&rng, 1, 8), d = rng_int(&rng, 1, 5), n = rng_int(&rng, 1, 8);
        float *table = random_table(&rng, v, d);
        random_indices(&rng, n, v, indices);
        /* one bad index, at a random place: just past the end, further, or negative */
        int64_t kind = rng_int(&rng, 0, 2);
        indices[rng_int(&rng, 0, n - 1)] = kind == 0   ? v
                                           : kind == 1 ? v + rng_int(&rng, 1, 100)
                                                       : -rng_int(&rng, 1, 100);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_checked(table, v, d, indices, n, context);
        free(table);
    }
}
END_TEST

START_TEST(test_5_3_indices_past_32_bits) {
    /* An index held in an int keeps only its low 32 bits: 2^32 + 1 becomes 1. On rows of 0
     * floats first, where an answer that lets it through copies nothing and fails with this
     * test's message; then on the chapter's table, where it would read 32 GB past the end
     * (and, as a crash, fails the exercise all the same). */
    const int64_t two_32 = INT64_C(1) << 32;
    check_checked(table_3x2, 3, 0, (const int64_t[]){two_32 + 1}, 1, " (2^32 + 1)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){0, two_32 + 1}, 2, " (2^32 + 1)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){two_32}, 1, " (2^32)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){2 - two_32}, 1, " (2 - 2^32)");
    check_checked(table_3x2, 3, 2, (const int64_t[]){INT64_MIN}, 1, " (the most negative int64_t)");
}
END_TEST

/* ==== 5.4 a sentence's vector ============================================================= */

static void probe_5_4(void) {
    Tensor *table = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    ex5_4_sentence_vector(table, (const int64_t[]){0, 2}, 2);
}

static void check_sentence(const int64_t *words, int64_t n, const char *context) {
    Tensor *table =
        tensor_requires_grad(tensor_from(test_ctx, DIMS(4, 3), VALUES(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)));
    Tensor *got = ex5_4_sentence_vector(table, words, n);
    ck_assert_msg(got != NULL, "exercise 5.4%s returned NULL: %s", context,
                  tensor_error() ? tensor_error() : "(no error)");
    /* the tape: somewhere in what the result was computed from, the rows were gathered */
    ck_assert_msg(tape_has_op(got, "gather_rows"),
                  "exercise 5.4%s: the result should be built on tensor_gather_rows, "
                  "but no gather_rows is on its tape",
                  context);
    char what[256], is[128];
    int64_t wide[16];
    for (int64_t i = 0; i < n; i++) wide[i] = words[i];
    snprintf(what, sizeof what, "exercise 5.4%s: the mean of rows %s of [[1,2,3],[4,5,6],[7,8,9],[10,11,12]]", context,
             format_ints(wide, n, is, sizeof is));
    Tensor *want = EXPECT_OK(tensor_mean_axis(
        tensor_gather_rows(tensor_from(test_ctx, DIMS(4, 3), VALUES(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)), words, n),
        0, false));
    /* the usual mistakes: the mean over the wrong axis, the averaged axis kept, the sum for the mean */
    ck_assert_msg(!(got->rank == 1 && got->shape[0] == n && n != 3),
                  "%s: the result has shape (%lld,), one value per word: "
                  "that averages each word's own vector (axis 1). Average over axis 0, the words, to get one vector of "
                  "D = 3",
                  what, (long long)n);
    ck_assert_msg(!(got->rank == 2 && got->shape[0] == 1 && got->shape[1] == 3),
                  "%s: the result has shape (1,3): the "
                  "averaged axis was kept, as keepdim = true does. Pass keepdim false for a vector of shape (D,)",
                  what);
    EXPECT_SHAPE(got, DIMS(3), what);
    float values[3], times_n[3];
    tensor_to_array(got, values, 3);
    for (int j = 0; j < 3; j++) times_n[j] = (float)n * tensor_data(want)[j];
    ck_assert_msg(n == 1 || !values_close(values, times_n, 3, 1e-5f),
                  "%s: each value is %lld times the mean: that is the "
                  "sum of the %lld rows. The mean divides that sum by n, the number of words",
                  what, (long long)n, (long long)n);
    EXPECT_VALUES(got, tensor_data(want), 3, 1e-5f, what);
    /* the gradient of sum(vector): each word's row gets 1/n per time it appears */
    ck_assert_int_eq(tensor_backward(tensor_sum(got)), 0);
    float grad[12] = {0};
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) grad[words[i] * 3 + j] += 1.0f / (float)n;
    snprintf(what + strlen(what), sizeof what - strlen(what), ": the table's gradient for loss = sum(vector)");
    EXPECT_VALUES(tensor_grad(table), grad, 12, 1e-5f, what);
}

START_TEST(test_5_4_sentences) {
    check_sentence((const int64_t[]){0, 2}, 2, "");
    check_sentence((const int64_t[]){3}, 1, " (one word)");
    check_sentence((const int64_t[]){1, 3, 1, 0}, 4, " (a repeated word)");
}
END_TEST

int main(int argc, char **argv) {
    /* clang-format off */
    const Exercise exercises[] = {
        {"5.1", "duplicate indices, by hand", 2, probe_5_1, {test_5_1_forward_and_sum, test_5_1_weighted_and_assigned}},
        {"5.2", "the scatter-add backward", 3, probe_5_2, {test_5_2_chapter_and_duplicates, test_5_2_random}},
        {"5.3", "a gather that checks its indices", 3, probe_5_3,
         {test_5_3_in_range, test_5_3_out_of_range, test_5_3_indices_past_32_bits}},
        {"5.4", "a sentence's vector: the mean of its words", 2, probe_5_4, {test_5_4_sentences}},
    };
    /* clang-format on */
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
