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
 * when done; false, with nothing written, when COURSE_KERNELS=reference (kernels.h). */
bool broadcast_fast_binary(char op, int rank, const int64_t *shape, float *out, const float *a,
                           const int64_t *a_strides, const float *b, const int64_t *b_strides);

#endif /* BROADCAST_FAST_H */
