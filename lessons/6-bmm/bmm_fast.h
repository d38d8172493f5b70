/*
 * bmm_fast.h - lesson 6's fast product (bmm_fast.c), as the other fast files of the same build
 * call it (lesson 7's linear layer), and the sizes of its tiles and blocks, for the tests.
 * Its kernel for the table is the matmul entry (kernels.h).
 *
 * Letters as in bmm.c: a is (m, k), b is (k, n), out is (m, n); rs and cs are a matrix's row
 * and column strides, in elements.
 */
#ifndef BMM_FAST_H
#define BMM_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "simd.h"

/* The columns of the tile of out the micro-kernel keeps in registers (its rows are 6 or 8, as
 * the build's registers allow), and the cache blocks, in floats: an MC x KC block of a and a
 * KC x NC block of b are packed at a time. */
enum { GEMM_NR = 16, GEMM_MC = 144, GEMM_KC = 256, GEMM_NC = 4096 };

/* Products whose packed blocks fit in this many floats (128 KB) use a buffer of their thread's
 * instead of allocating one: lesson 7 makes thousands of small products a step. */
enum { GEMM_SMALL_BUFFER = 32768 };

/* Products of at most this many multiply-adds (8 x 8 x 8) are left to the reference kernel. */
#define GEMM_SMALL 512

/* out = a @ b + row: an (m, k) a and an (m, n) out, both contiguous, b through its strides, and
 * row's n floats (row_stride apart) added to every row of out, or, with row NULL, the product
 * stored over out (whatever it held). The row is added to each tile's sums as the tile is
 * stored, so out is written once. False, with out untouched, for a product the fast kernel
 * hands to the reference (small, or k = 0) or whose buffer cannot be allocated: the caller
 * computes it. Named for its build (simd.h): the fast files of one build call each other's. */
#define gemm_plus_row SIMD_NAME(gemm_plus_row)
bool gemm_plus_row(const float *a, int64_t m, int64_t k, const float *b, int64_t b_rs, int64_t b_cs, const float *row,
                   int64_t row_stride, float *out, int64_t n);

#endif /* BMM_FAST_H */
