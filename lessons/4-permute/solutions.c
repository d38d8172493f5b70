/*
 * solutions.c - reference solutions to lesson 4's exercises, for instructors and for checking
 * the tests themselves (`make test` runs the exercise tests against this file too).
 */
#include "exercises.h"

void ex4_1_permute_by_hand(PermuteByHand *answer) {
    *answer = (PermuteByHand){
        .y_shape = {3, 2},
        /* y[i][j] = x[j][i]: the columns of x become the rows of y */
        .y = {1, 4, 2, 5, 3, 6},
        /* every x element appears exactly once in y, so each gets d sum / d y = 1 */
        .grad_sum = {1, 1, 1, 1, 1, 1},
        /* x[i][j] became y[j][i], so it gets w[j][i]: w permuted back */
        .grad_weighted = {1, 3, 5, 2, 4, 6},
    };
}

void ex4_2_inverse_permutation(const int *dims, int n, int *inv) {
    for (int i = 0; i < n; i++) inv[dims[i]] = i;
}

void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims, int64_t *out_shape,
                        int64_t *out_strides) {
    for (int i = 0; i < rank; i++) {
        out_shape[i] = shape[dims[i]];
        out_strides[i] = strides[dims[i]];
    }
}

void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides, int64_t offset,
                           float *out) {
    int64_t total = 1, index[8] = {0};
    for (int d = 0; d < rank; d++) total *= shape[d];
    for (int64_t t = 0; t < total; t++) {
        out[t] = data[offset];
        /* the odometer: bump the last dim, carry leftwards, keep the offset in step */
        for (int d = rank - 1; d >= 0; d--) {
            index[d]++;
            offset += strides[d];
            if (index[d] < shape[d]) break;
            offset -= strides[d] * shape[d];
            index[d] = 0;
        }
    }
}
