/*
 * walkthrough.c - lesson 5, run with `make lesson5`. Prints every worked example of the
 * lesson, computed by the library as it runs. Read it beside docs/5-gather.md: the section
 * numbers match.
 */
#include <stdio.h>
#include <stdlib.h>

#include "broadcast.h"
#include "gather.h"
#include "permute.h"

static void heading(const char *title) { printf("\n%s\n", title); }

static Tensor *chapter_table(Ctx *ctx) {
    return tensor_requires_grad(tensor_from(ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6)));
}

static void print_indices(const char *label, const int64_t *indices, int64_t n) {
    printf("%s[", label);
    for (int64_t i = 0; i < n; i++) printf(i ? ", %lld" : "%lld", (long long)indices[i]);
    printf("]\n");
}

static void section_lookup(Ctx *ctx) {
    heading("6.1 gather_rows: table (V, D) and N indices -> (N, D); out row i is table row indices[i]");
    Tensor *table = chapter_table(ctx);
    const int64_t indices[2] = {0, 2};
    Tensor *rows = tensor_gather_rows(table, indices, 2);
    tensor_print("  table", table);
    print_indices("  indices = ", indices, 2);
    tensor_print("  gather_rows(table, indices)", rows);
    printf("  its data, row-major: [");
    for (int64_t k = 0; k < tensor_numel(rows); k++) printf(k ? ", %g" : "%g", (double)tensor_data(rows)[k]);
    printf("]\n");
}

/* The chapter's per-row table: how often each row was gathered, and the gradient it got. */
static void gradient_table(Ctx *ctx, const int64_t *indices, int64_t n) {
    Tensor *table = chapter_table(ctx);
    tensor_backward(tensor_sum(tensor_gather_rows(table, indices, n)));
    print_indices("  indices = ", indices, n);
    printf("  %-10s %-26s %s\n", "table row", "used by", "gradient of sum(out)");
    const float *g = tensor_data(tensor_grad(table));
    for (int64_t r = 0; r < 3; r++) {
        char used[64] = "";
        size_t len = 0;
        int count = 0;
        for (int64_t i = 0; i < n; i++)
            if (indices[i] == r)
                len += (size_t)snprintf(used + len, sizeof used - len, "%sindices[%lld]", count++ ? ", " : "",
                                        (long long)i);
        if (!count) snprintf(used, sizeof used, "nothing");
        printf("  %-10lld %-26s [%g, %g]\n", (long long)r, used, (double)g[r * 2], (double)g[r * 2 + 1]);
    }
    tensor_print("  table.grad", tensor_grad(table));
}

static void section_backward(Ctx *ctx) {
    heading("6.2 Backward, a scatter-add: each output row's gradient goes back to the row it came from");
    gradient_table(ctx, (const int64_t[]){0, 2}, 2);
    printf("\n  the same row twice: its gradients add up (+=, never =)\n");
    gradient_table(ctx, (const int64_t[]){0, 0}, 2);
}

static void section_errors(Ctx *ctx) {
    heading("6.3 A bad index is an error that names it, not an out-of-bounds read");
    Tensor *table = chapter_table(ctx);
    const int64_t bad[2] = {1, 3};
    Tensor *rows = tensor_gather_rows(table, bad, 2);
    print_indices("  indices = ", bad, 2);
    printf("  gather_rows returned %s: %s\n", rows ? "a tensor" : "NULL", tensor_error());
    tensor_clear_error();
}

static void section_embedding(Ctx *ctx) {
    heading("6.4 An embedding: a toy vocabulary, one vector per word, a sentence as rows");
    const char *vocabulary[5] = {"the", "cat", "sat", "on", "mat"};
    Tensor *table = tensor_requires_grad(tensor_from(ctx, DIMS(5, 3),
                                                     VALUES(0.1f, 0.0f, 0.2f, 0.9f, 0.4f, 0.1f, 0.3f, 0.8f, 0.5f, 0.0f,
                                                            0.2f, 0.7f, 0.6f, 0.5f, 0.0f)));
    for (int w = 0; w < 5; w++)
        printf("  %-4s -> row %d = [%.1f, %.1f, %.1f]\n", vocabulary[w], w, (double)tensor_data(table)[w * 3],
               (double)tensor_data(table)[w * 3 + 1], (double)tensor_data(table)[w * 3 + 2]);
    const int64_t sentence[6] = {0, 1, 2, 3, 0, 4}; /* "the cat sat on the mat" */
    printf("  \"the cat sat on the mat\" -> ");
    print_indices("indices ", sentence, 6);
    Tensor *rows = tensor_gather_rows(table, sentence, 6);
    tensor_fprint(stdout, "  its rows", rows, "%.1f");
    tensor_backward(tensor_sum(rows));
    printf("  gradient of sum(rows), first entry of each word's row:");
    for (int w = 0; w < 5; w++)
        printf(" %s %g%s", vocabulary[w], (double)tensor_data(tensor_grad(table))[w * 3], w < 4 ? "," : "\n");
    printf("  (\"the\" appears twice, so it collects two gradients)\n");
    const int64_t batch[6] = {0, 1, 2, 0, 4, 2}; /* "the cat sat", "the mat sat" */
    printf("  a batch of 2 sentences of 3 words, indices of shape (2,3):");
    for (int sentence_i = 0; sentence_i < 2; sentence_i++) {
        printf(" \"");
        for (int w = 0; w < 3; w++) printf(w ? " %s" : "%s", vocabulary[batch[sentence_i * 3 + w]]);
        printf("\" = [%lld, %lld, %lld]", (long long)batch[sentence_i * 3], (long long)batch[sentence_i * 3 + 1],
               (long long)batch[sentence_i * 3 + 2]);
    }
    printf("\n");
    Tensor *e = tensor_embedding(table, batch, DIMS(2, 3));
    char s[SHAPE_STR_MAX];
    printf("  tensor_embedding gives shape %s:\n", shape_format(e->shape, e->rank, s, sizeof s));
    tensor_fprint(stdout, "  e", e, "%.1f");
}

static void print_map(const char *label, const int64_t *map, int64_t n) {
    printf("%s[", label);
    for (int64_t t = 0; t < n; t++) printf(t ? ", %lld" : "%lld", (long long)map[t]);
    printf("]\n");
}

/* out[t] = in[map[t]] forward; in.grad[map[t]] += g[t] backward, by hand, for a (rows, 2) gradient. */
static void print_scatter_add(const char *label, const float *g, const int64_t *map, int64_t n, int64_t in_numel) {
    float by_hand[16] = {0};
    for (int64_t t = 0; t < n; t++) by_hand[map[t]] += g[t];
    printf("%s[", label);
    for (int64_t i = 0; i < in_numel; i++) printf(i ? ", %g" : "%g", (double)by_hand[i]);
    printf("]\n");
}

/* The chapter's question 4: permute and gather_rows both only move data (out[t] = in[map[t]]),
 * so both backwards are one rule: in.grad[map[t]] += g[t]. */
static void section_question_four(Ctx *ctx) {
    heading("6.5 The chapter's question 4: permute and gather_rows only move data; the gradient goes back through "
            "the same map");
    Tensor *g = tensor_from(ctx, DIMS(3, 2), VALUES(1, 2, 3, 4, 5, 6)); /* the upstream gradient of both */
    Tensor *x = tensor_requires_grad(tensor_from(ctx, DIMS(2, 3), VALUES(10, 20, 30, 40, 50, 60)));
    Tensor *y = tensor_permute(x, AXES(1, 0));
    int64_t map[6], index[2];
    for (int64_t t = 0; t < 6; t++) { /* y's element t is read at offset sum(index * stride) of x's storage */
        unravel_index(t, y->shape, y->rank, index);
        map[t] = y->offset + index[0] * y->strides[0] + index[1] * y->strides[1];
    }
    printf("  permute: y = permute(x, (1,0)), x (2,3), y (3,2)\n");
    print_map("    y's element t is x's element map[t], map = ", map, 6);
    tensor_backward_from(y, g);
    tensor_print("    g, y's gradient", g);
    printf("    x.grad from the backward, flat: [");
    for (int64_t i = 0; i < 6; i++) printf(i ? ", %g" : "%g", (double)tensor_data(tensor_grad(x))[i]);
    printf("]\n");
    print_scatter_add("    x.grad[map[t]] += g[t] by hand:   ", tensor_data(g), map, 6, 6);

    Tensor *table = chapter_table(ctx);
    const int64_t indices[3] = {2, 0, 2};
    Tensor *rows = tensor_gather_rows(table, indices, 3);
    for (int64_t t = 0; t < 6; t++) map[t] = indices[t / 2] * 2 + t % 2; /* row indices[i], column j */
    printf("  gather_rows: out = gather_rows(table (3,2), [2, 0, 2]), out (3,2)\n");
    print_map("    out's element t is table's element map[t], map = ", map, 6);
    tensor_backward_from(rows, g);
    printf("    table.grad from the backward, flat: [");
    for (int64_t i = 0; i < 6; i++) printf(i ? ", %g" : "%g", (double)tensor_data(tensor_grad(table))[i]);
    printf("]\n");
    print_scatter_add("    table.grad[map[t]] += g[t] by hand: ", tensor_data(g), map, 6, 6);
    printf("  one rule for both: a permute's map reaches every input once, so each += runs once;\n"
           "  gather's map may reach a row twice (row 2 here) or never (row 1), and += adds the copies' gradients\n");
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
    printf("Lesson 5: gather_rows\n=====================\n");
    void (*sections[])(Ctx *) = {section_lookup, section_backward, section_errors, section_embedding,
                                 section_question_four};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (run_section(sections[i]) < 0) return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
