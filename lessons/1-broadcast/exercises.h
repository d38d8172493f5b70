/*
 * exercises.h - lesson 1's exercises: what each function must do. You edit exercises.c;
 * this file, the tests and the points stay as the course ships them.
 *
 * Check your work with `make lesson1 test`. The "Exercises" section of docs/1-broadcast.md lists
 * them with their points.
 */
#ifndef LESSON1_EXERCISES_H
#define LESSON1_EXERCISES_H

#include <stdint.h>

#include "exercise.h"

/* 1.1 (the chapter's exercise 1): broadcast [2,3] + [1,3] by hand.
 *
 *     a = [[1, 2, 3],      b = [[10, 20, 30]]      c = a + b
 *          [4, 5, 6]]
 *
 * Fill in every field with numbers you worked out on paper (docs/1-broadcast.md 2.2, 2.4, 2.5). */
typedef struct {
    int64_t out_shape[2];     /* the broadcast shape of (2,3) and (1,3) */
    int64_t b_source[6];      /* for each element of c in row-major order, the flat index of b it reads */
    float c[6];               /* c = a + b, row-major */
    float grad_a[6];          /* d loss / d a for loss = sum(c) */
    float grad_b[3];          /* d loss / d b for loss = sum(c) */
    float grad_b_weighted[3]; /* d loss / d b for loss = sum(w * c), w = [[1, 0, 2], [3, 1, 0]] */
} BroadcastByHand;

void ex1_1_broadcast_by_hand(BroadcastByHand *answer);

/* 1.2: numpy's broadcasting rule (docs/1-broadcast.md 2.2-2.3). Write the broadcast shape of
 * a (a_rank dims) and b (b_rank dims) into out and its rank into *out_rank, and return 0. If
 * the shapes cannot broadcast, return -1. Ranks may be 0 (a scalar) up to 8; dims may be 0. */
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank);

/* 1.3: the stride-0 view (docs/1-broadcast.md 2.4, "the library's way"). A tensor of shape src with
 * strides src_strides is to be read as the larger shape target. Write target_rank strides into
 * out_strides so that element (i0, i1, ...) of the target is read at sum(i_d * out_strides[d]):
 * a dim that src is missing, or has as 1 where target's is larger, gets stride 0; a matching
 * dim keeps its stride. Return 0, or -1 if src does not broadcast to target. */
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides);

/* 1.4: the chapter's index map (docs/1-broadcast.md 2.4, "the chapter's way"). src broadcasts to
 * target. For every row-major flat index t of target, write into map[t] the row-major flat
 * index of the element of a contiguous src that position t reads. */
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map);

/* 1.5: the backward of broadcasting (docs/1-broadcast.md 2.5). grad has shape `shape`;
 * out_shape broadcasts to `shape`. Overwrite out (numel(out_shape) floats, which may hold
 * garbage when you get it) with grad summed back onto out_shape: out[j] = the sum of grad[t]
 * over every t whose broadcast reads source element j. */
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank);

#endif /* LESSON1_EXERCISES_H */
