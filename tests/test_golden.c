/*
 * test_golden.c - conformance with PyTorch: tests/golden/generate.py wrote, for every
 * op of every lesson, seeded random inputs (some transposed or expanded views), the forward
 * output and the gradient of every input for a random upstream gradient, all computed by
 * PyTorch in float32. This suite runs the same cases through the library and compares. The
 * files are committed, so no Python is needed here; `make golden` regenerates them.
 *
 * Tolerances, |ours - theirs| <= ATOL + RTOL * |theirs|: both sides compute in float32, but in
 * different orders (sums, dot products), so each result may differ in its last bits. A sum of
 * a few dozen terms near 1 rounds to within about 1e-6, hence 1e-5 for most ops. Softmax,
 * log-softmax and cross-entropy see logits up to 1e4, where one float32 step is 1e-3; their
 * relative tolerance is that of the inputs' size, 1e-4. GELU and layer norm (lesson 7) keep
 * 1e-5: GELU's gradient in its tails is 1 + tanh(u) with tanh(u) near -1, a cancellation that
 * costs either side a few 1e-6; layer norm scales each row's rounding by 1/std, so the
 * generator gives it rows of std >= 0.3, where both sides stay within a few 1e-6.
 * tests/golden/model.txt, the whole model, is lesson 7's own test (lessons/7-train/test_train.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bmm.h"
#include "broadcast.h"
#include "gather.h"
#include "harness.h"
#include "permute.h"
#include "reduce.h"
#include "softmax.h"
#include "train.h"

enum { MAX_INPUTS = 4, MAX_VALUES = 4096, MAX_INDICES = 64 };

typedef struct {
    char name[16];
    Tensor *leaf, *seen; /* the leaf (whose gradient is checked) and the view the op sees */
} Input;

typedef struct {
    char op[32], params[128];
    int line;
    Input inputs[MAX_INPUTS];
    int n_inputs;
    int64_t indices[MAX_INDICES];
    int64_t n_indices;
    Tensor *upstream, *output;
    float *grads[MAX_INPUTS];
    int64_t grad_count[MAX_INPUTS];
} Case;

/* "RANK DIM... : V..." -> a tensor (values optional: then zeros of that shape) */
static Tensor *parse_tensor(char *text, const char *where) {
    char *colon = strchr(text, ':'), *end;
    int rank = (int)strtol(text, &end, 10);
    int64_t shape[TENSOR_MAX_RANK];
    for (int d = 0; d < rank; d++) shape[d] = strtoll(end, &end, 10);
    Tensor *t = tensor_zeros(test_ctx, shape, rank);
    ck_assert_msg(t != NULL, "%s: bad shape: %s", where, tensor_error());
    if (colon) {
        char *p = colon + 1;
        for (int64_t i = 0; i < tensor_numel(t); i++) tensor_data(t)[i] = strtof(p, &p);
    }
    return t;
}

static float *parse_values(char *text, int64_t *count) {
    float *values = malloc(MAX_VALUES * sizeof *values);
    char *p = strchr(text, ':') + 1, *end;
    *count = 0;
    for (;;) {
        float v = strtof(p, &end);
        if (end == p) break;
        values[(*count)++] = v;
        p = end;
    }
    return values;
}

static Input *find_input(Case *c, const char *name) {
    for (int i = 0; i < c->n_inputs; i++)
        if (!strcmp(c->inputs[i].name, name)) return &c->inputs[i];
    return NULL;
}

static Tensor *run_op(Case *c, const char *where) {
    Tensor *a = c->n_inputs > 0 ? c->inputs[0].seen : NULL, *b = c->n_inputs > 1 ? c->inputs[1].seen : NULL;
    const char *op = c->op;
    if (!strcmp(op, "add")) return tensor_add(a, b);
    if (!strcmp(op, "sub")) return tensor_sub(a, b);
    if (!strcmp(op, "mul")) return tensor_mul(a, b);
    if (!strcmp(op, "div")) return tensor_div(a, b);
    if (!strcmp(op, "pow")) return tensor_pow_scalar(a, strtof(c->params, NULL));
    if (!strcmp(op, "add_scalar")) return tensor_add_scalar(a, strtof(c->params, NULL));
    if (!strcmp(op, "mul_scalar")) return tensor_mul_scalar(a, strtof(c->params, NULL));
    if (!strcmp(op, "sum_to_shape") || !strcmp(op, "embedding")) { /* params: "RANK DIM..." */
        int64_t shape[TENSOR_MAX_RANK];
        char *p;
        int rank = (int)strtol(c->params, &p, 10);
        for (int d = 0; d < rank; d++) shape[d] = strtoll(p, &p, 10);
        return op[0] == 's' ? tensor_sum_to_shape(a, shape, rank) : tensor_embedding(a, c->indices, shape, rank);
    }
    if (!strcmp(op, "contiguous")) return tensor_contiguous(a);
    if (!strcmp(op, "sum")) return tensor_sum(a);
    if (!strcmp(op, "sum_last_dim")) return tensor_sum_last_dim(a);
    if (!strcmp(op, "mean")) return tensor_mean(a);
    if (!strcmp(op, "sum_axis") || !strcmp(op, "mean_axis")) {
        char *p;
        int axis = (int)strtol(c->params, &p, 10), keep = (int)strtol(p, NULL, 10);
        return op[0] == 's' ? tensor_sum_axis(a, axis, keep) : tensor_mean_axis(a, axis, keep);
    }
    if (!strcmp(op, "mse")) return tensor_mse_loss(a, b);
    if (!strcmp(op, "softmax")) return tensor_softmax_last_dim(a);
    if (!strcmp(op, "log_softmax")) return tensor_log_softmax_last_dim(a);
    if (!strcmp(op, "cross_entropy")) return tensor_cross_entropy(a, c->indices, c->n_indices);
    if (!strcmp(op, "gather_rows")) return tensor_gather_rows(a, c->indices, c->n_indices);
    if (!strcmp(op, "matmul")) return tensor_matmul(a, b);
    if (!strcmp(op, "gelu")) return tensor_gelu(a);
    if (!strcmp(op, "layer_norm")) /* inputs x, gamma, beta; params: eps */
        return tensor_layer_norm(a, b, c->n_inputs > 2 ? c->inputs[2].seen : NULL, strtof(c->params, NULL));
    if (!strcmp(op, "permute") || !strcmp(op, "permute_reshape")) {
        int dims[TENSOR_MAX_RANK], n = 0;
        int64_t shape[TENSOR_MAX_RANK];
        int rank = 0;
        char *p = c->params, *end;
        for (;;) { /* "1 0 2" or "1 0 2 | 6" */
            while (*p == ' ') p++;
            if (*p == '|' || !*p) break;
            dims[n++] = (int)strtol(p, &end, 10);
            p = end;
        }
        Tensor *permuted = tensor_permute(a, dims, n);
        if (*p != '|') return permuted;
        for (p++;;) {
            long long d = strtoll(p, &end, 10);
            if (end == p) break;
            shape[rank++] = d;
            p = end;
        }
        return tensor_reshape(permuted, shape, rank);
    }
    ck_abort_msg("%s: unknown op %s", where, op);
    return NULL;
}

static bool close_to(float got, float want, double atol, double rtol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs((double)got - (double)want) <= atol + rtol * fabs((double)want);
}

static void expect_close_values(const float *got, const float *want, int64_t n, double atol, double rtol,
                                const char *what) {
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(close_to(got[i], want[i], atol, rtol), "%s: element %lld is %.9g, PyTorch gives %.9g", what,
                      (long long)i, (double)got[i], (double)want[i]);
}

static void check_case(Case *c, const char *file) {
    char where[512], what[640], shapes[192] = "";
    size_t used = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        char s[SHAPE_STR_MAX];
        used += (size_t)snprintf(shapes + used, sizeof shapes - used, "%s%s %s", i ? ", " : "", c->inputs[i].name,
                                 shape_format(c->inputs[i].seen->shape, c->inputs[i].seen->rank, s, sizeof s));
    }
    snprintf(where, sizeof where, "%s:%d: %s %s(%s)", file, c->line, c->op, c->params, shapes);
    bool soft = !strncmp(c->op, "softmax", 7) || !strncmp(c->op, "log_softmax", 11) || !strcmp(c->op, "cross_entropy");
    double atol = 1e-5, rtol = soft ? 1e-4 : 1e-5;

    Tensor *out = run_op(c, where);
    ck_assert_msg(out != NULL, "%s: the op failed: %s", where, tensor_error());
    snprintf(what, sizeof what, "%s: the output", where);
    EXPECT_SHAPE(out, c->output->shape, c->output->rank, what);
    float *got = malloc((size_t)(tensor_numel(out) + 1) * sizeof *got);
    tensor_to_array(out, got, tensor_numel(out));
    expect_close_values(got, tensor_data(c->output), tensor_numel(out), atol, rtol, what);
    free(got);

    ck_assert_msg(tensor_backward_from(out, c->upstream) == 0, "%s: backward failed: %s", where, tensor_error());
    for (int i = 0; i < c->n_inputs; i++) {
        Tensor *g = tensor_grad(c->inputs[i].leaf);
        snprintf(what, sizeof what, "%s: the gradient of %s", where, c->inputs[i].name);
        ck_assert_msg(tensor_numel(g) == c->grad_count[i], "%s has %lld elements, PyTorch's %lld", what,
                      (long long)tensor_numel(g), (long long)c->grad_count[i]);
        expect_close_values(tensor_data(g), c->grads[i], c->grad_count[i], atol, rtol, what);
    }
}

/* Reads tests/golden/NAME.txt and checks every case in it. */
static void run_file(const char *topic, int min_cases) {
    char path[256];
    snprintf(path, sizeof path, "tests/golden/%s.txt", topic);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s (run the tests from the course's top directory)", path);
    char *line = NULL;
    size_t size = 0;
    int number = 0, cases = 0;
    Case c;
    memset(&c, 0, sizeof c);
    char where[300];
    while (getline(&line, &size, f) > 0) {
        number++;
        line[strcspn(line, "\n")] = '\0';
        snprintf(where, sizeof where, "%s:%d", path, number);
        if (!strncmp(line, "case ", 5)) {
            for (int i = 0; i < c.n_inputs; i++) free(c.grads[i]); /* a case with no "end" */
            memset(&c, 0, sizeof c);
            c.line = number;
            char *rest = line + 5, *space = strchr(rest, ' ');
            snprintf(c.op, sizeof c.op, "%.*s", space ? (int)(space - rest) : (int)strlen(rest), rest);
            snprintf(c.params, sizeof c.params, "%s", space ? space + 1 : "");
        } else if (!strncmp(line, "input ", 6)) {
            Input *in = &c.inputs[c.n_inputs++];
            char *rest = line + 6, *space = strchr(rest, ' ');
            snprintf(in->name, sizeof in->name, "%.*s", (int)(space - rest), rest);
            in->leaf = in->seen = tensor_requires_grad(parse_tensor(space + 1, where));
        } else if (!strncmp(line, "view ", 5)) {
            char name[16], kind[16];
            ck_assert(sscanf(line + 5, "%15s %15s", name, kind) == 2);
            Input *in = find_input(&c, name);
            ck_assert_msg(in != NULL, "%s: view of an unknown input", where);
            if (!strcmp(kind, "transpose")) {
                in->seen = tensor_transpose(in->leaf, -1, -2);
            } else {
                Tensor *shape = parse_tensor(strstr(line, "expand") + 6, where);
                in->seen = tensor_expand(in->leaf, shape->shape, shape->rank);
            }
            ck_assert_msg(in->seen != NULL, "%s: %s", where, tensor_error());
        } else if (!strncmp(line, "indices ", 8)) {
            char *p = strchr(line, ':') + 1;
            c.n_indices = strtoll(line + 8, NULL, 10);
            for (int64_t i = 0; i < c.n_indices; i++) c.indices[i] = strtoll(p, &p, 10);
        } else if (!strncmp(line, "upstream ", 9)) {
            c.upstream = parse_tensor(line + 9, where);
        } else if (!strncmp(line, "output ", 7)) {
            c.output = parse_tensor(line + 7, where);
        } else if (!strncmp(line, "grad ", 5)) {
            char name[16];
            ck_assert(sscanf(line + 5, "%15s", name) == 1);
            Input *in = find_input(&c, name);
            ck_assert_msg(in != NULL, "%s: gradient of an unknown input", where);
            int i = (int)(in - c.inputs);
            c.grads[i] = parse_values(line, &c.grad_count[i]);
        } else if (!strcmp(line, "end")) {
            check_case(&c, path);
            for (int i = 0; i < c.n_inputs; i++) free(c.grads[i]), c.grads[i] = NULL;
            cases++;
        }
    }
    free(line);
    fclose(f);
    ck_assert_msg(cases >= min_cases, "%s: only %d cases (expected at least %d): regenerate with make golden", path,
                  cases, min_cases);
}

START_TEST(test_golden_broadcast) { run_file("broadcast", 200); }
END_TEST
START_TEST(test_golden_reduce) { run_file("reduce", 50); }
END_TEST
START_TEST(test_golden_softmax) { run_file("softmax", 60); }
END_TEST
START_TEST(test_golden_permute) { run_file("permute", 50); }
END_TEST
START_TEST(test_golden_gather) { run_file("gather", 40); }
END_TEST
START_TEST(test_golden_bmm) { run_file("bmm", 50); }
END_TEST
START_TEST(test_golden_train) { run_file("train", 70); }
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("conformance with PyTorch");
    TCase *tc = add_test_case(s, "golden files");
    tcase_set_timeout(tc, 60);
    add_test(tc, test_golden_broadcast);
    add_test(tc, test_golden_reduce);
    add_test(tc, test_golden_softmax);
    add_test(tc, test_golden_permute);
    add_test(tc, test_golden_gather);
    add_test(tc, test_golden_bmm);
    add_test(tc, test_golden_train);
    return run_core_tests(argc, argv, s);
}
