/*
 * exercises.c - lesson 5's exercises. This is the file you edit.
 *
 * Each function below is a stub: it says what to do, where the lesson explains it, and calls
 * EXERCISE_TODO() so the tests report it as TODO rather than wrong. Delete that line (and the
 * (void) casts) when you start, then run `make lesson5 test` to check your answer. 5.2 and 5.3
 * are plain C; 5.4 composes library ops.
 */
#include "exercises.h"
#include "gather.h"
#include "reduce.h"

/* 5.1: gather [0, 0, 2] from [[1,2],[3,4],[5,6]] by hand, then follow the gradients back
 * (exercises.h has the details). For each table row, count the output rows that copied it. */
void ex5_1_gather_by_hand(GatherByHand *answer) {
    EXERCISE_TODO();
    (void)answer;
}

/* 5.2: each output row's gradient goes back to the table row it was copied from, added to
 * what that row already has (docs/5-gather.md 6.2). */
void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable) {
    EXERCISE_TODO();
    (void)g, (void)indices, (void)n, (void)d, (void)gtable;
}

/* 5.3: first a loop that only checks the indices; then a loop that copies (docs/5-gather.md 6.3). */
int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n, float *out,
                              int64_t *bad_position) {
    EXERCISE_TODO();
    (void)table, (void)v, (void)d, (void)indices, (void)n, (void)out, (void)bad_position;
    return -1;
}

/* 5.4: tensor_gather_rows, then tensor_mean_axis over axis 0 (docs/5-gather.md 6.4). */
Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n) {
    EXERCISE_TODO();
    (void)table, (void)words, (void)n;
    return NULL;
}
