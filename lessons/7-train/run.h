/*
 * run.h - lesson 7's training run, shared by the walk-through (make lesson7) and the plot
 * (make lesson7 plot): the model's size, the schedule, and the loop.
 */
#ifndef RUN_H
#define RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "data.h"
#include "train.h"

/* The lesson's model and run: 2 blocks of width 64 with 4 heads, contexts of 16 characters,
 * batches of 32 (docs/7-train.md says how long its training takes). */
#define RUN_SEED 7
#define RUN_BATCH 32
#define RUN_STEPS 4000
#define RUN_EVAL_EVERY 250
#define RUN_EVAL_TOKENS 16384 /* of the validation stream, at each evaluation; all of it at the end */
static const ModelConfig RUN_CONFIG = {
    .vocab = WORDS_VOCAB, .context = 16, .width = 64, .heads = 4, .layers = 2, .mlp = 256};

/* The learning rate of step s (from 1): a linear warm-up over the first 100 steps to 3e-3,
 * then a cosine down to a tenth of that at the last step. */
float run_learning_rate(int64_t step, int64_t steps);

typedef struct {
    int64_t steps;  /* taken */
    double seconds; /* training alone, without the evaluations */
    double tokens_per_second;
    double train_loss; /* the mean over the last RUN_EVAL_EVERY steps */
} RunResult;

/* Trains m (made by model_init, with ctx_mark set after it) for `steps` steps on w's training
 * stream. Every RUN_EVAL_EVERY steps it writes "step train_loss val_loss" to `curve` (when not
 * NULL), the loss on the first eval_tokens of the validation stream; with `progress`, a line
 * on stderr that updates in place. Returns 0, or -1 with an error. */
int run_train(Model *m, const Words *w, int64_t steps, int64_t eval_tokens, FILE *curve, bool progress,
              RunResult *result);

/* A file beside the program argv0 names: run_beside("build/lesson7/walkthrough", "model.ckpt")
 * is build/lesson7/model.ckpt, where the walk-through and the plot keep what they share.
 * NULL argv0 or name gives "" (out NULL or size 0: nothing is written). */
void run_beside(const char *argv0, const char *name, char *out, size_t size);

#endif /* RUN_H */
