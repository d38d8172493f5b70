/*
 * run.c - lesson 7's training loop (run.h): sample a batch, forward, backward, AdamW, free the
 * step's graph with ctx_reset.
 */
#define _POSIX_C_SOURCE 200809L
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void run_beside(const char *argv0, const char *name, char *out, size_t size) {
    if (!out || size == 0) return;
    if (!argv0 || !name) {
        out[0] = '\0';
        return;
    }
    const char *slash = strrchr(argv0, '/');
    snprintf(out, size, "%.*s/%s", slash ? (int)(slash - argv0) : 1, slash ? argv0 : ".", name);
}

float run_learning_rate(int64_t step, int64_t steps) {
    const float peak = 3e-3f;
    const int64_t warmup = 100;
    if (step <= warmup) return peak * (float)step / (float)warmup;
    double progress = (double)(step - warmup) / (double)(steps > warmup ? steps - warmup : 1);
    return peak * (float)(0.1 + 0.9 * 0.5 * (1.0 + cos(3.14159265358979 * progress)));
}

int run_train(Model *m, const Words *w, int64_t steps, int64_t eval_tokens, FILE *curve, bool progress,
              RunResult *result) {
    int64_t b = RUN_BATCH, t = m->config.context;
    int64_t *x = malloc((size_t)(2 * b * t) * sizeof *x), *y = x ? x + b * t : NULL;
    if (!x) return tensor_set_error("run_train: out of memory"), -1;
    Rng rng = rng_seeded(RUN_SEED + 1);
    AdamW opt = {.lr = 0, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.1f};
    double trained = 0.0, window_loss = 0.0, started = seconds_now();
    int64_t window = 0;
    memset(result, 0, sizeof *result);
    for (int64_t step = 1; step <= steps; step++) {
        double t0 = seconds_now();
        if (batch_sample(&w->train, b, t, &rng, x, y) < 0) return free(x), -1;
        ctx_zero_grads(m->ctx);
        Tensor *loss = model_loss(m, x, y, b, t);
        if (!loss || tensor_backward(loss) < 0) return free(x), -1;
        opt.lr = run_learning_rate(step, steps);
        if (model_adamw_step(m, &opt) < 0) return free(x), -1;
        window_loss += (double)tensor_item(loss);
        window++;
        ctx_reset(m->ctx); /* the step's graph goes; the parameters and AdamW's state stay */
        trained += seconds_now() - t0;
        if (progress && (step % 10 == 0 || step == steps)) {
            double per_step = (seconds_now() - started) / (double)step; /* evaluations included */
            fprintf(stderr, "\r  step %5lld/%lld  train loss %.4f  %6.0f tokens/s  %3.0f s left ", (long long)step,
                    (long long)steps, window_loss / (double)window, (double)(step * b * t) / trained,
                    per_step * (double)(steps - step));
            fflush(stderr);
        }
        if (step % RUN_EVAL_EVERY == 0 || step == steps) {
            result->train_loss = window_loss / (double)window;
            if (curve) {
                double val = model_eval(m, &w->val, RUN_BATCH * 4, eval_tokens);
                if (isnan(val)) return free(x), -1;
                fprintf(curve, "%lld %.6f %.6f\n", (long long)step, result->train_loss, val);
            }
            window_loss = 0.0, window = 0;
        }
    }
    if (progress) fprintf(stderr, "\r%78s\r", "");
    result->steps = steps;
    result->seconds = trained;
    result->tokens_per_second = (double)(steps * b * t) / trained;
    free(x);
    return 0;
}
