/*
 * walkthrough.c - lesson 7, run with `make lesson7`. Reads the words, computes the two
 * baselines, shows the model's pieces on small inputs, trains the model, and samples words
 * from it. Read it beside docs/7-train.md: the section numbers match.
 *
 * It writes, beside itself (build/lesson7/): train-loss.dat, the loss curve that `make lesson7
 * plot` draws, and model.ckpt, the trained parameters. COURSE_STEPS=N trains for N steps instead
 * and COURSE_EVAL_TOKENS=N evaluates on the first N tokens of each split (`make memcheck` runs it
with 2 and 512, a run short enough for valgrind); COURSE_WORDS=FILE reads another word list.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broadcast.h"
#include "data.h"
#include "reduce.h"
#include "run.h"
#include "softmax.h"
#include "train.h"

static void heading(const char *title) { printf("\n%s\n", title); }

static void fail(const char *what) {
    fprintf(stderr, "lesson 7: %s: %s\n", what, tensor_error() ? tensor_error() : "(no message)");
    exit(1);
}

static void print_stream(const char *label, const TokenStream *s, int64_t n) {
    printf("%s", label);
    for (int64_t i = 0; i < n && i < s->n; i++) putchar(token_to_char(s->tokens[i]));
    printf("...\n");
}

static void section_data(const Words *w, const char *path) {
    heading("1 The data: English words, one character at a time");
    printf("  %s: %lld lines, %lld words kept (lowercased, a-z only, each once)\n", path, (long long)w->read,
           (long long)w->n_words);
    printf("  split with seed %d: train %lld words (%lld tokens), validation %lld (%lld), test %lld (%lld)\n", RUN_SEED,
           (long long)w->train.words, (long long)w->train.n, (long long)w->val.words, (long long)w->val.n,
           (long long)w->test.words, (long long)w->test.n);
    print_stream("  the training stream: ", &w->train, 48);
    printf("  tokens: '.' is 0 (the boundary between words), 'a'..'z' are 1..26: V = %d\n", WORDS_VOCAB);
}

static double section_baselines(const Words *w, Bigram *bigram) {
    heading("2 The baselines: what the model must beat");
    bigram_fit(bigram, &w->train);
    double uniform = log((double)WORDS_VOCAB), val = bigram_loss(bigram, &w->val);
    printf("  uniform (every character equally likely): ln 27 = %.4f nats per character\n", uniform);
    printf("  bigram (counts of pairs in the training words, add-one smoothed): train %.4f, validation %.4f\n",
           bigram_loss(bigram, &w->train), val);
    printf("  after '.', the bigram's likeliest first letters:");
    /* the five largest entries of row 0, in order */
    int order[WORDS_VOCAB];
    for (int j = 0; j < WORDS_VOCAB; j++) order[j] = j;
    for (int a = 1; a < WORDS_VOCAB; a++)
        for (int b = a; b > 0 && bigram->prob[0][order[b]] > bigram->prob[0][order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (int k = 0; k < 5; k++) printf(" %c %.3f", token_to_char(order[k]), bigram->prob[0][order[k]]);
    printf("\n");
    return val;
}

static void section_mask(Ctx *ctx) {
    heading("3 The causal mask: position i may look at positions 0..i only");
    Tensor *mask = causal_mask(ctx, 4);
    tensor_print("  causal_mask(4)", mask);
    Tensor *scores = tensor_from(ctx, DIMS(4, 4), VALUES(1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4));
    tensor_fprint(stdout, "  softmax([1,2,3,4] + mask)", tensor_softmax_last_dim(tensor_add(scores, mask)), "%.4f");
}

static void section_shapes(Model *m) {
    heading("4 One forward pass, op by op: B = 2 sequences of T = 5 characters");
    int64_t tokens[10];
    const char *text = ".emma.oliv";
    for (int i = 0; i < 10; i++) tokens[i] = char_to_token(text[i]);
    char s[SHAPE_STR_MAX];
    Tensor *logits = model_logits(m, tokens, 2, 5);
    if (!logits) fail("model_logits");
    printf("  \".emma\" and \".oliv\" (2,5) -> logits %s, through these ops (in the order of their first use):\n",
           shape_format(logits->shape, logits->rank, s, sizeof s));
    static const struct {
        const char *op, *lesson;
    } lessons[] = {{"gather_rows", "5 (embedding)"},
                   {"reshape", "4"},
                   {"add", "1 (broadcast)"},
                   {"sub", "1 (broadcast)"},
                   {"mul", "1 (broadcast)"},
                   {"sum_axis", "2 (mean)"},
                   {"pow_scalar", "1"},
                   {"matmul", "6"},
                   {"permute", "4"},
                   {"softmax_last_dim", "3"},
                   {"gelu", "7 (new)"},
                   {"layer_norm", "7 (new)"},
                   {"linear", "7 (new)"},
                   {"attention_heads", "7 (new: 4, 6, 1 and 3 as one op)"}};
    const char *seen[32];
    int count[32], n_seen = 0, total = 0;
    /* the tensors after the parameters (and their gradients and moments) are this forward's */
    const Tensor *first = m->adam_v[m->n_params - 1]->next_in_ctx;
    for (const Tensor *t = first; t; t = t->next_in_ctx) {
        if (!t->backward) continue; /* a constant: the mask, a scalar */
        int k = 0;
        while (k < n_seen && strcmp(seen[k], t->op) != 0) k++;
        if (k == n_seen && n_seen < 32) seen[n_seen] = t->op, count[n_seen++] = 0;
        if (k < 32) count[k]++;
        total++;
    }
    for (int k = 0; k < n_seen; k++) {
        const char *lesson = "?";
        for (size_t q = 0; q < sizeof lessons / sizeof lessons[0]; q++)
            if (!strcmp(lessons[q].op, seen[k])) lesson = lessons[q].lesson;
        printf("    %-17s x%-3d lesson %s\n", seen[k], count[k], lesson);
    }
    printf("  %d ops in all, each with its backward: the model's gradient needs no code of its own\n", total);
    ctx_reset(m->ctx);
}

static void section_layer_norm(Ctx *ctx) {
    heading("5 Layer norm: each row to mean 0 and variance 1, then a gain and a bias");
    Tensor *x = tensor_from(ctx, DIMS(2, 4), VALUES(1, 2, 3, 4, -2, 0, 2, 8));
    Tensor *y = tensor_layer_norm(x, tensor_from(ctx, DIMS(4), VALUES(1, 1, 1, 1)), tensor_zeros(ctx, DIMS(4)), 1e-5f);
    tensor_print("  x", x);
    tensor_fprint(stdout, "  layer_norm(x)", y, "%.4f");
    Tensor *mean = tensor_mean_axis(y, -1, false), *var = tensor_mean_axis(tensor_mul(y, y), -1, false);
    printf("  row means %.1e %.1e, row variances %.4f %.4f\n", (double)tensor_data(mean)[0],
           (double)tensor_data(mean)[1], (double)tensor_data(var)[0], (double)tensor_data(var)[1]);
}

static void section_model(Model *m) {
    heading("6 The model: 2 blocks of attention and MLP, every parameter");
    const ModelConfig *c = &m->config;
    printf("  V = %lld, T = %lld, C = %lld, H = %lld heads of %lld, M = %lld, %lld blocks: %lld parameters\n",
           (long long)c->vocab, (long long)c->context, (long long)c->width, (long long)c->heads,
           (long long)(c->width / c->heads), (long long)c->mlp, (long long)c->layers, (long long)model_param_count(m));
    char s[SHAPE_STR_MAX];
    for (int i = 0; i < m->n_params; i++) {
        if (!strncmp(m->names[i], "block1.", 7)) continue; /* the same as block0's */
        printf("    %-22s %s\n", m->names[i], shape_format(m->params[i]->shape, m->params[i]->rank, s, sizeof s));
    }
    printf("    (block1.* as block0.*)\n");
}

/* The count in environment variable `name`, lo..hi, or fallback when it is not set. */
static int64_t env_count(const char *name, int64_t lo, int64_t hi, int64_t fallback) {
    const char *text = getenv(name);
    if (!text) return fallback;
    char *end;
    long long n = strtoll(text, &end, 10);
    if (*end || end == text || n < lo || n > hi) {
        fprintf(stderr, "lesson 7: %s must be a number from %lld to %lld, got '%s'\n", name, (long long)lo,
                (long long)hi, text);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv) {
    (void)argc;
    int64_t steps = env_count("COURSE_STEPS", 1, 1000000, RUN_STEPS);
    int64_t eval_tokens = env_count("COURSE_EVAL_TOKENS", 2, 100000000, 0); /* 0: the whole split at the end */
    int64_t along = eval_tokens ? eval_tokens : RUN_EVAL_TOKENS;
    Words w;
    const char *words_path = getenv("COURSE_WORDS") ? getenv("COURSE_WORDS") : WORDS_DEFAULT_PATH;
    if (words_load(&w, words_path, RUN_SEED) < 0) fail("the words");
    Bigram bigram;
    section_data(&w, words_path);
    double bigram_val = section_baselines(&w, &bigram);

    Ctx *scratch = ctx_new(), *ctx = ctx_new();
    Model m;
    if (!scratch || !ctx || model_init(&m, ctx, &RUN_CONFIG, RUN_SEED) < 0) fail("model_init");
    ctx_mark(ctx); /* what lives across steps ends here: parameters, gradients, AdamW's moments */
    section_mask(scratch);
    section_shapes(&m);
    section_layer_norm(scratch);
    ctx_free(scratch);
    section_model(&m);

    heading("7 AdamW, and the loss before any step");
    double initial = model_eval(&m, &w.val, RUN_BATCH * 4, along);
    printf("  validation loss at initialization: %.4f (ln 27 = %.4f: the model starts out nearly uniform)\n", initial,
           log(27.0));
    printf(
        "  AdamW: beta1 0.9, beta2 0.99, eps 1e-8, weight decay 0.1 on the matrices; learning rate %.0e after a warm-up "
        "of 100 steps, cosine down to %.0e\n",
        (double)run_learning_rate(100, steps), (double)run_learning_rate(steps, steps));

    heading("8 Training");
    char path[4096];
    run_beside(argv[0], "train-loss.dat", path, sizeof path);
    FILE *curve = fopen(path, "w");
    if (!curve) fprintf(stderr, "lesson 7: cannot write %s; training without the loss curve\n", path);
    else fprintf(curve, "# step train_loss val_loss (val on the first %lld validation tokens)\n", (long long)along);
    printf("  %lld steps of %d sequences of %lld characters\n", (long long)steps, RUN_BATCH,
           (long long)RUN_CONFIG.context);
    fflush(stdout);
    RunResult r;
    if (run_train(&m, &w, steps, along, curve, isatty(2), &r) < 0) fail("training");
    if (curve) fclose(curve);
    printf(
        "  %lld steps in %.1f s: %.0f tokens per second, %.2f ms per step (make lesson7 bench compares it with PyTorch)\n",
        (long long)r.steps, r.seconds, r.tokens_per_second, 1e3 * r.seconds / (double)r.steps);
    printf("  the loss curve: %s (make lesson7 plot draws it)\n", path);

    heading("9 The result against the baselines");
    double val = model_eval(&m, &w.val, RUN_BATCH * 4, eval_tokens),
           test = model_eval(&m, &w.test, RUN_BATCH * 4, eval_tokens);
    printf("  %-34s %s\n", "nats per character", "validation");
    printf("  %-34s %.4f\n", "uniform", log(27.0));
    printf("  %-34s %.4f\n", "bigram", bigram_val);
    printf("  %-34s %.4f   (train %.4f, test %.4f)\n", "the transformer", val, r.train_loss, test);
    printf("  %s\n",
           val < bigram_val ? "the transformer beats the bigram" : "THE TRANSFORMER DOES NOT BEAT THE BIGRAM");

    heading("10 Twenty new words (* marks the ones that are in the word list)");
    Rng rng = rng_seeded(RUN_SEED + 2);
    char word[64];
    int known = 0;
    for (int i = 0; i < 20; i++) {
        if (sample_word(&m, &rng, word, 40) < 0) fail("sampling");
        int in_list = words_contains(&w, word);
        known += in_list;
        printf("  %s%s\n", word, in_list ? " *" : "");
    }
    printf("  %d of 20 are English words; the rest are made up, letter by letter\n", known);

    heading("11 The checkpoint");
    run_beside(argv[0], "model.ckpt", path, sizeof path);
    if (model_save(&m, path) < 0) fail("model_save");
    Ctx *ctx2 = ctx_new();
    Model loaded;
    if (!ctx2 || model_init(&loaded, ctx2, &RUN_CONFIG, 0) < 0 || model_load(&loaded, path) < 0) fail("model_load");
    ctx_mark(ctx2);
    double again = model_eval(&loaded, &w.val, RUN_BATCH * 4, along);
    double before = model_eval(&m, &w.val, RUN_BATCH * 4, along);
    printf("  saved %s; loaded into a fresh model: validation loss %.6f, the same as before saving (%.6f)\n", path,
           again, before);
    ctx_free(ctx2);
    ctx_free(ctx);
    words_free(&w);
    /* the lesson's claim is about its full run; a shortened one (COURSE_STEPS) only reports */
    return val < bigram_val || steps != RUN_STEPS ? 0 : 1;
}
