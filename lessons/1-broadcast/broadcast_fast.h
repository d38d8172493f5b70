/*
 * broadcast_fast.h - the fast path of lesson 1's elementwise ops (broadcast_fast.c). The
 * reference, broadcast.c's binary(), offers it every forward; docs/1-broadcast.md ("How fast")
 * measures it.
 */
#ifndef BROADCAST_FAST_H
#define BROADCAST_FAST_H

#include <stdbool.h>
#include <stdint.h>

/* out[i] = a[i] op b[i] for every index i of `shape`, op one of + - * /: out is a new contiguous
 * array of that shape, a and b are read through their strides (0 along a broadcast dim). True
 * when done; false, with nothing written, when COURSE_KERNELS=reference (kernels.h), or for
 * what broadcast.c never passes: a shape that is not valid (shape_numel), a NULL array. */
bool broadcast_fast_binary(char op, int rank, const int64_t *shape, float *out, const float *a,
                           const int64_t *a_strides, const float *b, const int64_t *b_strides);

/* The backward of out = a op b over `shape`: ga[i] += g[i] * d out/d a and gb[i] += g[i] *
 * d out/d b for every index i, g contiguous, a, b, ga and gb through their strides (0 along a
 * broadcast dim, where the gradients of the copies add up). ga or gb is NULL when that operand
 * needs no gradient. Each row is summed before it is added into a broadcast gradient, so a sum
 * may round differently from the reference's element-by-element one. True when done; false,
 * with nothing written, when COURSE_KERNELS=reference, or as for broadcast_fast_binary (all four
 * strides arrays are needed, even that of a gradient that is NULL). */
bool broadcast_fast_binary_backward(char op, int rank, const int64_t *shape, const float *g, const float *a,
                                    const int64_t *a_strides, const float *b, const int64_t *b_strides, float *ga,
                                    const int64_t *ga_strides, float *gb, const int64_t *gb_strides);

#endif /* BROADCAST_FAST_H */
