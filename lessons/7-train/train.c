/*
 * train.c - lesson 7: the transformer's ops, each a chain of the six lessons' ops or one op
 * with its own backward. The model made of them, and AdamW, are in model.c.
 *
 * Read top to bottom: GELU, the one new function (its forward next to its backward), then
 * layer norm, the linear layer and the attention over the heads, each one op with its own
 * backward (and the same numbers as its composition of earlier lessons' ops), then the causal
 * mask and attention (compositions: no backward of their own). docs/7-train.md walks through
 * each step and the lesson it comes from.
 */
#include "train.h"

#include <math.h>
#include <string.h>

#include "bmm.h"
#include "broadcast.h"
#include "gather.h"
#include "kernels.h"
#include "permute.h"
#include "reduce.h"
#include "rng.h"
#include "softmax.h"

/* ==== GELU ================================================================================ */

/* The reference kernels. The forward keeps tanh(u) of every element (tanh_u, row-major): the
 * backward needs it, and computing it again would cost as much as the forward. */
void gelu_reference(int rank, const int64_t *shape, const float *x, const int64_t *x_strides, float *out,
                    float *tanh_u) {
    int64_t row_major[TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, row_major);
    NdIter it;
    nditer_init(&it, rank, shape, 2, (const int64_t *[]){row_major, x_strides});
    while (nditer_next(&it)) {
        float v = x[it.offset[1]];
        tanh_u[it.offset[0]] = tanhf(GELU_S * (v + GELU_A * v * v * v));
        out[it.offset[0]] = 0.5f * v * (1.0f + tanh_u[it.offset[0]]);
    }
}

/* d/dx of x/2 * (1 + tanh(u)): the product rule, with d tanh(u)/du = 1 - tanh(u)^2; added to gx,
 * or stored over it (0 + the term, as into a cleared gradient) */
void gelu_backward_reference(int rank, const int64_t *shape, const float *x, const int64_t *x_strides,
                             const float *tanh_u, const float *g, float *gx, bool accumulate) {
    int64_t row_major[TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, row_major);
    NdIter it;
    nditer_init(&it, rank, shape, 2, (const int64_t *[]){row_major, x_strides});
    while (nditer_next(&it)) {
        float v = x[it.offset[1]], tu = tanh_u[it.offset[0]];
        float du_dx = GELU_S * (1.0f + 3.0f * GELU_A * v * v);
        float *d = &gx[it.offset[0]];
        *d = (accumulate ? *d : 0.0f) + g[it.offset[0]] * (0.5f * (1.0f + tu) + 0.5f * v * (1.0f - tu * tu) * du_dx);
    }
}

static void gelu_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    float *gx; /* stored over if nothing has reached it yet, not cleared and added to */
    bool accumulate = tensor_grads_begin(1, &x, NULL, &gx);
    kernels()->gelu_backward(x->rank, x->shape, tensor_data(x), x->strides, out->saved, tensor_data(out->grad), gx,
                             accumulate);
}

Tensor *tensor_gelu(Tensor *x) {
    if (!x) return tensor_null_input("gelu", "x"), NULL;
    /* out and tanh(u) (a tensor only for its memory): every element of both is written below */
    Tensor *out = tensor_empty(x->ctx, x->shape, x->rank), *t = out ? tensor_empty(x->ctx, x->shape, x->rank) : NULL;
    if (!out || !t) return NULL;
    kernels()->gelu(x->rank, x->shape, tensor_data(x), x->strides, tensor_data(out), tensor_data(t));
    out->saved = tensor_data(t);
    return tensor_record(out, "gelu", gelu_backward, 1, &x);
}

/* ==== layer norm ============================================================================ */

/* The reference kernels, one row of c numbers at a time. The forward is the formula:
 *   mu = mean(x), var = mean((x - mu)^2), rstd = 1 / sqrt(var + eps),
 *   out = (x - mu) * rstd * gamma + beta,
 * and it keeps mu and rstd of every row (stats[2r], stats[2r + 1]) for the backward. */
void layer_norm_reference(int64_t rows, int64_t c, const float *x, const float *gamma, const float *beta, float eps,
                          float *out, float *stats) {
    for (int64_t r = 0; r < rows; r++, x += c, out += c) {
        float sum = 0.0f, squares = 0.0f;
        for (int64_t i = 0; i < c; i++) sum += x[i];
        float mu = sum / (float)c;
        for (int64_t i = 0; i < c; i++) squares += (x[i] - mu) * (x[i] - mu);
        float rstd = 1.0f / sqrtf(squares / (float)c + eps);
        for (int64_t i = 0; i < c; i++) out[i] = (x[i] - mu) * rstd * gamma[i] + beta[i];
        stats[2 * r] = mu, stats[2 * r + 1] = rstd;
    }
}

/* With xhat = (x - mu) * rstd and dy = g * gamma (the gradient reaching xhat), the chain rule
 * through mu and rstd, which every element of the row feeds, gives (docs/7-train.md, 5):
 *   gx = rstd * (dy - mean(dy) - xhat * mean(dy * xhat)),
 * and gamma and beta, shared by every row, get the sums over the rows of g * xhat and of g. */
void layer_norm_backward_reference(int64_t rows, int64_t c, const float *x, const float *gamma, const float *stats,
                                   const float *g, float *gx, float *ggamma, float *gbeta) {
    for (int64_t r = 0; r < rows; r++, x += c, g += c) {
        float mu = stats[2 * r], rstd = stats[2 * r + 1], mean_dy = 0.0f, mean_dy_xhat = 0.0f;
        for (int64_t i = 0; i < c; i++) {
            float xhat = (x[i] - mu) * rstd;
            mean_dy += g[i] * gamma[i];
            mean_dy_xhat += g[i] * gamma[i] * xhat;
            if (ggamma) ggamma[i] += g[i] * xhat;
            if (gbeta) gbeta[i] += g[i];
        }
        mean_dy /= (float)c, mean_dy_xhat /= (float)c;
        for (int64_t i = 0; gx && i < c; i++) {
            float xhat = (x[i] - mu) * rstd;
            gx[r * c + i] += rstd * (g[i] * gamma[i] - mean_dy - xhat * mean_dy_xhat);
        }
    }
}

static void layer_norm_backward(Tensor *out) {
    Tensor *x = out->inputs[0], *gamma = out->inputs[1], *beta = out->inputs[2];
    int64_t c = x->shape[x->rank - 1];
    kernels()->layer_norm_backward(tensor_numel(x) / c, c, tensor_data(x), tensor_data(gamma), out->saved,
                                   tensor_data(out->grad), x->requires_grad ? tensor_grad_data(x) : NULL,
                                   gamma->requires_grad ? tensor_grad_data(gamma) : NULL,
                                   beta->requires_grad ? tensor_grad_data(beta) : NULL);
}

/* gamma and beta must be (C,) for x (..., C): a broadcast would accept (1,) and be wrong. */
static bool is_row_vector(const Tensor *v, const Tensor *x) {
    return v->rank == 1 && x->rank >= 1 && v->shape[0] == x->shape[x->rank - 1];
}

/* One op with its own backward, as GELU: the values of the composition of lessons 1 and 2's
 * ops (exercise 7.3 writes it; the tests hold this op to it), up to float rounding, but one
 * result and its gradient where the composition makes eleven of each. */
Tensor *tensor_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    const char *op = "layer_norm";
    char s1[SHAPE_STR_MAX], s2[SHAPE_STR_MAX], s3[SHAPE_STR_MAX];
    if (!inputs_valid(op, INPUTS(x, gamma, beta))) return NULL;
    if (!is_row_vector(gamma, x) || !is_row_vector(beta, x) || x->shape[x->rank - 1] == 0)
        return tensor_set_error("%s: x %s needs gamma and beta of shape (C,) for its last dim C > 0, got %s and %s", op,
                                shape_format(x->shape, x->rank, s1, sizeof s1),
                                shape_format(gamma->shape, gamma->rank, s2, sizeof s2),
                                shape_format(beta->shape, beta->rank, s3, sizeof s3)),
               NULL;
    if (!(eps > 0.0f)) return tensor_set_error("%s: eps must be > 0, got %g", op, (double)eps), NULL;
    /* the kernels read rows of contiguous floats: a view is copied first (lesson 4) */
    Tensor *in[] = {tensor_contiguous(x), tensor_contiguous(gamma), tensor_contiguous(beta)};
    if (!in[0] || !in[1] || !in[2]) return NULL;
    int64_t c = x->shape[x->rank - 1], rows = tensor_numel(x) / c;
    Tensor *out = tensor_empty(x->ctx, x->shape, x->rank); /* every element is written below */
    float *stats = out ? ctx_alloc(x->ctx, (size_t)(rows > 0 ? 2 * rows : 1) * sizeof *stats) : NULL;
    if (!out || !stats) return NULL;
    kernels()->layer_norm(rows, c, tensor_data(in[0]), tensor_data(in[1]), tensor_data(in[2]), eps, tensor_data(out),
                          stats);
    out->saved = stats;
    return tensor_record(out, op, layer_norm_backward, 3, in);
}

/* ==== the linear layer ===================================================================== */

/* With x read as (rows, K) and out as (rows, N):
 *   gx += g @ w^T, gw += x^T @ g (lesson 6's backward of the product), gb += the sum of g's rows
 * (lesson 1's backward of a broadcast add: the rows that shared b add into its gradient). */
static void linear_backward(Tensor *out) {
    Tensor *x = out->inputs[0], *w = out->inputs[1], *b = out->n_inputs == 3 ? out->inputs[2] : NULL;
    int64_t k = w->shape[0], n = w->shape[1], rows = shape_numel(out->shape, out->rank - 1);
    const float *g = tensor_data(out->grad), *xd = tensor_data(x), *wd = tensor_data(w);
    float *gx, *gw; /* each stored over if nothing has reached it yet; NULL if it is not wanted */
    bool add_x = tensor_grads_begin(1, &x, NULL, &gx), add_w = tensor_grads_begin(1, &w, NULL, &gw);
    if (gx) kernels()->matmul(g, n, 1, wd, w->strides[1], w->strides[0], gx, k, 1, rows, n, k, add_x);
    if (gw) kernels()->matmul(xd, 1, k, g, n, 1, gw, n, 1, k, rows, n, add_w);
    if (b && b->requires_grad)
        kernels()->accumulate(2, (const int64_t[]){rows, n}, tensor_grad_data(b), (const int64_t[]){0, 1}, g,
                              (const int64_t[]){n, 1});
}

/* The reference kernel: out starts as b in every row, a copy from a stride-0 view of it (lesson
 * 1), and the product adds into it (a BLAS's beta = 1; without b, the product is stored over
 * out, beta = 0). */
void linear_reference(const float *x, int64_t rows, int64_t k, const float *w, int64_t w_rs, int64_t w_cs,
                      const float *b, int64_t b_stride, float *out, int64_t n) {
    if (b)
        strided_copy_reference(2, (const int64_t[]){rows, n}, out, (const int64_t[]){n, 1}, b,
                               (const int64_t[]){0, b_stride});
    matmul_reference(x, k, 1, w, w_rs, w_cs, out, n, 1, rows, k, n, b != NULL);
}

/* x @ w + b as one op. The composition, matmul then a broadcast add, makes the product and the
 * sum two tensors, each with a gradient. */
Tensor *tensor_linear(Tensor *x, Tensor *w, Tensor *b) {
    const char *op = "linear";
    char s1[SHAPE_STR_MAX], s2[SHAPE_STR_MAX], s3[SHAPE_STR_MAX];
    if (!inputs_valid(op, INPUTS(x, w)) || (b && !inputs_valid(op, INPUTS(x, b)))) return NULL;
    if (x->rank < 1 || w->rank != 2 || x->shape[x->rank - 1] != w->shape[0] ||
        (b && (b->rank != 1 || b->shape[0] != w->shape[1])))
        return tensor_set_error("%s: x %s @ w %s + b %s: needs x (..., K), w (K, N), b (N,)", op,
                                shape_format(x->shape, x->rank, s1, sizeof s1),
                                shape_format(w->shape, w->rank, s2, sizeof s2),
                                b ? shape_format(b->shape, b->rank, s3, sizeof s3) : "NULL"),
               NULL;
    Tensor *in[] = {tensor_contiguous(x), w, b}; /* x's rows, one after another: a view is copied (lesson 4) */
    if (!in[0]) return NULL;
    int64_t k = w->shape[0], n = w->shape[1], rows = shape_numel(x->shape, x->rank - 1), shape[TENSOR_MAX_RANK];
    memcpy(shape, x->shape, (size_t)x->rank * sizeof *shape);
    shape[x->rank - 1] = n;
    Tensor *out = tensor_empty(x->ctx, shape, x->rank);
    if (!out) return NULL;
    kernels()->linear(tensor_data(in[0]), rows, k, tensor_data(w), w->strides[0], w->strides[1],
                      b ? tensor_data(b) : NULL, b ? b->strides[0] : 0, tensor_data(out), n);
    return tensor_record(out, op, linear_backward, b ? 3 : 2, in);
}

/* ==== attention over the heads ============================================================ */

/* The reference kernels: per batch, head and query row i, the scores against every key, lesson
 * 3's softmax of them (the max, the exps, their sum in double, one scale), and the rows of v
 * mixed by those weights. Row i of head h starts at column h*D of row i of q (and of k, v, y). */
void attention_reference(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k, const float *v,
                         const float *mask, float scale, float *weights, float *y) {
    int64_t c = heads * d;
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < t; i++) {
                const float *qi = q + (bi * t + i) * c + h * d;
                float *w = weights + ((bi * heads + h) * t + i) * t, m = -INFINITY;
                for (int64_t j = 0; j < t; j++) {
                    const float *kj = k + (bi * t + j) * c + h * d;
                    float s = 0.0f;
                    for (int64_t e = 0; e < d; e++) s += qi[e] * kj[e];
                    w[j] = s * scale + mask[i * t + j];
                    if (w[j] > m) m = w[j];
                }
                double sum = 0.0;
                for (int64_t j = 0; j < t; j++) {
                    w[j] = expf(w[j] - m);
                    sum += w[j];
                }
                float inv = (float)(1.0 / sum);
                for (int64_t j = 0; j < t; j++) w[j] *= inv;
                float *yi = y + (bi * t + i) * c + h * d;
                for (int64_t e = 0; e < d; e++) {
                    float acc = 0.0f;
                    for (int64_t j = 0; j < t; j++) acc += w[j] * v[(bi * t + j) * c + h * d + e];
                    yi[e] = acc;
                }
            }
}

/* g_i . v_j over one head's d columns */
static float head_dot(const float *g, const float *v, int64_t d) {
    float s = 0.0f;
    for (int64_t e = 0; e < d; e++) s += g[e] * v[e];
    return s;
}

/* The composition's backwards, one after another, for query row i of a head (g_i: its row of gy):
 *   gv_j += w_ij g_i                                  the mix's product (lesson 6)
 *   dw_ij = g_i . v_j,  ds_ij = w_ij (dw_ij - sum over j' of w_ij' dw_ij')    softmax's (lesson 3)
 *   gq_i += scale * ds_ij k_j,  gk_j += scale * ds_ij q_i              the scores' product's
 * Without accumulate, gq, gk and gv are cleared first, then added to. */
void attention_backward_reference(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                                  const float *v, const float *weights, float scale, const float *gy, float *gq,
                                  float *gk, float *gv, bool accumulate) {
    int64_t c = heads * d;
    float *grads[] = {gq, gk, gv};
    for (int g = 0; g < 3 && !accumulate; g++)
        if (grads[g]) memset(grads[g], 0, (size_t)(b * t * c) * sizeof(float));
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < t; i++) {
                const float *w = weights + ((bi * heads + h) * t + i) * t;
                int64_t row_i = (bi * t + i) * c + h * d;
                double dot = 0.0;
                for (int64_t j = 0; j < t; j++)
                    dot += (double)head_dot(gy + row_i, v + (bi * t + j) * c + h * d, d) * w[j];
                for (int64_t j = 0; j < t; j++) {
                    int64_t row_j = (bi * t + j) * c + h * d;
                    float ds = w[j] * (float)(head_dot(gy + row_i, v + row_j, d) - dot) * scale;
                    for (int64_t e = 0; e < d; e++) {
                        if (gq) gq[row_i + e] += ds * k[row_j + e];
                        if (gk) gk[row_j + e] += ds * q[row_i + e];
                        if (gv) gv[row_j + e] += w[j] * gy[row_i + e];
                    }
                }
            }
}

/* what the forward keeps for the backward: the heads (an integer, which the float param could
 * round) and the weights */
typedef struct {
    int64_t heads;
    float *weights;
} AttentionSaved;

static void attention_heads_backward(Tensor *out) {
    Tensor *q = out->inputs[0];
    const AttentionSaved *saved = out->saved;
    int64_t b = q->shape[0], t = q->shape[1], c = q->shape[2], heads = saved->heads, d = c / heads;
    /* gq, gk, gv (NULL where none is wanted), stored over when all are new and q, k, v distinct */
    float *g[3];
    bool accumulate = tensor_grads_begin(3, out->inputs, NULL, g);
    kernels()->attention_backward(b, t, heads, d, tensor_data(q), tensor_data(out->inputs[1]),
                                  tensor_data(out->inputs[2]), saved->weights, 1.0f / sqrtf((float)d),
                                  tensor_data(out->grad), g[0], g[1], g[2], accumulate);
}

/* The mask of either attention op: (T, T), and a constant. of (NULL: none) is the tensor T
 * comes from, for the message. */
static bool mask_valid(const char *op, const Tensor *mask, int64_t t, const char *of_name, const Tensor *of) {
    if (!shape_is(op, "the mask", mask, "(T, T)", DIMS(t, t), of_name, of)) return false;
    if (mask->requires_grad)
        return tensor_set_error("%s: the mask takes no gradient (a constant, as causal_mask's is)", op), false;
    return true;
}

/* attention_heads' shapes: q, k, v one (B, T, C), C split into the heads, a (T, T) mask, and
 * weights (B, H, T, T) that can be counted in memory, before anything is made. */
static bool heads_shapes_valid(const char *op, const Tensor *q, const Tensor *k, const Tensor *v, const Tensor *mask,
                               int64_t heads) {
    char s1[SHAPE_STR_MAX], s2[SHAPE_STR_MAX], s3[SHAPE_STR_MAX];
    if (q->rank != 3 || !shape_equal(k->shape, k->rank, q->shape, q->rank) ||
        !shape_equal(v->shape, v->rank, q->shape, q->rank))
        return tensor_set_error("%s: q, k and v must be one shape (B, T, C), got q %s, k %s, v %s", op,
                                shape_format(q->shape, q->rank, s1, sizeof s1),
                                shape_format(k->shape, k->rank, s2, sizeof s2),
                                shape_format(v->shape, v->rank, s3, sizeof s3)),
               false;
    int64_t b = q->shape[0], t = q->shape[1], c = q->shape[2];
    if (heads < 1 || c % heads != 0)
        return tensor_set_error("%s: C = %lld of q %s must split into %lld heads of equal width", op, (long long)c,
                                shape_format(q->shape, q->rank, s1, sizeof s1), (long long)heads),
               false;
    if (!mask_valid(op, mask, t, "q", q)) return false;
    double floats = (double)b * (double)heads * (double)t * (double)t;
    if (floats > (double)(INT64_MAX / 8) || floats > (double)(SIZE_MAX / sizeof(float)) - 1)
        return tensor_set_error("%s: the weights (B, H, T, T) = (%lld,%lld,%lld,%lld) are too many to hold", op,
                                (long long)b, (long long)heads, (long long)t, (long long)t),
               false;
    return true;
}

/* softmax(q k^T / sqrt(D) + mask) v for each head, as one op: the values of the composition in
 * train.h's comment on tensor_attention (lessons 4, 6, 1, 3 and 6 again), up to float rounding, with q, k,
 * v and y in (B, T, C), the heads side by side in C, as the products x @ w make them. The
 * composition's permutes are then only ways of reading: no copies between layouts, and no
 * (B, H, T, T) tensors but the weights the backward needs. The mask takes no gradient. */
Tensor *tensor_attention_heads(Tensor *q, Tensor *k, Tensor *v, Tensor *mask, int64_t heads) {
    const char *op = "attention_heads";
    if (!inputs_valid(op, INPUTS(q, k, v, mask)) || !heads_shapes_valid(op, q, k, v, mask, heads)) return NULL;
    int64_t b = q->shape[0], t = q->shape[1], d = q->shape[2] / heads;
    /* the kernels read rows of contiguous floats: a view is copied first (lesson 4) */
    Tensor *in[] = {tensor_contiguous(q), tensor_contiguous(k), tensor_contiguous(v)}, *m = tensor_contiguous(mask);
    if (!in[0] || !in[1] || !in[2] || !m) return NULL;
    Tensor *out = tensor_empty(q->ctx, q->shape, 3); /* every element is written below */
    AttentionSaved *saved = out ? ctx_alloc(q->ctx, sizeof *saved) : NULL;
    float *weights = saved ? ctx_alloc(q->ctx, (size_t)(b * heads * t * t + 1) * sizeof(float)) : NULL;
    if (!weights) return NULL;
    kernels()->attention(b, t, heads, d, tensor_data(in[0]), tensor_data(in[1]), tensor_data(in[2]), tensor_data(m),
                         1.0f / sqrtf((float)d), weights, tensor_data(out));
    *saved = (AttentionSaved){heads, weights};
    out->saved = saved;
    return tensor_record(out, op, attention_heads_backward, 3, in);
}

/* ==== compositions ========================================================================= */

Tensor *causal_mask(Ctx *ctx, int64_t t) {
    if (!ctx) return tensor_set_error("causal_mask: ctx is NULL"), NULL;
    if (t < 0) return tensor_set_error("causal_mask: T must be >= 0, got %lld", (long long)t), NULL;
    Tensor *mask = tensor_empty(ctx, (const int64_t[]){t, t}, 2);
    if (!mask) return NULL;
    float *m = tensor_data(mask);
    for (int64_t row = 0; row < t; row++)
        for (int64_t col = 0; col < t; col++) m[row * t + col] = col <= row ? 0.0f : -INFINITY;
    return mask;
}

Tensor *tensor_attention(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv, Tensor *wo, Tensor *bo, Tensor *mask,
                         int64_t heads) {
    const char *op = "attention";
    char s[SHAPE_STR_MAX];
    if (!inputs_valid(op, INPUTS(x, wq, wk, wv, wo, bo, mask))) return NULL;
    if (x->rank != 3 || heads < 1 || x->shape[2] % heads != 0)
        return tensor_set_error("%s: x must be (B, T, C) with C divisible by the %lld heads, got %s", op,
                                (long long)heads, shape_format(x->shape, x->rank, s, sizeof s)),
               NULL;
    int64_t t = x->shape[1], c = x->shape[2];
    if (!shape_is(op, "wq", wq, "(C, C)", DIMS(c, c), "x", x) ||
        !shape_is(op, "wk", wk, "(C, C)", DIMS(c, c), "x", x) ||
        !shape_is(op, "wv", wv, "(C, C)", DIMS(c, c), "x", x) ||
        !shape_is(op, "wo", wo, "(C, C)", DIMS(c, c), "x", x) || !shape_is(op, "bo", bo, "(C,)", DIMS(c), "x", x) ||
        !mask_valid(op, mask, t, NULL, NULL))
        return NULL;
    /* q, k, v (B, T, C); the heads' composition of lessons 4, 6, 1 and 3 as one op (above) */
    Tensor *y = tensor_attention_heads(tensor_matmul(x, wq), tensor_matmul(x, wk), tensor_matmul(x, wv), mask, heads);
    return tensor_linear(y, wo, bo);
}

/* ==== this lesson's entries of the table of kernels (kernels.h) ============================ */

KERNELS_LESSON(train, .linear = linear_reference, .gelu = gelu_reference, .gelu_backward = gelu_backward_reference,
               .layer_norm = layer_norm_reference, .layer_norm_backward = layer_norm_backward_reference,
               .attention = attention_reference, .attention_backward = attention_backward_reference,
               .adamw = adamw_reference)
