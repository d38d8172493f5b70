/*
 * walkthrough.c - lesson 3, run with `make lesson3`. Prints every worked example of the
 * lesson, computed by the library as it runs. Read it beside docs/3-softmax.md: the section
 * numbers match.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "broadcast.h"
#include "reduce.h"
#include "softmax.h"

static void heading(const char *title) { printf("\n%s\n", title); }

static void format_row(char *buf, size_t size, const float *v, int64_t d) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int64_t j = 0; j < d && used < size; j++) {
        const char *sep = j ? ", " : "";
        if (isnan(v[j])) used += (size_t)snprintf(buf + used, size - used, "%snan", sep); /* never "-nan" */
        else used += (size_t)snprintf(buf + used, size - used, "%s%.4f", sep, (double)v[j]);
    }
    if (used < size) snprintf(buf + used, size - used, "]");
}

static void print_row(const char *label, const float *v, int64_t d) {
    char buf[256];
    format_row(buf, sizeof buf, v, d);
    printf("%s%s\n", label, buf);
}

static void section_softmax(Ctx *ctx) {
    heading("4.1 softmax([1, 2, 3]): exponentiate, then divide by the sum");
    Tensor *x = tensor_from(ctx, DIMS(3), VALUES(1, 2, 3));
    Tensor *s = tensor_softmax_last_dim(x);
    float total = 0.0f, sum_s = 0.0f;
    for (int j = 0; j < 3; j++) total += expf(tensor_data(x)[j]);
    printf("  %-4s %-9s %s\n", "x", "e^x", "e^x / sum");
    for (int j = 0; j < 3; j++) {
        float e = expf(tensor_data(x)[j]);
        printf("  %-4g %-9.3f %.4f\n", (double)tensor_data(x)[j], (double)e, (double)tensor_data(s)[j]);
        sum_s += tensor_data(s)[j];
    }
    printf("  sum of e^x = %.3f; sum of the probabilities = %.4f\n", (double)total, (double)sum_s);
}

static void section_overflow(Ctx *ctx) {
    (void)ctx;
    heading("4.2 Without the max, e^x overflows float32 just above x = 88.72");
    printf("  largest float32 = %.4e, and log of it = %.4f\n", (double)FLT_MAX, (double)logf(FLT_MAX));
    printf("  expf(88.72) = %.4e, expf(88.73) = %g\n", (double)expf(88.72f), (double)expf(88.73f));
    /* the chapter says e^88.7 is already past the largest float32; it is not, quite */
    float e887 = expf(88.7f);
    printf("  (the chapter says e^88.7 is already too large: expf(88.7) = %.4e, %s)\n", (double)e887,
           isinf(e887) ? "inf" : "still finite");
    /* e^(s-2) + e^(s-1) + e^s = e^s (1 + e^-1 + e^-2): the sum overflows a little before e^s does */
    printf("  the sum e^(s-2) + e^(s-1) + e^s overflows already above s = log(FLT_MAX) - log(1 + e^-1 + e^-2) = %.2f\n",
           log((double)FLT_MAX) - log(1.0 + exp(-1.0) + exp(-2.0)));
    printf("  logits [s-2, s-1, s] for growing s (the right answer is always [0.0900, 0.2447, 0.6652]):\n");
    printf("  %-7s %-30s %s\n", "s", "naive exp(x) / sum", "stable (library)");
    const float scales[] = {3, 50, 88, 88.7f, 89, 100, 1000};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        float s = scales[k], x[3] = {s - 2, s - 1, s}, naive[3];
        softmax_naive_row(x, 3, naive);
        Tensor *stable = tensor_softmax_last_dim(tensor_from(ctx, DIMS(3), x, 3));
        char a[64], b[64];
        format_row(a, sizeof a, naive, 3);
        format_row(b, sizeof b, tensor_data(stable), 3);
        printf("  %-7g %-30s %s\n", (double)s, a, b);
    }
    /* the chapter says that dividing by inf gives nan; a finite number over inf is 0 */
    volatile float finite = 1.0f, inf = INFINITY;
    printf("  (the chapter says dividing by inf gives nan: 1 / inf = %g, and only inf / inf is %s)\n",
           (double)(finite / inf), isnan(inf / inf) ? "nan" : "a number");
}

static void section_max_trick(Ctx *ctx) {
    heading("4.3 The max trick: softmax(x) = softmax(x - max(x)), and every exp is at most 1");
    Tensor *x = tensor_from(ctx, DIMS(3), VALUES(1, 2, 3));
    Tensor *shifted = tensor_add_scalar(x, -3);
    float e[3];
    for (int j = 0; j < 3; j++) e[j] = expf(tensor_data(shifted)[j]);
    print_row("  x - max(x)       = ", tensor_data(shifted), 3);
    print_row("  e^(x - max(x))   = ", e, 3);
    print_row("  softmax(x)       = ", tensor_data(tensor_softmax_last_dim(x)), 3);
    print_row("  softmax(x - max) = ", tensor_data(tensor_softmax_last_dim(shifted)), 3);
}

/* The stable softmax of one row, with the max's loop started at `start` instead of -inf. */
static void softmax_max_from(const float *x, int64_t d, float start, float *out) {
    float m = start, sum = 0.0f;
    for (int64_t j = 0; j < d; j++) m = x[j] > m ? x[j] : m;
    for (int64_t j = 0; j < d; j++) sum += out[j] = expf(x[j] - m);
    for (int64_t j = 0; j < d; j++) out[j] /= sum;
}

static void section_max_start(Ctx *ctx) {
    heading("4.3 The max starts at -inf: a finite start such as -1e4 is wrong for a row below it");
    const float x[3] = {-20000, -30000, -25000};
    float from_sentinel[3], from_inf[3];
    softmax_max_from(x, 3, -1e4f, from_sentinel);
    softmax_max_from(x, 3, -INFINITY, from_inf);
    print_row("  x                        = ", x, 3);
    printf("  max started at -1e4      = %g (no entry is above it, so it is never replaced)\n",
           (double)fmaxf(-1e4f, fmaxf(x[0], fmaxf(x[1], x[2]))));
    print_row("  softmax, max from -1e4   = ", from_sentinel, 3);
    print_row("  softmax, max from -inf   = ", from_inf, 3);
    print_row("  the library              = ", tensor_data(tensor_softmax_last_dim(tensor_from(ctx, DIMS(3), x, 3))),
              3);
}

static void section_backward(Ctx *ctx) {
    heading("4.4 Backward: dx_i = s_i * (g_i - sum_j g_j s_j)");
    Tensor *x = tensor_requires_grad(tensor_from(ctx, DIMS(3), VALUES(1, 2, 3)));
    Tensor *s = tensor_softmax_last_dim(x);
    Tensor *g = tensor_from(ctx, DIMS(3), VALUES(1, 0, 0)); /* the loss is s_0 itself */
    tensor_backward_from(s, g);
    const float *sv = tensor_data(s), *gv = tensor_data(g), *dx = tensor_data(tensor_grad(x));
    float dot = 0.0f, sum_dx = 0.0f;
    for (int j = 0; j < 3; j++) dot += gv[j] * sv[j], sum_dx += dx[j];
    print_row("  s   = ", sv, 3);
    print_row("  g   = ", gv, 3);
    printf("  dot = sum_j g_j s_j = %.4f\n", (double)dot);
    print_row("  dx  = ", dx, 3);
    printf("  the entries of dx sum to %.4f: adding a constant to every logit changes nothing\n", (double)sum_dx);

    /* the same dx as a matrix product: the Jacobian J_ij = ds_i/dx_j = s_i (delta_ij - s_j) */
    float jv[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) jv[3 * i + j] = (i == j ? sv[i] : 0.0f) - sv[i] * sv[j];
    Tensor *jacobian = tensor_from(ctx, DIMS(3, 3), jv, 9);
    /* (J^T g)_j = sum_i J_ij g_i: g as a column (3,1) broadcasts along each row i of J, then sum over i */
    Tensor *jt_g = tensor_sum_axis(tensor_mul(jacobian, tensor_from(ctx, DIMS(3, 1), gv, 3)), 0, false);
    float worst = 0.0f;
    for (int j = 0; j < 3; j++) worst = fmaxf(worst, fabsf(tensor_data(jt_g)[j] - dx[j]));
    tensor_fprint(stdout, "  J = diag(s) - s s^T", jacobian, "%.4f");
    print_row("  J^T g = ", tensor_data(jt_g), 3);
    printf("  max |J^T g - dx| = %g: the backward is J^T g, without ever building J (d*d numbers)\n", (double)worst);
}

static void section_log_softmax(Ctx *ctx) {
    heading("4.5 log_softmax through log-sum-exp, and cross-entropy from logits");
    Tensor *x = tensor_from(ctx, DIMS(3), VALUES(1, 2, 3));
    print_row("  log_softmax([1, 2, 3])        = ", tensor_data(tensor_log_softmax_last_dim(x)), 3);
    Tensor *far = tensor_from(ctx, DIMS(2), VALUES(0, 200));
    float naive[2];
    for (int j = 0; j < 2; j++) naive[j] = logf(tensor_data(tensor_softmax_last_dim(far))[j]);
    print_row("  log(softmax([0, 200]))        = ", naive, 2);
    print_row("  log_softmax([0, 200])         = ", tensor_data(tensor_log_softmax_last_dim(far)), 2);
    Tensor *logits = tensor_requires_grad(tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 1, 2, 3)));
    const int64_t targets[2] = {2, 0};
    Tensor *loss = tensor_cross_entropy(logits, targets, 2);
    tensor_print("  logits", logits);
    printf("  targets = [%lld, %lld]\n", (long long)targets[0], (long long)targets[1]);
    tensor_fprint(stdout, "  cross_entropy", loss, "%.4f");
    tensor_backward(loss);
    tensor_fprint(stdout, "  d loss / d logits = (softmax - onehot) / N", tensor_grad(logits), "%.4f");
}

static void section_edges(Ctx *ctx) {
    heading("4.6 Edge cases, decided once: masked entries, nothing left, nan, one entry, huge logits");
    const char *labels[] = {"[1, -inf, 3]", "[-inf, -inf, -inf]", "[1, nan, 3]", "[7]", "[1e4, 0, -1e4]"};
    const float rows[5][3] = {{1, -INFINITY, 3}, {-INFINITY, -INFINITY, -INFINITY}, {1, NAN, 3}, {7}, {1e4f, 0, -1e4f}};
    const int64_t lengths[5] = {3, 3, 3, 1, 3};
    for (int k = 0; k < 5; k++) {
        Tensor *s = tensor_softmax_last_dim(tensor_from(ctx, DIMS(lengths[k]), rows[k], lengths[k]));
        char label[64];
        snprintf(label, sizeof label, "  softmax(%s)", labels[k]);
        tensor_fprint(stdout, label, s, "%.4f");
    }
}

/* Each section gets a context of its own. */
static int run_section(void (*section)(Ctx *)) {
    Ctx *ctx = ctx_new();
    if (!ctx) {
        printf("out of memory: %s\n", tensor_error());
        return -1;
    }
    section(ctx);
    ctx_free(ctx);
    return 0;
}

int main(void) {
    printf("Lesson 3: softmax\n=================\n");
    void (*sections[])(Ctx *) = {section_softmax,  section_overflow,    section_max_trick, section_max_start,
                                 section_backward, section_log_softmax, section_edges};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (run_section(sections[i]) < 0) return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
