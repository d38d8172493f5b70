/*
 * plot.c - the data behind lesson 3's plot (`make lesson3 plot`): for logits [s-2, s-1, s]
 * with s from -120 to 120, the error of the naive and of the stable softmax in float32
 * against a double-precision reference. plot.gp draws it.
 *
 * usage: plot FILE    writes "s  naive_error  stable_error" lines to FILE
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax.h"

/* max_j |p_j - reference_j|, where a nan counts as the largest error there is, 1. The floor
 * of 1e-9 keeps exact answers on a log scale. */
static double error_against(const float *p, const double *reference) {
    double worst = 1e-9;
    for (int j = 0; j < 3; j++) {
        double e = isnan(p[j]) ? 1.0 : fabs((double)p[j] - reference[j]);
        if (e > worst) worst = e;
    }
    return worst;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return EXIT_FAILURE;
    }
    FILE *f = fopen(argv[1], "w");
    Ctx *ctx = ctx_new();
    if (!f || !ctx) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[1]);
        return EXIT_FAILURE;
    }
    /* the reference does not depend on s: softmax is unchanged by a shift, so it is softmax([-2, -1, 0]) */
    double reference[3], total = 0.0;
    for (int j = 0; j < 3; j++) total += reference[j] = exp((double)(j - 2));
    for (int j = 0; j < 3; j++) reference[j] /= total;

    fprintf(f, "# s  naive_error  stable_error   (logits [s-2, s-1, s], float32)\n");
    for (int k = -480; k <= 480; k++) {
        float s = (float)k / 4.0f, x[3] = {s - 2, s - 1, s}, naive[3];
        softmax_naive_row(x, 3, naive);
        Tensor *stable = tensor_softmax_last_dim(tensor_from(ctx, (const int64_t[]){3}, 1, x, 3));
        if (!stable) {
            fprintf(stderr, "%s: %s\n", argv[0], tensor_error());
            return EXIT_FAILURE;
        }
        fprintf(f, "%.2f %.6e %.6e\n", (double)s, error_against(naive, reference),
                error_against(tensor_data(stable), reference));
    }
    ctx_free(ctx);
    return fclose(f) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
