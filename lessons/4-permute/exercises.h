/*
 * exercises.h - lesson 4's exercises: what each function must do. You edit exercises.c;
 * this file, the tests and the points stay as the course ships them.
 *
 * Check your work with `make lesson4 test`. The "Exercises" section of docs/4-permute.md lists
 * them with their points.
 */
#ifndef LESSON4_EXERCISES_H
#define LESSON4_EXERCISES_H

#include <stdint.h>

#include "exercise.h"

/* 4.1 (the chapter's exercise 4): a permute followed by a sum, by hand.
 *
 *     x = [[1, 2, 3],      y = permute(x, (1, 0))
 *          [4, 5, 6]]
 *
 * Fill in every field with numbers you worked out on paper (docs/4-permute.md 5.1, 5.4). */
typedef struct {
    int64_t y_shape[2];     /* the shape of y */
    float y[6];             /* y's elements in row-major order */
    float grad_sum[6];      /* d loss / d x for loss = sum(y), in x's row-major order */
    float grad_weighted[6]; /* d loss / d x for loss = sum(w * y), */
                            /* with w = [[1, 2], [3, 4], [5, 6]] */
} PermuteByHand;

void ex4_1_permute_by_hand(PermuteByHand *answer);

/* 4.2: the inverse of a permutation (docs/4-permute.md 5.2). dims is a permutation of
 * 0..n-1 (n from 0 to 8); write into inv the permutation that undoes it: permuting by dims
 * and then by inv gives back the original order. */
void ex4_2_inverse_permutation(const int *dims, int n, int *inv);

/* 4.3: permute as a view (docs/4-permute.md 5.1). A tensor with `rank` dims (0 to 8) has the
 * given shape and strides; dims (rank entries) is a permutation of 0..rank-1, all
 * non-negative. Write the shape and strides of the permuted view, in which output dim i is
 * input dim dims[i]. */
void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims, int64_t *out_shape,
                        int64_t *out_strides);

/* 4.4: the copy that moves data (docs/4-permute.md 5.3). A view of `rank` dims (0 to 8) reads
 * data[offset + sum(i_d * strides[d])] at index (i_0, ..., i_{rank-1}); strides may be
 * negative or 0, and dims may be 0. Write its elements into out in row-major order of
 * `shape`: out[0] is element (0, ..., 0), the last index moves fastest. */
void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides, int64_t offset,
                           float *out);

#endif /* LESSON4_EXERCISES_H */
