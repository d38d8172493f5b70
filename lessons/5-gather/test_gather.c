/*
 * test_gather.c - lesson 5's core tests. They mirror the chapter's section 6 (its
 * test_gather_rows: rows 0 and 2 of [[1,2],[3,4],[5,6]] are [1,2,5,6], and only those rows
 * get a gradient), then go past it: duplicate indices, no indices, every row unused,
 * out-of-range and negative indices, a table that is a view, batched indices, a gradient
 * check, and seeded random cases against a naive loop.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "gather.h"
#include "gradcheck.h"
#include "harness.h"
#include "permute.h"

/* ==== the chapter ======================================================================== */

START_TEST(test_gather_rows) {
    Tensor *table = tensor_requires_grad(tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *rows = EXPECT_OK(tensor_gather_rows(table, (const int64_t[]){0, 2}, 2));
    EXPECT_SHAPE(rows, DIMS(2, 2), "gather_rows of 2 indices");
    EXPECT_VALUES(rows, VALUES(1, 2, 5, 6), 0, "rows 0 and 2");
    ck_assert_int_eq(tensor_backward(tensor_sum(rows)), 0);
    EXPECT_VALUES(tensor_grad(table), VALUES(1, 1, 0, 0, 1, 1), 0, "only the rows gathered get a gradient");
}
END_TEST

START_TEST(test_duplicates_add) {
    /* indices [0, 0]: row 0 is read twice, so its gradient is 2 */
    Tensor *table = tensor_requires_grad(tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *rows = EXPECT_OK(tensor_gather_rows(table, (const int64_t[]){0, 0}, 2));
    EXPECT_VALUES(rows, VALUES(1, 2, 1, 2), 0, "row 0 twice");
    ck_assert_int_eq(tensor_backward(tensor_sum(rows)), 0);
    EXPECT_VALUES(tensor_grad(table), VALUES(2, 2, 0, 0, 0, 0), 0, "a row used twice gets two gradients, added");
    /* with weights, the two copies' weights add up */
    tensor_zero_grad(table);
    Tensor *out = tensor_gather_rows(table, (const int64_t[]){0, 0, 2}, 3);
    Tensor *w = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(w, out))), 0);
    EXPECT_VALUES(tensor_grad(table), VALUES(4, 6, 0, 0, 5, 6), 0, "weighted gradient with a duplicate");
}
END_TEST

START_TEST(test_no_indices_and_unused_rows) {
    Tensor *table = tensor_requires_grad(tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *none = EXPECT_OK(tensor_gather_rows(table, NULL, 0));
    EXPECT_SHAPE(none, DIMS(0, 2), "no indices");
    ck_assert_int_eq(tensor_backward(tensor_sum(none)), 0);
    EXPECT_VALUES(tensor_grad(table), VALUES(0, 0, 0, 0, 0, 0), 0, "no rows used: no gradient");
    /* a table with rows of length 0 */
    EXPECT_SHAPE(tensor_gather_rows(tensor_zeros(test_ctx, DIMS(3, 0)), (const int64_t[]){1, 2}, 2), DIMS(2, 0),
                 "rows of length 0");
}
END_TEST

START_TEST(test_bad_indices) {
    Tensor *table = tensor_zeros(test_ctx, DIMS(3, 2));
    tensor_clear_error();
    ck_assert_ptr_null(tensor_gather_rows(table, (const int64_t[]){0, 3}, 2));
    ck_assert_str_eq(tensor_error(),
                     "gather_rows: index 3 at position 1 is out of range for a table of 3 rows (valid: 0 to 2)");
    ck_assert_ptr_null(tensor_gather_rows(table, (const int64_t[]){-1, 0}, 2));
    ck_assert_str_eq(tensor_error(),
                     "gather_rows: index -1 at position 0 is out of range for a table of 3 rows (valid: 0 to 2)");
    ck_assert_ptr_null(tensor_gather_rows(table, (const int64_t[]){1, 1, INT64_MAX}, 3));
    EXPECT_ERROR("index 9223372036854775807 at position 2", "a huge index");
    ck_assert_ptr_null(tensor_gather_rows(tensor_zeros(test_ctx, DIMS(6)), (const int64_t[]){0}, 1));
    ck_assert_str_eq(tensor_error(), "gather_rows: the table must have shape (V, D), got (6,)");
    ck_assert_ptr_null(tensor_gather_rows(table, NULL, 2));
    ck_assert_str_eq(tensor_error(), "gather_rows: 2 indices given as NULL");
    ck_assert_ptr_null(tensor_gather_rows(table, (const int64_t[]){0}, -1));
    ck_assert_str_eq(tensor_error(), "gather_rows: -1 indices is not a count");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_gather_rows(NULL, (const int64_t[]){0}, 1));
    ck_assert_str_eq(tensor_error(), "gather_rows: input table is NULL");
    ck_assert_ptr_null(tensor_embedding(table, (const int64_t[]){0, 1, 2, 5, 0, 0}, DIMS(2, 3)));
    ck_assert_str_eq(tensor_error(),
                     "embedding: index 5 at position (1,0) is out of range for a table of 3 rows (valid: 0 to 2)");
    ck_assert_ptr_null(tensor_embedding(table, (const int64_t[]){0}, DIMS(INT64_MAX, 4)));
    ck_assert_str_eq(tensor_error(), "embedding: index shape (9223372036854775807,4) has too many elements");
    ck_assert_ptr_null(tensor_gather_rows(tensor_zeros(test_ctx, DIMS(0, 2)), (const int64_t[]){0}, 1));
    ck_assert_str_eq(tensor_error(),
                     "gather_rows: index 0 at position 0 is out of range for a table of 0 rows (it has no rows)");
}
END_TEST

/* ==== views and batches ================================================================== */

/* The walk-through's 6.5, the chapter's question 4: permute and gather_rows both compute
 * out[t] = in[map[t]], and both backwards are in.grad[map[t]] += g[t] over that map. */
static void expect_scatter_add(Tensor *in, const Tensor *out, const int64_t *map, const float *g, const char *what) {
    float want[64] = {0};
    for (int64_t t = 0; t < tensor_numel(out); t++) want[map[t]] += g[t];
    EXPECT_VALUES(tensor_grad(in), want, tensor_numel(in), 0, what);
}

START_TEST(test_question_four_one_rule) {
    float g[24];
    for (int t = 0; t < 24; t++) g[t] = (float)(t * 7 % 11) - 5.0f;
    /* permute (2,3,4) by (2,0,1): a one-to-one map */
    Tensor *x = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(2, 3, 4)));
    Tensor *y = EXPECT_OK(tensor_permute(x, AXES(2, 0, 1)));
    int64_t map[24], index[3];
    for (int64_t t = 0; t < 24; t++) {
        unravel_index(t, y->shape, y->rank, index);
        map[t] = y->offset + index[0] * y->strides[0] + index[1] * y->strides[1] + index[2] * y->strides[2];
    }
    ck_assert_int_eq(tensor_backward_from(y, tensor_from(test_ctx, DIMS(4, 2, 3), g, 24)), 0);
    expect_scatter_add(x, y, map, g, "permute's backward: x.grad[map[t]] += g[t]");
    /* gather_rows from a (4,3) table with rows repeated and one left out: a map with repeats */
    Tensor *table = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(4, 3)));
    const int64_t indices[5] = {3, 0, 3, 3, 1};
    Tensor *rows = EXPECT_OK(tensor_gather_rows(table, indices, 5));
    for (int64_t t = 0; t < 15; t++) map[t] = indices[t / 3] * 3 + t % 3;
    ck_assert_int_eq(tensor_backward_from(rows, tensor_from(test_ctx, DIMS(5, 3), g, 15)), 0);
    expect_scatter_add(table, rows, map, g, "gather_rows's backward: table.grad[map[t]] += g[t]");
}
END_TEST

START_TEST(test_table_is_a_view) {
    /* the table (3,2) stored transposed: a (2,3) tensor permuted by (1,0) */
    Tensor *stored = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 3, 5, 2, 4, 6)));
    Tensor *table = tensor_permute(stored, AXES(1, 0)); /* reads [[1,2],[3,4],[5,6]] */
    Tensor *rows = EXPECT_OK(tensor_gather_rows(table, (const int64_t[]){2, 0, 2}, 3));
    EXPECT_VALUES(rows, VALUES(5, 6, 1, 2, 5, 6), 0, "gather from a transposed table");
    ck_assert_int_eq(tensor_backward(tensor_sum(rows)), 0);
    /* table rows 0 and 2 (twice) reach the stored tensor through the permute */
    EXPECT_VALUES(tensor_grad(stored), VALUES(1, 0, 2, 1, 0, 2), 0, "gradient through a transposed table");
    /* an offset view: the last two rows of a bigger table */
    Tensor *big = tensor_from(test_ctx, DIMS(4, 2), VALUES(0, 0, 1, 2, 3, 4, 5, 6));
    Tensor *tail = tensor_as_strided(big, DIMS(3, 2), STRIDES(2, 1), 2);
    EXPECT_VALUES(tensor_gather_rows(tail, (const int64_t[]){1}, 1), VALUES(3, 4), 0, "gather from an offset view");
}
END_TEST

START_TEST(test_batched_embedding) {
    /* 2 sentences of 3 words -> (2, 3, D) */
    Tensor *table = tensor_requires_grad(tensor_from(test_ctx, DIMS(4, 2), VALUES(1, 2, 3, 4, 5, 6, 7, 8)));
    const int64_t words[6] = {0, 1, 2, 3, 3, 0};
    Tensor *e = EXPECT_OK(tensor_embedding(table, words, DIMS(2, 3)));
    EXPECT_SHAPE(e, DIMS(2, 3, 2), "embedding of (2,3) indices");
    EXPECT_VALUES(e, VALUES(1, 2, 3, 4, 5, 6, 7, 8, 7, 8, 1, 2), 0, "embedding values");
    ck_assert_int_eq(tensor_backward(tensor_sum(e)), 0);
    EXPECT_VALUES(tensor_grad(table), VALUES(2, 2, 1, 1, 1, 1, 2, 2), 0, "each word's gradient counts its uses");
    EXPECT_SHAPE(tensor_embedding(table, (const int64_t[]){1}, NULL, 0), DIMS(2), "one index, rank 0: one row");
}
END_TEST

/* ==== gradients and random cases ========================================================== */

static Tensor *fn_gather(Tensor *const *in, void *indices) { return tensor_gather_rows(in[0], indices, 5); }

START_TEST(test_gradcheck) {
    Rng rng = rng_seeded(test_seed());
    Tensor *table = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(4, 3), -1, 1));
    int64_t indices[5] = {3, 0, 3, 1, 3};
    char report[512];
    GradcheckOptions opt = {1e-3, 1e-2, 1e-2, test_seed()};
    ck_assert_msg(gradcheck(fn_gather, indices, (Tensor *[]){table}, 1, &opt, report, sizeof report) == 0,
                  "gather_rows: %s", report);
}
END_TEST

START_TEST(test_random_against_naive) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 200; trial++) {
        int64_t v = rng_int(&rng, 1, 6), d = rng_int(&rng, 0, 4), n = rng_int(&rng, 0, 10), indices[10];
        for (int64_t i = 0; i < n; i++) indices[i] = rng_int(&rng, 0, v - 1);
        bool transposed = rng_int(&rng, 0, 1);
        int64_t stored_shape[2] = {transposed ? d : v, transposed ? v : d};
        Tensor *stored = tensor_requires_grad(random_tensor(test_ctx, &rng, stored_shape, 2, -2, 2));
        Tensor *table = transposed ? tensor_permute(stored, AXES(1, 0)) : stored;
        char context[160];
        snprintf(context, sizeof context, "COURSE_SEED=%llu case %d: %lld indices into a %s table of (%lld,%lld)",
                 (unsigned long long)seed, trial, (long long)n, transposed ? "transposed" : "contiguous", (long long)v,
                 (long long)d);
        Tensor *out = tensor_gather_rows(table, indices, n);
        ck_assert_msg(out != NULL, "%s: %s", context, tensor_error());
        /* naive: out[i][j] = table[indices[i]][j]; table row r's gradient = sum of w[i] over i with indices[i] = r */
        Tensor *w = random_tensor(test_ctx, &rng, out->shape, 2, -1, 1);
        float want[40], grad[24] = {0};
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < d; j++) {
                want[i * d + j] = tensor_get(table, (const int64_t[]){indices[i], j});
                grad[indices[i] * d + j] += tensor_data(w)[i * d + j];
            }
        EXPECT_VALUES(out, want, n * d, 0, context);
        ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(w, out))), 0);
        Tensor *g = transposed ? tensor_permute(tensor_grad(stored), AXES(1, 0)) : tensor_grad(stored);
        EXPECT_VALUES(g, grad, v * d, 1e-5f, context);
    }
}
END_TEST

/* The fast paths of gather_rows, on tables of every layout against reading element by element:
 * contiguous and offset rows (one memcpy per row), a table expanded from (1,D) (rows of stride
 * 0 apart) or from (V,1) (a row is one value), and a transposed table, also walked backwards,
 * both with few indices (read through the strides) and with many (the table is transposed into
 * a scratch copy first), each case under the next COURSE_KERNELS setting in turn. Sizes cross
 * the 8 x 16 blocks and the 32-row tiles of the transposing copy. The gradient is checked too:
 * it reaches the stored tensor through the view. */
START_TEST(test_gather_layouts_against_naive) {
    enum { CONTIGUOUS, OFFSET, ROW_EXPANDED, COLUMN_EXPANDED, TRANSPOSED, FLIPPED, N_LAYOUTS };
    const char *names[N_LAYOUTS] = {"contiguous",          "an offset window", "expanded from (1,D)",
                                    "expanded from (V,1)", "transposed",       "transposed and flipped"};
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 5);
    const char *const *modes = test_kernel_modes();
    int n_modes = 0;
    while (modes[n_modes]) n_modes++;
    ck_assert_int_gt(n_modes, 0);
    for (int trial = 0; trial < 120; trial++) {
        const char *kernels = use_kernels(modes[trial % n_modes]);
        int layout = (int)rng_int(&rng, 0, N_LAYOUTS - 1);
        int64_t v = rng_int(&rng, 0, 3) == 0 ? rng_int(&rng, 1, 3) : rng_int(&rng, 16, 150);
        int64_t d = rng_int(&rng, 0, 5) == 0 ? rng_int(&rng, 0, 1) : rng_int(&rng, 2, 150);
        int64_t n = rng_int(&rng, 0, 1) ? rng_int(&rng, 0, v / 16) : rng_int(&rng, v / 16, 2 * v); /* few, or many */
        int64_t *indices = malloc((size_t)(n + 1) * sizeof *indices);
        for (int64_t i = 0; i < n; i++) indices[i] = rng_int(&rng, 0, v - 1);
        Tensor *stored, *table;
        bool leaf_view = layout == OFFSET || layout == FLIPPED; /* views made by as_strided are leaves */
        switch (layout) {
        case CONTIGUOUS: table = stored = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(v, d), -9, 9)); break;
        case OFFSET: /* rows of d out of d + 3, starting one row and two columns in */
            stored = random_tensor(test_ctx, &rng, DIMS(v + 1, d + 3), -9, 9);
            table = tensor_as_strided(stored, DIMS(v, d), STRIDES(d + 3, 1), d + 3 + 2);
            break;
        case ROW_EXPANDED:
            stored = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(1, d), -9, 9));
            table = tensor_expand(stored, DIMS(v, d));
            break;
        case COLUMN_EXPANDED:
            stored = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(v, 1), -9, 9));
            table = tensor_expand(stored, DIMS(v, d));
            break;
        case TRANSPOSED:
            stored = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(d, v), -9, 9));
            table = tensor_permute(stored, AXES(1, 0));
            break;
        default: /* FLIPPED: the transpose, with both dims walked backwards */
            stored = random_tensor(test_ctx, &rng, DIMS(d, v), -9, 9);
            table = tensor_as_strided(stored, DIMS(v, d), STRIDES(-1, -v), d > 0 ? d * v - 1 : 0);
            break;
        }
        ck_assert_msg(table != NULL, "%s", tensor_error());
        if (leaf_view) tensor_requires_grad(table);
        char context[200];
        snprintf(context, sizeof context,
                 "COURSE_SEED=%llu case %d (%s kernels): %lld indices into a (%lld,%lld) table, %s",
                 (unsigned long long)seed, trial, kernels, (long long)n, (long long)v, (long long)d, names[layout]);
        Tensor *out = tensor_gather_rows(table, indices, n);
        ck_assert_msg(out != NULL, "%s: %s", context, tensor_error());
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < d; j++) {
                float want = tensor_get(table, (const int64_t[]){indices[i], j});
                if (tensor_data(out)[i * d + j] != want)
                    ck_abort_msg("%s: element (%lld,%lld) is %g, expected %g", context, (long long)i, (long long)j,
                                 (double)tensor_data(out)[i * d + j], (double)want);
            }
        /* backward: the gradient of sum(w * out), summed onto the table, then onto the stored tensor
         * when the table is a view made by an op (every table element that reads a stored element
         * adds into its gradient) */
        Tensor *w = random_tensor(test_ctx, &rng, out->shape, 2, -4, 4);
        ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(w, out))), 0);
        float *want = calloc((size_t)(v * d + 1), sizeof *want);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < d; j++) want[indices[i] * d + j] += tensor_data(w)[i * d + j];
        Tensor *target = leaf_view ? table : stored;
        float *stored_want = calloc((size_t)(tensor_numel(target) + 1), sizeof *stored_want);
        for (int64_t r = 0; r < v; r++)
            for (int64_t j = 0; j < d; j++)
                stored_want[leaf_view ? r * d + j : table->offset + r * table->strides[0] + j * table->strides[1]] +=
                    want[r * d + j];
        Tensor *g = tensor_grad(target);
        for (int64_t k = 0; k < tensor_numel(target); k++)
            if (fabsf(tensor_data(g)[k] - stored_want[k]) > 1e-4f * (1 + fabsf(stored_want[k])))
                ck_abort_msg("%s: the gradient of %s element %lld is %g, expected %g", context,
                             leaf_view ? "table" : "stored", (long long)k, (double)tensor_data(g)[k],
                             (double)stored_want[k]);
        free(want);
        free(stored_want);
        free(indices);
    }
}
END_TEST

/* A transposed table large enough to be transposed in several slabs, gathered by enough
 * indices that the result is written with streaming stores (rows of 96 floats) or with memcpy
 * (rows of 100 floats, not a whole number of 16-byte chunks), plain and walked backwards,
 * against reading every element through the strides. */
START_TEST(test_gather_large_transposed) {
    Rng rng = rng_seeded(test_seed() + 7);
    const int64_t v = 3001, n = 4000, ds[2] = {96, 100};
    int64_t *indices = malloc((size_t)n * sizeof *indices);
    for (int64_t i = 0; i < n; i++) indices[i] = rng_int(&rng, 0, v - 1);
    indices[0] = 0, indices[1] = v - 1; /* the first and last rows, the edges of the first and last slabs */
    for (int k = 0; k < 4; k++) {
        int64_t d = ds[k % 2];
        bool flipped = k >= 2;
        Tensor *stored = random_tensor(test_ctx, &rng, DIMS(d, v), -9, 9);
        Tensor *table = flipped ? tensor_as_strided(stored, DIMS(v, d), STRIDES(-1, -v), d * v - 1)
                                : tensor_permute(stored, AXES(1, 0));
        Tensor *out = tensor_gather_rows(table, indices, n);
        ck_assert_msg(out != NULL, "%s", tensor_error());
        const float *t = tensor_data(table);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < d; j++) {
                float want = t[indices[i] * table->strides[0] + j * table->strides[1]];
                if (tensor_data(out)[i * d + j] != want)
                    ck_abort_msg("%lld indices into a (%lld,%lld) table, transposed%s: element (%lld,%lld) is %g, "
                                 "expected %g",
                                 (long long)n, (long long)v, (long long)d, flipped ? " and flipped" : "", (long long)i,
                                 (long long)j, (double)tensor_data(out)[i * d + j], (double)want);
            }
    }
    free(indices);
}
END_TEST

/* The slab path at its edges, under every COURSE_KERNELS setting: rows so long (D = 5000) that
 * a slab holds its minimum of 16 rows, and a table of 5 rows whose columns are 32 floats
 * apart (a padded transposed table, smaller than one slab). */
START_TEST(test_gather_slab_edges) {
    Rng rng = rng_seeded(test_seed() + 9);
    for (const char *const *mode = test_kernel_modes(); *mode; mode++) {
        const char *kernels = use_kernels(*mode);
        for (int k = 0; k < 2; k++) {
            int64_t v = k == 0 ? 40 : 5, d = k == 0 ? 5000 : 7, n = k == 0 ? 30 : 9;
            Tensor *table;
            if (k == 0) table = tensor_permute(random_tensor(test_ctx, &rng, DIMS(d, v), -9, 9), AXES(1, 0));
            else
                table = tensor_as_strided(random_tensor(test_ctx, &rng, DIMS(d * 32), -9, 9), DIMS(v, d),
                                          STRIDES(1, 32), 0);
            ck_assert_msg(table != NULL, "%s", tensor_error());
            int64_t indices[30];
            for (int64_t i = 0; i < n; i++) indices[i] = rng_int(&rng, 0, v - 1);
            Tensor *out = tensor_gather_rows(table, indices, n);
            ck_assert_msg(out != NULL, "%s", tensor_error());
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < d; j++) {
                    float want = tensor_data(table)[indices[i] * table->strides[0] + j * table->strides[1]];
                    if (tensor_data(out)[i * d + j] != want)
                        ck_abort_msg("%s kernels: %lld indices into a (%lld,%lld) table with strides (%lld,%lld): "
                                     "element (%lld,%lld) is %g, expected %g",
                                     kernels, (long long)n, (long long)v, (long long)d, (long long)table->strides[0],
                                     (long long)table->strides[1], (long long)i, (long long)j,
                                     (double)tensor_data(out)[i * d + j], (double)want);
                }
        }
    }
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("lesson 5: gather");
    TCase *chapter = add_test_case(s, "chapter");
    add_test(chapter, test_gather_rows);
    add_test(chapter, test_duplicates_add);
    add_test(chapter, test_no_indices_and_unused_rows);
    add_test(chapter, test_bad_indices);
    add_test(chapter, test_question_four_one_rule);
    TCase *views = add_test_case(s, "views and batches");
    add_test(views, test_table_is_a_view);
    add_test(views, test_batched_embedding);
    TCase *grads = add_large_test_case(s, "gradients and random cases");
    tcase_set_timeout(grads, 30);
    add_test(grads, test_gradcheck);
    add_test(grads, test_random_against_naive);
    add_test(grads, test_gather_layouts_against_naive);
    add_test(grads, test_gather_large_transposed);
    add_test(grads, test_gather_slab_edges);
    return run_core_tests(argc, argv, s);
}
