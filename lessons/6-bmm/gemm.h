/*
 * gemm.h - lesson 6's fast float32 matrix product: cache blocking, packing and a
 * register-blocked micro-kernel, with the kernel chosen at run time for the CPU it runs on
 * (docs/6-bmm.md, section 7.7). tensor_matmul's 2-D products run on it.
 *
 * Letters as in bmm.c: a is (m, k), b is (k, n), out is (m, n); rs and cs are a matrix's row
 * and column strides, in elements.
 */
#ifndef GEMM_H
#define GEMM_H

#include <stdint.h>

/* The tile of out the micro-kernel keeps in registers (MR x NR), and the cache blocks, in
 * floats: an MC x KC block of a and a KC x NC block of b are packed at a time. Exposed so that
 * the tests can aim at the sizes around them. */
enum { GEMM_MR = 6, GEMM_NR = 16, GEMM_MC = 144, GEMM_KC = 256, GEMM_NC = 4096 };

/* out[i, j] += sum over p of a[i, p] * b[p, j], for an (m, k) a, a (k, n) b and an (m, n) out,
 * each read through its own row and column strides, so any view works: transposed, expanded
 * (stride 0), offset, negative strides. It adds into out, like every backward; for a fresh
 * product, out starts at zero. out must not overlap a or b, and two elements of out must not
 * share an address (no stride 0 in out). Any of m, k, n may be 0: then it adds nothing.
 * The same sums as lesson 6's triple loop, in another order, so results may differ from it in
 * float32's last places (the tests bound by how much). It allocates one buffer per call
 * (a few hundred KB at most) and frees it before returning; without memory it falls back to
 * the triple loop. */
void gemm_f32(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs, float *out,
              int64_t out_rs, int64_t out_cs, int64_t m, int64_t k, int64_t n);

/* The micro-kernel gemm_f32 uses now: "avx2+fma" (x86-64 CPUs with AVX2 and FMA) or
 * "generic" (plain C, any CPU). The environment variable GEMM_KERNEL=generic, read on every
 * call, forces the plain one, so the tests (and the benchmark) can run both on one machine. */
const char *gemm_kernel_name(void);

#endif /* GEMM_H */
