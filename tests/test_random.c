/*
 * test_random.c - random testing: every op of every lesson on seeded random shapes, with each
 * input presented in one of five layouts (contiguous; a permuted view; an offset view into a
 * larger, padded buffer; the same with some dims walked backwards (negative strides); a view
 * expanded from size-1 dims), compared with
 *   - a naive reference written here from the op's definition, in double, on the logical
 *     values (read from the leaf by this file's own index arithmetic, not the library's), and
 *   - central differences (common/gradcheck.c) for the backward, taken through the view, so
 *     the gradient must also find its way back into the right elements of the leaf (and none
 *     into the padding around an offset view).
 *
 * Each case has its own seed, derived from COURSE_SEED (default in tests/harness.c) and the case
 * number, so a failure prints one command that replays exactly that case:
 *     COURSE_SEED=S COURSE_CASE=K CK_RUN_CASE=OP build/tests/test_random
 * COURSE_TRIALS=N runs N cases per op instead of TRIALS; with a new seed each time
 * (COURSE_SEED=$RANDOM COURSE_TRIALS=2000) it hunts for bugs the fixed seed does not hit.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bmm.h"
#include "broadcast.h"
#include "gather.h"
#include "gradcheck.h"
#include "harness.h"
#include "permute.h"
#include "reduce.h"
#include "softmax.h"

enum { TRIALS = 100, MAX_IN = 2, MAX_INDICES = 64, MAX_OUT = 4096 /* 3^6 for permute's rank 6 is the most */ };

static const char *program = "build/tests/test_random"; /* argv[0], for the replay command */

/* ==== layouts: how an input is presented to the op ====================================== */

typedef enum { CONTIGUOUS, PERMUTED, OFFSET, FLIPPED, EXPANDED, N_LAYOUTS } Layout;
static const char *const layout_names[N_LAYOUTS] = {"contiguous", "permuted", "offset", "flipped", "expanded"};

/* One input: the shape the op sees, and the leaf (a contiguous tensor that requires grad)
 * that the view is made from. */
typedef struct {
    Layout layout;
    int rank;
    int64_t shape[TENSOR_MAX_RANK];
    int leaf_rank;
    int64_t leaf_shape[TENSOR_MAX_RANK];
    int order[TENSOR_MAX_RANK];       /* PERMUTED: leaf = input permuted by order */
    int64_t strides[TENSOR_MAX_RANK]; /* OFFSET, FLIPPED: the view's strides into the 1-D leaf */
    int64_t offset;                   /* OFFSET, FLIPPED: where the view's element 0 lies */
    int lead;                         /* EXPANDED: leading dims the leaf lacks */
    bool broadcast[TENSOR_MAX_RANK];  /* EXPANDED: dims the leaf has as 1 */
    float lo, hi;                     /* the range of the leaf's values */
} Input;

static int64_t row_major(const int64_t *index, const int64_t *shape, int rank) {
    int64_t flat = 0;
    for (int d = 0; d < rank; d++) flat = flat * shape[d] + index[d];
    return flat;
}

static int64_t numel_of(const int64_t *shape, int rank) {
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= shape[d];
    return n;
}

/* Chooses a layout for an input of the given shape and fills in how the leaf is stored. */
static void choose_layout(Rng *rng, Input *in) {
    int rank = in->rank;
    ck_assert(rank >= 0 && rank <= TENSOR_MAX_RANK);
    in->layout = rank == 0 ? CONTIGUOUS : (Layout)rng_int(rng, 0, N_LAYOUTS - 1);
    in->leaf_rank = rank;
    memcpy(in->leaf_shape, in->shape, sizeof in->shape);
    switch (in->layout) {
    case CONTIGUOUS: break;
    case PERMUTED:
        for (int d = 0; d < rank; d++) in->order[d] = d;
        for (int d = rank - 1; d > 0; d--) {
            int j = (int)rng_int(rng, 0, d), t = in->order[d];
            in->order[d] = in->order[j];
            in->order[j] = t;
        }
        for (int d = 0; d < rank; d++) in->leaf_shape[d] = in->shape[in->order[d]];
        break;
    case OFFSET:
    case FLIPPED: {
        /* a row-major array of a padded shape, the input a window into it, starting at offset */
        int64_t padded[TENSOR_MAX_RANK], stride = 1;
        for (int d = 0; d < rank; d++) padded[d] = in->shape[d] + rng_int(rng, 0, 2);
        for (int d = rank - 1; d >= 0; d--) {
            in->strides[d] = stride;
            stride *= padded[d];
        }
        int64_t start = rng_int(rng, 0, 3);
        in->offset = start;
        if (in->layout == FLIPPED) { /* walk some dims (at least one, if any is longer than 1) backwards */
            int first = -1, flipped = 0;
            for (int d = 0; d < rank; d++) {
                if (in->shape[d] < 2) continue;
                if (first < 0) first = d;
                if (rng_int(rng, 0, 1)) { /* start at its last element */
                    in->offset += in->strides[d] * (in->shape[d] - 1);
                    in->strides[d] = -in->strides[d];
                    flipped++;
                }
            }
            if (first >= 0 && !flipped) { /* none drawn: flip the first */
                in->offset += in->strides[first] * (in->shape[first] - 1);
                in->strides[first] = -in->strides[first];
            }
        }
        in->leaf_rank = 1;
        in->leaf_shape[0] = start + stride + rng_int(rng, 0, 2);
        break;
    }
    case EXPANDED:
        in->lead = (int)rng_int(rng, 0, rank);
        in->lead = in->lead > 1 ? 1 : in->lead; /* sometimes one leading dim is missing */
        for (int d = 0; d < rank; d++) in->broadcast[d] = d < in->lead || rng_int(rng, 0, 2) == 0;
        in->leaf_rank = rank - in->lead;
        for (int d = in->lead; d < rank; d++) in->leaf_shape[d - in->lead] = in->broadcast[d] ? 1 : in->shape[d];
        break;
    default: break;
    }
}

/* Where the input's element `index` lives in the leaf (the leaf's flat index). */
static int64_t leaf_position(const Input *in, const int64_t *index) {
    int64_t leaf_index[TENSOR_MAX_RANK];
    switch (in->layout) {
    case PERMUTED:
        for (int d = 0; d < in->rank; d++) leaf_index[d] = index[in->order[d]];
        return row_major(leaf_index, in->leaf_shape, in->rank);
    case OFFSET:
    case FLIPPED: {
        int64_t at = in->offset;
        for (int d = 0; d < in->rank; d++) at += index[d] * in->strides[d];
        return at;
    }
    case EXPANDED:
        for (int d = in->lead; d < in->rank; d++) leaf_index[d - in->lead] = in->broadcast[d] ? 0 : index[d];
        return row_major(leaf_index, in->leaf_shape, in->leaf_rank);
    default: return row_major(index, in->shape, in->rank);
    }
}

/* The input's values in row-major order of its shape, read from the leaf. */
static double *logical_values(const Input *in, const float *leaf) {
    int64_t n = numel_of(in->shape, in->rank), index[TENSOR_MAX_RANK];
    double *out = malloc((size_t)(n + 1) * sizeof *out);
    for (int64_t i = 0; i < n; i++) {
        unravel_index(i, in->shape, in->rank, index);
        out[i] = leaf[leaf_position(in, index)];
    }
    return out;
}

/* The offset view has no op of its own in the library (as_strided records none), so the test
 * records one: its backward adds the view's gradient into the leaf elements the view reads. */
static void window_backward(Tensor *out) {
    Tensor *leaf = out->inputs[0];
    strided_accumulate(out->rank, out->shape, tensor_grad_data(leaf) + out->offset, out->strides, tensor_grad_data(out),
                       out->grad->strides);
}

/* The tensor the op sees, made from the leaf with the library's view ops. */
static Tensor *present(const Input *in, Tensor *leaf) {
    switch (in->layout) {
    case PERMUTED: {
        int back[TENSOR_MAX_RANK];
        for (int d = 0; d < in->rank; d++) back[in->order[d]] = d;
        return tensor_permute(leaf, back, in->rank);
    }
    case OFFSET:
    case FLIPPED: {
        Tensor *view = tensor_as_strided(leaf, in->shape, in->rank, in->strides, in->offset);
        return view ? tensor_record(view, "window", window_backward, 1, &leaf) : NULL;
    }
    case EXPANDED: return tensor_expand(leaf, in->shape, in->rank);
    default: return leaf;
    }
}

static char *describe_input(const char *name, const Input *in, char *buf, size_t size) {
    char s[SHAPE_STR_MAX], l[SHAPE_STR_MAX], extra[SHAPE_STR_MAX + 48] = "";
    if (in->layout == PERMUTED) {
        int64_t order[TENSOR_MAX_RANK];
        for (int d = 0; d < in->rank; d++) order[d] = in->order[d];
        snprintf(extra, sizeof extra, " (leaf %s permuted by %s)", shape_format(in->leaf_shape, in->rank, l, sizeof l),
                 shape_format(order, in->rank, s, sizeof s));
    } else if (in->layout == OFFSET || in->layout == FLIPPED) {
        snprintf(extra, sizeof extra, " (strides %s, offset %" PRId64 " into %" PRId64 " floats)",
                 shape_format(in->strides, in->rank, l, sizeof l), in->offset, in->leaf_shape[0]);
    } else if (in->layout == EXPANDED) {
        snprintf(extra, sizeof extra, " (from %s)", shape_format(in->leaf_shape, in->leaf_rank, l, sizeof l));
    }
    snprintf(buf, size, "%s %s %s%s", name, shape_format(in->shape, in->rank, s, sizeof s), layout_names[in->layout],
             extra);
    return buf;
}

/* ==== cases ============================================================================= */

typedef struct Op Op;

typedef struct {
    const Op *op;
    int n_inputs;
    Input in[MAX_IN];
    /* the op's parameters */
    float scalar;
    int axis, keepdim, n_dims, dims[TENSOR_MAX_RANK];
    int target_rank;
    int64_t target[TENSOR_MAX_RANK]; /* expand, sum_to_shape, reshape; the embedding's index shape */
    int64_t n_indices, indices[MAX_INDICES];
} Case;

/* The reference: the output's shape and values, from the inputs' logical values. */
typedef void (*ReferenceFn)(const Case *c, double *const *x, int64_t *shape, int *rank, double *out);

struct Op {
    const char *name;
    void (*draw)(Rng *rng, Case *c);
    Tensor *(*apply)(const Case *c, Tensor *const *x);
    ReferenceFn reference;
};

static const char *const input_names[MAX_IN] = {"a", "b"};

static void describe_case(const Case *c, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "%s(", c->op->name);
    for (int i = 0; i < c->n_inputs && used < size; i++) {
        char one[256];
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                                 describe_input(input_names[i], &c->in[i], one, sizeof one));
    }
    if (used < size) snprintf(buf + used, size - used, ")");
}

/* ---- drawing shapes ---- */

static void set_shape(Input *in, int rank, const int64_t *shape, float lo, float hi) {
    in->rank = rank;
    for (int d = 0; d < rank; d++) in->shape[d] = shape[d];
    in->lo = lo;
    in->hi = hi;
}

static void random_dims(Rng *rng, int rank, int64_t lo, int64_t hi, int64_t *shape) {
    for (int d = 0; d < rank; d++) shape[d] = rng_int(rng, lo, hi);
}

/* A shape of rank 0-4, dims 1-3, now and then a 0. */
static int draw_shape(Rng *rng, int64_t *shape, int min_rank, bool allow_zero) {
    int rank = (int)rng_int(rng, min_rank, 4);
    random_dims(rng, rank, 1, 3, shape);
    if (allow_zero && rank > 0 && rng_int(rng, 0, 9) == 0) shape[rng_int(rng, 0, rank - 1)] = 0;
    return rank;
}

/* Two shapes that broadcast: each a suffix of a common shape, some dims replaced by 1. */
static void draw_broadcast_pair(Rng *rng, Case *c, float lo_b, float hi_b) {
    int64_t full[TENSOR_MAX_RANK], shape[TENSOR_MAX_RANK];
    int rank = draw_shape(rng, full, 0, true);
    for (int i = 0; i < 2; i++) {
        int r = (int)rng_int(rng, 0, rank);
        for (int d = 0; d < r; d++) shape[d] = rng_int(rng, 0, 2) ? full[rank - r + d] : 1;
        set_shape(&c->in[i], r, shape, i ? lo_b : -2.0f, i ? hi_b : 2.0f);
    }
    c->n_inputs = 2;
}

/* ---- reference helpers ---- */

/* The flat index, in `shape`, of the element that broadcasting sends to out_index. */
static int64_t broadcast_source(const int64_t *out_index, int out_rank, const int64_t *shape, int rank) {
    int64_t index[TENSOR_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        int64_t i = out_index[out_rank - rank + d];
        index[d] = shape[d] == 1 ? 0 : i;
    }
    return row_major(index, shape, rank);
}

static void broadcast_shape_of(const Input *a, const Input *b, int64_t *shape, int *rank) {
    *rank = a->rank > b->rank ? a->rank : b->rank;
    for (int d = 0; d < *rank; d++) {
        int da = d - (*rank - a->rank), db = d - (*rank - b->rank);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        shape[d] = sa == 1 ? sb : sa;
    }
}

/* ==== the ops =========================================================================== */

/* ---- lesson 1: broadcasting ---- */

static double apply_binary(const char *name, double a, double b) {
    switch (name[0]) {
    case 'a': return a + b;
    case 's': return a - b;
    case 'm': return a * b;
    default: return a / b;
    }
}

static void draw_binary(Rng *rng, Case *c) { draw_broadcast_pair(rng, c, -2.0f, 2.0f); }
static void draw_div(Rng *rng, Case *c) { draw_broadcast_pair(rng, c, 0.5f, 2.0f); }

static void ref_binary(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    const Input *a = &c->in[0], *b = &c->in[1];
    broadcast_shape_of(a, b, shape, rank);
    int64_t index[TENSOR_MAX_RANK];
    for (int64_t i = 0; i < numel_of(shape, *rank); i++) {
        unravel_index(i, shape, *rank, index);
        out[i] = apply_binary(c->op->name, x[0][broadcast_source(index, *rank, a->shape, a->rank)],
                              x[1][broadcast_source(index, *rank, b->shape, b->rank)]);
    }
}

static Tensor *run_add(const Case *c, Tensor *const *x) { return (void)c, tensor_add(x[0], x[1]); }
static Tensor *run_sub(const Case *c, Tensor *const *x) { return (void)c, tensor_sub(x[0], x[1]); }
static Tensor *run_mul(const Case *c, Tensor *const *x) { return (void)c, tensor_mul(x[0], x[1]); }
static Tensor *run_div(const Case *c, Tensor *const *x) { return (void)c, tensor_div(x[0], x[1]); }

/* one input of any shape, values in [lo, hi] */
static void draw_one(Rng *rng, Case *c, int min_rank, bool allow_zero, float lo, float hi) {
    int64_t shape[TENSOR_MAX_RANK];
    int rank = draw_shape(rng, shape, min_rank, allow_zero);
    set_shape(&c->in[0], rank, shape, lo, hi);
    c->n_inputs = 1;
}

static void ref_elementwise(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    *rank = c->in[0].rank;
    memcpy(shape, c->in[0].shape, sizeof c->in[0].shape);
    for (int64_t i = 0; i < numel_of(shape, *rank); i++) {
        double v = x[0][i];
        if (!strcmp(c->op->name, "pow_scalar")) out[i] = pow(v, c->scalar);
        else if (!strcmp(c->op->name, "add_scalar")) out[i] = v + c->scalar;
        else if (!strcmp(c->op->name, "mul_scalar")) out[i] = v * c->scalar;
        else out[i] = v; /* contiguous */
    }
}

static void draw_pow(Rng *rng, Case *c) {
    static const float powers[] = {2.0f, 3.0f, 0.5f, -1.0f, 1.5f};
    draw_one(rng, c, 0, true, 0.5f, 2.0f);
    c->scalar = powers[rng_int(rng, 0, 4)];
}
static void draw_scalar(Rng *rng, Case *c) {
    draw_one(rng, c, 0, true, -2.0f, 2.0f);
    c->scalar = rng_float(rng, -2.0f, 2.0f);
}
static void draw_any(Rng *rng, Case *c) { draw_one(rng, c, 0, true, -2.0f, 2.0f); }
static Tensor *run_pow(const Case *c, Tensor *const *x) { return tensor_pow_scalar(x[0], c->scalar); }
static Tensor *run_add_scalar(const Case *c, Tensor *const *x) { return tensor_add_scalar(x[0], c->scalar); }
static Tensor *run_mul_scalar(const Case *c, Tensor *const *x) { return tensor_mul_scalar(x[0], c->scalar); }
static Tensor *run_contiguous(const Case *c, Tensor *const *x) { return (void)c, tensor_contiguous(x[0]); }

/* expand: the input is the smaller shape of a broadcast pair, the target the broadcast shape */
static void draw_expand(Rng *rng, Case *c) {
    draw_broadcast_pair(rng, c, -2.0f, 2.0f);
    broadcast_shape_of(&c->in[0], &c->in[1], c->target, &c->target_rank);
    c->n_inputs = 1;
}
static Tensor *run_expand(const Case *c, Tensor *const *x) { return tensor_expand(x[0], c->target, c->target_rank); }
static void ref_expand(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    *rank = c->target_rank;
    memcpy(shape, c->target, sizeof c->target);
    int64_t index[TENSOR_MAX_RANK];
    for (int64_t i = 0; i < numel_of(shape, *rank); i++) {
        unravel_index(i, shape, *rank, index);
        out[i] = x[0][broadcast_source(index, *rank, c->in[0].shape, c->in[0].rank)];
    }
}

/* sum_to_shape: the input has the broadcast shape, the target is one of the pair */
static void draw_sum_to_shape(Rng *rng, Case *c) {
    draw_broadcast_pair(rng, c, -2.0f, 2.0f);
    c->target_rank = c->in[0].rank;
    memcpy(c->target, c->in[0].shape, sizeof c->target);
    int64_t full[TENSOR_MAX_RANK];
    int rank;
    broadcast_shape_of(&c->in[0], &c->in[1], full, &rank);
    set_shape(&c->in[0], rank, full, -2.0f, 2.0f);
    c->n_inputs = 1;
}
static Tensor *run_sum_to_shape(const Case *c, Tensor *const *x) {
    return tensor_sum_to_shape(x[0], c->target, c->target_rank);
}
static void ref_sum_to_shape(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    *rank = c->target_rank;
    memcpy(shape, c->target, sizeof c->target);
    const Input *in = &c->in[0];
    int64_t index[TENSOR_MAX_RANK];
    for (int64_t i = 0; i < numel_of(shape, *rank); i++) out[i] = 0.0;
    for (int64_t i = 0; i < numel_of(in->shape, in->rank); i++) {
        unravel_index(i, in->shape, in->rank, index);
        out[broadcast_source(index, in->rank, shape, *rank)] += x[0][i];
    }
}

/* ---- lesson 2: reductions ---- */

/* Sums (or averages) over one axis, keeping it as size 1 or dropping it. */
static void reduce_axis(const Input *in, const double *x, int axis, bool keep, bool mean, int64_t *shape, int *rank,
                        double *out) {
    int r = 0;
    for (int d = 0; d < in->rank; d++) {
        if (d != axis) shape[r++] = in->shape[d];
        else if (keep) shape[r++] = 1;
    }
    *rank = r;
    int64_t n_out = numel_of(shape, r), index[TENSOR_MAX_RANK], kept[TENSOR_MAX_RANK];
    for (int64_t i = 0; i < n_out; i++) out[i] = 0.0;
    for (int64_t i = 0; i < numel_of(in->shape, in->rank); i++) {
        unravel_index(i, in->shape, in->rank, index);
        int k = 0;
        for (int d = 0; d < in->rank; d++) {
            if (d != axis) kept[k++] = index[d];
            else if (keep) kept[k++] = 0;
        }
        out[row_major(kept, shape, r)] += x[i];
    }
    if (mean)
        for (int64_t i = 0; i < n_out; i++) out[i] /= (double)in->shape[axis];
}

static void ref_total(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    (void)shape;
    int64_t n = numel_of(c->in[0].shape, c->in[0].rank);
    *rank = 0;
    out[0] = 0.0;
    for (int64_t i = 0; i < n; i++) out[0] += x[0][i];
    if (!strcmp(c->op->name, "mean")) out[0] /= (double)n;
}
static void ref_axis(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    int axis = c->axis < 0 ? c->axis + c->in[0].rank : c->axis;
    reduce_axis(&c->in[0], x[0], axis, c->keepdim, !strcmp(c->op->name, "mean_axis"), shape, rank, out);
}

static void draw_sum(Rng *rng, Case *c) { draw_one(rng, c, 0, true, -2.0f, 2.0f); }
static void draw_mean(Rng *rng, Case *c) { draw_one(rng, c, 0, false, -2.0f, 2.0f); }
static void draw_last_dim(Rng *rng, Case *c) {
    draw_one(rng, c, 1, true, -2.0f, 2.0f);
    c->axis = -1;
    c->keepdim = 1;
}
static void draw_axis(Rng *rng, Case *c) {
    draw_one(rng, c, 1, true, -2.0f, 2.0f);
    c->axis = (int)rng_int(rng, -c->in[0].rank, c->in[0].rank - 1);
    c->keepdim = (int)rng_int(rng, 0, 1);
}
static void draw_mean_axis(Rng *rng, Case *c) {
    draw_one(rng, c, 1, false, -2.0f, 2.0f);
    c->axis = (int)rng_int(rng, -c->in[0].rank, c->in[0].rank - 1);
    c->keepdim = (int)rng_int(rng, 0, 1);
}
static Tensor *run_sum(const Case *c, Tensor *const *x) { return (void)c, tensor_sum(x[0]); }
static Tensor *run_mean(const Case *c, Tensor *const *x) { return (void)c, tensor_mean(x[0]); }
static Tensor *run_sum_last_dim(const Case *c, Tensor *const *x) { return (void)c, tensor_sum_last_dim(x[0]); }
static Tensor *run_sum_axis(const Case *c, Tensor *const *x) { return tensor_sum_axis(x[0], c->axis, c->keepdim); }
static Tensor *run_mean_axis(const Case *c, Tensor *const *x) { return tensor_mean_axis(x[0], c->axis, c->keepdim); }

static void draw_mse(Rng *rng, Case *c) {
    draw_one(rng, c, 1, false, -2.0f, 2.0f);
    set_shape(&c->in[1], c->in[0].rank, c->in[0].shape, -2.0f, 2.0f);
    c->n_inputs = 2;
}
static Tensor *run_mse(const Case *c, Tensor *const *x) { return (void)c, tensor_mse_loss(x[0], x[1]); }
static void ref_mse(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    (void)shape;
    int64_t n = numel_of(c->in[0].shape, c->in[0].rank);
    *rank = 0;
    out[0] = 0.0;
    for (int64_t i = 0; i < n; i++) out[0] += (x[0][i] - x[1][i]) * (x[0][i] - x[1][i]);
    out[0] /= (double)n;
}

/* ---- lesson 3: softmax ---- */

static void draw_logits(Rng *rng, Case *c) { draw_one(rng, c, 1, false, -4.0f, 4.0f); }
static Tensor *run_softmax(const Case *c, Tensor *const *x) { return (void)c, tensor_softmax_last_dim(x[0]); }
static Tensor *run_log_softmax(const Case *c, Tensor *const *x) { return (void)c, tensor_log_softmax_last_dim(x[0]); }

/* log(sum(exp(row))), computed the long way in double */
static double log_sum_exp(const double *row, int64_t n) {
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) sum += exp(row[j]);
    /* cppcheck-suppress invalidFunctionArg ; n > 0 for every case drawn, and log(0) = -inf would be the right answer anyway */
    return log(sum);
}

static void ref_softmax(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    *rank = c->in[0].rank;
    memcpy(shape, c->in[0].shape, sizeof c->in[0].shape);
    int64_t d = shape[*rank - 1], rows = numel_of(shape, *rank) / d;
    bool log_form = !strcmp(c->op->name, "log_softmax");
    for (int64_t r = 0; r < rows; r++) {
        double lse = log_sum_exp(x[0] + r * d, d);
        for (int64_t j = 0; j < d; j++) out[r * d + j] = log_form ? x[0][r * d + j] - lse : exp(x[0][r * d + j] - lse);
    }
}

static void draw_cross_entropy(Rng *rng, Case *c) {
    int64_t shape[2] = {rng_int(rng, 1, 5), rng_int(rng, 1, 5)};
    set_shape(&c->in[0], 2, shape, -4.0f, 4.0f);
    c->n_inputs = 1;
    c->n_indices = shape[0];
    for (int64_t n = 0; n < shape[0]; n++) c->indices[n] = rng_int(rng, 0, shape[1] - 1);
}
static Tensor *run_cross_entropy(const Case *c, Tensor *const *x) {
    return tensor_cross_entropy(x[0], c->indices, c->n_indices);
}
static void ref_cross_entropy(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    (void)shape;
    int64_t n = c->in[0].shape[0], k = c->in[0].shape[1];
    *rank = 0;
    out[0] = 0.0;
    for (int64_t r = 0; r < n; r++) out[0] += log_sum_exp(x[0] + r * k, k) - x[0][r * k + c->indices[r]];
    out[0] /= (double)n;
}

/* ---- lesson 4: permute, transpose, reshape ---- */

static void draw_permute(Rng *rng, Case *c) {
    int64_t shape[TENSOR_MAX_RANK];
    int rank = (int)rng_int(rng, 0, 6);
    random_dims(rng, rank, 1, 3, shape);
    set_shape(&c->in[0], rank, shape, -2.0f, 2.0f);
    c->n_inputs = 1;
    c->n_dims = rank;
    for (int d = 0; d < rank; d++) c->dims[d] = d;
    for (int d = rank - 1; d > 0; d--) {
        int j = (int)rng_int(rng, 0, d), t = c->dims[d];
        c->dims[d] = c->dims[j];
        c->dims[j] = t;
    }
    for (int d = 0; d < rank; d++) /* negative dims count from the end */
        if (rng_int(rng, 0, 3) == 0) c->dims[d] -= rank;
}
static Tensor *run_permute(const Case *c, Tensor *const *x) { return tensor_permute(x[0], c->dims, c->n_dims); }
static void ref_permute(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    const Input *in = &c->in[0];
    int dims[TENSOR_MAX_RANK] = {0};
    *rank = in->rank;
    for (int d = 0; d < in->rank; d++) {
        dims[d] = c->dims[d] < 0 ? c->dims[d] + in->rank : c->dims[d];
        shape[d] = in->shape[dims[d]];
    }
    int64_t index[TENSOR_MAX_RANK], source[TENSOR_MAX_RANK];
    for (int64_t i = 0; i < numel_of(shape, *rank); i++) {
        unravel_index(i, shape, *rank, index);
        for (int d = 0; d < *rank; d++) source[dims[d]] = index[d];
        out[i] = x[0][row_major(source, in->shape, in->rank)];
    }
}

static void draw_transpose(Rng *rng, Case *c) {
    int64_t shape[TENSOR_MAX_RANK];
    int rank = (int)rng_int(rng, 1, 5);
    random_dims(rng, rank, 1, 3, shape);
    set_shape(&c->in[0], rank, shape, -2.0f, 2.0f);
    c->n_inputs = 1;
    c->dims[0] = (int)rng_int(rng, -rank, rank - 1);
    c->dims[1] = (int)rng_int(rng, -rank, rank - 1);
}
static Tensor *run_transpose(const Case *c, Tensor *const *x) { return tensor_transpose(x[0], c->dims[0], c->dims[1]); }
static void ref_transpose(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    Case as_permute = *c;
    int rank_in = c->in[0].rank, i = c->dims[0] < 0 ? c->dims[0] + rank_in : c->dims[0],
        j = c->dims[1] < 0 ? c->dims[1] + rank_in : c->dims[1];
    as_permute.n_dims = rank_in;
    for (int d = 0; d < rank_in; d++) as_permute.dims[d] = d == i ? j : d == j ? i : d;
    ref_permute(&as_permute, x, shape, rank, out);
}

/* reshape to a random shape of the same size, one dim sometimes given as -1 */
static void draw_reshape(Rng *rng, Case *c) {
    draw_one(rng, c, 0, false, -2.0f, 2.0f);
    int64_t n = numel_of(c->in[0].shape, c->in[0].rank), left = n;
    int rank = 0;
    while (left > 1 && rank < 5) { /* peel off divisors of what is left */
        int64_t d = rng_int(rng, 1, left);
        while (left % d) d--;
        c->target[rank++] = d;
        left /= d;
    }
    if (left > 1 || rng_int(rng, 0, 2) == 0) c->target[rank++] = left;
    if (rank > 0 && rng_int(rng, 0, 2) == 0) c->target[rng_int(rng, 0, rank - 1)] = -1;
    c->target_rank = rank;
}
static Tensor *run_reshape(const Case *c, Tensor *const *x) { return tensor_reshape(x[0], c->target, c->target_rank); }
static void ref_reshape(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    int64_t n = numel_of(c->in[0].shape, c->in[0].rank), known = 1;
    *rank = c->target_rank;
    for (int d = 0; d < *rank; d++)
        if (c->target[d] >= 0) known *= c->target[d];
    for (int d = 0; d < *rank; d++) shape[d] = c->target[d] >= 0 ? c->target[d] : n / known;
    for (int64_t i = 0; i < n; i++) out[i] = x[0][i];
}

/* ---- lesson 5: gather ---- */

static void draw_gather(Rng *rng, Case *c) {
    int64_t shape[2] = {rng_int(rng, 1, 5), rng_int(rng, 0, 3)};
    set_shape(&c->in[0], 2, shape, -2.0f, 2.0f);
    c->n_inputs = 1;
    c->n_indices = rng_int(rng, 0, 8);
    for (int64_t i = 0; i < c->n_indices; i++) c->indices[i] = rng_int(rng, 0, shape[0] - 1); /* duplicates too */
}
static Tensor *run_gather(const Case *c, Tensor *const *x) {
    return tensor_gather_rows(x[0], c->indices, c->n_indices);
}
static void ref_gather(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    int64_t d = c->in[0].shape[1];
    *rank = 2;
    shape[0] = c->n_indices;
    shape[1] = d;
    for (int64_t i = 0; i < c->n_indices; i++)
        for (int64_t j = 0; j < d; j++) out[i * d + j] = x[0][c->indices[i] * d + j];
}

static void draw_embedding(Rng *rng, Case *c) {
    int64_t shape[2] = {rng_int(rng, 1, 5), rng_int(rng, 1, 3)};
    set_shape(&c->in[0], 2, shape, -2.0f, 2.0f);
    c->n_inputs = 1;
    c->target_rank = (int)rng_int(rng, 0, 3);
    random_dims(rng, c->target_rank, 1, 3, c->target);
    c->n_indices = numel_of(c->target, c->target_rank);
    for (int64_t i = 0; i < c->n_indices; i++) c->indices[i] = rng_int(rng, 0, shape[0] - 1);
}
static Tensor *run_embedding(const Case *c, Tensor *const *x) {
    return tensor_embedding(x[0], c->indices, c->target, c->target_rank);
}
static void ref_embedding(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    int64_t d = c->in[0].shape[1];
    *rank = c->target_rank + 1;
    memcpy(shape, c->target, (size_t)c->target_rank * sizeof *shape);
    shape[c->target_rank] = d;
    for (int64_t i = 0; i < c->n_indices; i++)
        for (int64_t j = 0; j < d; j++) out[i * d + j] = x[0][c->indices[i] * d + j];
}

/* ---- lesson 6: matmul ---- */

/* a (..., m, k) and b (..., k, n) with broadcast batch dims, or 1-D vectors of length k */
static void draw_matmul(Rng *rng, Case *c) {
    int64_t m = rng_int(rng, 1, 3), k = rng_int(rng, 1, 3), n = rng_int(rng, 1, 3), batch[2];
    random_dims(rng, 2, 1, 3, batch);
    for (int i = 0; i < 2; i++) {
        int rank = (int)rng_int(rng, 1, 4);
        int64_t shape[TENSOR_MAX_RANK];
        if (rank == 1) {
            shape[0] = k;
        } else {
            for (int d = 0; d < rank - 2; d++) shape[d] = rng_int(rng, 0, 2) ? batch[2 - (rank - 2) + d] : 1;
            shape[rank - 2] = i == 0 ? m : k;
            shape[rank - 1] = i == 0 ? k : n;
        }
        set_shape(&c->in[i], rank, shape, -2.0f, 2.0f);
    }
    c->n_inputs = 2;
}
static Tensor *run_matmul(const Case *c, Tensor *const *x) { return (void)c, tensor_matmul(x[0], x[1]); }
static void ref_matmul(const Case *c, double *const *x, int64_t *shape, int *rank, double *out) {
    /* as numpy: a 1-D a is a row (1, k), a 1-D b a column (k, 1); those dims are dropped after */
    Input a = c->in[0], b = c->in[1];
    if (a.rank == 1) a = (Input){.rank = 2, .shape = {1, c->in[0].shape[0]}};
    if (b.rank == 1) b = (Input){.rank = 2, .shape = {c->in[1].shape[0], 1}};
    int64_t m = a.shape[a.rank - 2], k = a.shape[a.rank - 1], n = b.shape[b.rank - 1];
    Input batch_a = a, batch_b = b; /* their batch dims */
    batch_a.rank -= 2;
    batch_b.rank -= 2;
    int64_t batch[TENSOR_MAX_RANK], index[TENSOR_MAX_RANK];
    int batch_rank;
    broadcast_shape_of(&batch_a, &batch_b, batch, &batch_rank);
    int64_t n_batch = numel_of(batch, batch_rank);
    for (int64_t t = 0; t < n_batch; t++) {
        unravel_index(t, batch, batch_rank, index);
        const double *ma = x[0] + broadcast_source(index, batch_rank, batch_a.shape, batch_a.rank) * m * k;
        const double *mb = x[1] + broadcast_source(index, batch_rank, batch_b.shape, batch_b.rank) * k * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double sum = 0.0;
                for (int64_t p = 0; p < k; p++) sum += ma[i * k + p] * mb[p * n + j];
                out[(t * m + i) * n + j] = sum;
            }
    }
    *rank = batch_rank;
    memcpy(shape, batch, (size_t)batch_rank * sizeof *shape);
    if (c->in[0].rank > 1) shape[(*rank)++] = m;
    if (c->in[1].rank > 1) shape[(*rank)++] = n;
}

/* ==== the driver ======================================================================== */

static const Op ops[] = {
    {"add", draw_binary, run_add, ref_binary},
    {"sub", draw_binary, run_sub, ref_binary},
    {"mul", draw_binary, run_mul, ref_binary},
    {"div", draw_div, run_div, ref_binary},
    {"pow_scalar", draw_pow, run_pow, ref_elementwise},
    {"add_scalar", draw_scalar, run_add_scalar, ref_elementwise},
    {"mul_scalar", draw_scalar, run_mul_scalar, ref_elementwise},
    {"contiguous", draw_any, run_contiguous, ref_elementwise},
    {"expand", draw_expand, run_expand, ref_expand},
    {"sum_to_shape", draw_sum_to_shape, run_sum_to_shape, ref_sum_to_shape},
    {"sum", draw_sum, run_sum, ref_total},
    {"mean", draw_mean, run_mean, ref_total},
    {"sum_last_dim", draw_last_dim, run_sum_last_dim, ref_axis},
    {"sum_axis", draw_axis, run_sum_axis, ref_axis},
    {"mean_axis", draw_mean_axis, run_mean_axis, ref_axis},
    {"mse_loss", draw_mse, run_mse, ref_mse},
    {"softmax", draw_logits, run_softmax, ref_softmax},
    {"log_softmax", draw_logits, run_log_softmax, ref_softmax},
    {"cross_entropy", draw_cross_entropy, run_cross_entropy, ref_cross_entropy},
    {"permute", draw_permute, run_permute, ref_permute},
    {"transpose", draw_transpose, run_transpose, ref_transpose},
    {"reshape", draw_reshape, run_reshape, ref_reshape},
    {"gather_rows", draw_gather, run_gather, ref_gather},
    {"embedding", draw_embedding, run_embedding, ref_embedding},
    {"matmul", draw_matmul, run_matmul, ref_matmul},
};
enum { N_OPS = sizeof ops / sizeof ops[0] };

/* gradcheck's function: the views made afresh from the (perturbed) leaves, then the op */
static Tensor *through_views(Tensor *const *leaves, void *arg) {
    const Case *c = arg;
    Tensor *seen[MAX_IN];
    for (int i = 0; i < c->n_inputs; i++)
        if (!(seen[i] = present(&c->in[i], leaves[i]))) return NULL;
    return c->op->apply(c, seen);
}

static void run_case(const Op *op, uint64_t seed, int trial) {
    Rng rng = rng_seeded(seed * 1000003u + (uint64_t)trial);
    Case c = {.op = op};
    op->draw(&rng, &c);
    ck_assert(c.n_inputs >= 0 && c.n_inputs <= MAX_IN);
    Tensor *leaves[MAX_IN] = {NULL};
    double *logical[MAX_IN];
    for (int i = 0; i < c.n_inputs; i++) {
        choose_layout(&rng, &c.in[i]);
        leaves[i] = tensor_requires_grad(random_tensor(test_ctx, &rng, c.in[i].leaf_shape, c.in[i].leaf_rank,
                                                       c.in[i].lo, c.in[i].hi));
        logical[i] = logical_values(&c.in[i], tensor_data(leaves[i]));
    }
    char what[1024], replay[256];
    describe_case(&c, what, sizeof what);
    snprintf(replay, sizeof replay, "replay: COURSE_SEED=%llu COURSE_CASE=%d CK_RUN_CASE=%s %s",
             (unsigned long long)seed, trial, op->name, program);

    /* forward against the reference */
    Tensor *out = through_views(leaves, &c);
    ck_assert_msg(out != NULL, "case %d: %s failed: %s\n%s", trial, what, tensor_error(), replay);
    int64_t shape[TENSOR_MAX_RANK];
    int rank;
    double *want = malloc(MAX_OUT * sizeof *want);
    op->reference(&c, logical, shape, &rank, want);
    char got_s[SHAPE_STR_MAX], want_s[SHAPE_STR_MAX];
    ck_assert_msg(shape_equal(out->shape, out->rank, shape, rank), "case %d: %s: shape %s, the reference's %s\n%s",
                  trial, what, shape_format(out->shape, out->rank, got_s, sizeof got_s),
                  shape_format(shape, rank, want_s, sizeof want_s), replay);
    int64_t n = tensor_numel(out), index[TENSOR_MAX_RANK];
    float *got = malloc((size_t)(n + 1) * sizeof *got);
    tensor_to_array(out, got, n);
    for (int64_t i = 0; i < n; i++) {
        if (fabs((double)got[i] - want[i]) <= 1e-4 * (1.0 + fabs(want[i]))) continue;
        unravel_index(i, shape, rank, index);
        ck_abort_msg("case %d: %s: element %s is %.7g, the reference gives %.7g\n%s", trial, what,
                     shape_format(index, rank, got_s, sizeof got_s), (double)got[i], want[i], replay);
    }
    free(got);
    free(want);
    for (int i = 0; i < c.n_inputs; i++) free(logical[i]);

    /* backward against central differences, through the views */
    char report[512];
    GradcheckOptions opt = {1e-3, 1e-2, 1e-2, seed + (uint64_t)trial};
    ck_assert_msg(gradcheck(through_views, &c, leaves, c.n_inputs, &opt, report, sizeof report) == 0,
                  "case %d: %s: %s\n%s", trial, what, report, replay);
}

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

/* Each op's cases: COURSE_TRIALS of them, or only COURSE_CASE. */
static void run_op(const Op *op) {
    uint64_t seed = test_seed();
    int only = env_int("COURSE_CASE", -1), trials = env_int("COURSE_TRIALS", TRIALS);
    for (int trial = 0; trial < trials; trial++)
        if (only < 0 || trial == only) run_case(op, seed, trial);
}

START_TEST(test_random_op) { run_op(&ops[_i]); }
END_TEST

int main(int argc, char **argv) {
    program = argv[0];
    Suite *s = suite_create("random testing");
    for (int i = 0; i < N_OPS; i++) {
        TCase *tc = add_test_case(s, ops[i].name);
        tcase_set_timeout(tc, 60);
        tcase_add_loop_exit_test(tc, test_random_op, TEST_FINISHED, i, i + 1); /* add_test, as a loop */
    }
    return run_core_tests(argc, argv, s);
}
