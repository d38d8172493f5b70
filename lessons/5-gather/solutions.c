/*
 * solutions.c - reference solutions to lesson 5's exercises, for instructors and for checking
 * the tests themselves (`make test` runs the exercise tests against this file too).
 */
#include <string.h>

#include "exercises.h"
#include "gather.h"
#include "reduce.h"

void ex5_1_gather_by_hand(GatherByHand *answer) {
    *answer = (GatherByHand){
        .out = {1, 2, 1, 2, 5, 6},
        /* row 0 was copied twice, row 1 never, row 2 once */
        .grad_sum = {2, 2, 0, 0, 1, 1},
        /* row 0 collects the weights of output rows 0 and 1; row 2 those of output row 2 */
        .grad_weighted = {1 + 3, 2 + 4, 0, 0, 5, 6},
        /* with =, output row 1 overwrites what output row 0 wrote into table row 0 */
        .grad_if_assigned = {3, 4, 0, 0, 5, 6},
    };
}

void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable) {
    for (int64_t i = 0; i < n; i++) {
        float *row = gtable + indices[i] * d;
        for (int64_t j = 0; j < d; j++) row[j] += g[i * d + j];
    }
}

int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n, float *out,
                              int64_t *bad_position) {
    for (int64_t i = 0; i < n; i++) {
        if (indices[i] < 0 || indices[i] >= v) {
            *bad_position = i;
            return -1;
        }
    }
    for (int64_t i = 0; i < n; i++) memcpy(out + i * d, table + indices[i] * d, (size_t)d * sizeof(float));
    return 0;
}

Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n) {
    Tensor *rows = tensor_gather_rows(table, words, n); /* (n, D) */
    return tensor_mean_axis(rows, 0, false);            /* (D,) */
}
