/*
 * kernels.h - the seam between every op and its fast path.
 *
 * An op that has a fast path does its work in two parts. The op (in TOPIC.c) checks its
 * inputs, works out the shape, allocates the result and records the backward; the loop that
 * computes the numbers is a kernel, a plain function over arrays and strides. TOPIC.c writes
 * each kernel once, as the chapter's loop: the reference kernel. A fast file (TOPIC_fast.c)
 * may hold a faster kernel for the same job, with the same signature.
 *
 * The op never calls a kernel by name. It calls the entry of the table below:
 *
 *     kernels()->binary(op, rank, shape, out, a, a_strides, b, b_strides);
 *
 * and the table, filled once, when it is first asked for, points each entry at the reference
 * kernel or at the fast one (kernels.c says which, for each setting). A fast kernel that
 * cannot take an input (a layout it has no loop for, memory it cannot get) hands it to the
 * reference kernel, with the same arguments, and nothing else happens: the results are the
 * reference's, up to the order in which sums are added (docs/0-foundations.md, "Reference and fast paths: the seam").
 * Kernels trust their arguments: the op has checked them. They are not part of the library's
 * API (docs/bad-inputs.md): call the ops.
 *
 * Which kernels run is the environment variable COURSE_KERNELS, read once, at the first call:
 *   reference   every entry is the reference kernel: every op runs the chapter's loop
 *   portable    the fast kernels, their vector code compiled for the CPU family's baseline
 *               (SSE2 on x86-64, NEON on aarch64): the same code on every CPU
 *   native      (or unset) the same fast kernels, their vector code compiled for this CPU's
 *               instructions: AVX2 and FMA on x86-64 where it has them (and AVX-512 in the
 *               core's transposing copy, lesson 6's matmul and lesson 7's linear layer, GELU
 *               and attention); on other CPUs, as portable
 *   avx2        native, but never AVX-512 (what a CPU without it would run)
 * Any other value is reported once on stderr and runs the reference.
 */
#ifndef KERNELS_H
#define KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* ==== the kinds of kernel ================================================================= */
/* Letters as in the lessons. Every output array is contiguous unless it has strides. */

/* strided_copy and strided_accumulate (tensor.h): dst[...] = (or +=) src[...] over shape */
typedef void StridedKernel(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                           const int64_t *src_strides);
/* lesson 1: out = a op b over shape, op one of + - * /, a and b read through their strides
 * (0 along a broadcast dim), out contiguous */
typedef void BinaryKernel(char op, int rank, const int64_t *shape, float *out, const float *a,
                          const int64_t *a_strides, const float *b, const int64_t *b_strides);
/* lesson 1: the backward of out = a op b: ga[...] += g * d out/d a, gb[...] += g * d out/d b,
 * g contiguous in shape; ga or gb NULL when that input needs no gradient. With store, = instead
 * of += (over whatever they held): only when no dim longer than 1 has stride 0 in ga or gb and
 * they are not the same buffer, so that each element is written once. */
typedef void BinaryBackwardKernel(char op, int rank, const int64_t *shape, const float *g, const float *a,
                                  const int64_t *a_strides, const float *b, const int64_t *b_strides, float *ga,
                                  const int64_t *ga_strides, float *gb, const int64_t *gb_strides, bool store);
/* lesson 3: softmax (log_softmax) of every row of x along its last dim, into out */
typedef void SoftmaxRowsKernel(bool log_softmax, const Tensor *x, float *out);
/* lesson 3: the backward of softmax_rows over `rows` contiguous rows of d, from its output y
 * and that output's gradient g: gx += the gradient of its input */
typedef void SoftmaxBackwardKernel(bool log_softmax, int64_t rows, int64_t d, const float *y, const float *g,
                                   float *gx);
/* lesson 3: the sum over the rows of logits (N, C) of -log_softmax(row)[targets[row]] */
typedef double CrossEntropyKernel(const Tensor *logits, const int64_t *targets);
/* lesson 3: its backward, times scale: gx (N, C, contiguous) += scale * (softmax(row) - the
 * one-hot row of its target) */
typedef void CrossEntropyBackwardKernel(const Tensor *logits, const int64_t *targets, float scale, float *gx);
/* lesson 5: out[i, :] = table[indices[i], :] for i < n, out (n, D) */
typedef void GatherRowsKernel(const Tensor *table, const int64_t *indices, int64_t n, float *out);
/* lesson 6: out[i, j] += sum over p of a[i, p] * b[p, j] when accumulate, out[i, j] = that sum
 * (whatever out held, even nan) when not: a BLAS's beta of 1 or 0. Each matrix through its row
 * and column strides; out overlaps neither input */
typedef void MatmulKernel(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs,
                          float *out, int64_t out_rs, int64_t out_cs, int64_t m, int64_t k, int64_t n, bool accumulate);
/* lesson 7: the linear layer: out (rows, n) = x (rows, k) @ w + b, b's n floats (b_stride apart)
 * in every row of out; without b (NULL), the product stored over out (whatever it held). x and
 * out contiguous, w (k, n) through its strides; out overlaps none of x, w and b. With k = 0,
 * every row of out is b (zeros without b). */
typedef void LinearKernel(const float *x, int64_t rows, int64_t k, const float *w, int64_t w_rs, int64_t w_cs,
                          const float *b, int64_t b_stride, float *out, int64_t n);
/* lesson 7: out = gelu(x) and tanh_u = tanh(u(x)), both contiguous in shape */
typedef void GeluKernel(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, float *out,
                        float *tanh_u);
/* lesson 7: gx += g * gelu'(x) when accumulate, gx = g * gelu'(x) (over whatever gx held) when
 * not; from the forward's tanh_u; gx, g and tanh_u contiguous */
typedef void GeluBackwardKernel(int rank, const int64_t *shape, const float *x, const int64_t *x_strides,
                                const float *tanh_u, const float *g, float *gx, bool accumulate);
/* lesson 7: layer norm of `rows` contiguous rows of c floats: out = (x - mean) * rstd * gamma +
 * beta, rstd = 1/sqrt(var + eps); each row's mean and rstd go to stats (two floats a row) */
typedef void LayerNormKernel(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta,
                             float eps, float *out, float *stats);
/* its backward, from the forward's stats: gx += d/dx, ggamma += g * xhat, gbeta += g (summed over
 * the rows); any of gx, ggamma, gbeta NULL when that input needs no gradient */
typedef void LayerNormBackwardKernel(int64_t rows, int64_t c, const float *x, const float *gamma, const float *stats,
                                     const float *g, float *gx, float *ggamma, float *gbeta);
/* lesson 7: attention over every batch b and head h: for each query row i,
 *   w = softmax over j of (scale * q_i . k_j + mask[i, j]),  y_i = sum over j of w_j v_j;
 * q, k, v and y are (B, T, H*D) and contiguous, head h in columns h*D .. h*D + D-1 of each
 * row; mask is (T, T); the weights w, (B, H, T, T), are kept for the backward */
typedef void AttentionKernel(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                             const float *v, const float *mask, float scale, float *weights, float *y);
/* its backward, from the forward's weights and gy (B, T, H*D): gq, gk, gv += their gradients
 * when accumulate, = them (over whatever they held) when not; any of the three NULL when that
 * input needs no gradient; with accumulate, any of them may be the same buffer */
typedef void AttentionBackwardKernel(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                                     const float *v, const float *weights, float scale, const float *gy, float *gq,
                                     float *gk, float *gv, bool accumulate);
/* lesson 7: one AdamW step over n parameters (train.h's adamw_update) */
typedef void AdamWKernel(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr,
                         float beta1, float beta2, float eps, float weight_decay);

/* ==== the table ============================================================================ */

typedef struct {
    StridedKernel *copy, *accumulate;
    BinaryKernel *binary;
    BinaryBackwardKernel *binary_backward;
    SoftmaxRowsKernel *softmax_rows;
    SoftmaxBackwardKernel *softmax_backward;
    CrossEntropyKernel *cross_entropy;
    CrossEntropyBackwardKernel *cross_entropy_backward;
    GatherRowsKernel *gather_rows;
    MatmulKernel *matmul;
    LinearKernel *linear;
    GeluKernel *gelu;
    GeluBackwardKernel *gelu_backward;
    LayerNormKernel *layer_norm;
    LayerNormBackwardKernel *layer_norm_backward;
    AttentionKernel *attention;
    AttentionBackwardKernel *attention_backward;
    AdamWKernel *adamw;
} Kernels;

/* The table, filled from COURSE_KERNELS and the CPU at the first call. */
const Kernels *kernels(void);

/* The reference kernels, the chapter's loops: each is written in the file named. */
StridedKernel strided_copy_reference, strided_accumulate_reference; /* common/tensor.c */
BinaryKernel binary_reference;                                      /* lessons/1-broadcast/broadcast.c */
BinaryBackwardKernel binary_backward_reference;
SoftmaxRowsKernel softmax_rows_reference;                           /* lessons/3-softmax/softmax.c */
SoftmaxBackwardKernel softmax_backward_reference;
CrossEntropyKernel cross_entropy_reference;
CrossEntropyBackwardKernel cross_entropy_backward_reference;
GatherRowsKernel gather_rows_reference;                             /* lessons/5-gather/gather.c */
MatmulKernel matmul_reference;                                      /* lessons/6-bmm/bmm.c */
LinearKernel linear_reference;                                      /* lessons/7-train/train.c */
GeluKernel gelu_reference;
GeluBackwardKernel gelu_backward_reference;
LayerNormKernel layer_norm_reference;
LayerNormBackwardKernel layer_norm_backward_reference;
AttentionKernel attention_reference;
AttentionBackwardKernel attention_backward_reference;
AdamWKernel adamw_reference;

/* ==== what runs ============================================================================ */

typedef enum { KERNELS_REFERENCE, KERNELS_PORTABLE, KERNELS_NATIVE } KernelMode;

/* The setting the table was filled for (native only on a CPU that has vector instructions the
 * portable kernels do not use: on x86-64, AVX2 and FMA). */
KernelMode kernels_mode(void);
/* True when the fast kernels may use AVX-512 (native, on a CPU that has it): the core's
 * transposing copy, lesson 6's matmul, lesson 7's linear layer, GELU forward and attention. */
bool kernels_avx512(void);
/* What runs, as a word for messages and benchmarks: "reference", "portable", "avx2" or
 * "avx512". */
const char *kernels_name(void);

/* Fills the table again as COURSE_KERNELS=setting would (NULL: as if it were unset), and
 * returns kernels_name(). For tests and benchmarks that compare the settings in one program;
 * call it before any thread starts. */
const char *kernels_use(const char *setting);
/* The setting the table was last filled for, one of reference, portable, native and avx2 (an
 * unknown one is reported as reference): kernels_use(kernels_setting()) changes nothing. */
const char *kernels_setting(void);

#endif /* KERNELS_H */
