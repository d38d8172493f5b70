/*
 * softmax.c - lesson 3: numerically stable softmax, log-softmax and cross-entropy.
 *
 * Read top to bottom: the naive formula (for comparison), one stable row in plain C (three
 * passes: the max, the exps and their sum, the scaling), how a row is handed to those passes
 * (picking the plain or the vectorized kernels, copying the rows of a strided view), the
 * softmax op and its backward, log-softmax through log-sum-exp and its backward, then
 * cross-entropy from logits. docs/3-softmax.md explains every step; its section 4.7, speed.
 *
 * Names: a row is the D entries along the last dim. x is the input row (contiguous: views are
 * copied first); s = softmax(x); g is the upstream gradient of the output; gx the input's
 * gradient. m is the row's max.
 */
#include "softmax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "softmax_simd.h"

/* ==== for comparison: the formula as written ============================================ */

void softmax_naive_row(const float *x, int64_t d, float *out) {
    float sum = 0.0f;
    for (int64_t j = 0; j < d; j++) {
        out[j] = expf(x[j]); /* inf once x[j] is above ~88.72 */
        sum += out[j];
    }
    for (int64_t j = 0; j < d; j++) out[j] /= sum; /* inf / inf = nan */
}

/* ==== one row, stable ===================================================================== */

/* The row's max. Starting at -INFINITY (not a "very negative" sentinel such as -10000) means
 * every real score, however negative, replaces it. nan entries are skipped here and make the
 * whole row nan later, through exp and the sum. */
static float row_max(const float *x, int64_t d) {
    float m = -INFINITY;
    for (int64_t j = 0; j < d; j++)
        if (x[j] > m) m = x[j];
    return m;
}

/* sum_j exp(x_j - m), and each term into out[j] unless out is NULL. Every exponent is <= 0, so
 * every exp is in (0, 1]: nothing overflows, and the largest term is exactly 1, so the sum is
 * at least 1. (The sum is kept in double: a float sum stops growing at 2^24, which a long row
 * can reach.) */
static double row_exp_sum(const float *x, int64_t d, float m, float *out) {
    double sum = 0.0;
    for (int64_t j = 0; j < d; j++) {
        float e = expf(x[j] - m);
        if (out) out[j] = e;
        sum += e;
    }
    return sum;
}

static void row_scale(float *s, int64_t d, float k) {
    for (int64_t j = 0; j < d; j++) s[j] *= k;
}

/* (x_j - m) - log_sum: log-softmax's last pass (section 4.5). */
static void row_shift(const float *x, int64_t d, float m, float log_sum, float *y) {
    for (int64_t j = 0; j < d; j++) y[j] = (x[j] - m) - log_sum;
}

/* The passes over a row, as plain C (above) or vectorized (softmax_simd.c: the same
 * arithmetic, eight floats at a time, with a polynomial exp instead of expf). */
typedef struct {
    const char *name;
    float (*max)(const float *x, int64_t d);
    double (*exp_sum)(const float *x, int64_t d, float m, float *out);
    void (*scale)(float *s, int64_t d, float k);
    void (*shift)(const float *x, int64_t d, float m, float log_sum, float *y);
} RowKernels;

static const RowKernels plain_kernels = {"generic", row_max, row_exp_sum, row_scale, row_shift};
static const RowKernels simd_kernels = {"avx2+fma", simd_row_max, simd_row_exp_sum, simd_row_scale, simd_row_shift};

/* The vectorized kernels when the CPU has AVX2 and FMA, unless SOFTMAX_KERNEL=generic. Asked
 * once per op (getenv is cheap next to a tensor's worth of exps). */
static const RowKernels *row_kernels(void) {
    const char *force = getenv("SOFTMAX_KERNEL");
    bool generic = force && strcmp(force, "generic") == 0;
    return !generic && simd_rows_supported() ? &simd_kernels : &plain_kernels;
}

const char *softmax_kernel_name(void) { return row_kernels()->name; }

/* s_j = exp(x_j - m) / sum_k exp(x_k - m), in three passes over the row: the max, the exps
 * and their sum, then a multiply by 1 / sum. A row of a few thousand floats stays in the
 * fastest cache between the passes, so only the first pays for reading memory. */
static void softmax_row(const RowKernels *k, const float *x, int64_t d, float *s) {
    float m = k->max(x, d);
    double sum = k->exp_sum(x, d, m, s);
    k->scale(s, d, (float)(1.0 / sum));
}

/* log(sum_k exp(x_k - m)): the log-sum-exp of the row, less its max m. Keeping m apart matters:
 * x_j - m is exact, and adding m back to the log only to subtract it again would round the
 * result to the size of m (about 4e-4 off for logits of 1e4). */
static float row_log_sum_shifted(const RowKernels *k, const float *x, int64_t d, float m) {
    return (float)log(k->exp_sum(x, d, m, NULL));
}

/* y_j = (x_j - m) - log(sum_k exp(x_k - m)) */
static void log_softmax_row(const RowKernels *k, const float *x, int64_t d, float *y) {
    float m = k->max(x, d);
    k->shift(x, d, m, row_log_sum_shifted(k, x, d, m), y);
}

/* ==== handing rows to the kernels ========================================================= */

enum { BLOCK_ROWS = 64, TILE = 8 };

/* Copies the next rows of x (at most BLOCK_ROWS, taken from the iterator over x's rows, whose
 * entries are `step` apart) into dst, one after the other: dst[b * d + j]. Returns how many.
 * When the rows lie side by side in memory (a transposed view), copying them one after the
 * other would fetch a cache line of 16 floats, and often a new page's address translation,
 * for every float. So j goes in tiles of 8: the 8 lines that hold row b's tile also hold the
 * same tile of the next rows, and are still in cache when those rows are copied. */
static int64_t copy_row_block(NdIter *rows, const float *x, int64_t step, int64_t d, float *dst, int64_t ld) {
    int64_t first[BLOCK_ROWS], n = 0;
    while (n < BLOCK_ROWS && nditer_next(rows)) first[n++] = rows->offset[0];
    /* Rows evenly spaced (a transposed matrix, the usual case) make a (n, d) block with two
     * strides: the core's strided_copy moves it in tiles through its AVX2 transposing kernel. */
    bool even = n > 1;
    for (int64_t b = 2; b < n && even; b++) even = first[b] - first[b - 1] == first[1] - first[0];
    if (even) {
        strided_copy(2, (const int64_t[]){n, d}, dst, (const int64_t[]){ld, 1}, x + first[0],
                     (const int64_t[]){first[1] - first[0], step});
        return n;
    }
    for (int64_t j0 = 0; j0 < d; j0 += TILE) {
        int64_t j1 = j0 + TILE < d ? j0 + TILE : d;
        for (int64_t b = 0; b < n; b++)
            for (int64_t j = j0; j < j1; j++) dst[b * ld + j] = x[first[b] + j * step];
    }
    return n;
}

typedef void RowFn(const RowKernels *k, const float *x, int64_t d, float *out);

/* Calls row_fn on each row of x and the matching row of out (contiguous, x's shape). Rows with
 * stride 1 are read where they lie. Any other view (transposed, reversed, expanded along the
 * last dim) is first copied into a scratch buffer, a block of rows at a time, and each row is
 * then worked on from there into out while the block is still in cache (into out itself, in
 * place, if the scratch buffer cannot be allocated). */
static void for_each_row(Tensor *x, Tensor *out, RowFn *row_fn) {
    const RowKernels *k = row_kernels();
    int64_t d = x->shape[x->rank - 1], step = x->strides[x->rank - 1], n;
    const float *xs = tensor_data(x);
    float *o = tensor_data(out);
    NdIter rows;
    nditer_init_rows(&rows, x);
    if (step == 1) {
        for (; nditer_next(&rows); o += d) row_fn(k, xs + rows.offset[0], d, o);
        return;
    }
    /* The block goes into a scratch buffer whose rows are d + 16 floats apart. Rows 16 KB apart
     * (d = 4096, the rows of out) all fall into the same few slots of the L1 cache, which holds
     * a line only where the low bits of its address say, so the 64 rows of a tile would evict
     * each other while the tile is written; the extra 64 bytes move each row to the next slot. */
    int64_t ld = d + 16;
    float *scratch = d <= (INT64_MAX / 4 - 16) / BLOCK_ROWS ? malloc((size_t)(BLOCK_ROWS * ld) * sizeof(float)) : NULL;
    if (scratch) {
        while ((n = copy_row_block(&rows, xs, step, d, scratch, ld)) > 0)
            for (int64_t b = 0; b < n; b++, o += d) row_fn(k, scratch + b * ld, d, o);
        free(scratch);
        return;
    }
    while ((n = copy_row_block(&rows, xs, step, d, o, d)) > 0) /* out of memory for scratch: in place */
        for (int64_t b = 0; b < n; b++, o += d) row_fn(k, o, d, o);
}

/* Shared by the two row ops: checks x and makes a contiguous output of its shape. */
static Tensor *row_op_output(const char *op, Tensor *x) {
    if (!x) return tensor_null_input(op, "x"), NULL;
    if (x->rank == 0) {
        tensor_set_error("%s: a rank-0 tensor (a scalar) has no last dim to normalize over", op);
        return NULL;
    }
    return tensor_empty(x->ctx, x->shape, x->rank); /* every element is written */
}

/* ==== softmax ============================================================================= */

/* s = softmax(x) along a row. ds_i/dx_j = s_i (delta_ij - s_j), so
 * dx_j = sum_i g_i s_i (delta_ij - s_j) = s_j (g_j - sum_i g_i s_i): one dot per row. */
static void softmax_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t d = x->shape[x->rank - 1], rows = d ? tensor_numel(x) / d : 0;
    const float *s = tensor_data(out), *g = tensor_data(out->grad);
    float *gx = tensor_grad_data(x);
    for (int64_t p = 0; p < rows; p++, s += d, g += d, gx += d) {
        double dot = 0.0;
        for (int64_t j = 0; j < d; j++) dot += (double)g[j] * s[j];
        for (int64_t j = 0; j < d; j++) gx[j] += s[j] * (float)(g[j] - dot);
    }
}

Tensor *tensor_softmax_last_dim(Tensor *x) {
    Tensor *out = row_op_output("softmax_last_dim", x);
    if (!out) return NULL;
    for_each_row(x, out, softmax_row);
    return tensor_record(out, "softmax_last_dim", softmax_backward, 1, &x);
}

/* ==== log-softmax ========================================================================= */

/* y_i = x_i - log(sum_k exp(x_k)). The derivative of the log-sum-exp with respect to x_j is
 * exp(x_j) / sum_k exp(x_k) = s_j, so dy_i/dx_j = delta_ij - s_j, and
 * dx_j = sum_i g_i (delta_ij - s_j) = g_j - s_j * sum_i g_i, with s_j = exp(y_j). */
static void log_softmax_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t d = x->shape[x->rank - 1], rows = d ? tensor_numel(x) / d : 0;
    const float *y = tensor_data(out), *g = tensor_data(out->grad);
    float *gx = tensor_grad_data(x);
    for (int64_t p = 0; p < rows; p++, y += d, g += d, gx += d) {
        double total = 0.0;
        for (int64_t j = 0; j < d; j++) total += g[j];
        for (int64_t j = 0; j < d; j++) gx[j] += g[j] - expf(y[j]) * (float)total;
    }
}

Tensor *tensor_log_softmax_last_dim(Tensor *x) {
    Tensor *out = row_op_output("log_softmax_last_dim", x);
    if (!out) return NULL;
    for_each_row(x, out, log_softmax_row);
    return tensor_record(out, "log_softmax_last_dim", log_softmax_backward, 1, &x);
}

/* ==== cross-entropy from logits ============================================================ */

/* loss = mean over n of -log_softmax(row n)[t_n] = (m_n - row n[t_n]) + log(sum_k exp(row n[k] - m_n)).
 * By section 4.5, the gradient of -log_softmax(row)[t] with respect to row[j] is
 * s_j - (j == t): the softmax minus the one-hot target. Each row is 1/N of the mean, so
 * the gradient is (softmax - onehot) / N, times the upstream gradient of the loss. The
 * softmax is recomputed from the logits, one entry at a time, rather than stored. */
static void cross_entropy_backward(Tensor *out) {
    Tensor *logits = out->inputs[0];
    const int64_t *targets = out->saved;
    int64_t n = logits->shape[0], c = logits->shape[1], step = logits->strides[1];
    float scale = tensor_data(out->grad)[0] / (float)n;
    float *gx = tensor_grad_data(logits);
    for (int64_t i = 0; i < n; i++, gx += c) {
        const float *row = tensor_data(logits) + i * logits->strides[0];
        float m = -INFINITY; /* row_max, through the stride: a backward reads views in place */
        for (int64_t j = 0; j < c; j++)
            if (row[j * step] > m) m = row[j * step];
        double sum = 0.0;
        for (int64_t j = 0; j < c; j++) sum += expf(row[j * step] - m);
        for (int64_t j = 0; j < c; j++) {
            float s = (float)(expf(row[j * step] - m) / sum);
            gx[j] += scale * (s - (j == targets[i] ? 1.0f : 0.0f));
        }
    }
}

Tensor *tensor_cross_entropy(Tensor *logits, const int64_t *targets, int64_t n_targets) {
    const char *op = "cross_entropy";
    char s[SHAPE_STR_MAX];
    if (!logits) return tensor_null_input(op, "logits"), NULL;
    if (logits->rank != 2) {
        tensor_set_error("%s: logits must have shape (N, C), got %s", op,
                         shape_format(logits->shape, logits->rank, s, sizeof s));
        return NULL;
    }
    int64_t n = logits->shape[0], c = logits->shape[1];
    if (n_targets != n) {
        tensor_set_error("%s: %lld targets for logits of shape %s; there must be one per row", op,
                         (long long)n_targets, shape_format(logits->shape, logits->rank, s, sizeof s));
        return NULL;
    }
    if (n > 0 && !targets) {
        tensor_set_error("%s: targets is NULL", op);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (targets[i] < 0 || targets[i] >= c) {
            tensor_set_error("%s: target %lld at position %lld is out of range for %lld classes", op,
                             (long long)targets[i], (long long)i, (long long)c);
            return NULL;
        }
    }
    Tensor *out = tensor_zeros(logits->ctx, NULL, 0);
    int64_t *saved = ctx_alloc(logits->ctx, (size_t)(n > 0 ? n : 1) * sizeof *saved);
    if (!out || !saved) return NULL;
    /* Strided logits (a transposed view) are copied into a scratch block of rows first, as
     * softmax copies them into its output. */
    int64_t step = logits->strides[1], i = 0, block;
    float *scratch = step == 1 || n == 0 ? NULL : malloc((size_t)BLOCK_ROWS * (size_t)c * sizeof *scratch);
    if (step != 1 && n > 0 && !scratch) {
        tensor_set_error("%s: out of memory", op);
        return NULL;
    }
    const RowKernels *k = row_kernels();
    const float *xs = tensor_data(logits);
    double total = 0.0;
    NdIter rows;
    nditer_init_rows(&rows, logits);
    while (i < n) {
        const float *row = scratch;
        if (scratch) block = copy_row_block(&rows, xs, step, c, scratch, c);
        else block = 1, row = xs + i * logits->strides[0];
        for (int64_t b = 0; b < block; b++, i++, row += c) {
            float m = k->max(row, c);
            total += (double)(m - row[targets[i]]) + row_log_sum_shifted(k, row, c, m);
            saved[i] = targets[i];
        }
    }
    free(scratch);
    tensor_data(out)[0] = (float)(total / (double)n); /* 0 / 0 = nan for no rows */
    out->saved = saved;
    return tensor_record(out, op, cross_entropy_backward, 1, &logits);
}
