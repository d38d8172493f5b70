/*
 * model.c - lesson 7: the transformer made of train.c's ops, and AdamW to train it
 * (train.h has each function's contract, docs/7-train.md the steps).
 */
#include <math.h>
#include <string.h>

#include "broadcast.h"
#include "gather.h"
#include "kernels.h"
#include "permute.h"
#include "rng.h"
#include "softmax.h"
#include "train.h"

/* ==== the model ============================================================================= */

bool model_config_valid(const char *op, const ModelConfig *c) {
    if (!c) return tensor_set_error("%s: config is NULL", op), false;
    if (c->vocab < 1 || c->context < 1 || c->width < 1 || c->mlp < 1 || c->heads < 1 || c->width % c->heads != 0 ||
        c->layers < 1 || c->layers > MODEL_MAX_LAYERS || c->vocab > 1 << 20 || c->context > 1 << 16 ||
        c->width > 1 << 14 || c->mlp > 1 << 16)
        return tensor_set_error("%s: config vocab %lld, context %lld, width %lld, heads %lld, layers %lld, mlp %lld "
                                "is not a model: every size >= 1, heads dividing width, 1 to %d layers",
                                op, (long long)c->vocab, (long long)c->context, (long long)c->width,
                                (long long)c->heads, (long long)c->layers, (long long)c->mlp, MODEL_MAX_LAYERS),
               false;
    return true;
}

/* A standard normal, by Box-Muller from two uniforms of the course's seeded generator. */
static float normal(Rng *rng) {
    float u1 = rng_float(rng, 0.0f, 1.0f), u2 = rng_float(rng, 0.0f, 1.0f);
    return sqrtf(-2.0f * logf(1.0f - u1)) * cosf(6.28318530718f * u2);
}

static Tensor *param(Model *m, const char *name, int layer, const int64_t *shape, int rank, float init_std, float fill,
                     Rng *rng) {
    Tensor *p = tensor_requires_grad(tensor_zeros(m->ctx, shape, rank));
    if (!p || m->n_params == MODEL_MAX_PARAMS) return NULL;
    float *d = tensor_data(p);
    for (int64_t i = 0, n = tensor_numel(p); i < n; i++) d[i] = init_std > 0.0f ? init_std * normal(rng) : fill;
    /* the gradient and AdamW's moments are made now, so that they outlive every step (ctx_mark) */
    if (!tensor_grad(p)) return NULL;
    m->adam_m[m->n_params] = tensor_zeros(m->ctx, shape, rank);
    m->adam_v[m->n_params] = tensor_zeros(m->ctx, shape, rank);
    if (!m->adam_m[m->n_params] || !m->adam_v[m->n_params]) return NULL;
    if (layer >= 0) snprintf(m->names[m->n_params], sizeof m->names[0], "block%d.%s", layer, name);
    else snprintf(m->names[m->n_params], sizeof m->names[0], "%s", name);
    m->params[m->n_params++] = p;
    return p;
}

int model_init(Model *m, Ctx *ctx, const ModelConfig *config, uint64_t seed) {
    if (!m) return tensor_set_error("model_init: model is NULL"), -1;
    if (!ctx) return tensor_set_error("model_init: ctx is NULL"), -1;
    if (!model_config_valid("model_init", config)) return -1;
    memset(m, 0, sizeof *m);
    m->config = *config;
    m->ctx = ctx;
    Rng rng = rng_seeded(seed);
    int64_t v = config->vocab, t = config->context, c = config->width, mlp = config->mlp;
    float std = 0.02f, residual_std = 0.02f / sqrtf(2.0f * (float)config->layers);
    bool ok = (m->token_table = param(m, "token_table", -1, (const int64_t[]){v, c}, 2, std, 0, &rng)) &&
              (m->position_table = param(m, "position_table", -1, (const int64_t[]){t, c}, 2, std, 0, &rng));
    for (int l = 0; ok && l < config->layers; l++) {
        ModelBlock *bl = &m->block[l];
        ok = (bl->ln1_gain = param(m, "ln1_gain", l, (const int64_t[]){c}, 1, 0, 1, &rng)) &&
             (bl->ln1_bias = param(m, "ln1_bias", l, (const int64_t[]){c}, 1, 0, 0, &rng)) &&
             (bl->wq = param(m, "wq", l, (const int64_t[]){c, c}, 2, std, 0, &rng)) &&
             (bl->wk = param(m, "wk", l, (const int64_t[]){c, c}, 2, std, 0, &rng)) &&
             (bl->wv = param(m, "wv", l, (const int64_t[]){c, c}, 2, std, 0, &rng)) &&
             (bl->wo = param(m, "wo", l, (const int64_t[]){c, c}, 2, residual_std, 0, &rng)) &&
             (bl->bo = param(m, "bo", l, (const int64_t[]){c}, 1, 0, 0, &rng)) &&
             (bl->ln2_gain = param(m, "ln2_gain", l, (const int64_t[]){c}, 1, 0, 1, &rng)) &&
             (bl->ln2_bias = param(m, "ln2_bias", l, (const int64_t[]){c}, 1, 0, 0, &rng)) &&
             (bl->w_up = param(m, "w_up", l, (const int64_t[]){c, mlp}, 2, std, 0, &rng)) &&
             (bl->b_up = param(m, "b_up", l, (const int64_t[]){mlp}, 1, 0, 0, &rng)) &&
             (bl->w_down = param(m, "w_down", l, (const int64_t[]){mlp, c}, 2, residual_std, 0, &rng)) &&
             (bl->b_down = param(m, "b_down", l, (const int64_t[]){c}, 1, 0, 0, &rng));
    }
    ok = ok && (m->lnf_gain = param(m, "lnf_gain", -1, (const int64_t[]){c}, 1, 0, 1, &rng)) &&
         (m->lnf_bias = param(m, "lnf_bias", -1, (const int64_t[]){c}, 1, 0, 0, &rng)) &&
         (m->head_w = param(m, "head_w", -1, (const int64_t[]){c, v}, 2, std, 0, &rng)) &&
         (m->head_b = param(m, "head_b", -1, (const int64_t[]){v}, 1, 0, 0, &rng));
    return ok ? 0 : -1;
}

int64_t model_param_count(const Model *m) {
    int64_t n = 0;
    for (int i = 0; m && i < m->n_params; i++) n += tensor_numel(m->params[i]);
    return n;
}

Tensor *model_logits(Model *m, const int64_t *tokens, int64_t batch, int64_t t) {
    const char *op = "model_logits";
    if (!m || !m->ctx) return tensor_set_error("%s: the model is NULL or not made (model_init)", op), NULL;
    const ModelConfig *c = &m->config;
    if (batch < 1 || t < 1 || t > c->context || !tokens)
        return tensor_set_error("%s: tokens (B, T) = (%lld,%lld)%s: needs B >= 1 and 1 <= T <= %lld (the context)", op,
                                (long long)batch, (long long)t, tokens ? "" : " given as NULL", (long long)c->context),
               NULL;
    /* token and position embeddings: lesson 5's gather, lesson 1's broadcast add */
    Tensor *tok = tensor_embedding(m->token_table, tokens, (const int64_t[]){batch, t}, 2); /* (B, T, C) */
    if (!tok) return NULL; /* a token outside 0..V-1: nothing else is made */
    int64_t *positions = ctx_alloc(m->ctx, (size_t)t * sizeof *positions);
    if (!positions) return NULL;
    for (int64_t i = 0; i < t; i++) positions[i] = i;
    Tensor *pos = tensor_gather_rows(m->position_table, positions, t); /* rows 0..T-1: (T, C) */
    Tensor *x = tensor_add(tok, pos);                                  /* (B, T, C) + (T, C) */
    Tensor *mask = causal_mask(m->ctx, t);
    for (int l = 0; l < c->layers; l++) {
        const ModelBlock *bl = &m->block[l];
        /* pre-norm residual blocks, as GPT-2: x + attention(ln(x)), then x + mlp(ln(x)) */
        Tensor *h = tensor_layer_norm(x, bl->ln1_gain, bl->ln1_bias, 1e-5f);
        x = tensor_add(x, tensor_attention(h, bl->wq, bl->wk, bl->wv, bl->wo, bl->bo, mask, c->heads));
        h = tensor_layer_norm(x, bl->ln2_gain, bl->ln2_bias, 1e-5f);
        h = tensor_linear(tensor_gelu(tensor_linear(h, bl->w_up, bl->b_up)), bl->w_down, bl->b_down);
        x = tensor_add(x, h);
    }
    x = tensor_layer_norm(x, m->lnf_gain, m->lnf_bias, 1e-5f);
    return tensor_linear(x, m->head_w, m->head_b); /* (B, T, V) */
}

Tensor *model_loss(Model *m, const int64_t *tokens, const int64_t *targets, int64_t batch, int64_t t) {
    /* the targets are checked before the forward makes anything */
    if (m && m->ctx && batch >= 1 && t >= 1 && t <= m->config.context) {
        if (!targets) return tensor_set_error("model_loss: targets given as NULL"), NULL;
        for (int64_t i = 0; i < batch * t; i++)
            if (targets[i] < 0 || targets[i] >= m->config.vocab)
                return tensor_set_error(
                           "model_loss: target %lld at position (%lld,%lld) is out of range for %lld classes "
                           "(valid: 0 to %lld)",
                           (long long)targets[i], (long long)(i / t), (long long)(i % t), (long long)m->config.vocab,
                           (long long)m->config.vocab - 1),
                       NULL;
    }
    Tensor *logits = model_logits(m, tokens, batch, t);
    if (!logits) return NULL;
    /* (B, T, V) read as (B*T, V) rows: lesson 3's cross-entropy, one row per prediction */
    Tensor *rows = tensor_reshape(logits, (const int64_t[]){batch * t, m->config.vocab}, 2);
    return tensor_cross_entropy(rows, targets, batch * t);
}

/* ==== AdamW ================================================================================= */

void adamw_update(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, const AdamW *opt,
                  float weight_decay) {
    if (!opt) return (void)tensor_set_error("adamw_update: opt is NULL");
    if (n > 0 && (!p || !g || !m || !v))
        return (void)tensor_set_error("adamw_update: p, g, m and v must not be NULL for %lld floats", (long long)n);
    kernels()->adamw(p, g, m, v, n, step, opt->lr, opt->beta1, opt->beta2, opt->eps, weight_decay);
}

/* The reference kernel: the update as written, one parameter at a time. */
void adamw_reference(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, float lr, float beta1,
                     float beta2, float eps, float weight_decay) {
    float bias1 = 1.0f - powf(beta1, (float)step), bias2 = 1.0f - powf(beta2, (float)step);
    for (int64_t i = 0; i < n; i++) {
        p[i] -= lr * weight_decay * p[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        p[i] -= lr * (m[i] / bias1) / (sqrtf(v[i] / bias2) + eps);
    }
}

int model_adamw_step(Model *m, const AdamW *opt) {
    const char *op = "adamw_step";
    if (!m || !m->ctx) return tensor_set_error("%s: the model is NULL or not made (model_init)", op), -1;
    if (!opt || !(opt->lr >= 0.0f) || !(opt->eps >= 0.0f) || !(opt->beta1 >= 0.0f && opt->beta1 < 1.0f) ||
        !(opt->beta2 >= 0.0f && opt->beta2 < 1.0f) || !(opt->weight_decay >= 0.0f))
        return tensor_set_error("%s: needs lr, eps and weight_decay >= 0 and betas in [0, 1)%s", op,
                                opt ? "" : " (opt is NULL)"),
               -1;
    m->steps++;
    for (int i = 0; i < m->n_params; i++) {
        Tensor *p = m->params[i];
        adamw_update(tensor_data(p), p->grad ? tensor_data(p->grad) : NULL, tensor_data(m->adam_m[i]),
                     tensor_data(m->adam_v[i]), tensor_numel(p), m->steps, opt,
                     p->rank == 2 ? opt->weight_decay : 0.0f);
    }
    return 0;
}
