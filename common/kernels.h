/*
 * kernels.h - the fast paths, and the one switch that turns them all off.
 *
 * Every op in the course is written once as a plain loop: the reference, what the lessons
 * teach. Before it runs that loop it offers the work to its fast path (this file for the
 * core's strided copies and sums; TOPIC_fast.c beside a lesson for its ops). A fast path that
 * cannot take the input returns false, and the reference loop runs. Either way the result is
 * the same numbers, up to the order in which a sum is added; the tests hold every fast path to
 * its reference (docs/testing.md).
 *
 * The switch is the environment variable COURSE_KERNELS, read at every call:
 *   reference   every op runs its plain loop (the fast paths all return false)
 *   generic     the fast paths, in plain C
 *   avx2        the fast paths with AVX2 and FMA, where the CPU has them (else generic)
 *   native      (or unset) avx2, and AVX-512 in lesson 6's gemm where the CPU has it
 * Any other value is reported once on stderr and runs the reference. Set it before the
 * program starts threads: getenv is not safe against a setenv in another thread.
 */
#ifndef KERNELS_H
#define KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

typedef enum { KERNELS_REFERENCE, KERNELS_GENERIC, KERNELS_NATIVE } Kernels;

/* What COURSE_KERNELS asks for, given this CPU: KERNELS_NATIVE (avx2 or native) only where it
 * has AVX2 and FMA. */
Kernels kernels_mode(void);
/* True when the fast paths may use AVX-512 too: COURSE_KERNELS native (or unset) on a CPU
 * that has it. */
bool kernels_avx512(void);
/* What runs, as a word for messages and benchmarks: "reference", "generic", "avx2" or
 * "avx512". */
const char *kernels_name(void);

/* Merges the dims that can be walked as one (for every operand, dims_merge says so) and drops
 * dims of size 1: a contiguous (4096,4096) becomes one dim of 16M elements. Writes the m
 * merged dims, outermost first, and returns m (0 for a single element); -1, having written
 * nothing, with an error, for a rank outside 0..TENSOR_MAX_RANK, operands outside
 * 0..NDITER_MAX_OPERANDS or a NULL array. */
int kernels_merge_dims(int rank, const int64_t *shape, int n_operands, const int64_t *const *strides,
                       int64_t *merged_shape, int64_t merged_strides[][TENSOR_MAX_RANK]);

/* The strided loop with its last dim left to the caller: the iterator visits every merged dim
 * but the last, and the caller walks the last in a plain inner loop that the compiler can
 * vectorize. *inner_n receives its length and inner_strides[k] operand k's stride along it.
 *
 *   NdIter it;
 *   int64_t n, step[2];
 *   nditer_init_inner(&it, rank, shape, 2, (const int64_t *[]){dst_strides, src_strides}, &n, step);
 *   while (nditer_next(&it))
 *       for (int64_t i = 0; i < n; i++) dst[it.offset[0] + i * step[0]] = src[it.offset[1] + i * step[1]];
 *
 * It fails like nditer_init (an iterator that visits nothing), also for a NULL inner_n or
 * inner_strides; an empty shape visits nothing. */
void nditer_init_inner(NdIter *it, int rank, const int64_t *shape, int n_operands, const int64_t *const *strides,
                       int64_t *inner_n, int64_t *inner_strides);

/* The fast paths of strided_copy and strided_accumulate (tensor.h), with the same arguments and
 * preconditions. True when done; false, having touched nothing, when COURSE_KERNELS=reference,
 * the arguments are not valid (a NULL array among them; the reference then reports them), or
 * dst and src may share memory (the fast loops reorder the elements; the reference's order
 * then decides). */
bool kernels_copy(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                  const int64_t *src_strides);
bool kernels_accumulate(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                        const int64_t *src_strides);
/* dst[i] += src[i] for n contiguous floats: kernels_accumulate of one dim, for a backward that
 * adds a whole gradient onto another (reshape's). True when done; false, having touched
 * nothing, as for kernels_accumulate (n < 0 included). */
bool kernels_add(float *dst, const float *src, int64_t n);

/* Results larger than this are written with streaming stores, which send whole cache lines to
 * memory without reading them into the cache first: larger than the cache a core can count
 * on, such a result is not in the cache when it is read next anyway. */
#define KERNELS_STREAM_BYTES (16 << 20)

/* dst[i] = src[i] for i < n with streaming stores (x86-64, dst on 16 bytes, n a multiple of 4;
 * else memcpy). For fast paths that found kernels_mode() to be KERNELS_NATIVE: it does not ask
 * again, since it is called once per row. After the last one, and before anything reads dst,
 * call kernels_stream_end(). n <= 0 copies nothing; a NULL dst or src records an error. */
void kernels_copy_stream(float *dst, const float *src, int64_t n);
void kernels_stream_end(void);

#endif /* KERNELS_H */
