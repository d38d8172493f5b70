/*
 * train.h - lesson 7: a character-level transformer made of the six lessons' ops, and AdamW
 * to train it (docs/7-train.md).
 *
 * Letters, as in the other lessons: B sequences (the batch) of T characters (the context), C
 * numbers per character (the model's width), H attention heads of C/H each, V = 27 characters
 * in the vocabulary (the boundary '.' and a-z), M = 4C units in the MLP.
 *
 * What is new here is small: one nonlinearity (GELU) with its backward, and AdamW. Layer norm,
 * the linear layer and the attention over the heads are ops of their own too, each with a
 * backward written by hand, and the tests hold each to its composition of earlier lessons' ops
 * (layer norm's is exercise 7.3). Everything else is a composition of earlier lessons' ops, so
 * its backward comes from theirs.
 */
#ifndef TRAIN_H
#define TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* ---- the new ops ----------------------------------------------------------------------- */

/* GELU, in the tanh form GPT-2 uses (PyTorch's gelu(approximate="tanh")), elementwise:
 *   y = x/2 * (1 + tanh(u)),  u = sqrt(2/pi) * (x + 0.044715 x^3).
 * Backward: dy/dx = (1 + tanh(u))/2 + x/2 * (1 - tanh(u)^2) * sqrt(2/pi) * (1 + 3*0.044715 x^2). */
Tensor *tensor_gelu(Tensor *x);
/* GELU's constants, for the reference kernel and the fast one alike */
#define GELU_S 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_A 0.044715f

/* Layer norm over the last dim, with x (..., C) and gamma, beta (C,):
 *   mu = mean(x), var = mean((x - mu)^2), y = (x - mu) * (var + eps)^(-1/2) * gamma + beta.
 * The values of that line written with lesson 2's means and lesson 1's broadcasts, up to float
 * rounding, with a backward of its own (docs/7-train.md, 5). Errors name the shapes. */
Tensor *tensor_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps);

/* x @ w + b: x (..., K), w (K, N), b (N,) or NULL. The values of lesson 6's matmul and lesson
 * 1's broadcast add, up to float rounding, as one op with its own backward. */
Tensor *tensor_linear(Tensor *x, Tensor *w, Tensor *b);

/* Attention over H heads, the part of tensor_attention between the products (below): q, k, v
 * are (B, T, C), head h in columns h*D .. h*D + D-1 (D = C/H), mask (T, T) with no gradient;
 * for each head, y = softmax(q k^T / sqrt(D) + mask) v, returned as (B, T, C) in the same
 * columns. The values of tensor_attention's composition of lessons 4, 6, 1 and 3, up to float
 * rounding, as one op with its own backward. Errors name the shapes. */
Tensor *tensor_attention_heads(Tensor *q, Tensor *k, Tensor *v, Tensor *mask, int64_t heads);

/* ---- compositions (their backward is the lessons' ops') ------------------------------------ */

/* The causal mask, (T, T): 0 where a position may look (column <= row), -inf where it may
 * not (a later position). Added to the scores before softmax, it makes their weights 0. */
Tensor *causal_mask(Ctx *ctx, int64_t t);
/* Causal self-attention of H heads. x is (B, T, C); wq, wk, wv, wo are (C, C), bo is (C,);
 * mask is causal_mask(T). Each head h sees its C/H columns of q = x@wq, k = x@wk, v = x@wv:
 *   (B, T, C) -> reshape (B, T, H, C/H) -> permute (B, H, T, C/H)          lesson 4
 *   scores = q @ k^T / sqrt(C/H) + mask                    (B, H, T, T)    lessons 6 and 1
 *   y = softmax(scores) @ v                                (B, H, T, C/H)  lessons 3 and 6
 *   -> permute (B, T, H, C/H) -> reshape (B, T, C) -> @ wo + bo             lessons 4 and 6
 * The products x @ w are lesson 6's; the lines from the reshape to the last reshape are one op,
 * tensor_attention_heads (above), whose tests hold it to them; the last product is a linear. */
Tensor *tensor_attention(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv, Tensor *wo, Tensor *bo, Tensor *mask,
                         int64_t heads);

/* ---- the model -------------------------------------------------------------------------- */

#define MODEL_MAX_LAYERS 8
#define MODEL_MAX_PARAMS (6 + 13 * MODEL_MAX_LAYERS)

typedef struct {
    int64_t vocab;   /* V */
    int64_t context; /* T: the longest input, the rows of the position table */
    int64_t width;   /* C */
    int64_t heads;   /* H, dividing C */
    int64_t layers;  /* transformer blocks, 1 to MODEL_MAX_LAYERS */
    int64_t mlp;     /* M */
} ModelConfig;

/* True for a config a model can be made of; otherwise false, with "<op>: ..." recorded. */
bool model_config_valid(const char *op, const ModelConfig *c);

typedef struct {
    Tensor *ln1_gain, *ln1_bias; /* (C,) */
    Tensor *wq, *wk, *wv, *wo;   /* (C, C) */
    Tensor *bo;                  /* (C,) */
    Tensor *ln2_gain, *ln2_bias; /* (C,) */
    Tensor *w_up, *b_up;         /* (C, M), (M,) */
    Tensor *w_down, *b_down;     /* (M, C), (C,) */
} ModelBlock;

typedef struct {
    ModelConfig config;
    Ctx *ctx;               /* where the parameters and AdamW's state live */
    Tensor *token_table;    /* (V, C) */
    Tensor *position_table; /* (T, C) */
    ModelBlock block[MODEL_MAX_LAYERS];
    Tensor *lnf_gain, *lnf_bias; /* (C,) */
    Tensor *head_w, *head_b;     /* (C, V), (V,) */
    /* every parameter, in the order above (the checkpoint's order), with its name */
    Tensor *params[MODEL_MAX_PARAMS];
    char names[MODEL_MAX_PARAMS][24];
    int n_params;
    /* AdamW's moments, one pair per parameter, and the steps taken */
    Tensor *adam_m[MODEL_MAX_PARAMS], *adam_v[MODEL_MAX_PARAMS];
    int64_t steps;
} Model;

/* Makes the parameters in ctx, their gradients and AdamW's state, initialized as GPT-2 does
 * (normal, std 0.02, the two projections into the residual stream by 1/sqrt(2 layers) more;
 * biases 0; layer-norm gains 1), from `seed`. Returns 0, or -1 with an error. */
int model_init(Model *m, Ctx *ctx, const ModelConfig *config, uint64_t seed);
/* Number of floats in the parameters. */
int64_t model_param_count(const Model *m);

/* The logits (B, T, V) for tokens (B, T) given row-major, T <= context. NULL with an error
 * for a token outside 0..V-1 or a T the model cannot take. */
Tensor *model_logits(Model *m, const int64_t *tokens, int64_t batch, int64_t t);
/* The mean cross-entropy of predicting targets (B, T) from tokens (B, T): a rank-0 tensor. */
Tensor *model_loss(Model *m, const int64_t *tokens, const int64_t *targets, int64_t batch, int64_t t);

/* ---- AdamW ------------------------------------------------------------------------------ */

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
} AdamW;

/* One AdamW step (PyTorch's torch.optim.AdamW) on n floats, the step-th (counting from 1), with
 * opt's lr, betas and eps, and `weight_decay` for this tensor (its parameter group's: opt's own
 * weight_decay is what model_adamw_step passes for the matrices, 0 for the rest):
 *   p -= lr * weight_decay * p                    (decoupled weight decay)
 *   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2
 *   p -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + eps) */
void adamw_update(float *p, const float *g, float *m, float *v, int64_t n, int64_t step, const AdamW *opt,
                  float weight_decay);
/* (A NULL opt, or a NULL array for n > 0, records an error and changes nothing.) */
/* One step on every parameter of m from the gradients backward left, with weight decay on the
 * matrices only (rank 2: the tables and weights; not biases or gains), as nanoGPT does.
 * Returns 0, or -1 with an error for a bad opt (lr or eps negative, betas outside [0, 1)). */
int model_adamw_step(Model *m, const AdamW *opt);

#endif /* TRAIN_H */
