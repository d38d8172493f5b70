/*
 * kernels_fast.h - what every fast file includes. Its kernels are static, each with the
 * signature of the reference kernel it replaces, and the file ends by exporting them:
 *
 *     KERNELS_FAST(broadcast, .binary = binary_fast, .binary_backward = binary_backward_fast);
 *
 * broadcast_kernels_avx2 in the avx2 build, and so on: the tables KERNELS_LESSON registers.
 */
#ifndef KERNELS_FAST_H
#define KERNELS_FAST_H

#include "kernels.h"
#include "simd.h"
#include "tensor.h"

#define KERNELS_FAST(topic, ...) const Kernels SIMD_NAME(topic##_kernels) = {__VA_ARGS__}

/* x (rank >= 1) as contiguous floats: x itself, or its copy in `space` (room for its elements),
 * made by the table's copy. */
static inline const float *kernels_contiguous(int rank, const int64_t *shape, const float *x, const int64_t *strides,
                                              float *space) {
    if (strides_are_contiguous(shape, rank, strides)) return x;
    int64_t contiguous[TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, contiguous);
    kernels()->copy(rank, shape, space, contiguous, x, strides);
    return space;
}

#endif /* KERNELS_FAST_H */
