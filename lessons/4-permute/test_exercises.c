/*
 * test_exercises.c - checks lesson 4's exercises (exercises.c, or solutions.c for the
 * reference run). Expected answers come from the chapter and from the library (permute.c and
 * the core's tensor_contiguous), never from the file under test. The exercise table at the
 * bottom declares each exercise's id, title and points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "exercises.h"
#include "harness.h"
#include "permute.h"

/* What an output holds before the call (no answer has it), so that a message can tell a value
 * the exercise wrote from one it never wrote. */
enum { UNWRITTEN = -99 };
static const float UNWRITTEN_FLOAT = -12345.0f;

/* A random permutation of 0..n-1 (Fisher-Yates). */
static void random_permutation(Rng *rng, int n, int *dims) {
    for (int i = 0; i < n; i++) dims[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_int(rng, 0, i), t = dims[i];
        dims[i] = dims[j];
        dims[j] = t;
    }
}

/* "(1,0,2)": axes written the way shapes are */
static char *format_axes(const int *dims, int n, char *buf, size_t size) {
    int64_t wide[TENSOR_MAX_RANK];
    for (int i = 0; i < n; i++) wide[i] = dims[i];
    return shape_format(wide, n, buf, size);
}

/* ==== 4.1 by hand ======================================================================== */

static void probe_4_1(void) {
    PermuteByHand answer = {0};
    ex4_1_permute_by_hand(&answer);
}

/* An answer whose every field holds UNWRITTEN: a field the exercise leaves alone shows. */
static PermuteByHand unwritten_4_1(void) {
    PermuteByHand a;
    a.y_shape[0] = a.y_shape[1] = UNWRITTEN;
    for (int i = 0; i < 6; i++) a.y[i] = a.grad_sum[i] = a.grad_weighted[i] = UNWRITTEN_FLOAT;
    return a;
}

/* A by-hand answer gets a hint, not the number, when it is wrong. */
static void check_floats_4_1(const float *got, const float *want, int n, const char *field, const char *hint) {
    char g[256];
    for (int i = 0; i < n; i++) {
        ck_assert_msg(got[i] != UNWRITTEN_FLOAT,
                      "exercise 4.1: %s[%d] was never written (it still holds %g, which the test "
                      "put there before the call)\n    your %s: %s\n    %s",
                      field, i, (double)UNWRITTEN_FLOAT, field, format_floats(got, n, g, sizeof g), hint);
        ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-5f,
                      "exercise 4.1: %s[%d] is %g, which is not right\n    your %s: %s\n    %s", field, i,
                      (double)got[i], field, format_floats(got, n, g, sizeof g), hint);
    }
}

/* Fails with `message` when a by-hand field holds exactly `pattern`, the answer a usual
 * mistake gives: the student reads what went wrong, still without the number. */
static void check_not_4_1(const float *got, const float *pattern, int n, const char *field, const char *message) {
    char g[256];
    ck_assert_msg(memcmp(got, pattern, (size_t)n * sizeof *got) != 0, "exercise 4.1: your %s, %s, %s", field,
                  format_floats(got, n, g, sizeof g), message);
}

START_TEST(test_4_1_forward) {
    PermuteByHand got = unwritten_4_1();
    ex4_1_permute_by_hand(&got);
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *y = EXPECT_OK(tensor_contiguous(tensor_permute(x, AXES(1, 0))));
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(got.y_shape[i] != UNWRITTEN,
                      "exercise 4.1: y_shape[%d] was never written (it still holds %d, which "
                      "the test put there before the call)",
                      i, UNWRITTEN);
        ck_assert_msg(got.y_shape[i] == y->shape[i],
                      "exercise 4.1: y_shape[%d] is %lld, which is not right: output dim i of a permute is input dim "
                      "dims[i] (docs 5.1)",
                      i, (long long)got.y_shape[i]);
    }
    check_not_4_1(got.y, tensor_data(x), 6, "y",
                  "is x's elements in x's order: that is a reshape of x to (3, 2), "
                  "which moves no element. A permute does: y[i][j] = x[j][i], so y's rows are x's columns (docs 5.1)");
    check_floats_4_1(got.y, tensor_data(y), 6, "y", "expected y[i][j] = x[j][i], in row-major order (docs 5.1)");
}
END_TEST

START_TEST(test_4_1_backward) {
    PermuteByHand got = unwritten_4_1();
    ex4_1_permute_by_hand(&got);
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *y = tensor_permute(x, AXES(1, 0));
    ck_assert_int_eq(tensor_backward(tensor_sum(y)), 0);
    check_floats_4_1(got.grad_sum, tensor_data(tensor_grad(x)), 6, "grad_sum",
                     "expected d sum(y) / d x: how many elements of y does each element of x become? (docs 5.4)");
    tensor_zero_grad(x);
    Tensor *w = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(w, y))), 0);
    check_not_4_1(got.grad_weighted, tensor_data(w), 6, "grad_weighted",
                  "is w as it is, laid out like y (3, 2): that is "
                  "d loss / d y. d loss / d x is laid out like x (2, 3): x[i][j] became y[j][i], so it gets w[j][i], "
                  "w permuted back (docs 5.4)");
    check_floats_4_1(
        got.grad_weighted, tensor_data(tensor_grad(x)), 6, "grad_weighted",
        "expected d sum(w * y) / d x: x[i][j] became y[j][i], so it gets the weight w has there (docs 5.4)");
}
END_TEST

/* ==== 4.2 inverse permutation ============================================================ */

static void probe_4_2(void) {
    int inv[3];
    ex4_2_inverse_permutation((const int[]){1, 2, 0}, 3, inv);
}

static void check_inverse(const int *dims, int n, const char *context) {
    int got[TENSOR_MAX_RANK + OUTPUT_GUARD], want[TENSOR_MAX_RANK];
    for (int i = 0; i < n + OUTPUT_GUARD; i++) got[i] = UNWRITTEN;
    inverse_permutation(dims, n, want);
    guard_hint(got, (size_t)(n + OUTPUT_GUARD) * sizeof *got);
    ex4_2_inverse_permutation(dims, n, got);
    char ds[128], gs[128], ws[128];
    for (int i = n; i < n + OUTPUT_GUARD; i++)
        ck_assert_msg(got[i] == UNWRITTEN, "exercise 4.2%s: for dims %s, wrote past the end of inv (it has %d entries)",
                      context, format_axes(dims, n, ds, sizeof ds), n);
    /* inv[i] = dims[i]: a copy, which undoes dims only when dims swaps pairs */
    bool copied =
        n > 0 && memcmp(got, dims, (size_t)n * sizeof *got) == 0 && memcmp(dims, want, (size_t)n * sizeof *want) != 0;
    ck_assert_msg(
        !copied,
        "exercise 4.2%s: the inverse of %s: inv is dims itself, %s, expected %s. A copy undoes dims "
        "only when dims just swaps pairs of dims. Output dim i came from input dim dims[i], so the inverse sends "
        "dims[i] back to i: inv[dims[i]] = i, not inv[i] = dims[i]",
        context, format_axes(dims, n, ds, sizeof ds), format_axes(got, n, gs, sizeof gs),
        format_axes(want, n, ws, sizeof ws));
    for (int i = 0; i < n; i++) {
        char value[64];
        if (got[i] == UNWRITTEN)
            snprintf(value, sizeof value, "was never written (it still holds %d from before the call)", UNWRITTEN);
        else snprintf(value, sizeof value, "is %d", got[i]);
        ck_assert_msg(got[i] == want[i],
                      "exercise 4.2%s: the inverse of %s: inv[%d] %s, expected %d\n    got      %s\n"
                      "    expected %s",
                      context, format_axes(dims, n, ds, sizeof ds), i, value, want[i],
                      format_axes(got, n, gs, sizeof gs), format_axes(want, n, ws, sizeof ws));
    }
}

START_TEST(test_4_2_examples) {
    check_inverse((const int[]){1, 0}, 2, "");
    check_inverse((const int[]){0, 2, 1}, 3, "");
    check_inverse((const int[]){1, 2, 0}, 3, " (a rotation: its inverse is the other rotation)");
    check_inverse((const int[]){0}, 1, "");
    check_inverse(NULL, 0, " (rank 0)");
}
END_TEST

START_TEST(test_4_2_random) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 42);
    char context[96];
    int dims[TENSOR_MAX_RANK];
    for (int trial = 0; trial < 200; trial++) {
        int n = (int)rng_int(&rng, 1, TENSOR_MAX_RANK);
        random_permutation(&rng, n, dims);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_inverse(dims, n, context);
    }
}
END_TEST

/* ==== 4.3 the permuted view ============================================================== */

static void probe_4_3(void) {
    int64_t shape[2], strides[2];
    ex4_3_permute_view(DIMS(2, 3), STRIDES(3, 1), (const int[]){1, 0}, shape, strides);
}

static void check_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims, const char *context) {
    int64_t got_shape[TENSOR_MAX_RANK + OUTPUT_GUARD], got_strides[TENSOR_MAX_RANK + OUTPUT_GUARD];
    for (int i = 0; i < TENSOR_MAX_RANK + OUTPUT_GUARD; i++) got_shape[i] = got_strides[i] = UNWRITTEN;
    guard_hint(got_shape, sizeof got_shape);
    guard_hint(got_strides, sizeof got_strides);
    ex4_3_permute_view(shape, rank, strides, dims, got_shape, got_strides);
    /* the library's view of a base big enough for these strides */
    int64_t reach = 1;
    for (int d = 0; d < rank; d++) reach += (shape[d] - 1) * (strides[d] > 0 ? strides[d] : -strides[d]);
    Tensor *base = tensor_zeros(test_ctx, DIMS(reach));
    int64_t offset = 0;
    for (int d = 0; d < rank; d++)
        if (strides[d] < 0) offset -= (shape[d] - 1) * strides[d];
    Tensor *view =
        EXPECT_OK(tensor_permute(EXPECT_OK(tensor_as_strided(base, shape, rank, strides, offset)), dims, rank));
    char s[SHAPE_STR_MAX], st[SHAPE_STR_MAX], ds[128], g1[SHAPE_STR_MAX], g2[SHAPE_STR_MAX], w1[SHAPE_STR_MAX],
        w2[SHAPE_STR_MAX];
    for (int i = rank; i < rank + OUTPUT_GUARD; i++)
        ck_assert_msg(got_shape[i] == UNWRITTEN && got_strides[i] == UNWRITTEN,
                      "exercise 4.3%s: wrote past the end of out_shape or "
                      "out_strides (they have %d entries)",
                      context, rank);
    for (int i = 0; i < rank; i++)
        ck_assert_msg(
            got_shape[i] != UNWRITTEN && got_strides[i] != UNWRITTEN,
            "exercise 4.3%s: shape %s with strides %s "
            "permuted by %s: out_%s[%d] was never written (it still holds %d, which the test put there before the "
            "call)",
            context, shape_format(shape, rank, s, sizeof s), shape_format(strides, rank, st, sizeof st),
            format_axes(dims, rank, ds, sizeof ds), got_shape[i] == UNWRITTEN ? "shape" : "strides", i, UNWRITTEN);
    bool shape_right = shape_equal(got_shape, rank, view->shape, rank);
    bool same = shape_right && shape_equal(got_strides, rank, view->strides, rank);
    if (same) return;
    /* the usual mistakes, each told by what it gives: the strides left in their old order,
     * the strides a fresh contiguous tensor would have, and both moved the inverse way */
    int64_t contiguous[TENSOR_MAX_RANK], inverse_shape[TENSOR_MAX_RANK], inverse_strides[TENSOR_MAX_RANK], step = 1;
    for (int i = rank - 1; i >= 0; i--) {
        contiguous[i] = step;
        step *= view->shape[i];
    }
    for (int i = 0; i < rank; i++) {
        inverse_shape[dims[i]] = shape[i];
        inverse_strides[dims[i]] = strides[i];
    }
    char head[1536];
    snprintf(head, sizeof head,
             "exercise 4.3%s: shape %s with strides %s permuted by %s gave shape %s, strides %s; expected "
             "shape %s, strides %s",
             context, shape_format(shape, rank, s, sizeof s), shape_format(strides, rank, st, sizeof st),
             format_axes(dims, rank, ds, sizeof ds), shape_format(got_shape, rank, g1, sizeof g1),
             shape_format(got_strides, rank, g2, sizeof g2), shape_format(view->shape, rank, w1, sizeof w1),
             shape_format(view->strides, rank, w2, sizeof w2));
    ck_assert_msg(!shape_right || !shape_equal(got_strides, rank, strides, rank),
                  "%s. out_shape is right, but out_strides "
                  "are the input's strides in their old order: a dim's stride must move with its size. Output dim i is "
                  "input dim dims[i], so out_strides[i] = strides[dims[i]], just as out_shape[i] = shape[dims[i]]",
                  head);
    ck_assert_msg(
        !shape_right || !shape_equal(got_strides, rank, contiguous, rank),
        "%s. out_shape is right, but "
        "out_strides are the strides of a new contiguous tensor of that shape. A permute is a view of the same "
        "storage and moves no data, so each dim keeps the stride it had: out_strides[i] = strides[dims[i]]",
        head);
    ck_assert_msg(!shape_equal(got_shape, rank, inverse_shape, rank) ||
                      !shape_equal(got_strides, rank, inverse_strides, rank),
                  "%s. That is the permute by the inverse of dims: input dim i was sent to output dim dims[i] "
                  "(out[dims[i]] = in[i]), but output dim i is input dim dims[i]: out_shape[i] = shape[dims[i]] and "
                  "out_strides[i] = strides[dims[i]]",
                  head);
    ck_abort_msg("exercise 4.3%s: shape %s with strides %s permuted by %s\n    got      shape %s, strides %s\n"
                 "    expected shape %s, strides %s",
                 context, shape_format(shape, rank, s, sizeof s), shape_format(strides, rank, st, sizeof st),
                 format_axes(dims, rank, ds, sizeof ds), shape_format(got_shape, rank, g1, sizeof g1),
                 shape_format(got_strides, rank, g2, sizeof g2), shape_format(view->shape, rank, w1, sizeof w1),
                 shape_format(view->strides, rank, w2, sizeof w2));
}

START_TEST(test_4_3_chapter) {
    check_view(DIMS(2, 3), STRIDES(3, 1), (const int[]){1, 0}, " (the chapter: (3,2) with strides (1,3))");
    check_view(DIMS(2, 3, 4), STRIDES(12, 4, 1), (const int[]){0, 2, 1}, "");
    check_view(DIMS(2, 3, 4), STRIDES(12, 4, 1), (const int[]){2, 0, 1}, "");
    check_view(DIMS(5), STRIDES(1), (const int[]){0}, " (rank 1: nothing moves)");
    check_view(NULL, 0, NULL, NULL, " (rank 0: nothing at all)");
}
END_TEST

START_TEST(test_4_3_random_views) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 43);
    char context[96];
    for (int trial = 0; trial < 200; trial++) {
        int rank = (int)rng_int(&rng, 1, TENSOR_MAX_RANK), dims[TENSOR_MAX_RANK];
        int64_t shape[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
        random_shape(&rng, rank, 1, 3, shape);
        for (int d = 0; d < rank; d++) strides[d] = rng_int(&rng, -6, 6); /* any view: transposed, flipped, expanded */
        random_permutation(&rng, rank, dims);
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_view(shape, rank, strides, dims, context);
    }
}
END_TEST

/* ==== 4.4 the contiguous copy ============================================================= */

static void probe_4_4(void) {
    float out[6];
    ex4_4_contiguous_copy((const float[]){1, 2, 3, 4, 5, 6}, DIMS(3, 2), STRIDES(1, 3), 0, out);
}

/* data[k] of the view's storage, or nan (what the guard around it holds) outside it */
static float storage_at(const Tensor *view, int64_t k) {
    return k >= 0 && k < view->storage->size ? view->storage->data[k] : NAN;
}

/* The view's elements as a walk from `offset` finds them, the last index moving fastest or,
 * with first_fastest, the first. */
static void walk_view(const Tensor *view, int64_t offset, bool first_fastest, float *out) {
    int64_t n = tensor_numel(view), index[TENSOR_MAX_RANK] = {0};
    for (int64_t t = 0; t < n; t++) {
        out[t] = storage_at(view, offset);
        for (int k = 0; k < view->rank; k++) {
            int d = first_fastest ? k : view->rank - 1 - k;
            offset += view->strides[d];
            if (++index[d] < view->shape[d]) break;
            offset -= view->strides[d] * view->shape[d];
            index[d] = 0;
        }
    }
}

static void check_copy(const Tensor *view, const char *context) {
    Tensor *want = EXPECT_OK(tensor_contiguous((Tensor *)view));
    int64_t n = tensor_numel(view);
    float *got = guarded_buffer(n, -12345.0f);
    /* the storage, copied between runs of nan: a read outside it gives nan, in make test and
     * graded alike (and never reads the library's neighbouring memory) */
    const float *data = guarded_storage(view);
    ex4_4_contiguous_copy(data, view->shape, view->rank, view->strides, view->offset, got);
    char what[512], s[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
    snprintf(what, sizeof what, "exercise 4.4%s: the view with shape %s, strides %s, offset %lld", context,
             shape_format(view->shape, view->rank, s, sizeof s), shape_format(view->strides, view->rank, st, sizeof st),
             (long long)view->offset);
    /* the usual mistakes, each told by the values it gives: the storage read in order (the
     * strides ignored), the walk started at data[0] (the offset ignored), the first index
     * bumped fastest; a position outside the storage reads the guard's nan */
    float *in_order = malloc((size_t)(n + 1) * sizeof *in_order), *from_0 = malloc((size_t)(n + 1) * sizeof *from_0),
          *first_fastest = malloc((size_t)(n + 1) * sizeof *first_fastest);
    ck_assert(in_order && from_0 && first_fastest);
    for (int64_t i = 0; i < n; i++) in_order[i] = storage_at(view, view->offset + i);
    walk_view(view, 0, false, from_0);
    walk_view(view, view->offset, true, first_fastest);
    bool right = values_close(got, tensor_data(want), n, 0);
    ck_assert_msg(
        right || !values_close(got, in_order, n, 0),
        "%s: out holds data[offset], data[offset + 1], ... in "
        "storage order, but this view is not contiguous: its element (i_0, i_1, ...) is data[offset + i_0 * "
        "strides[0] + i_1 * strides[1] + ...]. Keep that offset as you walk, moving it by strides[d] when index "
        "d moves",
        what);
    ck_assert_msg(right || view->offset == 0 || !values_close(got, from_0, n, 0),
                  "%s: out is the view read from data[0], "
                  "as if the offset were 0: the view's first element is data[offset], so start the walk there",
                  what);
    ck_assert_msg(
        right || !values_close(got, first_fastest, n, 0),
        "%s: out holds the elements with the first index moving "
        "fastest. Row-major order moves the last index fastest: bump index rank - 1 first, and carry into the dim "
        "before it when it reaches its size",
        what);
    free(in_order), free(from_0), free(first_fastest);
    /* a value found nowhere in the storage was read from outside it */
    for (int64_t i = 0; i < n; i++) {
        if (got[i] == tensor_data(want)[i] || got[i] == -12345.0f) continue;
        bool in_storage = false;
        for (int64_t k = 0; k < view->storage->size && !in_storage; k++) in_storage = got[i] == view->storage->data[k];
        ck_assert_msg(in_storage,
                      "%s: element %lld is %g, expected %g; %g is nowhere in data, so it was read from outside "
                      "it (the offset left the storage: SANITIZE=1 names the line)",
                      what, (long long)i, (double)got[i], (double)tensor_data(want)[i], (double)got[i]);
        break;
    }
    EXPECT_OUTPUT(got, n, -12345.0f, tensor_data(want), 0, what);
}

START_TEST(test_4_4_chapter_and_views) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    /* the contiguous view first: a walk with the first index fastest fails it, one that ignores
     * the strides does not, so the permute after it tells the two apart */
    check_copy(x, " (already contiguous)");
    check_copy(tensor_permute(x, AXES(1, 0)), " (the chapter's permute: [1, 4, 2, 5, 3, 6])");
    check_copy(tensor_expand(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)), DIMS(2, 3)), " (stride 0)");
    check_copy(tensor_as_strided(x, DIMS(2), STRIDES(3), 2), " (an offset: the view starts at data[offset])");
    check_copy(tensor_as_strided(x, DIMS(6), STRIDES(-1), 5), " (a negative stride, from offset 5)");
    check_copy(tensor_scalar(test_ctx, 7), " (rank 0: one element)");
    check_copy(tensor_zeros(test_ctx, DIMS(2, 0, 3)), " (no elements)");
}
END_TEST

START_TEST(test_4_4_random_views) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 44);
    char context[96];
    for (int trial = 0; trial < 200; trial++) {
        int rank = (int)rng_int(&rng, 1, TENSOR_MAX_RANK), dims[TENSOR_MAX_RANK];
        int64_t shape[TENSOR_MAX_RANK];
        random_shape(&rng, rank, 1, rank > 6 ? 2 : 3, shape);
        Tensor *x = random_tensor(test_ctx, &rng, shape, rank, -9, 9);
        if (rng_int(&rng, 0, 1)) { /* sometimes walk the last dim backwards, from an offset */
            int64_t strides[TENSOR_MAX_RANK];
            memcpy(strides, x->strides, (size_t)rank * sizeof *strides);
            strides[rank - 1] = -1;
            x = tensor_as_strided(x, shape, rank, strides, shape[rank - 1] - 1);
        }
        random_permutation(&rng, rank, dims);
        Tensor *view = tensor_permute(x, dims, rank);
        if (rng_int(&rng, 0, 1)) { /* sometimes also expand a size-1 dim: a permuted, stride-0 view */
            int64_t wide[TENSOR_MAX_RANK];
            memcpy(wide, view->shape, (size_t)rank * sizeof *wide);
            for (int d = 0; d < rank; d++)
                if (wide[d] == 1) wide[d] = 3;
            view = tensor_expand(view, wide, rank);
        }
        snprintf(context, sizeof context, " (random case %d, COURSE_SEED=%llu)", trial, (unsigned long long)seed);
        check_copy(EXPECT_OK(view), context);
    }
}
END_TEST

int main(int argc, char **argv) {
    /* clang-format off */
    const Exercise exercises[] = {
        {"4.1", "permute then sum, by hand", 2, probe_4_1, {test_4_1_forward, test_4_1_backward}},
        {"4.2", "the inverse permutation", 2, probe_4_2, {test_4_2_examples, test_4_2_random}},
        {"4.3", "permute as a view: shape and strides", 3, probe_4_3, {test_4_3_chapter, test_4_3_random_views}},
        {"4.4", "the contiguous copy of any view", 4, probe_4_4, {test_4_4_chapter_and_views, test_4_4_random_views}},
    };
    /* clang-format on */
    return run_exercise_tests(argc, argv, exercises, (int)(sizeof exercises / sizeof exercises[0]));
}
