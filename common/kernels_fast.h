/*
 * kernels_fast.h - the fast kernels, which kernels.c puts in the table (kernels.h) in place of
 * the reference ones, and what they share. Only the fast files, kernels.c and the tests
 * include it: an op reaches a fast kernel through the table alone.
 *
 * Each fast kernel has the signature of the reference kernel it replaces, and owns its
 * preconditions: given an input it has no loop for, it calls that reference kernel with the
 * same arguments and returns.
 */
#ifndef KERNELS_FAST_H
#define KERNELS_FAST_H

#include "kernels.h"

StridedKernel strided_copy_fast, strided_accumulate_fast; /* common/tensor_fast.c */
BinaryKernel binary_fast;                                 /* lessons/1-broadcast/broadcast_fast.c */
BinaryBackwardKernel binary_backward_fast;
SoftmaxRowsKernel softmax_rows_fast;                      /* lessons/3-softmax/softmax_fast.c */
SoftmaxBackwardKernel softmax_backward_fast;
CrossEntropyKernel cross_entropy_fast;
CrossEntropyBackwardKernel cross_entropy_backward_fast;
GatherRowsKernel gather_rows_fast;                        /* lessons/5-gather/gather_fast.c */
MatmulKernel matmul_fast;                                 /* lessons/6-bmm/gemm.c */
LinearKernel linear_fast;                                 /* lessons/7-train/train_fast.c */
GeluKernel gelu_fast;
GeluBackwardKernel gelu_backward_fast;
LayerNormKernel layer_norm_fast;
LayerNormBackwardKernel layer_norm_backward_fast;
AttentionKernel attention_fast;
AttentionBackwardKernel attention_backward_fast;
AdamWKernel adamw_fast;

/* ==== shared by the fast kernels (common/tensor_fast.c) ===================================== */

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

/* x, a view of rank >= 1, as its rows of contiguous floats: x's own memory when its last dim
 * is contiguous and its rows follow one another, else a copy of x made in `space` (numel
 * floats) by the core's transposing copy. The one way a fast kernel makes an input
 * contiguous. */
const float *kernels_contiguous(const Tensor *x, float *space);

/* The fast kernels' one summation policy, for every sum of a row of floats they add up (the
 * core's sums over an axis, and so lesson 2's; lesson 1's gradient of an operand broadcast
 * along a row): eight running float sums side by side, one vector (a single running sum makes
 * every add wait for the one before), over chunks of KERNELS_SUM_CHUNK floats, each chunk's
 * total added in double. A float running sum loses more digits the larger it grows (over 16M
 * floats, by 5e-4); a chunk's cannot grow far, and a chunk whose running sums overflow float
 * (+inf and -inf would meet as nan) is added again in double. It is never less exact than the
 * reference's, which adds one element at a time into a float, so where a reference adds in
 * double (lesson 3's sum of exps), its fast kernel does too, in lanes of doubles. Lesson 6's
 * matmul sums in registers, as every BLAS does (docs/6-bmm.md). */
enum { KERNELS_SUM_CHUNK = 1024 };
double kernels_sum(const float *x, int64_t n);

/* Results larger than this are written with streaming stores, which send whole cache lines to
 * memory without reading them into the cache first: larger than the cache a core can count
 * on, such a result is not in the cache when it is read next anyway. */
#define KERNELS_STREAM_BYTES (16 << 20)

/* dst[i] = src[i] for i < n with streaming stores (x86-64, dst on 16 bytes, n a multiple of 4;
 * else memcpy). For fast kernels that found kernels_mode() to be KERNELS_NATIVE: it does not
 * ask again, since it is called once per row. After the last one, and before anything reads
 * dst, call kernels_stream_end(). n <= 0 copies nothing; a NULL dst or src records an error. */
void kernels_copy_stream(float *dst, const float *src, int64_t n);
void kernels_stream_end(void);

#endif /* KERNELS_FAST_H */
