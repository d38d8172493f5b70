/*
 * softmax.c - lesson 3: numerically stable softmax, log-softmax and cross-entropy.
 *
 * Read top to bottom: the naive formula (for comparison), one stable row (three passes: the
 * max, the exps and their sum, the scaling), the softmax op and its backward, log-softmax
 * through log-sum-exp and its backward, then cross-entropy from logits. The rows are the
 * reference kernels; each op computes through the table (kernels.h), which points at
 * softmax_fast.c's unless COURSE_KERNELS=reference. docs/3-softmax.md explains every step.
 *
 * Names: a row is the D entries along the last dim, `step` apart in memory (1 for a
 * contiguous tensor). x is the input row; s = softmax(x); g is the upstream gradient of the
 * output; gx the input's gradient. m is the row's max.
 */
#include "softmax.h"

#include <math.h>

#include "kernels.h"

/* ==== for comparison: the formula as written ============================================ */

void softmax_naive_row(const float *x, int64_t d, float *out) {
    if (d > 0 && (!x || !out))
        return (void)tensor_set_error("softmax_naive_row: x and out must not be NULL for a row of %lld", (long long)d);
    float sum = 0.0f;
    for (int64_t j = 0; j < d; j++) {
        out[j] = expf(x[j]); /* inf once x[j] is above ~88.72 */
        sum += out[j];
    }
    for (int64_t j = 0; j < d; j++) out[j] /= sum; /* inf / inf = nan */
}

/* e^x of n floats, one at a time: the reference kernel of the table's exp, which the fast
 * kernels' vector exp is measured against (the tests, the benchmark). */
void exp_reference(const float *x, int64_t n, float *out) {
    for (int64_t i = 0; i < n; i++) out[i] = expf(x[i]);
}

/* ==== one row, stable ===================================================================== */

/* The row's max. Starting at -INFINITY (not a "very negative" sentinel such as -10000) means
 * every real score, however negative, replaces it. nan entries are skipped here and make the
 * whole row nan later, through exp and the sum. */
static float row_max(const float *x, int64_t d, int64_t step) {
    float m = -INFINITY;
    for (int64_t j = 0; j < d; j++)
        if (x[j * step] > m) m = x[j * step];
    return m;
}

/* sum_j exp(x_j - m), and each term into out[j] unless out is NULL. Every exponent is <= 0, so
 * every exp is in (0, 1]: nothing overflows, and the largest term is exactly 1, so the sum is
 * at least 1. (The sum is kept in double: a float sum stops growing at 2^24, which a long row
 * can reach.) */
static double row_exp_sum(const float *x, int64_t d, int64_t step, float m, float *out) {
    double sum = 0.0;
    for (int64_t j = 0; j < d; j++) {
        float e = expf(x[j * step] - m);
        if (out) out[j] = e;
        sum += e;
    }
    return sum;
}

/* s_j = exp(x_j - m) / sum_k exp(x_k - m): the max, the exps and their sum, then a multiply by
 * 1 / sum. */
static void softmax_row(const float *x, int64_t d, int64_t step, float *s) {
    float m = row_max(x, d, step);
    float k = (float)(1.0 / row_exp_sum(x, d, step, m, s));
    for (int64_t j = 0; j < d; j++) s[j] *= k;
}

/* y_j = (x_j - m) - log(sum_k exp(x_k - m)), the log-sum-exp of the row less its max. Keeping
 * m apart matters: x_j - m is exact, and adding m back to the log only to subtract it again
 * would round the result to the size of m (about 4e-4 off for logits of 1e4). */
static void log_softmax_row(const float *x, int64_t d, int64_t step, float *y) {
    float m = row_max(x, d, step);
    float log_sum = (float)log(row_exp_sum(x, d, step, m, NULL));
    for (int64_t j = 0; j < d; j++) y[j] = (x[j * step] - m) - log_sum;
}

/* Checks x and makes the contiguous output of the two row ops. */
static Tensor *row_op_output(const char *op, Tensor *x) {
    if (!x) return tensor_null_input(op, "x"), NULL;
    if (x->rank == 0)
        return tensor_set_error("%s: a rank-0 tensor (a scalar) has no last dim to normalize over", op), NULL;
    return tensor_empty(x->ctx, x->shape, x->rank); /* every element is written */
}

/* The reference kernel of both row ops: one row at a time, each row of x (any view: the rows
 * are visited by the core's odometer over the dims before the last) into the matching row of
 * out, which is contiguous. */
void softmax_rows_reference(bool log_softmax, int rank, const int64_t *shape, const float *x, const int64_t *x_strides,
                            float *out) {
    int64_t d = shape[rank - 1], step = x_strides[rank - 1];
    NdIter rows;
    nditer_init(&rows, rank - 1, shape, 1, &x_strides);
    for (; nditer_next(&rows); out += d)
        (log_softmax ? log_softmax_row : softmax_row)(x + rows.offset[0], d, step, out);
}

/* ==== softmax ============================================================================= */

/* s = softmax(x) along a row. ds_i/dx_j = s_i (delta_ij - s_j), so
 * dx_j = sum_i g_i s_i (delta_ij - s_j) = s_j (g_j - sum_i g_i s_i): one dot per row. */
static void softmax_row_backward(const float *s, const float *g, int64_t d, float *gx) {
    double dot = 0.0;
    for (int64_t j = 0; j < d; j++) dot += (double)g[j] * s[j];
    for (int64_t j = 0; j < d; j++) gx[j] += s[j] * (float)(g[j] - dot);
}

static void log_softmax_row_backward(const float *y, const float *g, int64_t d, float *gx);

/* The reference kernel of both backwards: one row at a time (log-softmax's is below its op). */
void softmax_backward_reference(bool log_softmax, int64_t rows, int64_t d, const float *y, const float *g, float *gx) {
    for (int64_t p = 0; p < rows; p++, y += d, g += d, gx += d)
        (log_softmax ? log_softmax_row_backward : softmax_row_backward)(y, g, d, gx);
}

/* Both ops' outputs and their gradients are contiguous rows of d: the kernel takes them as such. */
static void row_op_backward(bool log_softmax, Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t d = x->shape[x->rank - 1], rows = d ? tensor_numel(x) / d : 0;
    kernels()->softmax_backward(log_softmax, rows, d, tensor_data(out), tensor_data(out->grad), tensor_grad_data(x));
}

static void softmax_backward(Tensor *out) { row_op_backward(false, out); }

Tensor *tensor_softmax_last_dim(Tensor *x) {
    Tensor *out = row_op_output("softmax_last_dim", x);
    if (!out) return NULL;
    kernels()->softmax_rows(false, x->rank, x->shape, tensor_data(x), x->strides, tensor_data(out));
    return tensor_record(out, "softmax_last_dim", softmax_backward, 1, &x);
}

/* ==== log-softmax ========================================================================= */

/* y_i = x_i - log(sum_k exp(x_k)). The derivative of the log-sum-exp with respect to x_j is
 * exp(x_j) / sum_k exp(x_k) = s_j, so dy_i/dx_j = delta_ij - s_j, and
 * dx_j = sum_i g_i (delta_ij - s_j) = g_j - s_j * sum_i g_i, with s_j = exp(y_j). */
static void log_softmax_row_backward(const float *y, const float *g, int64_t d, float *gx) {
    double total = 0.0;
    for (int64_t j = 0; j < d; j++) total += g[j];
    for (int64_t j = 0; j < d; j++) gx[j] += g[j] - expf(y[j]) * (float)total;
}

static void log_softmax_backward(Tensor *out) { row_op_backward(true, out); }

Tensor *tensor_log_softmax_last_dim(Tensor *x) {
    Tensor *out = row_op_output("log_softmax_last_dim", x);
    if (!out) return NULL;
    kernels()->softmax_rows(true, x->rank, x->shape, tensor_data(x), x->strides, tensor_data(out));
    return tensor_record(out, "log_softmax_last_dim", log_softmax_backward, 1, &x);
}

/* ==== cross-entropy from logits ============================================================ */

/* -log_softmax(row)[t] = (m - x_t) + log(sum_k exp(x_k - m)), without forming the softmax. */
static double row_cross_entropy(const float *x, int64_t d, int64_t step, int64_t t) {
    float m = row_max(x, d, step);
    return (double)(m - x[t * step]) + (float)log(row_exp_sum(x, d, step, m, NULL));
}

/* The reference kernel: the rows' losses, added up in double. */
double cross_entropy_reference(int64_t n, int64_t c, const float *logits, int64_t rs, int64_t cs,
                               const int64_t *targets) {
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) total += row_cross_entropy(logits + i * rs, c, cs, targets[i]);
    return total;
}

/* loss = mean over the rows n of -log_softmax(row n)[t_n]. By section 4.5, the gradient of
 * -log_softmax(row)[t] with respect to x_j is s_j - (j == t): the softmax minus the one-hot
 * target. Each row is 1/N of the mean, so the gradient is (softmax - onehot) / N, times the
 * upstream gradient of the loss. The softmax is recomputed from the logits, not stored. */
void cross_entropy_backward_reference(int64_t n, int64_t c, const float *logits, int64_t rs, int64_t cs,
                                      const int64_t *targets, float scale, float *gx) {
    for (int64_t i = 0; i < n; i++, gx += c) {
        const float *x = logits + i * rs;
        float m = row_max(x, c, cs);
        double sum = row_exp_sum(x, c, cs, m, NULL);
        for (int64_t j = 0; j < c; j++) {
            float s = (float)(expf(x[j * cs] - m) / sum);
            gx[j] += scale * (s - (j == targets[i] ? 1.0f : 0.0f));
        }
    }
}

static void cross_entropy_backward(Tensor *out) {
    Tensor *logits = out->inputs[0];
    float scale = tensor_data(out->grad)[0] / (float)logits->shape[0];
    kernels()->cross_entropy_backward(logits->shape[0], logits->shape[1], tensor_data(logits), logits->strides[0],
                                      logits->strides[1], out->saved, scale, tensor_grad_data(logits));
}

Tensor *tensor_cross_entropy(Tensor *logits, const int64_t *targets, int64_t n_targets) {
    const char *op = "cross_entropy";
    char s[SHAPE_STR_MAX];
    if (!logits) return tensor_null_input(op, "logits"), NULL;
    if (logits->rank != 2)
        return tensor_set_error("%s: logits must have shape (N, C), got %s", op,
                                shape_format(logits->shape, logits->rank, s, sizeof s)),
               NULL;
    int64_t n = logits->shape[0], c = logits->shape[1];
    if (n_targets != n)
        return tensor_set_error("%s: %lld targets for logits of shape %s; there must be one per row", op,
                                (long long)n_targets, shape_format(logits->shape, logits->rank, s, sizeof s)),
               NULL;
    if (n > 0 && !targets) return tensor_set_error("%s: targets is NULL", op), NULL;
    for (int64_t i = 0; i < n; i++)
        if (targets[i] < 0 || targets[i] >= c)
            return tensor_set_error("%s: target %lld at position %lld is out of range for %lld classes", op,
                                    (long long)targets[i], (long long)i, (long long)c),
                   NULL;
    Tensor *out = tensor_zeros(logits->ctx, NULL, 0);
    int64_t *saved = ctx_alloc(logits->ctx, (size_t)(n > 0 ? n : 1) * sizeof *saved); /* for the backward */
    if (!out || !saved) return NULL;
    for (int64_t i = 0; i < n; i++) saved[i] = targets[i];
    double total = kernels()->cross_entropy(n, c, tensor_data(logits), logits->strides[0], logits->strides[1], targets);
    tensor_data(out)[0] = (float)(total / (double)n); /* 0 / 0 = nan for no rows */
    out->saved = saved;
    return tensor_record(out, op, cross_entropy_backward, 1, &logits);
}

/* ==== this lesson's entries of the table of kernels (kernels.h) ============================ */

KERNELS_LESSON(softmax, .exp = exp_reference, .softmax_rows = softmax_rows_reference,
               .softmax_backward = softmax_backward_reference, .cross_entropy = cross_entropy_reference,
               .cross_entropy_backward = cross_entropy_backward_reference)
