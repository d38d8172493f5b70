/*
 * 1-broadcast.c - known-wrong answers to lesson 1's exercises: the grader and make test must
 * fail each the same way, with a message that names the mistake (tests/grading/test_agreement.sh
 * says how this file is read).
 */

/* wrong 1.1: b_source counts c's elements, as if c read b element for element | expect: b has only 3 elements */
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    *answer = (BroadcastByHand){
        .out_shape = {2, 3},
        .b_source = {0, 1, 2, 3, 4, 5},
        .c = {11, 22, 33, 14, 25, 36},
        .grad_a = {1, 1, 1, 1, 1, 1},
        .grad_b = {2, 2, 2},
        .grad_b_weighted = {4, 1, 2},
    };
}

/* wrong 1.1: grad_b counts one copy of each b element, not both | expect: add up the gradients of all of them */
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    *answer = (BroadcastByHand){
        .out_shape = {2, 3},
        .b_source = {0, 1, 2, 0, 1, 2},
        .c = {11, 22, 33, 14, 25, 36},
        .grad_a = {1, 1, 1, 1, 1, 1},
        .grad_b = {1, 1, 1},
        .grad_b_weighted = {4, 1, 2},
    };
}

/* wrong 1.1: grad_b_weighted takes the weights of w's first row only | expect: only row 0 of w */
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    *answer = (BroadcastByHand){
        .out_shape = {2, 3},
        .b_source = {0, 1, 2, 0, 1, 2},
        .c = {11, 22, 33, 14, 25, 36},
        .grad_a = {1, 1, 1, 1, 1, 1},
        .grad_b = {2, 2, 2},
        .grad_b_weighted = {1, 0, 2},
    };
}

/* wrong 1.2: pairs the dims from the left | expect: numpy pairs them from the right */
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out,
                           int *out_rank) {
    int n = a_rank > b_rank ? a_rank : b_rank;
    for (int d = 0; d < n; d++) {
        int64_t da = d < a_rank ? a[d] : 1, db = d < b_rank ? b[d] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[d] = da == 1 ? db : da;
    }
    *out_rank = n;
    return 0;
}

/* wrong 1.2: takes the larger of two dims, so 0 with 1 gives 1 | expect: not the larger of the two */
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out,
                           int *out_rank) {
    int n = a_rank > b_rank ? a_rank : b_rank;
    for (int k = 1; k <= n; k++) {
        int64_t da = k <= a_rank ? a[a_rank - k] : 1;
        int64_t db = k <= b_rank ? b[b_rank - k] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[n - k] = da > db ? da : db;
    }
    *out_rank = n;
    return 0;
}

/* wrong 1.2: writes the k-th dim from the right into out[k - 1], so the shape comes out reversed | expect: in reverse order */
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out,
                           int *out_rank) {
    int n = a_rank > b_rank ? a_rank : b_rank;
    for (int k = 1; k <= n; k++) {
        int64_t da = k <= a_rank ? a[a_rank - k] : 1;
        int64_t db = k <= b_rank ? b[b_rank - k] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[k - 1] = da == 1 ? db : da;
    }
    *out_rank = n;
    return 0;
}

/* wrong 1.2: reads a dim the shorter shape lacks from before its array, not as 1 | expect: reads outside them */
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out,
                           int *out_rank) {
    int n = a_rank > b_rank ? a_rank : b_rank;
    for (int k = 1; k <= n; k++) {
        int64_t da = a[a_rank - k], db = b[b_rank - k];
        if (da != db && da != 1 && db != 1) return -1;
        out[n - k] = da == 1 ? db : da;
    }
    *out_rank = n;
    return 0;
}

/* wrong 1.3: lines src's dims up with target's from the left | expect: line them up from the right */
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides,
                            const int64_t *target, int target_rank, int64_t *out_strides) {
    if (src_rank > target_rank) return -1;
    for (int d = 0; d < target_rank; d++) {
        if (d >= src_rank)
            out_strides[d] = 0;
        else if (src[d] == target[d])
            out_strides[d] = src_strides[d];
        else if (src[d] == 1)
            out_strides[d] = 0;
        else
            return -1;
    }
    return 0;
}

/* wrong 1.3: keeps src's stride on a size-1 dim that target stretches | expect: so its stride is 0, not src's stride */
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides,
                            const int64_t *target, int target_rank, int64_t *out_strides) {
    if (src_rank > target_rank) return -1;
    for (int k = 1; k <= target_rank; k++) {
        int d = target_rank - k;
        if (k > src_rank)
            out_strides[d] = 0;
        else if (src[src_rank - k] != target[d] && src[src_rank - k] != 1)
            return -1;
        else
            out_strides[d] = src_strides[src_rank - k];
    }
    return 0;
}

/* wrong 1.3: works out contiguous strides from src's shape instead of using src_strides | expect: keep src_strides */
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides,
                            const int64_t *target, int target_rank, int64_t *out_strides) {
    (void)src_strides;
    if (src_rank > target_rank) return -1;
    int64_t stride = 1;
    for (int k = 1; k <= target_rank; k++) {
        int d = target_rank - k;
        if (k > src_rank) {
            out_strides[d] = 0;
            continue;
        }
        if (src[src_rank - k] == target[d])
            out_strides[d] = stride;
        else if (src[src_rank - k] == 1)
            out_strides[d] = 0;
        else
            return -1;
        stride *= src[src_rank - k];
    }
    return 0;
}

/* wrong 1.4: keeps the target's index on src's size-1 dims instead of reading index 0 | expect: src's size-1 dims */
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank,
                         int64_t *map) {
    int offset = target_rank - src_rank;
    int64_t total = 1;
    for (int d = 0; d < target_rank; d++) total *= target[d];
    for (int64_t flat = 0; flat < total; flat++) {
        int64_t index[8], r = flat;
        for (int d = target_rank - 1; d >= 0; d--) {
            index[d] = r % target[d];
            r /= target[d];
        }
        int64_t s = 0;
        for (int d = 0; d < src_rank; d++) s = s * src[d] + index[d + offset];
        map[flat] = s;
    }
}

/* wrong 1.4: maps target dim d onto src dim d, lining the shapes up from the left | expect: line them up from the right */
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank,
                         int64_t *map) {
    int64_t total = 1;
    for (int d = 0; d < target_rank; d++) total *= target[d];
    for (int64_t flat = 0; flat < total; flat++) {
        int64_t index[8], r = flat;
        for (int d = target_rank - 1; d >= 0; d--) {
            index[d] = r % target[d];
            r /= target[d];
        }
        int64_t s = 0;
        for (int d = 0; d < src_rank; d++) s = s * src[d] + (src[d] == 1 ? 0 : index[d]);
        map[flat] = s;
    }
}

/* wrong 1.4: ravels the source index with target's dims instead of src's | expect: ravel it with src's dims */
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank,
                         int64_t *map) {
    int offset = target_rank - src_rank;
    int64_t total = 1;
    for (int d = 0; d < target_rank; d++) total *= target[d];
    for (int64_t flat = 0; flat < total; flat++) {
        int64_t index[8], r = flat;
        for (int d = target_rank - 1; d >= 0; d--) {
            index[d] = r % target[d];
            r /= target[d];
        }
        int64_t s = 0;
        for (int d = 0; d < src_rank; d++) s = s * target[d + offset] + (src[d] == 1 ? 0 : index[d + offset]);
        map[flat] = s;
    }
}

/* wrong 1.5: adds grad[t] into out[t % numel(out)], as if broadcasting tiled out | expect: as if out were repeated */
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out,
                        const int64_t *out_shape, int out_rank) {
    int64_t n_out = 1, n = 1;
    for (int d = 0; d < out_rank; d++) n_out *= out_shape[d];
    for (int d = 0; d < rank; d++) n *= shape[d];
    memset(out, 0, (size_t)n_out * sizeof(float));
    for (int64_t t = 0; t < n; t++) out[t % n_out] += grad[t];
}

/* wrong 1.5: divides each sum by the number of copies, a mean instead of a sum | expect: the mean of the gradients */
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out,
                        const int64_t *out_shape, int out_rank) {
    int64_t n_out = 1, n = 1;
    for (int d = 0; d < out_rank; d++) n_out *= out_shape[d];
    for (int d = 0; d < rank; d++) n *= shape[d];
    memset(out, 0, (size_t)n_out * sizeof(float));
    for (int64_t t = 0; t < n; t++) {
        int64_t r = t, j = 0, scale = 1;
        for (int k = 1; k <= rank; k++) { /* unravel t from the right, ravel it onto out_shape */
            int64_t i = r % shape[rank - k];
            r /= shape[rank - k];
            if (k <= out_rank && out_shape[out_rank - k] != 1) j += i * scale;
            if (k <= out_rank) scale *= out_shape[out_rank - k];
        }
        out[j] += grad[t];
    }
    for (int64_t j = 0; j < n_out; j++) out[j] /= (float)(n / n_out);
}

/* wrong 1.5: never zeroes out, so each sum starts from the garbage out holds | expect: start each sum at 0 */
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out,
                        const int64_t *out_shape, int out_rank) {
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= shape[d];
    for (int64_t t = 0; t < n; t++) {
        int64_t r = t, j = 0, scale = 1;
        for (int k = 1; k <= rank; k++) { /* unravel t from the right, ravel it onto out_shape */
            int64_t i = r % shape[rank - k];
            r /= shape[rank - k];
            if (k <= out_rank && out_shape[out_rank - k] != 1) j += i * scale;
            if (k <= out_rank) scale *= out_shape[out_rank - k];
        }
        out[j] += grad[t];
    }
}
