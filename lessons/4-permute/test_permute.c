/*
 * test_permute.c - lesson 4's core tests. They mirror the chapter's section 5 (its
 * test_permute: [2,3] permuted by [1,0] is [3,2] with data [1,4,2,5,3,6]), then go past it:
 * views share storage and have the expected strides, round trips, the flat-index map against
 * the strides, reshape as a view and as a copy, the gradients, contiguous copies of permuted
 * and expanded views of rank up to 6 against a naive loop, and invalid permutations.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "broadcast.h"
#include "gradcheck.h"
#include "harness.h"
#include "permute.h"
#include "reduce.h"

static void random_permutation(Rng *rng, int n, int *dims) {
    for (int i = 0; i < n; i++) dims[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_int(rng, 0, i), t = dims[i];
        dims[i] = dims[j];
        dims[j] = t;
    }
}

/* ==== the chapter ======================================================================== */

START_TEST(test_permute) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    Tensor *y = EXPECT_OK(tensor_permute(x, AXES(1, 0)));
    EXPECT_SHAPE(y, DIMS(3, 2), "permute (1, 0)");
    EXPECT_VALUES(y, VALUES(1, 4, 2, 5, 3, 6), 0, "permute (1, 0)");
}
END_TEST

START_TEST(test_permute_is_a_view) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    size_t before = ctx_bytes(test_ctx);
    Tensor *y = EXPECT_OK(tensor_permute(x, AXES(1, 0)));
    ck_assert_msg(ctx_bytes(test_ctx) - before < 512, "permute allocated %zu bytes: it must not copy the data",
                  ctx_bytes(test_ctx) - before);
    ck_assert_ptr_eq(y->storage, x->storage);
    ck_assert(y->is_view && !tensor_is_contiguous(y));
    ck_assert_int_eq(y->strides[0], 1); /* x's strides (3, 1), reordered */
    ck_assert_int_eq(y->strides[1], 3);
    /* the storage is unchanged; only contiguous moves the data */
    EXPECT_ARRAY(y->storage->data, ((const float[]){1, 2, 3, 4, 5, 6}), 6, 0, "storage after permute");
    Tensor *c = EXPECT_OK(tensor_contiguous(y));
    ck_assert_ptr_ne(c->storage, x->storage);
    EXPECT_ARRAY(c->storage->data, ((const float[]){1, 4, 2, 5, 3, 6}), 6, 0, "storage of the contiguous copy");
    /* 3-D: (2,3,4) permuted by (0,2,1) is (2,4,3) with strides (12,1,4) */
    Tensor *cube = tensor_zeros(test_ctx, DIMS(2, 3, 4));
    Tensor *p = EXPECT_OK(tensor_permute(cube, AXES(0, 2, 1)));
    EXPECT_SHAPE(p, DIMS(2, 4, 3), "permute (0, 2, 1)");
    ck_assert(p->strides[0] == 12 && p->strides[1] == 1 && p->strides[2] == 4);
    /* transpose is a permute of two dims; negative axes count from the end */
    Tensor *t = EXPECT_OK(tensor_transpose(cube, 0, -1));
    EXPECT_SHAPE(t, DIMS(4, 3, 2), "transpose (0, -1)");
    ck_assert(t->strides[0] == 1 && t->strides[1] == 4 && t->strides[2] == 12);
    EXPECT_SHAPE(tensor_permute(cube, AXES(-1, 0, 1)), DIMS(4, 2, 3), "permute (-1, 0, 1)");
}
END_TEST

/* The walk-through's 5.1: transpose is permute(1, 0) in 2-D (and a swap of two axes in N-D):
 * the same view of the same storage, and the same gradient. */
START_TEST(test_transpose_is_permute_1_0) {
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *t = EXPECT_OK(tensor_transpose(x, 0, 1)), *p = EXPECT_OK(tensor_permute(x, AXES(1, 0)));
    ck_assert_ptr_eq(t->storage, p->storage);
    ck_assert_int_eq(t->offset, p->offset);
    EXPECT_SHAPE(t, DIMS(3, 2), "transpose(x, 0, 1)");
    ck_assert_msg(t->strides[0] == p->strides[0] && t->strides[1] == p->strides[1],
                  "transpose(x, 0, 1) has strides (%lld,%lld), permute(x, (1,0)) (%lld,%lld)", (long long)t->strides[0],
                  (long long)t->strides[1], (long long)p->strides[0], (long long)p->strides[1]);
    EXPECT_VALUES(t, VALUES(1, 4, 2, 5, 3, 6), 0, "transpose(x, 0, 1)");
    Tensor *w = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(t, w))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(1, 3, 5, 2, 4, 6), 0, "the gradient through transpose: w, transposed back");
}
END_TEST

START_TEST(test_inverse_and_round_trips) {
    int inv[3];
    inverse_permutation((const int[]){1, 2, 0}, 3, inv);
    ck_assert(inv[0] == 2 && inv[1] == 0 && inv[2] == 1);
    inverse_permutation((const int[]){0, 2, 1}, 3, inv);
    ck_assert(inv[0] == 0 && inv[1] == 2 && inv[2] == 1); /* a swap is its own inverse */
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed);
    for (int trial = 0; trial < 100; trial++) {
        int rank = (int)rng_int(&rng, 0, 6), dims[TENSOR_MAX_RANK], back[TENSOR_MAX_RANK];
        int64_t shape[TENSOR_MAX_RANK];
        random_shape(&rng, rank, 1, 3, shape);
        random_permutation(&rng, rank, dims);
        inverse_permutation(dims, rank, back);
        Tensor *x = random_tensor(test_ctx, &rng, shape, rank, -1, 1);
        Tensor *round = EXPECT_OK(tensor_permute(EXPECT_OK(tensor_permute(x, dims, rank)), back, rank));
        char what[96];
        snprintf(what, sizeof what, "COURSE_SEED=%llu case %d: permute then its inverse", (unsigned long long)seed,
                 trial);
        EXPECT_SHAPE(round, x->shape, x->rank, what);
        ck_assert_msg(shape_equal(round->strides, rank, x->strides, rank), "%s: strides changed", what);
        EXPECT_VALUES_ARRAY(round, tensor_data(x), tensor_numel(x), 0, what);
    }
}
END_TEST

START_TEST(test_map_and_strides_agree) {
    /* the chapter's flat-index map and the permuted strides address the same elements */
    int64_t map[6];
    ck_assert_int_eq(permute_map(DIMS(2, 3), (const int[]){1, 0}, map), 0);
    const int64_t want[6] = {0, 3, 1, 4, 2, 5};
    for (int t = 0; t < 6; t++) ck_assert_int_eq(map[t], want[t]);
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 1);
    for (int trial = 0; trial < 100; trial++) {
        int rank = (int)rng_int(&rng, 1, 5), dims[TENSOR_MAX_RANK];
        int64_t shape[TENSOR_MAX_RANK], big[1024], index[TENSOR_MAX_RANK];
        random_shape(&rng, rank, 1, 4, shape);
        random_permutation(&rng, rank, dims);
        Tensor *y = tensor_permute(tensor_zeros(test_ctx, shape, rank), dims, rank);
        ck_assert_int_eq(permute_map(shape, rank, dims, big), 0);
        for (int64_t t = 0; t < tensor_numel(y); t++) {
            unravel_index(t, y->shape, rank, index);
            int64_t offset = 0;
            for (int d = 0; d < rank; d++) offset += index[d] * y->strides[d];
            ck_assert_msg(offset == big[t], "COURSE_SEED=%llu case %d: element %lld: map %lld, strides %lld",
                          (unsigned long long)seed, trial, (long long)t, (long long)big[t], (long long)offset);
        }
    }
}
END_TEST

/* ==== reshape ============================================================================= */

START_TEST(test_reshape_reinterprets) {
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    /* contiguous: a view over the same storage, in the same order */
    Tensor *r = EXPECT_OK(tensor_reshape(x, DIMS(3, 2)));
    ck_assert_ptr_eq(r->storage, x->storage);
    EXPECT_VALUES(r, VALUES(1, 2, 3, 4, 5, 6), 0, "reshape (2,3) -> (3,2)");
    EXPECT_SHAPE(tensor_reshape(x, DIMS(-1)), DIMS(6), "reshape to (-1,)");
    EXPECT_SHAPE(tensor_reshape(x, DIMS(3, -1, 1)), DIMS(3, 2, 1), "reshape to (3,-1,1)");
    EXPECT_SHAPE(tensor_reshape(tensor_scalar(test_ctx, 5), DIMS(1, 1)), DIMS(1, 1), "a scalar to (1,1)");
    ck_assert_int_eq(EXPECT_OK(tensor_reshape(tensor_from(test_ctx, DIMS(1), VALUES(5)), NULL, 0))->rank, 0);
    /* dims of size 1 added or dropped: still a view, also of a view that is not contiguous */
    Tensor *y = tensor_permute(x, AXES(1, 0));
    const int64_t with_ones[][4] = {{3, 1, 2}, {1, 3, 2}, {3, 2, 1}, {1, 3, 1, 2}};
    const int with_ones_rank[] = {3, 3, 3, 4};
    for (int k = 0; k < 4; k++) {
        Tensor *c = EXPECT_OK(tensor_reshape(x, with_ones[k], with_ones_rank[k]));
        Tensor *v = EXPECT_OK(tensor_reshape(y, with_ones[k], with_ones_rank[k]));
        ck_assert_msg(c->storage == x->storage && v->storage == x->storage,
                      "reshape %d: a reshape that adds dims of size 1 copied (contiguous: %s, permuted: %s)", k,
                      c->storage == x->storage ? "a view" : "a copy", v->storage == x->storage ? "a view" : "a copy");
        EXPECT_VALUES(v, VALUES(1, 4, 2, 5, 3, 6), 0, "reshape of the permuted view with dims of size 1");
    }
    /* the permuted view cannot be reinterpreted as (6,) in place: reshape copies */
    Tensor *flat = EXPECT_OK(tensor_reshape(y, DIMS(6)));
    ck_assert_ptr_ne(flat->storage, x->storage);
    EXPECT_VALUES(flat, VALUES(1, 4, 2, 5, 3, 6), 0, "reshape of a permuted view");
    /* ... but splitting one of its dims keeps it a view */
    Tensor *cube = tensor_zeros(test_ctx, DIMS(2, 3, 4));
    Tensor *split = EXPECT_OK(tensor_reshape(tensor_permute(cube, AXES(2, 0, 1)), DIMS(2, 2, 6)));
    ck_assert_ptr_eq(split->storage, cube->storage);
    ck_assert(split->strides[0] == 2 && split->strides[1] == 1 && split->strides[2] == 4);
    /* a stride-0 view keeps its zeros when only size-1 dims move */
    Tensor *wide = tensor_expand(tensor_from(test_ctx, DIMS(3), VALUES(1, 2, 3)), DIMS(4, 3));
    Tensor *w1 = EXPECT_OK(tensor_reshape(wide, DIMS(4, 1, 3)));
    ck_assert_ptr_eq(w1->storage, wide->storage);
    EXPECT_VALUES(tensor_reshape(wide, DIMS(12)), VALUES(1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3), 0,
                  "reshape of an expanded view");
}
END_TEST

START_TEST(test_reshape_random_against_copy) {
    /* any view, any compatible shape: reshape(v) must read as contiguous(v) does */
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 2);
    for (int trial = 0; trial < 200; trial++) {
        int rank = (int)rng_int(&rng, 1, 5), dims[TENSOR_MAX_RANK];
        int64_t shape[TENSOR_MAX_RANK];
        random_shape(&rng, rank, 1, 3, shape);
        random_permutation(&rng, rank, dims);
        Tensor *v = tensor_permute(random_tensor(test_ctx, &rng, shape, rank, -1, 1), dims, rank);
        /* a new shape: the element count factored at random */
        int64_t n = tensor_numel(v), new_shape[TENSOR_MAX_RANK];
        int new_rank = 0;
        while (n > 1 && new_rank < 5) {
            int64_t f = 2;
            while (n % f) f++;
            new_shape[new_rank++] = rng_int(&rng, 0, 1) ? f : 1;
            if (new_shape[new_rank - 1] == f) n /= f;
        }
        if (n > 1) new_shape[new_rank++] = n;
        Tensor *r = tensor_reshape(v, new_shape, new_rank);
        char what[160];
        snprintf(what, sizeof what, "COURSE_SEED=%llu case %d: reshape of a permuted view", (unsigned long long)seed,
                 trial);
        ck_assert_msg(r != NULL, "%s: %s", what, tensor_error());
        EXPECT_VALUES_ARRAY(r, tensor_data(tensor_contiguous(v)), tensor_numel(v), 0, what);
    }
}
END_TEST

/* ==== gradients ========================================================================== */

START_TEST(test_permute_gradients) {
    /* permute(x).sum(): every element appears once, so every gradient is 1 */
    Tensor *x = tensor_requires_grad(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)));
    Tensor *y = tensor_permute(x, AXES(1, 0));
    ck_assert_int_eq(tensor_backward(tensor_sum(y)), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(1, 1, 1, 1, 1, 1), 0, "d sum(permute(x)) / dx");
    /* a weighted sum: the weights come back through the inverse permutation */
    tensor_zero_grad(x);
    Tensor *w = tensor_from(test_ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6));
    ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(w, y))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(1, 3, 5, 2, 4, 6), 0, "d sum(w * permute(x)) / dx");
    /* += : permute and use x again */
    tensor_zero_grad(x);
    ck_assert_int_eq(tensor_backward(tensor_add(tensor_sum(y), tensor_sum(x))), 0);
    EXPECT_VALUES(tensor_grad(x), VALUES(2, 2, 2, 2, 2, 2), 0, "x used directly and through permute");
}
END_TEST

static Tensor *fn_permute(Tensor *const *in, void *dims) { return tensor_permute(in[0], dims, 3); }
static Tensor *fn_transpose(Tensor *const *in, void *arg) { return (void)arg, tensor_transpose(in[0], 0, 2); }
static Tensor *fn_reshape_view(Tensor *const *in, void *arg) { return (void)arg, tensor_reshape(in[0], DIMS(6, 4)); }
static Tensor *fn_reshape_copy(Tensor *const *in, void *arg) {
    return (void)arg, tensor_reshape(tensor_permute(in[0], AXES(2, 1, 0)), DIMS(4, 6));
}
/* lesson 2's row sums over a permuted view, and lesson 3's softmax would do the same */
static Tensor *fn_sum_of_permuted(Tensor *const *in, void *arg) {
    return (void)arg, tensor_sum_last_dim(tensor_permute(in[0], AXES(1, 2, 0)));
}

START_TEST(test_gradcheck_every_op) {
    Rng rng = rng_seeded(test_seed());
    Tensor *x = tensor_requires_grad(random_tensor(test_ctx, &rng, DIMS(2, 3, 4), -1, 1));
    int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int k = 0; k < 6; k++) EXPECT_GRADCHECK(fn_permute, perms[k], (Tensor *[]){x}, 1, "permute");
    EXPECT_GRADCHECK(fn_transpose, NULL, (Tensor *[]){x}, 1, "transpose");
    EXPECT_GRADCHECK(fn_reshape_view, NULL, (Tensor *[]){x}, 1, "reshape (a view)");
    EXPECT_GRADCHECK(fn_reshape_copy, NULL, (Tensor *[]){x}, 1, "reshape (a copy)");
    EXPECT_GRADCHECK(fn_sum_of_permuted, NULL, (Tensor *[]){x}, 1, "sum_last_dim of a permuted view");
}
END_TEST

/* ==== contiguous copies against a naive loop ============================================== */

START_TEST(test_contiguous_against_naive) {
    /* permuted, and sometimes expanded, views of rank up to 6 */
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 3);
    for (int trial = 0; trial < 200; trial++) {
        int rank = (int)rng_int(&rng, 1, 6), dims[TENSOR_MAX_RANK];
        int64_t shape[TENSOR_MAX_RANK], index[TENSOR_MAX_RANK];
        random_shape(&rng, rank, 1, 3, shape);
        random_permutation(&rng, rank, dims);
        Tensor *x = random_tensor(test_ctx, &rng, shape, rank, -9, 9);
        Tensor *v = tensor_permute(x, dims, rank);
        if (rng_int(&rng, 0, 1)) {
            int64_t wide[TENSOR_MAX_RANK];
            memcpy(wide, v->shape, (size_t)rank * sizeof *wide);
            for (int d = 0; d < rank; d++)
                if (wide[d] == 1) wide[d] = 2;
            v = tensor_expand(v, wide, rank);
        }
        Tensor *c = EXPECT_OK(tensor_contiguous(v));
        ck_assert(tensor_is_contiguous(c));
        /* naive: element t of the copy is x at the index the permutation (and the expand) says */
        for (int64_t t = 0; t < tensor_numel(v); t++) {
            unravel_index(t, v->shape, rank, index);
            int64_t src[TENSOR_MAX_RANK];
            for (int i = 0; i < rank; i++) src[dims[i]] = x->shape[dims[i]] == 1 ? 0 : index[i];
            ck_assert_msg(tensor_data(c)[t] == tensor_get(x, src),
                          "COURSE_SEED=%llu case %d: element %lld is %g, expected %g", (unsigned long long)seed, trial,
                          (long long)t, (double)tensor_data(c)[t], (double)tensor_get(x, src));
        }
    }
}
END_TEST

/* The tiled copies: permutes of rank 2 to 4 with dims across the 64-element tiles (and not
 * multiples of 8 or 64), sometimes flipped (negative strides) or offset in a padded storage;
 * contiguous(), reshape's copy and permute's backward (which writes the gradient through the
 * permuted strides), each against element-by-element loops, each case under the next
 * COURSE_KERNELS setting in turn (reference, portable, native). */
START_TEST(test_tiled_copies_against_naive) {
    uint64_t seed = test_seed();
    Rng rng = rng_seeded(seed + 4);
    const char *const *modes = test_kernel_modes();
    int n_modes = 0;
    while (modes[n_modes]) n_modes++;
    ck_assert_int_gt(n_modes, 0);
    for (int trial = 0; trial < 60; trial++) {
        const char *kernels = use_kernels(modes[trial % n_modes]);
        int rank = (int)rng_int(&rng, 2, 4), dims[TENSOR_MAX_RANK];
        int64_t shape[TENSOR_MAX_RANK], index[TENSOR_MAX_RANK], src[TENSOR_MAX_RANK];
        random_shape(&rng, rank, 1, 3, shape);
        for (int k = 0; k < 2; k++)
            shape[rng_int(&rng, 0, rank - 1)] = rng_int(&rng, 0, 9) == 0 ? 0 : rng_int(&rng, 9, 140);
        random_permutation(&rng, rank, dims);
        /* x: a leaf, or a flipped window of a padded one */
        Tensor *x = random_tensor(test_ctx, &rng, shape, rank, -9, 9);
        if (trial % 3 == 2) {
            int64_t padded[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK], offset = 0;
            for (int d = 0; d < rank; d++) padded[d] = shape[d] + 1;
            Tensor *big = random_tensor(test_ctx, &rng, padded, rank, -9, 9);
            for (int d = 0; d < rank; d++) {
                strides[d] = d == rank - 1 ? -big->strides[d] : big->strides[d];
                if (d == rank - 1) offset += shape[d] > 0 ? shape[d] - 1 : 0;
            }
            x = EXPECT_OK(tensor_as_strided(big, shape, rank, strides, offset + 1));
        }
        tensor_requires_grad(x);
        Tensor *v = tensor_permute(x, dims, rank);
        Tensor *c = EXPECT_OK(tensor_contiguous(v));
        int64_t flat_shape[1] = {tensor_numel(v)};
        Tensor *r = EXPECT_OK(tensor_reshape(v, flat_shape, 1)); /* a permuted view cannot be reshaped in place */
        char sx[SHAPE_STR_MAX];
        for (int64_t t = 0; t < tensor_numel(v); t++) {
            unravel_index(t, v->shape, rank, index);
            for (int i = 0; i < rank; i++) src[dims[i]] = index[i];
            float want = tensor_get(x, src);
            if (tensor_data(c)[t] != want || tensor_get(r, &t) != want)
                ck_abort_msg("COURSE_SEED=%llu case %d (%s kernels): %s permuted: element %lld is %g (reshape %g), "
                             "expected %g",
                             (unsigned long long)seed, trial, kernels, shape_format(shape, rank, sx, sizeof sx),
                             (long long)t, (double)tensor_data(c)[t], (double)tensor_get(r, &t), (double)want);
        }
        /* backward: the gradient of sum(w * permute(x)) is w sent back through the inverse permutation */
        Tensor *w = random_tensor(test_ctx, &rng, v->shape, rank, -4, 4);
        ck_assert_int_eq(tensor_backward(tensor_sum(tensor_mul(w, v))), 0);
        const float *gx = tensor_data(tensor_grad(x));
        for (int64_t t = 0; t < tensor_numel(v); t++) {
            unravel_index(t, v->shape, rank, index);
            for (int i = 0; i < rank; i++) src[dims[i]] = index[i];
            int64_t flat = 0;
            for (int d = 0; d < rank; d++) flat = flat * shape[d] + src[d];
            if (gx[flat] != tensor_data(w)[t])
                ck_abort_msg("COURSE_SEED=%llu case %d (%s kernels): %s permuted: gradient of element %lld is %g, "
                             "expected %g",
                             (unsigned long long)seed, trial, kernels, shape_format(shape, rank, sx, sizeof sx),
                             (long long)flat, (double)gx[flat], (double)tensor_data(w)[t]);
        }
    }
}
END_TEST

/* ==== bad input ========================================================================== */

START_TEST(test_invalid_permutations) {
    Tensor *x = tensor_zeros(test_ctx, DIMS(2, 3));
    tensor_clear_error();
    ck_assert_ptr_null(tensor_permute(x, AXES(0, 1, 2)));
    ck_assert_str_eq(tensor_error(),
                     "permute: axes (0,1,2) don't match a tensor of rank 2: give each of its 2 axes once");
    ck_assert_ptr_null(tensor_permute(x, AXES(0)));
    ck_assert_str_eq(tensor_error(), "permute: axes (0,) don't match a tensor of rank 2: give each of its 2 axes once");
    ck_assert_ptr_null(tensor_permute(x, AXES(0, 0)));
    ck_assert_str_eq(tensor_error(), "permute: repeated axis 0 in (0,0)");
    ck_assert_ptr_null(tensor_permute(x, AXES(1, -1)));
    ck_assert_str_eq(tensor_error(), "permute: repeated axis 1 in (1,-1)");
    ck_assert_ptr_null(tensor_permute(x, AXES(0, 2)));
    ck_assert_str_eq(tensor_error(), "permute: axis 2 is out of bounds for array of dimension 2");
    ck_assert_ptr_null(tensor_permute(x, AXES(-3, 0)));
    ck_assert_str_eq(tensor_error(), "permute: axis -3 is out of bounds for array of dimension 2");
    ck_assert_ptr_null(tensor_permute(x, NULL, 2));
    ck_assert_str_eq(tensor_error(),
                     "permute: 2 axes (NULL) given for a tensor of rank 2: give each of its 2 axes once");
    ck_assert_ptr_null(tensor_permute(tensor_zeros(test_ctx, DIMS(1, 1, 1, 1, 1, 1, 1, 1)),
                                      AXES(0, 1, 2, 3, 4, 5, 6, 7, 8)));
    ck_assert_str_eq(tensor_error(), "permute: 9 axes given for a tensor of rank 8: give each of its 8 axes once");
    ck_assert_ptr_null(tensor_reshape(x, NULL, 2));
    ck_assert_str_eq(tensor_error(), "reshape: shape is NULL for rank 2");
    ck_assert_ptr_null(tensor_reshape(x, DIMS(INT64_MAX, 2, -1, -1)));
    EXPECT_ERROR("can only specify one unknown dimension", "two -1 after an overflowing dim");
    ck_assert_ptr_null(tensor_reshape(x, DIMS(INT64_MAX, 2, -5)));
    EXPECT_ERROR("negative dimensions are not allowed", "a negative dim after an overflowing one");
    int64_t huge_map[1];
    ck_assert_int_eq(permute_map(DIMS(INT64_MAX, 4), (const int[]){1, 0}, huge_map), -1);
    EXPECT_ERROR("permute_map: shape (9223372036854775807,4) has too many elements", "a shape that overflows");
    /* a failed permute allocates nothing */
    size_t before = ctx_bytes(test_ctx);
    for (int i = 0; i < 100; i++) ck_assert_ptr_null(tensor_permute(x, AXES(0, 0)));
    ck_assert_uint_eq(ctx_bytes(test_ctx), before);
    ck_assert_ptr_null(tensor_transpose(x, 0, 5));
    ck_assert_str_eq(tensor_error(), "transpose: axis 5 is out of bounds for array of dimension 2");
    ck_assert_ptr_null(tensor_reshape(x, DIMS(4)));
    ck_assert_str_eq(tensor_error(), "reshape: cannot reshape array of size 6 into shape (4,)");
    ck_assert_ptr_null(tensor_reshape(x, DIMS(-1, -1)));
    ck_assert_str_eq(tensor_error(), "reshape: can only specify one unknown dimension, got (-1,-1)");
    ck_assert_ptr_null(tensor_reshape(x, DIMS(-1, 4)));
    ck_assert_str_eq(tensor_error(), "reshape: cannot reshape array of size 6 into shape (-1,4)");
    ck_assert_ptr_null(tensor_reshape(x, DIMS(-2, 3)));
    EXPECT_ERROR("reshape: negative dimensions are not allowed", "a negative dim");
    ck_assert_ptr_null(tensor_reshape(x, DIMS(INT64_MAX, 2)));
    EXPECT_ERROR("cannot reshape array of size 6", "an overflowing shape");
    ck_assert_ptr_null(tensor_reshape(tensor_zeros(test_ctx, DIMS(0, 3)), DIMS(-1, 0)));
    EXPECT_ERROR("cannot reshape array of size 0 into shape (-1,0)", "-1 with a 0 dim");
    int64_t map[6];
    ck_assert_int_eq(permute_map(DIMS(2, 3), (const int[]){1, 1}, map), -1);
    ck_assert_str_eq(tensor_error(), "permute_map: repeated axis 1 in (1,1)");
    tensor_clear_error();
    ck_assert_ptr_null(tensor_permute(NULL, AXES(0)));
    ck_assert_str_eq(tensor_error(), "permute: input x is NULL");
    /* rank 0: the empty permutation */
    EXPECT_OK(tensor_permute(tensor_scalar(test_ctx, 1), NULL, 0));
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("lesson 4: permute");
    TCase *chapter = add_test_case(s, "chapter");
    add_test(chapter, test_permute);
    add_test(chapter, test_permute_is_a_view);
    add_test(chapter, test_transpose_is_permute_1_0);
    add_test(chapter, test_inverse_and_round_trips);
    add_test(chapter, test_map_and_strides_agree);
    TCase *reshape = add_test_case(s, "reshape");
    add_test(reshape, test_reshape_reinterprets);
    add_test(reshape, test_reshape_random_against_copy);
    TCase *grads = add_test_case(s, "gradients");
    add_test(grads, test_permute_gradients);
    add_test(grads, test_gradcheck_every_op);
    TCase *random = add_large_test_case(s, "contiguous and bad input");
    tcase_set_timeout(random, 30);
    add_test(random, test_contiguous_against_naive);
    add_test(random, test_tiled_copies_against_naive);
    add_test(random, test_invalid_permutations);
    return run_core_tests(argc, argv, s);
}
