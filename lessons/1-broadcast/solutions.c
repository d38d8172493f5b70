/*
 * solutions.c - reference solutions to lesson 1's exercises, for instructors and for checking
 * the tests themselves (`make test` runs the exercise tests against this file too).
 *
 * Written in plain C, the way a student could, and deliberately not by calling broadcast.c:
 * where broadcast.c counts dims from the left, these count them from the right.
 */
#include <stdlib.h>
#include <string.h>

#include "exercises.h"

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    /* (2,3) vs (1,3): 3 = 3, and 2 vs 1 -> 2. */
    *answer = (BroadcastByHand){
        .out_shape = {2, 3},
        /* b has one row; both rows of c read it, column by column */
        .b_source = {0, 1, 2, 0, 1, 2},
        .c = {11, 22, 33, 14, 25, 36},
        /* d sum(c) / d c is all ones; each a element fed exactly one c element */
        .grad_a = {1, 1, 1, 1, 1, 1},
        /* each b element fed two c elements, one per row: 1 + 1 */
        .grad_b = {2, 2, 2},
        /* now the two copies carry w's weights: column sums of w = [[1,0,2],[3,1,0]] */
        .grad_b_weighted = {1 + 3, 0 + 1, 2 + 0},
    };
}

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    int n = a_rank > b_rank ? a_rank : b_rank;
    /* k-th dim from the right: a[a_rank - k], or 1 if a has fewer than k dims */
    for (int k = 1; k <= n; k++) {
        int64_t da = k <= a_rank ? a[a_rank - k] : 1;
        int64_t db = k <= b_rank ? b[b_rank - k] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[n - k] = da == 1 ? db : da;
    }
    *out_rank = n;
    return 0;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    if (src_rank > target_rank) return -1;
    for (int k = 1; k <= target_rank; k++) {
        int d = target_rank - k;
        /* NOLINTNEXTLINE(bugprone-branch-clone): one rule per branch, as in the chapter */
        if (k > src_rank) {
            out_strides[d] = 0; /* src has no such dim */
        } else if (src[src_rank - k] == target[d]) {
            out_strides[d] = src_strides[src_rank - k];
        } else if (src[src_rank - k] == 1) {
            out_strides[d] = 0;
        } else {
            return -1;
        }
    }
    return 0;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
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
        for (int d = 0; d < src_rank; d++) {
            /* cppcheck-suppress uninitvar ; src broadcasts to target (exercises.h): d + offset is one of target's dims, all set above */
            int64_t i = src[d] == 1 ? 0 : index[d + offset];
            s = s * src[d] + i;
        }
        map[flat] = s;
    }
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    int64_t n_out = 1, n = 1;
    for (int d = 0; d < out_rank; d++) n_out *= out_shape[d];
    for (int d = 0; d < rank; d++) n *= shape[d];
    memset(out, 0, (size_t)n_out * sizeof(float));
    /* The chapter's backward: the index map says which source element each grad[t] came
     * from, and every copy's gradient is added (+=, never =) into that element. */
    int64_t *map = malloc((size_t)(n > 0 ? n : 1) * sizeof *map);
    if (!map) return;
    ex1_4_broadcast_map(shape, rank, out_shape, out_rank, map);
    for (int64_t t = 0; t < n; t++) out[map[t]] += grad[t];
    free(map);
}
