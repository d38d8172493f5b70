/*
 * exercises.c - lesson 1's exercises. This is the file you edit.
 *
 * Each function below is a stub: it says what to do, where the lesson explains it, and calls
 * EXERCISE_TODO() so the tests report it as TODO rather than wrong. Delete that line (and the
 * (void) casts) when you start, then run `make lesson1 test` to check your answer. Use plain C
 * here: the point is to write the rule yourself, not to call the library's broadcast.c.
 */
#include "exercises.h"

/* 1.1: broadcast [2,3] + [1,3] by hand (exercises.h has the tensors). Work on paper first:
 * right-align the shapes (docs/1-broadcast.md 2.2), write out which b element each of c's six
 * elements reads (2.4), then add up the gradients that flow back into each b element (2.5).
 * Then fill in every field, for example answer->out_shape[0] = ...; */
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    EXERCISE_TODO();
    (void)answer;
}

/* 1.2: return numpy's broadcast shape of a and b, or -1 (docs/1-broadcast.md 2.2-2.3).
 * Align the shapes on the right; a missing dim counts as 1; each pair must be equal or 1. */
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    EXERCISE_TODO();
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    return -1;
}

/* 1.3: the strides that read src as the larger shape target (docs/1-broadcast.md 2.4).
 * Walk target's dims; line each one up with src's dim from the right; choose 0 or src's stride. */
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    EXERCISE_TODO();
    (void)src, (void)src_strides, (void)src_rank, (void)target, (void)target_rank, (void)out_strides;
    return -1;
}

/* 1.4: the chapter's index map (docs/1-broadcast.md 2.4). For each flat t: unravel t into a
 * target index (last dim first: % then /), map it onto src (index 0 on src's size-1 dims),
 * and ravel that back into a flat src index. */
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    EXERCISE_TODO();
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map;
}

/* 1.5: sum grad (shape `shape`) back onto out_shape (docs/1-broadcast.md 2.5). Zero out
 * first, then add every grad[t] into the source element its broadcast read. */
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    EXERCISE_TODO();
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank;
}
