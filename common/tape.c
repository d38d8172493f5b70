/*
 * tape.c - the tape: reverse-mode autodiff. An op records its inputs and its backward on its
 * output (tensor_record); tensor_backward walks the recorded graph from the loss, inputs after
 * the tensors made from them, and runs each backward once. docs/0-foundations.md ("The tape")
 * explains it; tensor.h has each function's contract.
 */
#include <stdlib.h>
#include <string.h>

#include "tensor_internal.h"

Tensor *tensor_record(Tensor *out, const char *op, BackwardFn backward, int n, Tensor *const *inputs) {
    if (!out) return tensor_null_input("record", "out"), NULL;
    /* checked before out is touched, so a failed record leaves out as it was */
    if (!op || n < 0 || n > TENSOR_MAX_INPUTS || (n > 0 && !inputs))
        return tensor_set_error("record: op %s with %d inputs%s: give a name and 0..%d (TENSOR_MAX_INPUTS) inputs",
                                op ? op : "NULL", n, n > 0 && !inputs ? " (NULL)" : "", TENSOR_MAX_INPUTS),
               NULL;
    for (int i = 0; i < n; i++) {
        char which[16];
        snprintf(which, sizeof which, "%d", i);
        if (!inputs[i]) return tensor_null_input(op, which), NULL;
        if (inputs[i]->ctx != out->ctx)
            return tensor_set_error("%s: input %d belongs to a different context than the output", op, i), NULL;
    }
    out->op = op;
    out->backward = backward;
    out->n_inputs = n;
    for (int i = 0; i < n; i++) {
        out->inputs[i] = inputs[i];
        if (inputs[i]->requires_grad) out->requires_grad = true;
    }
    return out;
}

/* t's gradient, made if it is not yet, and not zeroed: that waits for its first use */
static bool grad_make(Tensor *t) {
    if (t->grad) return true;
    t->grad = tensor_empty(t->ctx, t->shape, t->rank);
    t->grad_unset = t->grad != NULL;
    return t->grad != NULL;
}

float *tensor_grad_data(Tensor *t) {
    if (!t) return tensor_null_input("grad_data", "t"), NULL;
    if (!grad_make(t)) return NULL;
    if (t->grad_unset) {
        memset(tensor_data(t->grad), 0, (size_t)tensor_numel(t) * sizeof(float));
        t->grad_unset = false;
    }
    return tensor_data(t->grad);
}

bool tensor_grads_begin(int n, Tensor *const *inputs, const bool *whole, float **grads) {
    if (!grads || (n > 0 && !inputs)) return tensor_null_input("grads_begin", grads ? "inputs" : "grads"), true;
    bool store = true;
    for (int i = 0; i < n; i++) {
        Tensor *t = inputs[i];
        grads[i] = t && t->requires_grad && grad_make(t) ? tensor_data(t->grad) : NULL;
        if (!grads[i]) continue;
        store = store && t->grad_unset && (!whole || whole[i]);
        for (int j = 0; j < i; j++) store = store && inputs[j] != t;
    }
    /* stored over, a gradient counts as zeroed from now on; added to, it is zeroed first if unset */
    for (int i = 0; i < n; i++)
        if (grads[i] && store) inputs[i]->grad_unset = false;
        else if (grads[i]) tensor_grad_data(inputs[i]);
    return !store;
}

Tensor *tensor_grad(Tensor *t) {
    if (!t) return tensor_null_input("grad", "t"), NULL;
    char s[SHAPE_STR_MAX];
    if (!t->requires_grad)
        return tensor_set_error("grad: tensor #%d with shape %s does not require grad; call tensor_requires_grad() "
                                "on it before building the computation",
                                t->id, shape_format(t->shape, t->rank, s, sizeof s)),
               NULL;
    return tensor_grad_data(t) ? t->grad : NULL;
}

void ctx_zero_grads(Ctx *ctx) {
    if (!ctx) return;
    for (Tensor *t = ctx->first_tensor; t; t = t->next_in_ctx) tensor_zero_grad(t);
}

void tensor_zero_grad(Tensor *t) {
    if (!t || !t->grad) return;
    memset(t->grad->storage->data, 0, (size_t)t->grad->storage->size * sizeof(float));
    t->grad_unset = false;
}

/* True when an input of t requires grad: the inputs whose gradients t's backward writes */
static bool passes_gradient(const Tensor *t) {
    for (int i = 0; i < t->n_inputs; i++)
        if (t->inputs[i]->requires_grad) return true;
    return false;
}

/* Every tensor that `root` depends on and that requires grad, inputs before the tensors made
 * from them (a post-order depth-first walk, kept iterative so long chains cannot overflow
 * the C stack). Returns the count, or -1 if memory ran out. */
static int topological_order(Tensor *root, Tensor **order) {
    Ctx *ctx = root->ctx;
    int capacity = ctx->n_tensors;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    Tensor **stack = malloc((size_t)capacity * sizeof *stack);
    int *next_input = malloc((size_t)capacity * sizeof *next_input);
    if (!stack || !next_input) return free(stack), free(next_input), -1;
    unsigned epoch = ++ctx->epoch;
    int depth = 0, n = 0;
    root->visit = epoch;
    stack[depth] = root;
    next_input[depth++] = 0;
    while (depth > 0) {
        Tensor *t = stack[depth - 1];
        if (next_input[depth - 1] < t->n_inputs) {
            Tensor *in = t->inputs[next_input[depth - 1]++];
            if (in->requires_grad && in->visit != epoch) {
                in->visit = epoch;
                stack[depth] = in;
                next_input[depth++] = 0;
            }
        } else {
            order[n++] = t; /* all of t's inputs are already placed */
            depth--;
        }
    }
    free(stack), free(next_input);
    return n;
}

int tensor_backward_from(Tensor *out, const Tensor *upstream) {
    char s[SHAPE_STR_MAX], u[SHAPE_STR_MAX];
    if (!out) return tensor_null_input("backward", "loss"), -1;
    if (!upstream && tensor_numel(out) != 1)
        return tensor_set_error("backward: the loss must be a scalar (one element), got shape %s; reduce it "
                                "first (a sum or a mean of it) or use tensor_backward_from with an upstream gradient",
                                shape_format(out->shape, out->rank, s, sizeof s)),
               -1;
    if (!out->requires_grad)
        return tensor_set_error("backward: tensor #%d with shape %s does not require grad: no input of its "
                                "computation was marked with tensor_requires_grad()",
                                out->id, shape_format(out->shape, out->rank, s, sizeof s)),
               -1;
    if (upstream && !shape_equal(upstream->shape, upstream->rank, out->shape, out->rank))
        return tensor_set_error("backward: upstream gradient has shape %s but the output has shape %s",
                                shape_format(upstream->shape, upstream->rank, u, sizeof u),
                                shape_format(out->shape, out->rank, s, sizeof s)),
               -1;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    Tensor **order = malloc((size_t)out->ctx->n_tensors * sizeof *order);
    int n = order ? topological_order(out, order) : -1;
    /* Every gradient exists before any backward runs, so backward functions never allocate.
     * Each is zeroed when it is first used (tensor_grad_data), not here: zeroing megabytes of
     * gradients at once pushed them out of the cache before the first add into each. */
    bool *made_now = n >= 0 ? malloc((size_t)(n > 0 ? n : 1) * sizeof *made_now) : NULL;
    bool ready = made_now != NULL;
    for (int i = 0; i < n && ready; i++) {
        made_now[i] = order[i]->grad == NULL;
        ready = grad_make(order[i]);
    }
    /* upstream is copied before any gradient is reset: it may be one of them (tensor_grad(out)) */
    int64_t n_seed = tensor_numel(out);
    float *seed = ready && upstream ? malloc((size_t)(n_seed > 0 ? n_seed : 1) * sizeof *seed) : NULL;
    if (!ready || (upstream && !seed)) {
        free(order), free(made_now);
        if (n < 0 || !made_now || ready) tensor_set_error("backward: out of memory");
        return -1;
    }
    if (upstream) tensor_to_array(upstream, seed, n_seed);
    /* Intermediate gradients restart from zero (when first used); leaf gradients keep
     * accumulating. */
    for (int i = 0; i < n; i++)
        if (order[i]->backward && !made_now[i]) order[i]->grad_unset = true;
    float *g = tensor_grad_data(out); /* contiguous: the same row-major order as seed */
    if (upstream)
        for (int64_t i = 0; i < n_seed; i++) g[i] += seed[i];
    else g[0] += 1.0f; /* d loss / d loss */
    /* a backward reads its output's gradient: zeros, if nothing downstream added to it; one
     * with no input that requires grad has nothing to pass on */
    for (int i = n - 1; i >= 0; i--)
        if (order[i]->backward && tensor_grad_data(order[i]) && passes_gradient(order[i])) order[i]->backward(order[i]);
    /* and a gradient that nothing reached (an op that passed none on) is zeros when backward
     * returns, however it is read afterwards */
    for (int i = 0; i < n; i++)
        if (order[i]->grad_unset) tensor_grad_data(order[i]);
    free(seed), free(order), free(made_now);
    return 0;
}

int tensor_backward(Tensor *loss) { return tensor_backward_from(loss, NULL); }
