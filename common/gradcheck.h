/*
 * gradcheck.h - checks an op's backward against central differences.
 *
 * The analytic gradient comes from tensor_backward_from(out, w) with a random upstream weight
 * w, i.e. the gradient of L = sum(w * f(inputs)). The numeric one perturbs every element x_j of
 * every input that requires grad and measures (L(x_j + eps) - L(x_j - eps)) / (2 eps). A random
 * w (rather than the all-ones weight of a plain sum) makes a gradient that is off by a
 * permutation or a constant factor fail. Before that, a second backward onto gradients that
 * already hold something must add the same gradient again: a backward that assigns (=) where
 * it must add (+=) fails, even where the order of the ops hides it from the first backward.
 */
#ifndef GRADCHECK_H
#define GRADCHECK_H

#include "tensor.h"

/* Builds the output from the inputs. Called many times; must not modify the inputs. */
typedef Tensor *(*GradcheckFn)(Tensor *const *inputs, void *arg);

typedef struct {
    double eps;  /* step of the central difference (default 1e-3) */
    double atol; /* pass if |analytic - numeric| <= atol + rtol * |numeric| (defaults 1e-2) */
    double rtol;
    uint64_t seed; /* for the upstream weight */
} GradcheckOptions;

/* Returns 0 when every element of every input that requires grad agrees. Otherwise returns -1
 * and writes into report (when not NULL) the first disagreement: the input, the element index,
 * the analytic and the numeric value (or what the second backward left), or the error that
 * stopped the check. Inputs must be contiguous leaf tensors (not views). opt may be NULL for
 * the defaults. Arguments it cannot use (a NULL fn, a NULL inputs array or input, a negative
 * n_inputs, a view as input, eps <= 0 or a negative tolerance) are reported before anything is
 * touched, also as the error (tensor_error). Afterwards each input's gradient is the analytic
 * one. */
int gradcheck(GradcheckFn fn, void *arg, Tensor *const *inputs, int n_inputs, const GradcheckOptions *opt, char *report,
              size_t report_size);

#endif /* GRADCHECK_H */
