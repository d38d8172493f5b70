/*
 * plot.c - the data of lesson 7's plot (`make lesson7 plot`): the training and validation
 * loss against the step, with the uniform and bigram baselines. The curve is the one the last
 * `make lesson7` wrote beside it (train-loss.dat); without one, it trains the model itself
 * first, the same way (about a minute).
 *   plot FILE.dat   writes: step train_loss val_loss bigram uniform
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "run.h"

static void fail(const char *what) {
    fprintf(stderr, "plot: %s: %s\n", what, tensor_error() ? tensor_error() : "(no message)");
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: plot FILE.dat\n");
        return 2;
    }
    Words w;
    if (words_load(&w, getenv("COURSE_WORDS"), RUN_SEED) < 0) fail("the words");
    Bigram bigram;
    bigram_fit(&bigram, &w.train);
    double bigram_val = bigram_loss(&bigram, &w.val);
    /* the walk-through's curve, beside this program */
    char curve_path[4096];
    run_beside(argv[0], "train-loss.dat", curve_path, sizeof curve_path);
    FILE *curve = fopen(curve_path, "r");
    if (!curve) {
        fprintf(stderr, "plot: no %s from make lesson7: training the model first (about a minute)\n", curve_path);
        Ctx *ctx = ctx_new();
        Model m;
        if (!ctx || model_init(&m, ctx, &RUN_CONFIG, RUN_SEED) < 0) fail("model_init");
        ctx_mark(ctx);
        FILE *out = fopen(curve_path, "w");
        if (!out) fail("cannot write the curve");
        fprintf(out, "# step train_loss val_loss (val on the first %d validation tokens)\n", RUN_EVAL_TOKENS);
        RunResult r;
        if (run_train(&m, &w, RUN_STEPS, RUN_EVAL_TOKENS, out, false, &r) < 0) fail("training");
        fclose(out);
        ctx_free(ctx);
        curve = fopen(curve_path, "r");
        if (!curve) fail("cannot read the curve back");
    }
    FILE *data = fopen(argv[1], "w");
    if (!data) fail("cannot write the data file");
    fprintf(data, "# step train_loss val_loss bigram_val uniform\n");
    char line[256];
    long long step;
    double train, val;
    int rows = 0;
    while (fgets(line, sizeof line, curve))
        if (sscanf(line, "%lld %lf %lf", &step, &train, &val) == 3)
            fprintf(data, "%lld %.6f %.6f %.6f %.6f\n", step, train, val, bigram_val, log(27.0)), rows++;
    fclose(curve);
    fclose(data);
    words_free(&w);
    if (rows == 0) {
        fprintf(stderr, "plot: %s has no rows\n", curve_path);
        return 1;
    }
    return 0;
}
