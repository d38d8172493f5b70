/*
 * 4-permute.c - known-wrong answers to lesson 4's exercises: the grader and make test must
 * fail each the same way, with a message that names the mistake (tests/grading/test_agreement.sh
 * says how this file is read).
 */

/* wrong 4.1: y holds x's elements in x's order, as a reshape would | expect: that is a reshape of x */
void ex4_1_permute_by_hand(PermuteByHand *answer) {
    *answer = (PermuteByHand){
        .y_shape = {3, 2},
        .y = {1, 2, 3, 4, 5, 6},
        .grad_sum = {1, 1, 1, 1, 1, 1},
        .grad_weighted = {1, 3, 5, 2, 4, 6},
    };
}

/* wrong 4.1: grad_weighted is w itself, not permuted back to x's layout | expect: that is d loss / d y */
void ex4_1_permute_by_hand(PermuteByHand *answer) {
    *answer = (PermuteByHand){
        .y_shape = {3, 2},
        .y = {1, 4, 2, 5, 3, 6},
        .grad_sum = {1, 1, 1, 1, 1, 1},
        .grad_weighted = {1, 2, 3, 4, 5, 6},
    };
}

/* wrong 4.2: copies dims, which is its own inverse only for swaps | expect: inv is dims itself */
void ex4_2_inverse_permutation(const int *dims, int n, int *inv) {
    for (int i = 0; i < n; i++) inv[i] = dims[i];
}

/* wrong 4.3: permutes the shape but copies the strides in the old order | expect: the input's strides in their old order */
void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims,
                        int64_t *out_shape, int64_t *out_strides) {
    for (int i = 0; i < rank; i++) {
        out_shape[i] = shape[dims[i]];
        out_strides[i] = strides[i];
    }
}

/* wrong 4.3: sends input dim i to output dim dims[i], which permutes by the inverse | expect: the permute by the inverse of dims */
void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims,
                        int64_t *out_shape, int64_t *out_strides) {
    for (int i = 0; i < rank; i++) {
        out_shape[dims[i]] = shape[i];
        out_strides[dims[i]] = strides[i];
    }
}

/* wrong 4.3: gives the permuted shape fresh row-major strides, as a copy would have | expect: the strides of a new contiguous tensor */
void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims,
                        int64_t *out_shape, int64_t *out_strides) {
    (void)strides;
    int64_t step = 1;
    for (int i = 0; i < rank; i++) out_shape[i] = shape[dims[i]];
    for (int i = rank - 1; i >= 0; i--) {
        out_strides[i] = step;
        step *= out_shape[i];
    }
}

/* wrong 4.4: copies the storage in order from the offset, ignoring the strides | expect: in storage order */
void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides,
                           int64_t offset, float *out) {
    (void)strides;
    int64_t total = 1;
    for (int d = 0; d < rank; d++) total *= shape[d];
    for (int64_t t = 0; t < total; t++) out[t] = data[offset + t];
}

/* wrong 4.4: starts the walk at data[0], ignoring the offset | expect: as if the offset were 0 */
void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides,
                           int64_t offset, float *out) {
    (void)offset;
    int64_t total = 1, index[8] = {0}, at = 0;
    for (int d = 0; d < rank; d++) total *= shape[d];
    for (int64_t t = 0; t < total; t++) {
        out[t] = data[at];
        for (int d = rank - 1; d >= 0; d--) {
            index[d]++;
            at += strides[d];
            if (index[d] < shape[d]) break;
            at -= strides[d] * shape[d];
            index[d] = 0;
        }
    }
}

/* wrong 4.4: bumps the first index fastest, a column-major walk | expect: the first index moving fastest */
void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides,
                           int64_t offset, float *out) {
    int64_t total = 1, index[8] = {0};
    for (int d = 0; d < rank; d++) total *= shape[d];
    for (int64_t t = 0; t < total; t++) {
        out[t] = data[offset];
        for (int d = 0; d < rank; d++) {
            index[d]++;
            offset += strides[d];
            if (index[d] < shape[d]) break;
            offset -= strides[d] * shape[d];
            index[d] = 0;
        }
    }
}
