/*
 * train_fast.h - the fast paths of lesson 7's GELU and AdamW (train_fast.c). The reference,
 * train.c, offers them its work; docs/7-train.md ("How fast") measures them.
 */
#ifndef TRAIN_FAST_H
#define TRAIN_FAST_H

#include <stdbool.h>
#include <stdint.h>

/* GELU's constants (train.h), for the reference and the fast path alike */
#define GELU_S 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_A 0.044715f

/* out[i] = gelu(x[i]) and tanh_u[i] = tanh(u(x[i])) for n contiguous floats, as train.c's
 * loop computes them. True when done; false, with nothing written, when COURSE_KERNELS is
 * reference (kernels.h). All three fast paths here also hand back (false, nothing written)
 * what train.c never passes: a negative n, a NULL array. */
bool train_fast_gelu(const float *x, int64_t n, float *out, float *tanh_u);
/* gx[i] += g[i] * gelu'(x[i]), from the tanh_u the forward kept, all n contiguous. True when
 * done; false, with nothing written, when COURSE_KERNELS=reference. */
bool train_fast_gelu_backward(const float *x, const float *tanh_u, const float *g, int64_t n, float *gx);

/* adamw_update (train.h) over n floats with AVX2, its constants hoisted out of the loop: the
 * same formula, rounded in a different order. True when done; false, with nothing written,
 * unless kernels_mode() is KERNELS_NATIVE. */
bool train_fast_adamw(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr, float beta1,
                      float beta2, float eps, float weight_decay);

#endif /* TRAIN_FAST_H */
