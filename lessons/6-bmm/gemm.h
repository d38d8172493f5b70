/*
 * gemm.h - lesson 6's fast float32 matrix product: cache blocking, packing and a
 * register-blocked micro-kernel, with the kernel chosen at run time for the CPU it runs on
 * (docs/6-bmm.md, section 7.7). Its kernel for the table is matmul_fast (kernels_fast.h);
 * this header is gemm_f32's, for the tests and the bench, and gemm_f32_plus_row's, for lesson
 * 7's linear layer.
 *
 * Letters as in bmm.c: a is (m, k), b is (k, n), out is (m, n); rs and cs are a matrix's row
 * and column strides, in elements.
 */
#ifndef GEMM_H
#define GEMM_H

#include <stdbool.h>
#include <stdint.h>

/* The tile of out the micro-kernel keeps in registers (MR x NR; the AVX2 kernel's has 6 rows,
 * all its 16 registers hold), and the cache blocks, in floats: an MC x KC block of a and a
 * KC x NC block of b are packed at a time. Exposed so that the tests can aim at the sizes
 * around them. */
enum { GEMM_MR = 8, GEMM_NR = 16, GEMM_MC = 144, GEMM_KC = 256, GEMM_NC = 4096 };

/* Products whose packed blocks fit in this many floats (128 KB) use a buffer of their thread's
 * instead of allocating one: lesson 7 makes thousands of small products a step. */
enum { GEMM_SMALL_BUFFER = 32768 };

/* out[i, j] += sum over p of a[i, p] * b[p, j], for an (m, k) a, a (k, n) b and an (m, n) out,
 * each read through its own row and column strides, so any view works: transposed, expanded
 * (stride 0), offset, negative strides. It adds into out (the table's matmul_fast can also
 * store over it: kernels.h). out must not overlap a or b, and two elements of out must not
 * share an address (no stride 0 in out). Any of m, k, n may be 0: then it adds nothing.
 * The same sums as lesson 6's triple loop, in another order, so results may differ from it in
 * float32's last places (the tests bound by how much). Unless the product is small, it
 * allocates one buffer per call (up to about 4.3 MB: a KC x NC block of b and an MC x KC block
 * of a) and frees it before returning. True, or false with nothing added when that buffer
 * cannot be allocated or a, b or out is NULL. Its micro-kernel is the one kernels_name() names: AVX-512, AVX2+FMA or
 * plain C. */
bool gemm_f32(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs, float *out,
              int64_t out_rs, int64_t out_cs, int64_t m, int64_t k, int64_t n);

/* out = a @ b + row: an (m, k) a and an (m, n) out, both contiguous, b through its strides, and
 * row's n floats (row_stride apart) added to every row of out, or, with row NULL, the product
 * stored over out (whatever it held). The row is added to each tile's sums as the tile is
 * stored, so out is written once. The table's linear entry (lessons/7-train/train_fast.c). False,
 * with out untouched, for a product the fast kernels do not take (small, or k = 0, or under
 * COURSE_KERNELS=reference) or whose buffer cannot be allocated: the caller computes it. */
bool gemm_f32_plus_row(const float *a, int64_t m, int64_t k, const float *b, int64_t b_rs, int64_t b_cs,
                       const float *row, int64_t row_stride, float *out, int64_t n);

/* Products of at most this many multiply-adds (8 x 8 x 8) are left to the reference kernel. */
#define GEMM_SMALL 512

#endif /* GEMM_H */
