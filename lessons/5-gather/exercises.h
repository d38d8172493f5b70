/*
 * exercises.h - lesson 5's exercises: what each function must do. You edit exercises.c;
 * this file, the tests and the points stay as the course ships them.
 *
 * Check your work with `make lesson5 test`. The "Exercises" section of docs/5-gather.md lists
 * them with their points.
 */
#ifndef LESSON5_EXERCISES_H
#define LESSON5_EXERCISES_H

#include <stdint.h>

#include "exercise.h"
#include "tensor.h"

/* 5.1 (the chapter's exercise 5): duplicate indices, by hand.
 *
 *     table = [[1, 2],      indices = [0, 0, 2]      out = gather_rows(table, indices)
 *              [3, 4],
 *              [5, 6]]
 *
 * Fill in every field with numbers you worked out on paper (docs/5-gather.md 6.1, 6.2). */
typedef struct {
    float out[6];              /* out, (3, 2), row-major */
    float grad_sum[6];         /* d loss / d table for loss = sum(out), (3, 2) row-major */
    float grad_weighted[6];    /* d loss / d table for loss = sum(w * out), w = [[1, 2], [3, 4], [5, 6]] */
    float grad_if_assigned[6]; /* what a backward that ASSIGNS (=) instead of adding (+=) would leave
                                * for that weighted loss, visiting the output rows in order */
} GatherByHand;

void ex5_1_gather_by_hand(GatherByHand *answer);

/* 5.2: the scatter-add backward (docs/5-gather.md 6.2). out was gather_rows(table, indices)
 * with n indices and rows of d; g (n * d, row-major) is its gradient. ADD each output row's
 * gradient into the table row it came from: gtable (V * d, row-major) may already hold
 * gradients, and a row named twice gets both. n or d may be 0. */
void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable);

/* 5.3: a gather that checks its indices (docs/5-gather.md 6.3). table is v rows of d floats
 * (row-major; any v >= 1 and d >= 0, not only the chapter's 3 by 2). If every index is in
 * 0..v-1, copy row indices[i] into row i of out (n * d) and return 0. Otherwise return -1, set
 * *bad_position to the position of the first bad index, and leave out untouched: check them
 * all before you copy anything, and never read outside the table. An index may be any int64_t,
 * 2^32 + 1 included: compare it whole, not cut to an int. */
int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n, float *out,
                              int64_t *bad_position);

/* 5.4: a sentence's vector, the mean of its words' vectors (docs/5-gather.md 6.4): table is
 * (V, D), words holds n >= 1 row indices. Build it on tensor_gather_rows (the test looks for it
 * on the tape), then average the rows, for example with lesson 2's tensor_mean_axis over axis 0
 * without keepdim: a (D,) tensor. Return NULL if an op fails. */
Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n);

#endif /* LESSON5_EXERCISES_H */
