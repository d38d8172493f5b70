/*
 * gradcheck.c - central differences against the analytic gradient, and a second backward
 * that must add to it. See gradcheck.h.
 */
#include "gradcheck.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

static int fail(char *report, size_t size, const char *fmt, ...) {
    if (report && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(report, size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* L = sum(w * f(inputs)), in double so that the difference of two nearby L keeps its digits. */
static int weighted_loss(GradcheckFn fn, void *arg, Tensor *const *inputs, const float *w, int64_t n, float *scratch,
                         double *loss) {
    Tensor *out = fn(inputs, arg);
    if (!out || tensor_numel(out) != n || tensor_to_array(out, scratch, n) != n) return -1;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)w[i] * (double)scratch[i];
    *loss = sum;
    return 0;
}

/* What gradcheck was given that it cannot use: recorded as the error too (tensor_error), as every
 * function of the library does with bad arguments. */
static int bad_argument(char *report, size_t size, const char *fmt, ...) {
    char message[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    tensor_set_error("%s", message);
    return fail(report, size, "%s", message);
}

/* Whether input i is one whose gradient is checked: it requires grad and is not an input given
 * earlier too (gradcheck(f, (Tensor *[]){a, a}, 2, ...) checks a once per place it has). */
static bool holds_gradient(Tensor *const *inputs, int i) {
    for (int k = 0; k < i; k++)
        if (inputs[k] == inputs[i]) return false;
    return inputs[i]->requires_grad;
}

/* What a leaf's gradient holds before the second backward: something that a backward which
 * assigns (=) instead of adding (+=) would lose, larger than the gradient itself. */
static float held_before(float analytic) { return analytic + 1.0f + fabsf(analytic); }

int gradcheck(GradcheckFn fn, void *arg, Tensor *const *inputs, int n_inputs, const GradcheckOptions *opt, char *report,
              size_t report_size) {
    GradcheckOptions o = {1e-3, 1e-2, 1e-2, 1};
    if (opt) o = *opt;
    char shape[SHAPE_STR_MAX], index_str[SHAPE_STR_MAX];
    int64_t index[TENSOR_MAX_RANK];

    /* every argument is checked before any gradient is touched */
    if (!fn) return bad_argument(report, report_size, "gradcheck: fn is NULL");
    if (n_inputs < 0) return bad_argument(report, report_size, "gradcheck: %d inputs is not a count", n_inputs);
    if (n_inputs > 0 && !inputs)
        return bad_argument(report, report_size, "gradcheck: inputs is NULL for %d inputs", n_inputs);
    if (!(o.eps > 0) || !(o.atol >= 0) || !(o.rtol >= 0))
        return bad_argument(report, report_size,
                            "gradcheck: needs eps > 0 and atol, rtol >= 0, got eps %g, atol %g, rtol %g", o.eps, o.atol,
                            o.rtol);
    for (int i = 0; i < n_inputs; i++) {
        Tensor *x = inputs[i];
        if (!x) return bad_argument(report, report_size, "gradcheck: input %d is NULL", i);
        if (x->backward || x->is_view || !tensor_is_contiguous(x))
            return bad_argument(report, report_size, "gradcheck: input %d must be a contiguous leaf tensor", i);
    }
    int64_t n_grads = 0; /* the floats of every gradient checked */
    for (int i = 0; i < n_inputs; i++) {
        tensor_zero_grad(inputs[i]);
        if (holds_gradient(inputs, i)) n_grads += tensor_numel(inputs[i]);
    }

    Tensor *out = fn(inputs, arg);
    if (!out)
        return fail(report, report_size, "gradcheck: the function failed: %s",
                    tensor_error() ? tensor_error() : "(no message)");
    int64_t n_after = 0; /* fn must not change which inputs require grad: `first` is sized by n_grads */
    for (int i = 0; i < n_inputs; i++)
        if (holds_gradient(inputs, i)) n_after += tensor_numel(inputs[i]);
    if (n_after != n_grads) return bad_argument(report, report_size, "gradcheck: fn changed which inputs require grad");
    int64_t n_out = tensor_numel(out);
    Rng rng = rng_seeded(o.seed);
    Tensor *w = tensor_zeros(out->ctx, out->shape, out->rank);
    float *scratch = malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(float));
    float *first = malloc((size_t)(n_grads > 0 ? n_grads : 1) * sizeof(float)); /* the analytic gradients */
    if (!w || !scratch || !first) {
        free(scratch), free(first);
        return fail(report, report_size, "gradcheck: out of memory");
    }
    for (int64_t k = 0; k < n_out; k++) tensor_data(w)[k] = rng_float(&rng, -1.0f, 1.0f);
    if (tensor_backward_from(out, w) != 0) {
        free(scratch), free(first);
        return fail(report, report_size, "gradcheck: backward failed: %s", tensor_error());
    }

    /* The analytic gradient is the first backward's. A second backward, onto gradients that
     * already hold something (leaf gradients accumulate), must add the same again: a backward
     * that assigns (=) where it must add (+=) loses what was there, in whatever order the ops
     * run. Afterwards each gradient is the first backward's again. */
    int status = 0;
    float *kept = first;
    for (int i = 0; i < n_inputs; i++) {
        if (!holds_gradient(inputs, i)) continue;
        float *g = tensor_data(tensor_grad(inputs[i]));
        for (int64_t j = 0, n = tensor_numel(inputs[i]); j < n; j++) kept[j] = g[j], g[j] = held_before(g[j]);
        kept += tensor_numel(inputs[i]);
    }
    if (tensor_backward_from(out, w) != 0)
        status = fail(report, report_size, "gradcheck: the second backward failed: %s", tensor_error());
    kept = first;
    for (int i = 0; i < n_inputs; i++) {
        if (!holds_gradient(inputs, i)) continue;
        Tensor *x = inputs[i];
        float *g = tensor_data(tensor_grad(x));
        for (int64_t j = 0, n = tensor_numel(x); j < n && status == 0; j++) {
            /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): a backward never changes requires_grad, so these are the inputs copied into first */
            double want = (double)held_before(kept[j]) + kept[j];
            if (!isfinite(kept[j]) || fabs((double)g[j] - want) <= o.atol + o.rtol * fabs(want)) continue;
            unravel_index(j, x->shape, x->rank, index);
            status = fail(report, report_size,
                          "gradcheck: input %d (shape %s), element %lld at index %s: a second backward onto a gradient "
                          "holding %.6g left %.6g, expected %.6g (the first gave %.6g): a backward assigns (=) a "
                          "gradient it must add to (+=)",
                          i, shape_format(x->shape, x->rank, shape, sizeof shape), (long long)j,
                          shape_format(index, x->rank, index_str, sizeof index_str), (double)held_before(kept[j]),
                          (double)g[j], want, (double)kept[j]);
        }
        memcpy(g, kept, (size_t)tensor_numel(x) * sizeof *g);
        kept += tensor_numel(x);
    }

    for (int i = 0; i < n_inputs && status == 0; i++) {
        Tensor *x = inputs[i];
        if (!x->requires_grad) continue;
        const float *analytic = tensor_data(tensor_grad(x));
        float *data = tensor_data(x);
        for (int64_t j = 0; j < tensor_numel(x); j++) {
            float saved = data[j];
            double plus, minus;
            data[j] = saved + (float)o.eps;
            int ok = weighted_loss(fn, arg, inputs, tensor_data(w), n_out, scratch, &plus);
            data[j] = saved - (float)o.eps;
            ok |= weighted_loss(fn, arg, inputs, tensor_data(w), n_out, scratch, &minus);
            data[j] = saved;
            if (ok != 0) {
                status = fail(report, report_size, "gradcheck: the function failed on a perturbed input: %s",
                              tensor_error() ? tensor_error() : "(no message)");
                break;
            }
            double numeric = (plus - minus) / (2.0 * o.eps);
            double diff = fabs((double)analytic[j] - numeric);
            if (!(diff <= o.atol + o.rtol * fabs(numeric))) { /* also catches NaN */
                unravel_index(j, x->shape, x->rank, index);
                status = fail(report, report_size,
                              "gradcheck: input %d (shape %s), element %lld at index %s: analytic %.6g, "
                              "numeric %.6g (|difference| %.3g > tolerance %.3g)",
                              i, shape_format(x->shape, x->rank, shape, sizeof shape), (long long)j,
                              shape_format(index, x->rank, index_str, sizeof index_str), (double)analytic[j], numeric,
                              diff, o.atol + o.rtol * fabs(numeric));
                break;
            }
        }
    }
    free(scratch), free(first);
    return status;
}
