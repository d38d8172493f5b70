/*
 * gradcheck.c - central differences against the analytic gradient. See gradcheck.h.
 */
#include "gradcheck.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

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
static int weighted_loss(GradcheckFn fn, void *arg, Tensor *const *inputs, const float *w, int64_t n,
                         float *scratch, double *loss) {
    Tensor *out = fn(inputs, arg);
    if (!out || tensor_numel(out) != n || tensor_to_array(out, scratch, n) != n) return -1;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)w[i] * (double)scratch[i];
    *loss = sum;
    return 0;
}

int gradcheck(GradcheckFn fn, void *arg, Tensor *const *inputs, int n_inputs,
              const GradcheckOptions *opt, char *report, size_t report_size) {
    GradcheckOptions o = {1e-3, 1e-2, 1e-2, 1};
    if (opt) o = *opt;
    char shape[SHAPE_STR_MAX], index_str[SHAPE_STR_MAX];

    for (int i = 0; i < n_inputs; i++) {
        Tensor *x = inputs[i];
        if (!x) return fail(report, report_size, "gradcheck: input %d is NULL", i);
        if (x->backward || x->is_view || !tensor_is_contiguous(x))
            return fail(report, report_size, "gradcheck: input %d must be a contiguous leaf tensor", i);
        tensor_zero_grad(x);
    }

    Tensor *out = fn(inputs, arg);
    if (!out)
        return fail(report, report_size, "gradcheck: the function failed: %s",
                    tensor_error() ? tensor_error() : "(no message)");
    int64_t n_out = tensor_numel(out);
    Rng rng = rng_seeded(o.seed);
    Tensor *w = tensor_zeros(out->ctx, out->shape, out->rank);
    float *scratch = malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(float));
    if (!w || !scratch) {
        free(scratch);
        return fail(report, report_size, "gradcheck: out of memory");
    }
    for (int64_t k = 0; k < n_out; k++) tensor_data(w)[k] = rng_float(&rng, -1.0f, 1.0f);
    if (tensor_backward_from(out, w) != 0) {
        free(scratch);
        return fail(report, report_size, "gradcheck: backward failed: %s", tensor_error());
    }

    int status = 0;
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
                int64_t index[TENSOR_MAX_RANK];
                unravel_index(j, x->shape, x->rank, index);
                status = fail(report, report_size,
                              "gradcheck: input %d (shape %s), element %lld at index %s: analytic %.6g, "
                              "numeric %.6g (|difference| %.3g > tolerance %.3g)",
                              i, shape_format(x->shape, x->rank, shape, sizeof shape), (long long)j,
                              shape_format(index, x->rank, index_str, sizeof index_str), (double)analytic[j],
                              numeric, diff, o.atol + o.rtol * fabs(numeric));
                break;
            }
        }
    }
    free(scratch);
    return status;
}
