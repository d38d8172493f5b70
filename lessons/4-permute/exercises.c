/*
 * exercises.c - lesson 4's exercises. This is the file you edit.
 *
 * Each function below is a stub: it says what to do, where the lesson explains it, and calls
 * EXERCISE_TODO() so the tests report it as TODO rather than wrong. Delete that line (and the
 * (void) casts) when you start, then run `make lesson4 test` to check your answer. Use plain C
 * here: the point is to write the index arithmetic yourself.
 */
#include "exercises.h"

/* 4.1: permute [[1,2,3],[4,5,6]] by (1, 0), then take two sums' gradients (exercises.h has
 * the details). Draw y first; then ask, for each x element, which y element it became. */
void ex4_1_permute_by_hand(PermuteByHand *answer) {
    EXERCISE_TODO();
    (void)answer;
}

/* 4.2: inv[dims[i]] = i (docs/4-permute.md 5.2): output dim i came from input dim dims[i]. */
void ex4_2_inverse_permutation(const int *dims, int n, int *inv) {
    EXERCISE_TODO();
    (void)dims, (void)n, (void)inv;
}

/* 4.3: output dim i takes input dim dims[i]'s size and its stride (docs/4-permute.md 5.1). */
void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims, int64_t *out_shape,
                        int64_t *out_strides) {
    EXERCISE_TODO();
    (void)shape, (void)rank, (void)strides, (void)dims, (void)out_shape, (void)out_strides;
}

/* 4.4: walk the view in row-major order with an odometer (docs/4-permute.md 5.3): keep an index
 * per dim and the current offset; after each element, bump the last index, and when it reaches
 * its size, reset it and carry into the dim before. */
void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides, int64_t offset,
                           float *out) {
    EXERCISE_TODO();
    (void)data, (void)shape, (void)rank, (void)strides, (void)offset, (void)out;
}
