/*
 * broadcast.c - lesson 1: broadcasting, forward and backward.
 *
 * Read top to bottom: the shape rule (broadcast_shapes), two ways to find the source element
 * of each output element (stride-0 views via broadcast_strides, and the chapter's index map
 * via broadcast_map), then the ops, each forward next to its backward. docs/1-broadcast.md
 * explains every step.
 *
 * Names: `out` is the result, `g` its gradient; a and b are the inputs, ga and gb their
 * gradients. Shapes are numpy's: (2,3) has 2 rows of 3.
 */
#include "broadcast.h"

#include <math.h>

#include "kernels.h"

/* ==== the rule =========================================================================== */

int broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    char sa[SHAPE_STR_MAX], sb[SHAPE_STR_MAX], so[SHAPE_STR_MAX];
    if (!shape_is_valid("broadcast_shapes", a, a_rank) || !shape_is_valid("broadcast_shapes", b, b_rank)) return -1;
    if (!out || !out_rank) return tensor_set_error("broadcast_shapes: out and out_rank must not be NULL"), -1;
    int n = a_rank > b_rank ? a_rank : b_rank;
    for (int i = 0; i < n; i++) {
        /* Right alignment: position i of the result lines up with position i - (n - rank) of
         * each input. A negative position means the input has no such dim: it counts as 1. */
        int ia = i - (n - a_rank), ib = i - (n - b_rank);
        int64_t da = ia >= 0 ? a[ia] : 1;
        int64_t db = ib >= 0 ? b[ib] : 1;
        /* NOLINTNEXTLINE(bugprone-branch-clone): one line per broadcasting rule, as the chapter states them */
        if (da == db) out[i] = da;
        else if (da == 1) out[i] = db;
        else if (db == 1) out[i] = da;
        else {
            tensor_set_error("broadcast_shapes: operands could not be broadcast together with shapes %s %s",
                             shape_format(a, a_rank, sa, sizeof sa), shape_format(b, b_rank, sb, sizeof sb));
            return -1;
        }
    }
    if (shape_numel(out, n) < 0) /* (2^40,1) and (1,2^40), stride-0 views, broadcast to 2^80 */
        return tensor_set_error("broadcast_shapes: shapes %s %s broadcast to %s, which has too many elements",
                                shape_format(a, a_rank, sa, sizeof sa), shape_format(b, b_rank, sb, sizeof sb),
                                shape_format(out, n, so, sizeof so)),
               -1;
    *out_rank = n;
    return 0;
}

/* ==== the library's way: a stride-0 view ================================================= */

int broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                      int target_rank, int64_t *out_strides) {
    char ss[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
    if (!shape_is_valid("broadcast_strides", src, src_rank) ||
        !shape_is_valid("broadcast_strides", target, target_rank))
        return -1;
    if ((src_rank > 0 && !src_strides) || (target_rank > 0 && !out_strides))
        return tensor_set_error("broadcast_strides: src_strides and out_strides must not be NULL"), -1;
    int pad = target_rank - src_rank; /* dims target has in front of src's */
    if (pad < 0) goto incompatible;
    for (int d = 0; d < target_rank; d++) {
        int s = d - pad; /* src's dim lined up with target's dim d */
        /* NOLINTNEXTLINE(bugprone-branch-clone): one rule of the three per line */
        if (s < 0) out_strides[d] = 0;                                 /* missing: every index reads the same */
        else if (src[s] == target[d]) out_strides[d] = src_strides[s]; /* matching: walk as usual */
        else if (src[s] == 1) out_strides[d] = 0;                      /* size 1: stay on element 0 */
        else goto incompatible;
    }
    return 0;

incompatible:
    tensor_set_error("broadcast_strides: shape %s cannot be broadcast to %s",
                     shape_format(src, src_rank, ss, sizeof ss), shape_format(target, target_rank, st, sizeof st));
    return -1;
}

/* ==== the chapter's way: an index map ==================================================== */

int broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    /* The map is the stride-0 view written out element by element: the offsets that src's
     * contiguous strides, made 0 on broadcast dims, give for each target index. */
    int64_t src_contiguous[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
    if (!shape_is_valid("broadcast_map", target, target_rank) || !shape_is_valid("broadcast_map", src, src_rank))
        return -1;
    char ss[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
    int64_t total = shape_numel(target, target_rank), index[TENSOR_MAX_RANK];
    if (total < 0 || shape_numel(src, src_rank) < 0)
        return tensor_set_error("broadcast_map: shape %s has too many elements",
                                total < 0 ? shape_format(target, target_rank, st, sizeof st)
                                          : shape_format(src, src_rank, ss, sizeof ss)),
               -1;
    if (!map && total != 0) return tensor_set_error("broadcast_map: map is NULL"), -1;
    contiguous_strides(src, src_rank, src_contiguous);
    if (broadcast_strides(src, src_rank, src_contiguous, target, target_rank, strides) < 0)
        return tensor_error_as("broadcast_map", NULL), -1;

    for (int64_t t = 0; t < total; t++) {
        unravel_index(t, target, target_rank, index); /* step 1: flat t -> (i, j, ...) */
        int64_t s = 0;
        for (int d = 0; d < target_rank; d++) s += index[d] * strides[d]; /* step 2: -> src flat */
        map[t] = s;
    }
    return 0;
}

/* ==== expand and its reverse, sum_to_shape =============================================== */

/* expand's backward. x was read through stride 0 along each broadcast dim, so each element of
 * x fed many elements of out. Writing x's gradient through the same stride-0 strides makes
 * += add all of their gradients into it: the gradient is summed back onto x's shape. */
static void expand_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t gx_contiguous[TENSOR_MAX_RANK], gx_strides[TENSOR_MAX_RANK];
    contiguous_strides(x->shape, x->rank, gx_contiguous);
    broadcast_strides(x->shape, x->rank, gx_contiguous, out->shape, out->rank, gx_strides);
    strided_accumulate(out->rank, out->shape, tensor_grad_data(x), gx_strides, tensor_grad_data(out),
                       out->grad->strides);
}

/* Its errors are broadcast_strides' (a shape that does not broadcast) and tensor_as_strided's
 * (one with too many elements), each under expand's name. */
Tensor *tensor_expand(Tensor *x, const int64_t *shape, int rank) {
    if (!x) return tensor_null_input("expand", "x"), NULL;
    int64_t strides[TENSOR_MAX_RANK];
    if (broadcast_strides(x->shape, x->rank, x->strides, shape, rank, strides) < 0)
        return tensor_error_as("expand", NULL), NULL;
    Tensor *view = tensor_as_strided(x, shape, rank, strides, x->offset);
    if (!view) return tensor_error_as("expand", NULL), NULL;
    return tensor_record(view, "expand", expand_backward, 1, &x);
}

/* The forward and backward of sum_to_shape are the same loop as expand's, turned around. */
static void sum_to_shape_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t g_strides[TENSOR_MAX_RANK], gx_strides[TENSOR_MAX_RANK];
    broadcast_strides(out->shape, out->rank, out->grad->strides, x->shape, x->rank, g_strides);
    contiguous_strides(x->shape, x->rank, gx_strides);
    strided_accumulate(x->rank, x->shape, tensor_grad_data(x), gx_strides, tensor_grad_data(out), g_strides);
}

static Tensor *sum_to_shape_named(const char *op, Tensor *x, const int64_t *shape, int rank) {
    if (!x) return tensor_null_input(op, "x"), NULL;
    char sx[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
    if (!shape_is_valid(op, shape, rank)) return NULL;
    int64_t contiguous[TENSOR_MAX_RANK], out_strides[TENSOR_MAX_RANK];
    bool fits = shape_numel(shape, rank) >= 0; /* if its count overflows, it cannot broadcast to x's */
    if (fits) contiguous_strides(shape, rank, contiguous);
    /* out's strides seen from x's shape: 0 along every dim that is summed away */
    if (!fits || broadcast_strides(shape, rank, contiguous, x->shape, x->rank, out_strides) < 0)
        return tensor_set_error("%s: shape %s does not broadcast to the input's shape %s, so the input cannot be "
                                "summed onto it",
                                op, shape_format(shape, rank, st, sizeof st),
                                shape_format(x->shape, x->rank, sx, sizeof sx)),
               NULL;
    Tensor *out = tensor_zeros(x->ctx, shape, rank);
    if (!out) return NULL;
    strided_accumulate(x->rank, x->shape, tensor_data(out), out_strides, tensor_data(x), x->strides);
    return tensor_record(out, op, sum_to_shape_backward, 1, &x);
}

Tensor *tensor_sum_to_shape(Tensor *x, const int64_t *shape, int rank) {
    return sum_to_shape_named("sum_to_shape", x, shape, rank);
}

Tensor *tensor_sum(Tensor *x) { return sum_to_shape_named("sum", x, NULL, 0); }

/* ==== elementwise ops with broadcasting ================================================== */

/* out = u op v for one element, op one of + - * / */
static float apply(char op, float u, float v) {
    switch (op) {
    case '+': return u + v;
    case '-': return u - v;
    case '*': return u * v;
    default: return u / v;
    }
}

/* The reference kernel of every forward: the odometer walks the output's shape, and both
 * inputs are read as that shape through their broadcast strides. */
void binary_reference(char op, int rank, const int64_t *shape, float *out, const float *a, const int64_t *a_strides,
                      const float *b, const int64_t *b_strides) {
    int64_t out_strides[TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, out_strides);
    NdIter it;
    nditer_init(&it, rank, shape, 3, (const int64_t *[]){out_strides, a_strides, b_strides});
    while (nditer_next(&it)) out[it.offset[0]] = apply(op, a[it.offset[1]], b[it.offset[2]]);
}

static Tensor *binary(const char *name, char op, BackwardFn backward, Tensor *a, Tensor *b) {
    if (!inputs_valid(name, INPUTS(a, b))) return NULL;
    int64_t shape[TENSOR_MAX_RANK], sa[TENSOR_MAX_RANK], sb[TENSOR_MAX_RANK];
    int rank;
    if (broadcast_shapes(a->shape, a->rank, b->shape, b->rank, shape, &rank) < 0)
        return tensor_error_as(name, NULL), NULL;
    Tensor *out = tensor_empty(a->ctx, shape, rank); /* every element is written below */
    if (!out) return NULL;
    /* Both inputs read as the output's shape, through stride-0 views: no copies, no maps. */
    broadcast_strides(a->shape, a->rank, a->strides, shape, rank, sa);
    broadcast_strides(b->shape, b->rank, b->strides, shape, rank, sb);
    kernels()->binary(op, rank, shape, tensor_data(out), tensor_data(a), sa, tensor_data(b), sb);
    return tensor_record(out, name, backward, 2, (Tensor *[]){a, b});
}

/* The reference kernel of every backward. It walks the output's gradient g, both inputs, and
 * both inputs' gradients. ga and gb are contiguous in a's and b's own shapes and are addressed
 * with stride 0 along the dims that were broadcast, so `ga[...] += ...` sums the gradient of
 * every copy back into the one element of a that was copied. ga (gb) is NULL when a (b) does
 * not require grad. Each case of the switch is one op's derivative, times g. Without
 * accumulate, each element gets one term, which is stored (binary_backward says when). */
void binary_backward_reference(char op, int rank, const int64_t *shape, const float *g, const float *a,
                               const int64_t *a_strides, const float *b, const int64_t *b_strides, float *ga,
                               const int64_t *ga_strides, float *gb, const int64_t *gb_strides, bool accumulate) {
    enum { G, A, B, GA, GB }; /* it.offset[G], [A], ... */
    int64_t g_strides[TENSOR_MAX_RANK];
    contiguous_strides(shape, rank, g_strides);
    NdIter it;
    nditer_init(&it, rank, shape, 5, (const int64_t *[]){g_strides, a_strides, b_strides, ga_strides, gb_strides});
    while (nditer_next(&it)) {
        const int64_t *k = it.offset;
        float gk = g[k[G]], u = a[k[A]], v = b[k[B]], da, db;
        switch (op) {
        case '+': da = gk, db = gk; break;            /* out = a + b: d out/d a = 1, d out/d b = 1 */
        case '-': da = gk, db = -gk; break;           /* out = a - b: d out/d a = 1, d out/d b = -1 */
        case '*': da = gk * v, db = gk * u; break;    /* out = a * b: d out/d a = b, d out/d b = a */
        default: da = gk / v, db = -gk * u / (v * v); /* out = a / b: 1/b and -a/b^2 */
        }
        if (ga) ga[k[GA]] = (accumulate ? ga[k[GA]] : 0.0f) + da; /* for x * x both lines add into x's gradient */
        if (gb) gb[k[GB]] = (accumulate ? gb[k[GB]] : 0.0f) + db;
    }
}

/* The gradient strides of x, an input broadcast to out's shape: contiguous in x's own shape,
 * 0 along every broadcast dim. */
static void broadcast_grad_strides(const Tensor *x, const Tensor *out, int64_t *strides) {
    int64_t contiguous[TENSOR_MAX_RANK];
    contiguous_strides(x->shape, x->rank, contiguous);
    broadcast_strides(x->shape, x->rank, contiguous, out->shape, out->rank, strides);
}

/* True when each element of x's gradient gets one term from out's: x is as large as out, not
 * broadcast. (x * x has two, but tensor_grads_begin sees x given twice.) */
static bool one_term_each(const Tensor *x, const Tensor *out) {
    return shape_numel(x->shape, x->rank) == shape_numel(out->shape, out->rank);
}

static void binary_backward(Tensor *out, char op) {
    Tensor *a = out->inputs[0], *b = out->inputs[1];
    int64_t sa[TENSOR_MAX_RANK], sb[TENSOR_MAX_RANK], sga[TENSOR_MAX_RANK], sgb[TENSOR_MAX_RANK];
    broadcast_strides(a->shape, a->rank, a->strides, out->shape, out->rank, sa);
    broadcast_strides(b->shape, b->rank, b->strides, out->shape, out->rank, sb);
    broadcast_grad_strides(a, out, sga);
    broadcast_grad_strides(b, out, sgb);
    /* gradients that nothing has reached yet, one term in each element, are stored (=) rather
     * than cleared and added to (+=); g[0] (g[1]) is NULL when a (b) takes no gradient */
    float *g[2];
    bool accumulate =
        tensor_grads_begin(2, out->inputs, (const bool[]){one_term_each(a, out), one_term_each(b, out)}, g);
    kernels()->binary_backward(op, out->rank, out->shape, tensor_data(out->grad), tensor_data(a), sa, tensor_data(b),
                               sb, g[0], sga, g[1], sgb, accumulate);
}

static void add_backward(Tensor *out) { binary_backward(out, '+'); }
static void sub_backward(Tensor *out) { binary_backward(out, '-'); }
static void mul_backward(Tensor *out) { binary_backward(out, '*'); }
static void div_backward(Tensor *out) { binary_backward(out, '/'); }

Tensor *tensor_add(Tensor *a, Tensor *b) { return binary("add", '+', add_backward, a, b); }
Tensor *tensor_sub(Tensor *a, Tensor *b) { return binary("sub", '-', sub_backward, a, b); }
Tensor *tensor_mul(Tensor *a, Tensor *b) { return binary("mul", '*', mul_backward, a, b); }
Tensor *tensor_div(Tensor *a, Tensor *b) { return binary("div", '/', div_backward, a, b); }

/* ==== with a scalar ====================================================================== */

/* x + s and x * s are the broadcast of a rank-0 constant: [B,D] * () -> [B,D]. Reusing add
 * and mul means no new backward to get wrong. */
Tensor *tensor_add_scalar(Tensor *x, float s) {
    if (!x) return tensor_null_input("add_scalar", "x"), NULL;
    return tensor_add(x, tensor_scalar(x->ctx, s));
}

Tensor *tensor_mul_scalar(Tensor *x, float s) {
    if (!x) return tensor_null_input("mul_scalar", "x"), NULL;
    return tensor_mul(x, tensor_scalar(x->ctx, s));
}

/* out = x^p: d out/d x = p * x^(p-1) (taken as 0 when p = 0, where x^p is the constant 1) */
static void pow_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    float p = out->param;
    int64_t gx_strides[TENSOR_MAX_RANK];
    contiguous_strides(x->shape, x->rank, gx_strides);
    float *gx = tensor_grad_data(x);
    const float *g = tensor_data(out->grad), *xs = tensor_data(x);
    NdIter it;
    nditer_init(&it, x->rank, x->shape, 3, (const int64_t *[]){gx_strides, out->grad->strides, x->strides});
    while (nditer_next(&it))
        if (p != 0.0f) gx[it.offset[0]] += g[it.offset[1]] * p * powf(xs[it.offset[2]], p - 1.0f);
}

Tensor *tensor_pow_scalar(Tensor *x, float p) {
    if (!x) return tensor_null_input("pow_scalar", "x"), NULL;
    Tensor *out = tensor_empty(x->ctx, x->shape, x->rank); /* every element is written below */
    if (!out) return NULL;
    float *o = tensor_data(out);
    const float *xs = tensor_data(x);
    NdIter it;
    nditer_init(&it, x->rank, x->shape, 2, (const int64_t *[]){out->strides, x->strides});
    while (nditer_next(&it)) o[it.offset[0]] = powf(xs[it.offset[1]], p);
    out->param = p;
    return tensor_record(out, "pow_scalar", pow_backward, 1, &x);
}

/* ==== this lesson's entries of the table of kernels (kernels.h) ============================ */

KERNELS_LESSON(broadcast, .binary = binary_reference, .binary_backward = binary_backward_reference)
