/*
 * kernels.h - the seam between every op and its fast path (docs/0-foundations.md). An op (in
 * TOPIC.c) checks its inputs, allocates and records; the loop that computes the numbers is a
 * kernel over arrays and strides, called through this table, never by name:
 *
 *     kernels()->binary(op, rank, shape, out, a, a_strides, b, b_strides);
 *
 * Each entry is a reference kernel (the chapter's plain loop) or one build of a fast kernel
 * (TOPIC_fast.c, compiled once per build of the CPU family: common/simd.h), which hands the
 * reference what it has no loop for. Kernels trust their arguments. The table is filled at the
 * first call, from COURSE_KERNELS:
 *   reference     every entry is the reference kernel: every op runs the chapter's loop
 *   portable      the portable build: the family's baseline (SSE2 on x86-64, NEON on aarch64)
 *   native        (or unset) the best build this CPU runs: avx512, avx2 or portable
 *   avx2, avx512  that build, where the CPU runs it, else portable (avx2: what a CPU without
 *                 AVX-512 runs); kernels_name() says which ran
 * Any other value is reported once on stderr and runs the reference.
 */
#ifndef KERNELS_H
#define KERNELS_H

#include <stdbool.h>
#include <stdint.h>

/* ==== the kinds of kernel ================================================================= */
/* Outputs are contiguous unless they have strides. With accumulate, a kernel adds (+=) into
 * its output; without, it stores (=) over whatever it held, even nan (a BLAS's beta of 1, 0). */

/* the core's strided_copy and strided_accumulate (tensor.h): dst[...] = (or +=) src[...] */
typedef void StridedKernel(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                           const int64_t *src_strides);
/* lesson 1: out = a op b over shape, op one of + - * /, a and b read through their strides
 * (0 along a broadcast dim) */
typedef void BinaryKernel(char op, int rank, const int64_t *shape, float *out, const float *a, const int64_t *a_strides,
                          const float *b, const int64_t *b_strides);
/* lesson 1: the backward of out = a op b: ga[...] (+)= g * d out/d a, gb[...] (+)= g * d out/d b,
 * g contiguous in shape; ga or gb NULL when that input needs no gradient. accumulate may be false
 * only when each element of ga and gb gets one term (no dim longer than 1 has stride 0 in them)
 * and they are not the same buffer. */
typedef void BinaryBackwardKernel(char op, int rank, const int64_t *shape, const float *g, const float *a,
                                  const int64_t *a_strides, const float *b, const int64_t *b_strides, float *ga,
                                  const int64_t *ga_strides, float *gb, const int64_t *gb_strides, bool accumulate);
/* lesson 3: out[i] = e^x[i] for n floats (the fast kernels' exp, for the tests and the bench) */
typedef void ExpKernel(const float *x, int64_t n, float *out);
/* lesson 3: softmax (log_softmax) of every row of x, its last dim, into the contiguous out */
typedef void SoftmaxRowsKernel(bool log_softmax, int rank, const int64_t *shape, const float *x,
                               const int64_t *x_strides, float *out);
/* lesson 3: the backward of softmax_rows over `rows` contiguous rows of d, from its output y
 * and that output's gradient g: gx += the gradient of its input */
typedef void SoftmaxBackwardKernel(bool log_softmax, int64_t rows, int64_t d, const float *y, const float *g,
                                   float *gx);
/* lesson 3: the sum over the rows of logits (n, c), rs and cs apart, of -log_softmax(row)[targets[row]] */
typedef double CrossEntropyKernel(int64_t n, int64_t c, const float *logits, int64_t rs, int64_t cs,
                                  const int64_t *targets);
/* lesson 3: its backward, times scale: gx (n, c, contiguous) += scale * (softmax(row) - the
 * one-hot row of its target) */
typedef void CrossEntropyBackwardKernel(int64_t n, int64_t c, const float *logits, int64_t rs, int64_t cs,
                                        const int64_t *targets, float scale, float *gx);
/* lesson 5: out[i, :] = table[indices[i], :] for i < n, out (n, d), the table (v, d) read
 * through its row and column strides */
typedef void GatherRowsKernel(int64_t v, int64_t d, const float *table, int64_t rs, int64_t cs, const int64_t *indices,
                              int64_t n, float *out);
/* lesson 6: out[i, j] (+)= sum over p of a[i, p] * b[p, j], each matrix through its row and
 * column strides; out overlaps neither input */
typedef void MatmulKernel(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs,
                          float *out, int64_t out_rs, int64_t out_cs, int64_t m, int64_t k, int64_t n, bool accumulate);
/* lesson 7: out (rows, n) = x (rows, k) @ w + b (b's floats b_stride apart; zeros if NULL), x
 * and out contiguous, w (k, n) through its strides; out overlaps none of x, w and b. */
typedef void LinearKernel(const float *x, int64_t rows, int64_t k, const float *w, int64_t w_rs, int64_t w_cs,
                          const float *b, int64_t b_stride, float *out, int64_t n);
/* lesson 7: out = gelu(x) and tanh_u = tanh(u(x)), both contiguous in shape */
typedef void GeluKernel(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, float *out,
                        float *tanh_u);
/* lesson 7: gx (+)= g * gelu'(x), from the forward's tanh_u; gx, g and tanh_u contiguous */
typedef void GeluBackwardKernel(int rank, const int64_t *shape, const float *x, const int64_t *x_strides,
                                const float *tanh_u, const float *g, float *gx, bool accumulate);
/* lesson 7: layer norm of `rows` contiguous rows of c floats: out = (x - mean) * rstd * gamma +
 * beta, rstd = 1/sqrt(var + eps); each row's mean and rstd go to stats (two floats a row) */
typedef void LayerNormKernel(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta, float eps,
                             float *out, float *stats);
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
/* its backward, from the forward's weights and gy (B, T, H*D): gq, gk, gv (+)= their gradients;
 * any of the three NULL when that input needs no gradient; with accumulate, any of them may be
 * the same buffer */
typedef void AttentionBackwardKernel(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                                     const float *v, const float *weights, float scale, const float *gy, float *gq,
                                     float *gk, float *gv, bool accumulate);
/* lesson 7: one AdamW step over n parameters (train.h's adamw_update) */
typedef void AdamWKernel(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr, float beta1,
                         float beta2, float eps, float weight_decay);

/* ==== the table ============================================================================ */

typedef struct {
    StridedKernel *copy, *accumulate; /* common/tensor.c */
    BinaryKernel *binary;             /* lessons/1-broadcast/broadcast.c */
    BinaryBackwardKernel *binary_backward;
    ExpKernel *exp; /* lessons/3-softmax/softmax.c */
    SoftmaxRowsKernel *softmax_rows;
    SoftmaxBackwardKernel *softmax_backward;
    CrossEntropyKernel *cross_entropy;
    CrossEntropyBackwardKernel *cross_entropy_backward;
    GatherRowsKernel *gather_rows; /* lessons/5-gather/gather.c */
    MatmulKernel *matmul;          /* lessons/6-bmm/bmm.c */
    LinearKernel *linear;          /* lessons/7-train/train.c */
    GeluKernel *gelu;
    GeluBackwardKernel *gelu_backward;
    LayerNormKernel *layer_norm;
    LayerNormBackwardKernel *layer_norm_backward;
    AttentionKernel *attention;
    AttentionBackwardKernel *attention_backward;
    AdamWKernel *adamw; /* lessons/7-train/model.c */
} Kernels;

/* The reference kernels, the chapter's loops: each is written in the file named. */
StridedKernel strided_copy_reference, strided_accumulate_reference; /* common/tensor.c */
BinaryKernel binary_reference;                                      /* lessons/1-broadcast/broadcast.c */
BinaryBackwardKernel binary_backward_reference;
ExpKernel exp_reference; /* lessons/3-softmax/softmax.c */
SoftmaxRowsKernel softmax_rows_reference;
SoftmaxBackwardKernel softmax_backward_reference;
CrossEntropyKernel cross_entropy_reference;
CrossEntropyBackwardKernel cross_entropy_backward_reference;
GatherRowsKernel gather_rows_reference; /* lessons/5-gather/gather.c */
MatmulKernel matmul_reference;          /* lessons/6-bmm/bmm.c */
LinearKernel linear_reference;          /* lessons/7-train/train.c */
GeluKernel gelu_reference;
GeluBackwardKernel gelu_backward_reference;
LayerNormKernel layer_norm_reference;
LayerNormBackwardKernel layer_norm_backward_reference;
AttentionKernel attention_reference;
AttentionBackwardKernel attention_backward_reference;
AdamWKernel adamw_reference; /* lessons/7-train/model.c */

/* The table, filled from COURSE_KERNELS and the CPU at the first call. */
const Kernels *kernels(void);

/* What runs, as a word for messages and benchmarks: "reference", or the build: "portable",
 * "avx2" or "avx512". */
const char *kernels_name(void);
/* What that build runs on this CPU, for labels: "NEON, 4 floats a vector" on aarch64's portable
 * build, "AVX2 and FMA, 8 floats a vector", "plain C loops" for the reference, .... */
const char *kernels_instructions(void);
/* Fills the table again as COURSE_KERNELS=setting would (NULL: as if it were unset), and
 * returns kernels_name(). For tests and benchmarks that compare the settings in one program;
 * call it before any thread starts. */
const char *kernels_use(const char *setting);
/* The setting the table was last filled for, one of reference, portable, native and avx2 (an
 * unknown one is reported as reference): kernels_use(kernels_setting()) changes nothing. */
const char *kernels_setting(void);
/* True when this CPU runs the build of that name ("portable", "avx2", "avx512"), false for one
 * the library does not have: for benchmarks that compare with code built for one (OpenBLAS). */
bool kernels_cpu_runs(const char *build);

/* ==== a lesson's entries =================================================================== */

/* The builds every fast file is compiled in, on this CPU family (the Makefile's SIMD_BUILDS,
 * which must name the same): X(topic, build) for each. */
#if defined(__x86_64__)
#define KERNELS_EACH_BUILD(X, topic) X(topic, portable) X(topic, avx2) X(topic, avx512)
#define KERNELS_BUILDS 3
#else
#define KERNELS_EACH_BUILD(X, topic) X(topic, portable)
#define KERNELS_BUILDS 1
#endif

/* A lesson's reference kernels, and its fast file's as each build compiled them (KERNELS_FAST,
 * kernels_fast.h): tables with the lesson's entries set and the rest NULL. */
typedef struct {
    Kernels reference;
    const Kernels *fast[KERNELS_BUILDS];
} KernelsLesson;
/* For KERNELS_LESSON: adds a lesson to those the table is filled from. */
void kernels_register(const KernelsLesson *lesson);

/* In TOPIC.c, KERNELS_LESSON(broadcast, .binary = binary_reference, ...) registers the lesson's
 * reference kernels and its fast file's tables (which must exist: each lesson with kernels has a
 * TOPIC_fast.c) before main, in each program that links them. The core registers as a lesson. */
#define KERNELS_DECLARE_BUILD(topic, build) extern const Kernels topic##_kernels_##build;
#define KERNELS_ADDRESS_BUILD(topic, build) &topic##_kernels_##build,
#define KERNELS_LESSON(topic, ...)                                                                               \
    KERNELS_EACH_BUILD(KERNELS_DECLARE_BUILD, topic)                                                             \
    __attribute__((constructor)) static void topic##_kernels_register(void) {                                    \
        static const KernelsLesson lesson = {{__VA_ARGS__}, {KERNELS_EACH_BUILD(KERNELS_ADDRESS_BUILD, topic)}}; \
        kernels_register(&lesson);                                                                               \
    }

#endif /* KERNELS_H */
