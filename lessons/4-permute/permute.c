/*
 * permute.c - lesson 4: permute, views and contiguous copies.
 *
 * Read top to bottom: checking a permutation and inverting it, the chapter's flat-index map,
 * permute as a view with its backward, transpose, then reshape (a view when the strides allow
 * it, else a copy). The copy that moves data, tensor_contiguous (and reshape's copy, below),
 * is the core's strided_copy (common/tensor.c): the odometer loop of docs/4-permute.md 5.3,
 * computed through the table (kernels.h), whose fast kernel is common/tensor_fast.c's
 * (COURSE_KERNELS=reference runs the odometer alone). docs/4-permute.md explains every step.
 *
 * Names: dims is the permutation (output dim i is input dim dims[i]); inv its inverse.
 */
#include "permute.h"

#include <string.h>

/* "(1,0,2)", for messages; n is at most TENSOR_MAX_RANK */
static char *axes_format(const int *dims, int n, char *buf, size_t size) {
    int64_t wide[TENSOR_MAX_RANK];
    for (int i = 0; i < n; i++) wide[i] = dims[i];
    return shape_format(wide, n, buf, size);
}

/* ==== permutations ======================================================================= */

int normalize_permutation(const char *op, const int *dims, int n, int rank, int *out) {
    char s[SHAPE_STR_MAX];
    if (!rank_is_valid(op, rank)) return -1;
    if (n != rank || (n > 0 && !dims)) {
        if (dims && n >= 0 && n <= TENSOR_MAX_RANK)
            tensor_set_error("%s: axes %s don't match a tensor of rank %d: give each of its %d axes once", op,
                             axes_format(dims, n, s, sizeof s), rank, rank);
        else
            tensor_set_error("%s: %d axes%s given for a tensor of rank %d: give each of its %d axes once", op, n,
                             dims ? "" : " (NULL)", rank, rank);
        return -1;
    }
    if (n > 0 && !out) return tensor_set_error("%s: out is NULL for %d axes", op, n), -1;
    bool seen[TENSOR_MAX_RANK] = {false};
    int result[TENSOR_MAX_RANK];
    for (int i = 0; i < n; i++) {
        int a;
        if (!axis_normalize(op, dims[i], rank, &a)) return -1; /* numpy: -1 is the last axis */
        if (seen[a])
            return tensor_set_error("%s: repeated axis %d in %s", op, a, axes_format(dims, n, s, sizeof s)), -1;
        seen[a] = true;
        result[i] = a;
    }
    for (int i = 0; i < n; i++) out[i] = result[i];
    return 0;
}

void inverse_permutation(const int *dims, int n, int *inv) {
    int p[TENSOR_MAX_RANK];
    if (normalize_permutation("inverse_permutation", dims, n, n, p) < 0) return; /* inv is left as it was */
    if (n > 0 && !inv) return (void)tensor_set_error("inverse_permutation: inv is NULL for %d axes", n);
    /* output dim i came from input dim p[i], so input dim p[i] goes back to i */
    for (int i = 0; i < n; i++) inv[p[i]] = i;
}

int permute_map(const int64_t *shape, int rank, const int *dims, int64_t *map) {
    int p[TENSOR_MAX_RANK];
    if (!shape_is_valid("permute_map", shape, rank) || normalize_permutation("permute_map", dims, rank, rank, p) < 0)
        return -1;
    int64_t out_shape[TENSOR_MAX_RANK], index[TENSOR_MAX_RANK];
    int inv[TENSOR_MAX_RANK];
    for (int i = 0; i < rank; i++) out_shape[i] = shape[p[i]];
    inverse_permutation(p, rank, inv);
    int64_t total = shape_numel(shape, rank);
    if (total < 0) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("permute_map: shape %s has too many elements", shape_format(shape, rank, s, sizeof s));
        return -1;
    }
    if (total > 0 && !map) return tensor_set_error("permute_map: map is NULL"), -1;
    for (int64_t t = 0; t < total; t++) {
        /* step 1: output flat t -> output index; step 2: input dim d is output dim inv[d] */
        unravel_index(t, out_shape, rank, index);
        int64_t s = 0;
        for (int d = 0; d < rank; d++) s = s * shape[d] + index[inv[d]];
        map[t] = s;
    }
    return 0;
}

/* ==== permute: a view ===================================================================== */

/* Output element i0..ik is input element (i at the positions inv gives), so the gradient of
 * each output element belongs to exactly one input element: the same strides, used to write
 * into x's gradient, put every gradient back in its place. Added (+=), because x may be used
 * elsewhere too; or copied, when it is the first gradient to reach x (tensor_grads_begin). */
static void permute_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    const int *dims = out->saved;
    int64_t gx_contiguous[TENSOR_MAX_RANK], gx_permuted[TENSOR_MAX_RANK];
    contiguous_strides(x->shape, x->rank, gx_contiguous);
    for (int i = 0; i < out->rank; i++) gx_permuted[i] = gx_contiguous[dims[i]];
    float *gx;
    bool accumulate = tensor_grads_begin(1, &x, NULL, &gx);
    (accumulate ? strided_accumulate : strided_copy)(out->rank, out->shape, gx, gx_permuted, tensor_data(out->grad),
                                                     out->grad->strides);
}

Tensor *tensor_permute(Tensor *x, const int *dims, int n) {
    if (!x) return tensor_null_input("permute", "x"), NULL;
    int checked[TENSOR_MAX_RANK];
    if (normalize_permutation("permute", dims, n, x->rank, checked) < 0) return NULL;
    int *p = ctx_alloc(x->ctx, TENSOR_MAX_RANK * sizeof *p); /* kept for the backward */
    if (!p) return NULL;
    memcpy(p, checked, sizeof checked);
    int64_t shape[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
    for (int i = 0; i < n; i++) {
        shape[i] = x->shape[p[i]];     /* output dim i is input dim p[i]: its size ... */
        strides[i] = x->strides[p[i]]; /* ... and its step through the same storage */
    }
    Tensor *view = tensor_as_strided(x, shape, n, strides, x->offset);
    if (!view) return NULL;
    view->saved = p;
    return tensor_record(view, "permute", permute_backward, 1, &x);
}

Tensor *tensor_transpose(Tensor *x, int dim0, int dim1) {
    if (!x) return tensor_null_input("transpose", "x"), NULL;
    int dims[TENSOR_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i;
    int a, b;
    if (!axis_normalize("transpose", dim0, x->rank, &a) || !axis_normalize("transpose", dim1, x->rank, &b)) return NULL;
    dims[a] = b;
    dims[b] = a;
    return tensor_permute(x, dims, x->rank);
}

/* ==== reshape: reinterpret ================================================================ */

/* Strides that read x's elements, in x's row-major order, as `shape`, without copying; false
 * if x's layout does not allow that. Old dims are taken in chunks that are contiguous among
 * themselves (each dim's stride is the next dim's stride times the next dim's size: dims_merge);
 * every new dim must fall inside one chunk. (The same rule as PyTorch's view.) */
static bool view_strides(const Tensor *x, const int64_t *shape, int rank, int64_t *strides) {
    if (rank < 0 || rank > TENSOR_MAX_RANK) return false; /* reshape_target checked it already */
    if (tensor_numel(x) == 0 || x->rank == 0) {
        contiguous_strides(shape, rank, strides);
        return true;
    }
    int nd = rank - 1;
    int64_t chunk_stride = x->strides[x->rank - 1], old_count = 1, new_count = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
        old_count *= x->shape[d];
        /* the chunk so far reads as one dim of old_count elements, chunk_stride apart */
        bool chunk_ends = d == 0 || !dims_merge(x->shape[d - 1], x->strides[d - 1], old_count, chunk_stride);
        if (!chunk_ends) continue;
        while (nd >= 0 && (new_count < old_count || shape[nd] == 1)) {
            strides[nd] = new_count * chunk_stride;
            new_count *= shape[nd--];
        }
        if (new_count != old_count) return false;
        if (d > 0) {
            chunk_stride = x->strides[d - 1];
            old_count = new_count = 1;
        }
    }
    return nd == -1;
}

/* The shape to reshape n elements to: `shape`, with its one dim of -1 (if any) set to what the
 * others leave. False, with an error, when it does not hold exactly n elements. */
static bool reshape_target(int64_t n, const int64_t *shape, int rank, int64_t *want) {
    const char *op = "reshape";
    char s[SHAPE_STR_MAX];
    if (!rank_is_valid(op, rank)) return false;
    if (rank > 0 && !shape) return tensor_set_error("%s: shape is NULL for rank %d", op, rank), false;
    int64_t known = 1; /* the product of the given dims, -1 once it overflows (then it cannot match) */
    int unknown = -1;
    for (int d = 0; d < rank; d++) {
        want[d] = shape[d];
        if (shape[d] == -1 && unknown < 0) unknown = d;
        else if (shape[d] == -1)
            return tensor_set_error("%s: can only specify one unknown dimension, got %s", op,
                                    shape_format(shape, rank, s, sizeof s)),
                   false;
        else if (shape[d] < 0)
            return tensor_set_error("%s: negative dimensions are not allowed, got shape %s", op,
                                    shape_format(shape, rank, s, sizeof s)),
                   false;
        else if (known >= 0 && shape[d] > 0 && known > INT64_MAX / shape[d]) known = -1;
        else if (known >= 0) known *= shape[d];
    }
    if (unknown >= 0 && known > 0 && n % known == 0) want[unknown] = n / known;
    if ((unknown >= 0 && (known <= 0 || n % known != 0)) || (unknown < 0 && known != n))
        return tensor_set_error("%s: cannot reshape array of size %lld into shape %s", op, (long long)n,
                                shape_format(shape, rank, s, sizeof s)),
               false;
    if (shape_numel(want, rank) < 0) /* (0,2^40,2^40): no elements, but its strides would overflow */
        return tensor_set_error("%s: shape %s has too many elements", op, shape_format(want, rank, s, sizeof s)), false;
    return true;
}

/* The elements keep their row-major order, so gradient i belongs to element i: both
 * gradients are read as one row of n floats, added by the core's strided_accumulate (copied,
 * when it is the first gradient to reach x, as in permute's backward). */
static void reshape_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t n = tensor_numel(x);
    float *gx;
    bool accumulate = tensor_grads_begin(1, &x, NULL, &gx);
    (accumulate ? strided_accumulate : strided_copy)(1, &n, gx, (const int64_t[]){1}, tensor_data(out->grad),
                                                     (const int64_t[]){1});
}

Tensor *tensor_reshape(Tensor *x, const int64_t *shape, int rank) {
    if (!x) return tensor_null_input("reshape", "x"), NULL;
    int64_t want[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
    if (!reshape_target(tensor_numel(x), shape, rank, want)) return NULL;
    Tensor *out;
    if (view_strides(x, want, rank, strides)) {
        out = tensor_as_strided(x, want, rank, strides, x->offset); /* reinterpret: no copy */
    } else {
        /* the layout does not allow a view (x is a permuted view, say): copy, in x's order */
        out = tensor_empty(x->ctx, want, rank);
        int64_t in_order[TENSOR_MAX_RANK];
        contiguous_strides(x->shape, x->rank, in_order);
        if (out) strided_copy(x->rank, x->shape, tensor_data(out), in_order, tensor_data(x), x->strides);
    }
    return tensor_record(out, "reshape", reshape_backward, 1, &x);
}
