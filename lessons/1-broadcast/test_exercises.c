/*
 * test_exercises.c - checks lesson 1's exercises (exercises.c, or solutions.c for the
 * reference run). The expected answers come from the chapter's tables and from the library
 * (broadcast.c), never from the file under test. The exercise table at the bottom declares
 * each exercise's id, title and points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "exercises.h"
#include "harness.h"

/* What an output holds before the call (no answer has it), so that a message can tell a value
 * the exercise wrote from one it never wrote. */
enum { UNWRITTEN = -999 };
static const float UNWRITTEN_FLOAT = -12345.0f;

/* ==== 1.1 by hand ======================================================================== */

static void probe_1_1(void) {
    BroadcastByHand answer = {0};
    ex1_1_broadcast_by_hand(&answer);
}

/* An answer whose every field holds UNWRITTEN: a field the exercise leaves alone shows. */
static BroadcastByHand unwritten_1_1(void) {
    BroadcastByHand a;
    for (int i = 0; i < 2; i++) a.out_shape[i] = UNWRITTEN;
    for (int i = 0; i < 6; i++) a.b_source[i] = UNWRITTEN, a.c[i] = a.grad_a[i] = UNWRITTEN_FLOAT;
    for (int i = 0; i < 3; i++) a.grad_b[i] = a.grad_b_weighted[i] = UNWRITTEN_FLOAT;
    return a;
}

/* What the library computes for the exercise, to hold the answer against. */
static BroadcastByHand library_answer(void) {
    BroadcastByHand want = {0};
    Tensor *a = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *b = tensor_requires_grad(tensor_from(test_ctx, DIMS(1, 3), VALUES(10, 20, 30)));
    Tensor *c = EXPECT_OK(tensor_add(a, b));
    int rank;
    broadcast_shapes(a->shape, a->rank, b->shape, b->rank, want.out_shape, &rank);
    broadcast_map(c->shape, c->rank, b->shape, b->rank, want.b_source);
    tensor_to_array(c, want.c, 6);
    ck_assert_int_eq(tensor_backward(EXPECT_OK(tensor_sum(c))), 0);
    tensor_to_array(tensor_grad(a), want.grad_a, 6);
    tensor_to_array(tensor_grad(b), want.grad_b, 3);
    tensor_zero_grad(b);
    Tensor *w = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 0, 2, 3, 1, 0));
    ck_assert_int_eq(tensor_backward(EXPECT_OK(tensor_sum(tensor_mul(w, c)))), 0);
    tensor_to_array(tensor_grad(b), want.grad_b_weighted, 3);
    return want;
}

/* A by-hand answer is checked one number at a time. A wrong number gets a hint that says how
 * to work it out, not the number itself, so the message cannot be copied as the answer. */
static void check_ints_1_1(const int64_t *got, const int64_t *want, int n, const char *field, const char *hint) {
    char g[256];
    for (int i = 0; i < n; i++) {
        ck_assert_msg(got[i] != UNWRITTEN,
                      "exercise 1.1: %s[%d] was never written (it still holds %d, which the test put "
                      "there before the call)\n    your %s: %s\n    %s",
                      field, i, UNWRITTEN, field, format_ints(got, n, g, sizeof g), hint);
        ck_assert_msg(got[i] == want[i], "exercise 1.1: %s[%d] is %lld, which is not right\n    your %s: %s\n    %s",
                      field, i, (long long)got[i], field, format_ints(got, n, g, sizeof g), hint);
    }
}

static void check_floats_1_1(const float *got, const float *want, int n, const char *field, const char *hint) {
    char g[256];
    for (int i = 0; i < n; i++) {
        ck_assert_msg(got[i] != UNWRITTEN_FLOAT,
                      "exercise 1.1: %s[%d] was never written (it still holds %g, which the test "
                      "put there before the call)\n    your %s: %s\n    %s",
                      field, i, (double)UNWRITTEN_FLOAT, field, format_floats(got, n, g, sizeof g), hint);
        ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-5f,
                      "exercise 1.1: %s[%d] is %g, which is not right\n    your %s: %s\n    %s", field, i,
                      (double)got[i], field, format_floats(got, n, g, sizeof g), hint);
    }
}

START_TEST(test_1_1_forward) {
    BroadcastByHand got = unwritten_1_1(), want = library_answer();
    ex1_1_broadcast_by_hand(&got);
    check_ints_1_1(got.out_shape, want.out_shape, 2, "out_shape",
                   "expected the broadcast shape of (2,3) and (1,3): pair the dims from the right (docs 2.2)");
    /* the usual mistake: counting c's elements, as if c read b element for element */
    bool outside_b = false;
    for (int i = 0; i < 6; i++)
        outside_b |= got.b_source[i] != UNWRITTEN && (got.b_source[i] < 0 || got.b_source[i] > 2);
    check_ints_1_1(got.b_source, want.b_source, 6, "b_source",
                   outside_b
                       ? "b has only 3 elements, so each entry is a flat index of b: 0, 1 or 2. Which one does each "
                         "element of c read? b's size-1 dim always reads index 0 (docs 2.4)"
                       : "expected, for each element of c in row-major order, the flat index of the element of b it "
                         "reads; b's size-1 dim always reads index 0 (docs 2.4)");
    check_floats_1_1(got.c, want.c, 6, "c", "expected each element of c to be a's element plus the b element it reads");
}
END_TEST

START_TEST(test_1_1_backward) {
    BroadcastByHand got = unwritten_1_1(), want = library_answer();
    ex1_1_broadcast_by_hand(&got);
    check_floats_1_1(got.grad_a, want.grad_a, 6, "grad_a",
                     "expected d sum(c) / d a: each element of a is read by exactly one element of c (docs 2.5)");
    /* the usual mistakes: counting one copy of each b element (all 1s; with w, one row of w) */
    bool one_copy = true;
    for (int j = 0; j < 3; j++) one_copy &= got.grad_b[j] == 1.0f;
    check_floats_1_1(got.grad_b, want.grad_b, 3, "grad_b",
                     one_copy
                         ? "expected d sum(c) / d b: yours is the gradient of one element of c, but each b element "
                           "is read by more than one (b_source says which): add up the gradients of all of them "
                           "(docs 2.5)"
                         : "expected d sum(c) / d b: add up d sum(c) / d c over every element of c that reads that "
                           "b element (docs 2.5)");
    const float w[2][3] = {{1, 0, 2}, {3, 1, 0}};
    char weighted_hint[256] =
        "expected d sum(w * c) / d b: each element of c that reads a b element now passes back its "
        "weight from w = [[1,0,2],[3,1,0]] (docs 2.5)";
    for (int row = 0; row < 2; row++) {
        bool that_row = true;
        for (int j = 0; j < 3; j++) that_row &= got.grad_b_weighted[j] == w[row][j];
        if (that_row)
            snprintf(weighted_hint, sizeof weighted_hint,
                     "these are the weights of only row %d of w = [[1,0,2],[3,1,0]]: "
                     "each b element is read by an element of c in every row, and each passes back its own weight: add "
                     "them up (docs 2.5)",
                     row);
    }
    check_floats_1_1(got.grad_b_weighted, want.grad_b_weighted, 3, "grad_b_weighted", weighted_hint);
}
END_TEST

/* ==== 1.2 broadcast_shapes =============================================================== */

static void probe_1_2(void) {
    int64_t out[TENSOR_MAX_RANK];
    int rank;
    ex1_2_broadcast_shapes(DIMS(2, 3), DIMS(3), out, &rank);
}

/* A shape copied between DIMS_GUARD cells of `fill` on each side, in memory the grader sends whole with the next call
 * (guard_hint): a read outside the shape gets `fill`, in make test and graded alike. NULL (rank 0) stays NULL. */
enum { DIMS_GUARD = TENSOR_MAX_RANK };
static const int64_t *guarded_dims(const int64_t *dims, int rank, int64_t fill, int64_t *buf) {
    if (!dims) return NULL;
    for (int i = 0; i < rank + 2 * DIMS_GUARD; i++) buf[i] = fill;
    memcpy(buf + DIMS_GUARD, dims, (size_t)rank * sizeof *dims);
    guard_hint(buf, (size_t)(rank + 2 * DIMS_GUARD) * sizeof *buf);
    return buf + DIMS_GUARD;
}

/* Holds the student's answer for one pair against the library's. */
static void check_pair_1_2(const int64_t *a, int a_rank, const int64_t *b, int b_rank, const char *context) {
    int64_t want[TENSOR_MAX_RANK], got[TENSOR_MAX_RANK], ones[TENSOR_MAX_RANK];
    int64_t guarded_a[TENSOR_MAX_RANK + 2 * DIMS_GUARD], guarded_b[TENSOR_MAX_RANK + 2 * DIMS_GUARD];
    int want_rank = -1, got_rank = UNWRITTEN, ones_rank = UNWRITTEN;
    for (int d = 0; d < TENSOR_MAX_RANK; d++) got[d] = ones[d] = UNWRITTEN;
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], sw[SHAPE_STR_MAX], sg[SHAPE_STR_MAX];
    int want_status = broadcast_shapes(a, a_rank, b, b_rank, want, &want_rank);
    /* once with 1s around a and b (what a dim they lack counts as, so a read outside them is hidden), then with 7777s,
     * which broadcast with nothing here: an answer that changes read outside a or b */
    int ones_status = ex1_2_broadcast_shapes(guarded_dims(a, a_rank, 1, guarded_a), a_rank,
                                             guarded_dims(b, b_rank, 1, guarded_b), b_rank, ones, &ones_rank);
    int got_status = ex1_2_broadcast_shapes(guarded_dims(a, a_rank, 7777, guarded_a), a_rank,
                                            guarded_dims(b, b_rank, 7777, guarded_b), b_rank, got, &got_rank);
    shape_format(a, a_rank, sa, sizeof sa);
    shape_format(b, b_rank, sb, sizeof sb);
    bool same = ones_status == got_status && (got_status != 0 || ones_rank == got_rank);
    for (int d = 0; d < got_rank && got_rank <= TENSOR_MAX_RANK && same && got_status == 0; d++)
        same = ones[d] == got[d];
    ck_assert_msg(same,
                  "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s): the answer changes with what lies in memory "
                  "right before and after a and b, so the code reads outside them. a holds a_rank dims, a[0] to "
                  "a[a_rank - 1]; a dim that a lacks is not in the array: it counts as 1",
                  context, sa, sb);
    /* the usual mistake: pairing the dims from the left (a[d] with b[d]) */
    int64_t left[TENSOR_MAX_RANK];
    int left_rank = a_rank > b_rank ? a_rank : b_rank, left_status = 0;
    for (int d = 0; d < left_rank; d++) {
        /* cppcheck-suppress nullPointer ; a (b) is NULL only for rank 0, and d < a_rank (b_rank) guards the read */
        int64_t da = d < a_rank ? a[d] : 1, db = d < b_rank ? b[d] : 1;
        if (da != db && da != 1 && db != 1) left_status = -1;
        left[d] = da == 1 ? db : da;
    }
    bool left_differs =
        left_status != want_status || (want_status == 0 && !shape_equal(left, left_rank, want, want_rank));
    bool got_left = got_status == left_status &&
                    (left_status != 0 || (got_rank == left_rank && shape_equal(got, got_rank, left, left_rank)));
    /* a shape that matches says more than a -1 that matches, which many mistakes return */
    ck_assert_msg(
        !left_differs || !got_left || got_status != 0,
        "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) gave %s, "
        "which is what pairing the dims from the left gives: numpy pairs them from the right (a's last dim with "
        "b's last dim), and a shorter shape counts as having 1s on its left. Expected %s",
        context, sa, sb, shape_format(got, got_rank, sg, sizeof sg),
        want_status == 0 ? shape_format(want, want_rank, sw, sizeof sw) : "-1: they cannot broadcast");
    ck_assert_msg(
        !left_differs || !got_left || got_status == 0,
        "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) returned "
        "%d, expected 0 and the shape %s. Are the dims paired from the left? That gives -1 here, but numpy "
        "pairs them from the right (a's last dim with b's last dim), and a shorter shape counts as having 1s on "
        "its left",
        context, sa, sb, got_status, shape_format(want, want_rank, sw, sizeof sw));
    if (want_status != 0) {
        ck_assert_msg(got_status == -1,
                      "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) returned %d, expected -1: the shapes cannot "
                      "broadcast",
                      context, sa, sb, got_status);
        return;
    }
    ck_assert_msg(got_status == 0,
                  "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) returned %d, expected 0 and the shape %s", context,
                  sa, sb, got_status, shape_format(want, want_rank, sw, sizeof sw));
    ck_assert_msg(got_rank != UNWRITTEN,
                  "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) returned 0 but never set *out_rank "
                  "(it still holds %d, which the test put there before the call); expected %d",
                  context, sa, sb, UNWRITTEN, want_rank);
    for (int d = 0; d < want_rank && got_rank == want_rank; d++)
        ck_assert_msg(got[d] != UNWRITTEN,
                      "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s): out[%d] was never written (it "
                      "still holds %d, which the test put there before the call); expected the shape %s",
                      context, sa, sb, d, UNWRITTEN, shape_format(want, want_rank, sw, sizeof sw));
    bool unwritten = false;
    for (int d = 0; d < got_rank && d < TENSOR_MAX_RANK; d++) unwritten |= got[d] == UNWRITTEN;
    /* the usual mistakes: the dims written in reverse order, or the larger of a pair (so 0 with 1 gives 1) */
    bool reversed = got_rank == want_rank && !shape_equal(got, got_rank, want, want_rank);
    for (int d = 0; d < want_rank && reversed; d++) reversed = got[d] == want[want_rank - 1 - d];
    ck_assert_msg(!reversed,
                  "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) gave %s, the right dims in reverse order: "
                  "the k-th dim from the right goes to out[n - k] (the last one into out[n - 1]), expected %s",
                  context, sa, sb, shape_format(got, got_rank, sg, sizeof sg),
                  shape_format(want, want_rank, sw, sizeof sw));
    for (int d = 0; d < want_rank && got_rank == want_rank; d++)
        ck_assert_msg(got[d] == want[d] || want[d] != 0 || got[d] != 1,
                      "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) "
                      "gave %s, expected %s: in dim %d, 0 paired with 1 gives 0. A 1 stretches to match the other dim, "
                      "whatever its size, so take the dim that is not 1, not the larger of the two",
                      context, sa, sb, shape_format(got, got_rank, sg, sizeof sg),
                      shape_format(want, want_rank, sw, sizeof sw), d);
    ck_assert_msg(got_rank == want_rank && shape_equal(got, got_rank, want, want_rank),
                  "exercise 1.2%s: ex1_2_broadcast_shapes(%s, %s) gave %s, expected %s%s", context, sa, sb,
                  got_rank >= 0 && got_rank <= TENSOR_MAX_RANK ? shape_format(got, got_rank, sg, sizeof sg)
                                                               : "an impossible rank",
                  shape_format(want, want_rank, sw, sizeof sw),
                  unwritten ? " (a -999 in it was never written: the test put it there before the call)" : "");
}

START_TEST(test_1_2_chapter_pairs) {
    /* the chapter's table, then seed 001's scenarios 1-4 */
    check_pair_1_2(DIMS(2, 3), DIMS(3), "");
    check_pair_1_2(DIMS(2, 3), DIMS(2, 1), "");
    check_pair_1_2(DIMS(3), DIMS(1), "");
    check_pair_1_2(DIMS(2, 3), DIMS(2, 4), "");
    check_pair_1_2(DIMS(2, 3), DIMS(2, 3), "");
    check_pair_1_2(DIMS(3, 4), DIMS(4), "");
    check_pair_1_2(DIMS(2, 1, 3), DIMS(4, 3), "");
    check_pair_1_2(DIMS(3, 2), DIMS(4, 2), "");
}
END_TEST

START_TEST(test_1_2_edge_cases) {
    /* rank 0 (a scalar) broadcasts with anything */
    check_pair_1_2(NULL, 0, NULL, 0, "");
    check_pair_1_2(NULL, 0, DIMS(2, 3), "");
    check_pair_1_2(DIMS(4), NULL, 0, "");
    /* size 0 behaves like any other size: it matches 0 or 1 */
    check_pair_1_2(DIMS(0), DIMS(1), "");
    check_pair_1_2(DIMS(0), DIMS(2), "");
    check_pair_1_2(DIMS(2, 0), DIMS(1), "");
    check_pair_1_2(DIMS(0, 3), DIMS(0, 1), "");
    check_pair_1_2(DIMS(1, 0), DIMS(3, 1), "");
    /* order does not matter, and 1 on either side stretches */
    check_pair_1_2(DIMS(3), DIMS(2, 3), "");
    check_pair_1_2(DIMS(2, 1), DIMS(1, 3), "");
    check_pair_1_2(DIMS(5, 1, 4, 1), DIMS(3, 1, 6), "");
    check_pair_1_2(DIMS(5, 2, 4, 1), DIMS(3, 1, 6), "");
    check_pair_1_2(DIMS(8, 1, 6, 1), DIMS(7, 1, 5), "");
    /* up to the maximum rank, 8 */
    check_pair_1_2(DIMS(2, 1, 3, 1, 4, 1, 5, 1), DIMS(1, 6, 1, 7), "");
    check_pair_1_2(DIMS(1, 1, 1, 1, 1, 1, 1, 1), NULL, 0, "");
    check_pair_1_2(DIMS(2, 2, 2, 2, 2, 2, 2, 3), DIMS(2, 2, 2, 2, 2, 2, 2, 4), "");
}
END_TEST

START_TEST(test_1_2_random_pairs) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    char context[96];
    for (int trial = 0; trial < 500; trial++) {
        int64_t a[TENSOR_MAX_RANK], b[TENSOR_MAX_RANK];
        int a_rank = (int)rng_int(&rng, 0, TENSOR_MAX_RANK), b_rank = (int)rng_int(&rng, 0, TENSOR_MAX_RANK);
        random_shape(&rng, a_rank, 0, 3, a);
        random_shape(&rng, b_rank, 0, 3, b);
        /* copy some of a's dims into b so that many pairs broadcast, not only the lucky ones */
        for (int k = 1; k <= a_rank && k <= b_rank; k++)
            if (rng_int(&rng, 0, 2)) b[b_rank - k] = rng_int(&rng, 0, 3) ? a[a_rank - k] : 1;
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_pair_1_2(a, a_rank, b, b_rank, context);
    }
}
END_TEST

/* ==== 1.3 broadcast_strides ============================================================== */

static void probe_1_3(void) {
    int64_t out[TENSOR_MAX_RANK];
    ex1_3_broadcast_strides(DIMS(3), STRIDES(1), DIMS(2, 3), out);
}

static void check_strides_1_3(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                              int target_rank, const char *context) {
    int64_t want[TENSOR_MAX_RANK], got[TENSOR_MAX_RANK];
    char ss[SHAPE_STR_MAX], st[SHAPE_STR_MAX], sst[SHAPE_STR_MAX], sw[SHAPE_STR_MAX], sg[SHAPE_STR_MAX];
    for (int d = 0; d < TENSOR_MAX_RANK; d++) got[d] = UNWRITTEN;
    int want_status = broadcast_strides(src, src_rank, src_strides, target, target_rank, want);
    int got_status = ex1_3_broadcast_strides(src, src_rank, src_strides, target, target_rank, got);
    shape_format(src, src_rank, ss, sizeof ss);
    shape_format(src_strides, src_rank, sst, sizeof sst);
    shape_format(target, target_rank, st, sizeof st);
    /* the usual mistake: src's dims lined up with target's from the left (src dim d with target dim d) */
    int64_t left[TENSOR_MAX_RANK] = {0};
    int left_status = src_rank > target_rank ? -1 : 0;
    for (int d = 0; d < target_rank && left_status == 0; d++) {
        /* cppcheck-suppress nullPointer ; src is NULL only for src_rank 0, and d >= src_rank is tested first */
        if (d >= src_rank || (src[d] == 1 && target[d] != 1)) left[d] = 0;
        else if (src[d] == target[d]) left[d] = src_strides[d];
        else left_status = -1;
    }
    bool left_differs = left_status != want_status, got_left = got_status == left_status;
    for (int d = 0; d < target_rank && left_status == 0; d++) {
        left_differs |= want_status == 0 && target[d] > 1 && left[d] != want[d];
        got_left &= target[d] <= 1 || got[d] == left[d];
    }
    /* strides that match say more than a -1 that matches, which many mistakes return */
    ck_assert_msg(
        !left_differs || !got_left || got_status != 0,
        "exercise 1.3%s: reading shape %s (strides %s) as %s: "
        "the strides %s are what lining src's dims up with target's from the left gives: line them up from the "
        "right, src's last dim with target's last dim (the dims src is missing are target's first ones)",
        context, ss, sst, st, shape_format(got, target_rank, sg, sizeof sg));
    ck_assert_msg(
        !left_differs || !got_left || got_status == 0,
        "exercise 1.3%s: shape %s (strides %s) broadcasts to %s, "
        "so ex1_3_broadcast_strides should return 0, not %d. Are src's dims lined up with target's from the "
        "left? That gives -1 here: line them up from the right, src's last dim with target's last dim (the dims "
        "src is missing are target's first ones)",
        context, ss, sst, st, got_status);
    if (want_status != 0) {
        ck_assert_msg(got_status == -1,
                      "exercise 1.3%s: shape %s cannot be broadcast to %s, so "
                      "ex1_3_broadcast_strides should return -1, not %d",
                      context, ss, st, got_status);
        return;
    }
    ck_assert_msg(got_status == 0,
                  "exercise 1.3%s: shape %s (strides %s) broadcasts to %s, so "
                  "ex1_3_broadcast_strides should return 0, not %d",
                  context, ss, sst, st, got_status);
    /* A stride along a dim of size 0 or 1 is never used to move, so any value is right there. */
    for (int d = 0; d < target_rank; d++) {
        if (target[d] > 1 && got[d] == UNWRITTEN)
            ck_abort_msg(
                "exercise 1.3%s: reading shape %s (strides %s) as %s: the stride of dim %d was never written (it "
                "still holds %d, which the test put there before the call); expected %lld",
                context, ss, sst, st, d, UNWRITTEN, (long long)want[d]);
        int k = target_rank - d, from = src_rank - k; /* target dim d reads src dim `from`, if k <= src_rank */
        if (target[d] > 1 && got[d] != want[d] && k <= src_rank && src[from] == 1 && got[d] == src_strides[from])
            ck_abort_msg(
                "exercise 1.3%s: reading shape %s (strides %s) as %s: stride of dim %d is %lld, src's stride for "
                "its dim %d. That dim has size 1 and target's has %lld: every index along it reads src's one "
                "element, so its stride is 0, not src's stride",
                context, ss, sst, st, d, (long long)got[d], from, (long long)target[d]);
        int64_t contiguous = 1; /* the stride src's dim `from` would have if src were contiguous */
        for (int e = from + 1; e < src_rank && k <= src_rank; e++) contiguous *= src[e];
        if (target[d] > 1 && got[d] != want[d] && k <= src_rank && src[from] == target[d] && got[d] == contiguous)
            ck_abort_msg(
                "exercise 1.3%s: reading shape %s (strides %s) as %s: stride of dim %d is %lld, the stride a "
                "contiguous src would have, but src's strides are %s: keep src_strides[%d] (%lld). src may be a "
                "view, transposed or sliced, whose strides are not the contiguous ones",
                context, ss, sst, st, d, (long long)got[d], sst, from, (long long)src_strides[from]);
        if (target[d] > 1 && got[d] != want[d])
            ck_abort_msg("exercise 1.3%s: reading shape %s (strides %s) as %s: stride of dim %d is %lld, expected "
                         "%lld\n    got      %s\n    expected %s",
                         context, ss, sst, st, d, (long long)got[d], (long long)want[d],
                         shape_format(got, target_rank, sg, sizeof sg), shape_format(want, target_rank, sw, sizeof sw));
    }
}

START_TEST(test_1_3_examples) {
    check_strides_1_3(DIMS(3), STRIDES(1), DIMS(2, 3), "");       /* (3,) -> (2,3): (0,1) */
    check_strides_1_3(DIMS(2, 1), STRIDES(1, 1), DIMS(2, 3), ""); /* (2,1) -> (2,3): (1,0) */
    check_strides_1_3(NULL, 0, NULL, DIMS(2, 3), "");             /* a scalar: (0,0) */
    check_strides_1_3(DIMS(2, 3), STRIDES(3, 1), DIMS(4, 2, 3), "");
    check_strides_1_3(DIMS(2, 3), STRIDES(3, 1), DIMS(2, 3), "");
    check_strides_1_3(DIMS(1, 3), STRIDES(3, 1), DIMS(5, 4, 3), "");
    check_strides_1_3(DIMS(3), STRIDES(1), DIMS(2, 4), "");    /* cannot */
    check_strides_1_3(DIMS(2, 3), STRIDES(3, 1), DIMS(3), ""); /* broadcasting never shrinks */
    check_strides_1_3(DIMS(2, 1), STRIDES(1, 1), DIMS(1, 3), "");
}
END_TEST

START_TEST(test_1_3_strided_sources) {
    /* the source may itself be a view: a transposed (3,1) reads with strides (1,3), an
     * offset view of every other element with stride 2, an expanded one with stride 0 */
    check_strides_1_3(DIMS(3, 1), STRIDES(1, 3), DIMS(2, 3, 4), "");
    check_strides_1_3(DIMS(4), STRIDES(2), DIMS(3, 4), "");
    check_strides_1_3(DIMS(2, 4), STRIDES(0, 1), DIMS(3, 2, 4), "");
    check_strides_1_3(DIMS(3, 2), STRIDES(-2, 1), DIMS(3, 2), "");
    check_strides_1_3(DIMS(3, 1, 2), STRIDES(2, 7, 1), DIMS(2, 1, 4, 1, 3, 5, 2), ""); /* rank 7 */
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 13);
    char context[96];
    for (int trial = 0; trial < 300; trial++) {
        int64_t target[TENSOR_MAX_RANK], src[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
        int target_rank = (int)rng_int(&rng, 0, TENSOR_MAX_RANK), src_rank = (int)rng_int(&rng, 0, target_rank);
        random_shape(&rng, target_rank, 0, 4, target);
        for (int d = 0; d < src_rank; d++) {
            int64_t t = target[target_rank - src_rank + d];
            src[d] = rng_int(&rng, 0, 3) == 0 ? 1 : rng_int(&rng, 0, 5) == 0 ? t + 1 : t;
            strides[d] = rng_int(&rng, -6, 12);
        }
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_strides_1_3(src, src_rank, strides, target, target_rank, context);
    }
}
END_TEST

/* ==== 1.4 broadcast_map ================================================================== */

static void probe_1_4(void) {
    int64_t map[6];
    ex1_4_broadcast_map(DIMS(2, 3), DIMS(3), map);
}

/* The usual mistakes, each a map made the wrong way, and what to say when an answer is that map. */
enum { KEEPS_INDEX, FROM_LEFT, TARGET_DIMS, MISTAKES_1_4 };
static const char *const mistake_1_4[MISTAKES_1_4] = {
    [KEEPS_INDEX] = "this is the map that keeps the target's index along src's size-1 dims: a dim of size 1 has only "
                    "index 0, and every position of target reads that one",
    [FROM_LEFT] = "this is the map of src's dims lined up with target's first dims: line them up from the right, src "
                  "dim d with target dim d + (target_rank - src_rank)",
    [TARGET_DIMS] =
        "this is the map whose source index was raveled with target's dims: map holds flat indices of src, so "
        "ravel it with src's dims (s = s * src[d] + i)",
};

static void mistaken_map_1_4(int mistake, const int64_t *target, int target_rank, const int64_t *src, int src_rank,
                             int64_t *map) {
    int offset = mistake == FROM_LEFT ? 0 : target_rank - src_rank;
    for (int64_t t = 0; t < shape_numel(target, target_rank); t++) {
        int64_t index[TENSOR_MAX_RANK], s = 0;
        unravel_index(t, target, target_rank, index);
        for (int d = 0; d < src_rank; d++)
            s = s * (mistake == TARGET_DIMS ? target[d + offset] : src[d]) +
                (src[d] == 1 && mistake != KEEPS_INDEX ? 0 : index[d + offset]);
        map[t] = s;
    }
}

static void check_map_1_4(const int64_t *target, int target_rank, const int64_t *src, int src_rank,
                          const char *context) {
    int64_t n = shape_numel(target, target_rank);
    int64_t *want = malloc((size_t)(n + OUTPUT_GUARD) * sizeof *want),
            *got = malloc((size_t)(n + OUTPUT_GUARD) * sizeof *got);
    ck_assert(want && got);
    for (int64_t t = 0; t < n + OUTPUT_GUARD; t++) got[t] = UNWRITTEN; /* map, then a guard region behind it */
    ck_assert_int_eq(broadcast_map(target, target_rank, src, src_rank, want), 0);
    guard_hint(got, (size_t)(n + OUTPUT_GUARD) * sizeof *got);
    ex1_4_broadcast_map(target, target_rank, src, src_rank, got);
    char st[SHAPE_STR_MAX], ss[SHAPE_STR_MAX], g[512], w[512];
    for (int64_t t = 0; t < n; t++) {
        if (got[t] != want[t]) {
            int64_t index[TENSOR_MAX_RANK];
            char idx[SHAPE_STR_MAX];
            unravel_index(t, target, target_rank, index);
            long long got_t = got[t], want_t = want[t];
            format_ints(got, n, g, sizeof g);
            format_ints(want, n, w, sizeof w);
            const char *because = ""; /* want is printed: its memory now holds each mistaken map in turn */
            for (int mistake = 0; mistake < MISTAKES_1_4 && !*because; mistake++) {
                mistaken_map_1_4(mistake, target, target_rank, src, src_rank, want);
                if (memcmp(want, got, (size_t)n * sizeof *got) == 0) because = mistake_1_4[mistake];
            }
            free(want), free(got);
            char value[64];
            if (got_t == UNWRITTEN)
                snprintf(value, sizeof value, "was never written (it still holds %d from before the call)", UNWRITTEN);
            else snprintf(value, sizeof value, "is %lld", got_t);
            ck_abort_msg("exercise 1.4%s: map for %s -> %s: map[%lld] (target index %s) %s, expected %lld\n"
                         "    got      %s\n    expected %s%s%s",
                         context, shape_format(src, src_rank, ss, sizeof ss),
                         shape_format(target, target_rank, st, sizeof st), (long long)t,
                         shape_format(index, target_rank, idx, sizeof idx), value, want_t, g, w,
                         *because ? "\n    " : "", because);
        }
    }
    bool past_end = false;
    for (int64_t t = n; t < n + OUTPUT_GUARD; t++) past_end |= got[t] != UNWRITTEN;
    free(want), free(got);
    ck_assert_msg(!past_end, "exercise 1.4%s: wrote past the end of map for %s -> %s (map has %lld entries)", context,
                  shape_format(src, src_rank, ss, sizeof ss), shape_format(target, target_rank, st, sizeof st),
                  (long long)n);
}

START_TEST(test_1_4_chapter_table) {
    check_map_1_4(DIMS(2, 3), DIMS(3), "");    /* the chapter's table: 0 1 2 0 1 2 */
    check_map_1_4(DIMS(2, 3), DIMS(2, 1), ""); /* 0 0 0 1 1 1 */
    check_map_1_4(DIMS(2, 3), DIMS(2, 3), ""); /* the identity */
    check_map_1_4(DIMS(2, 3), NULL, 0, "");    /* a scalar: all 0 */
    check_map_1_4(DIMS(2, 4, 3), DIMS(4, 1), "");
    check_map_1_4(DIMS(2, 0, 3), DIMS(3), "");
}
END_TEST

START_TEST(test_1_4_random_shapes) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 14);
    char context[96];
    for (int trial = 0; trial < 200; trial++) {
        int64_t target[6], src[6];
        int target_rank = (int)rng_int(&rng, 0, 6), src_rank = (int)rng_int(&rng, 0, target_rank);
        random_shape(&rng, target_rank, 1, 3, target);
        for (int d = 0; d < src_rank; d++) src[d] = rng_int(&rng, 0, 1) ? 1 : target[target_rank - src_rank + d];
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_map_1_4(target, target_rank, src, src_rank, context);
    }
}
END_TEST

/* ==== 1.5 sum_to_shape =================================================================== */

static void probe_1_5(void) {
    float grad[6] = {1, 1, 1, 1, 1, 1}, out[3];
    ex1_5_sum_to_shape(grad, DIMS(2, 3), out, DIMS(3));
}

static void check_sum_1_5(const float *grad, const int64_t *shape, int rank, const int64_t *out_shape, int out_rank,
                          const char *context) {
    int64_t n = shape_numel(shape, rank), n_out = shape_numel(out_shape, out_rank);
    grad = guarded_input(grad, n); /* nan around it: a read outside it shows, in make test and graded alike */
    Tensor *g = EXPECT_OK(tensor_from(test_ctx, shape, rank, grad, n));
    Tensor *want = EXPECT_OK(tensor_sum_to_shape(g, out_shape, out_rank));
    float *got = guarded_buffer(n_out, 12345.0f); /* garbage the student must overwrite */
    ex1_5_sum_to_shape(grad, shape, rank, got, out_shape, out_rank);
    char what[768], s[SHAPE_STR_MAX], so[SHAPE_STR_MAX], values[512];
    snprintf(what, sizeof what, "exercise 1.5%s: gradient of shape %s, %s, summed onto %s", context,
             shape_format(shape, rank, s, sizeof s), format_literal(grad, shape, rank, values, sizeof values),
             shape_format(out_shape, out_rank, so, sizeof so));
    /* the usual mistakes: = for += (each element keeps the last gradient that reads it), the mean for the sum, and
     * out[t % numel(out)] (as if out were repeated end to end in grad, which is right only for missing leading dims) */
    int64_t *map = malloc((size_t)(n > 0 ? n : 1) * sizeof *map);
    size_t out_bytes = (size_t)(n_out > 0 ? n_out : 1) * sizeof(float);
    float *last = malloc(out_bytes), *tiled = malloc(out_bytes);
    ck_assert(map && last && tiled);
    ck_assert(n == 0 || n_out > 0); /* src broadcasts to the gradient's shape */
    ck_assert_int_eq(broadcast_map(shape, rank, out_shape, out_rank, map), 0);
    for (int64_t j = 0; j < n_out; j++) last[j] = tiled[j] = 0.0f;
    for (int64_t t = 0; t < n; t++) last[map[t]] = grad[t], tiled[t % n_out] += grad[t];
    bool wrong = n > n_out && !values_close(got, tensor_data(want), n_out, 1e-5f), assigned = wrong, averaged = wrong;
    for (int64_t j = 0; j < n_out; j++) {
        float sum = tensor_data(want)[j];
        assigned = assigned && got[j] == last[j];
        averaged = averaged && fabsf(got[j] * ((float)n / (float)n_out) - sum) <= 1e-4f * (1 + fabsf(sum));
    }
    bool repeated =
        wrong && values_close(got, tiled, n_out, 1e-5f) && !values_close(tiled, tensor_data(want), n_out, 1e-5f);
    free(map), free(last), free(tiled);
    ck_assert_msg(
        !assigned || !averaged,
        "%s: each element of out holds the last gradient that reads it, which here is "
        "also the mean of the gradients that read it, where it should hold their sum: add each grad[t] into its "
        "element (+=) instead of writing it with =, and do not divide the sum",
        what);
    ck_assert_msg(!assigned,
                  "%s: each element of out holds only the last gradient that reads it, not their sum: add each "
                  "grad[t] into its element (+=) instead of writing it with =",
                  what);
    ck_assert_msg(!averaged,
                  "%s: each element of out holds the mean of the gradients that read it, not their sum: do not "
                  "divide by the number of copies (%lld); each copy's gradient adds to its source element",
                  what, (long long)(n / n_out));
    ck_assert_msg(
        !repeated,
        "%s: each out[j] is the sum of grad[t] over every t with t %% numel(out) == j, as if out "
        "were repeated end to end in grad. That is right only when the dims out_shape lacks are all on the "
        "left; here out_shape has a size-1 dim that was stretched. Find the element each grad[t] reads with the "
        "index map (1.4)",
        what);
    expect_read_inside(got, tensor_data(want), n_out, what);
    expect_sums(got, tensor_data(want), n_out, n_out > 0 ? n / n_out : 0, 12345.0f, 1e-5f, what);
    EXPECT_OUTPUT(got, n_out, 12345.0f, tensor_data(want), 1e-5f, what);
}

START_TEST(test_1_5_examples) {
    const float ones[6] = {1, 1, 1, 1, 1, 1}, g[6] = {1, 2, 3, 4, 5, 6};
    check_sum_1_5(ones, DIMS(2, 3), DIMS(3), "");    /* the chapter: b.grad = [2, 2, 2] */
    check_sum_1_5(g, DIMS(2, 3), DIMS(3), "");       /* column sums [5, 7, 9] */
    check_sum_1_5(g, DIMS(2, 3), DIMS(1, 3), "");    /* the same, keeping the 1 */
    check_sum_1_5(g, DIMS(2, 3), DIMS(2, 1), "");    /* row sums [6, 15] */
    check_sum_1_5(g, DIMS(2, 3), NULL, 0, "");       /* everything: 21 */
    check_sum_1_5(g, DIMS(2, 3), DIMS(2, 3), "");    /* nothing was broadcast */
    check_sum_1_5(g, DIMS(2, 1, 3), DIMS(1, 3), ""); /* a missing dim and a size-1 dim */
    check_sum_1_5(g, DIMS(0, 3), DIMS(3), "");       /* no rows: zeros */
    /* gradients are rarely whole numbers: a sum kept in an int passes every case above */
    const float fractions[6] = {0.5f, 1.25f, -2.75f, 3.5f, 0.125f, -0.375f},
                tenths[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
    check_sum_1_5(fractions, DIMS(2, 3), DIMS(3), "");    /* [4, 1.375, -3.125] */
    check_sum_1_5(fractions, DIMS(2, 3), DIMS(2, 1), ""); /* [-1, 3.25] */
    check_sum_1_5(tenths, DIMS(3, 2), NULL, 0, "");       /* 2.1 */
}
END_TEST

START_TEST(test_1_5_random_shapes) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 15);
    char context[96];
    float grad[729];
    for (int trial = 0; trial < 200; trial++) {
        int64_t shape[6], out_shape[6];
        int rank = (int)rng_int(&rng, 0, 6), out_rank = (int)rng_int(&rng, 0, rank);
        random_shape(&rng, rank, 1, 3, shape);
        for (int d = 0; d < out_rank; d++) out_shape[d] = rng_int(&rng, 0, 1) ? 1 : shape[rank - out_rank + d];
        /* quarters: their sums are exact in float whatever the order of the additions */
        for (int64_t i = 0; i < shape_numel(shape, rank); i++) grad[i] = 0.25f * (float)rng_int(&rng, -36, 36);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_sum_1_5(grad, shape, rank, out_shape, out_rank, context);
    }
}
END_TEST

int main(int argc, char **argv) {
    /* clang-format off */
    const Exercise exercises[] = {
        {"1.1", "broadcast [2,3] + [1,3] by hand", 2, probe_1_1, {test_1_1_forward, test_1_1_backward}},
        {"1.2", "broadcast_shapes: numpy's rule", 3, probe_1_2,
         {test_1_2_chapter_pairs, test_1_2_edge_cases, test_1_2_random_pairs}},
        {"1.3", "broadcast_strides: the stride-0 view", 3, probe_1_3, {test_1_3_examples, test_1_3_strided_sources}},
        {"1.4", "broadcast_map: the chapter's index map", 3, probe_1_4,
         {test_1_4_chapter_table, test_1_4_random_shapes}},
        {"1.5", "sum_to_shape: the gradient summed back", 4, probe_1_5, {test_1_5_examples, test_1_5_random_shapes}},
    };
    /* clang-format on */
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
