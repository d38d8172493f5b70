/*
 * tensor.h - the shared tensor core every lesson builds on.
 *
 * A Tensor is a small header over shared storage: a shape, strides (in elements, signed, 0
 * allowed) and an offset. Expanding (broadcasting) and permuting make a new header over the
 * same storage, so they copy nothing. docs/0-foundations.md walks through all of it.
 *
 * Who owns memory: one Ctx (an arena) owns every tensor, storage and gradient made in it.
 * Nothing is freed one by one; ctx_free() releases the whole computation at once.
 *
 * Errors: no function here or in a lesson aborts or crashes on bad input. A function that
 * fails returns NULL (or -1) and records a message that names the op and the shapes, read with
 * tensor_error(). An op given a NULL input returns NULL and keeps the message already recorded,
 * so a chained expression reports the first thing that went wrong.
 *
 * Autodiff: every op records its inputs and a backward function on its output. Gradients are
 * contiguous tensors of the same shape as the tensor they belong to, and backward functions
 * accumulate into them with +=, or store (=) into one that nothing has reached yet
 * (tensor_grads_begin says when).
 */
#ifndef TENSOR_H
#define TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TENSOR_MAX_RANK 8   /* rank 0 (a scalar) up to 8 */
#define TENSOR_MAX_INPUTS 4 /* inputs one op may record */

typedef struct Ctx Ctx;
typedef struct Tensor Tensor;

/* Reads out->grad and adds (+=) into the grad of each input that requires one. */
typedef void (*BackwardFn)(Tensor *out);

typedef struct Storage {
    float *data;
    int64_t size; /* in floats */
    int id;
} Storage;

struct Tensor {
    Ctx *ctx;
    int id; /* order of creation within ctx, shown by tensor_describe */
    int rank;
    int64_t shape[TENSOR_MAX_RANK];
    int64_t strides[TENSOR_MAX_RANK]; /* element i0..ik lives at offset + sum(i_d * strides[d]) */
    int64_t offset;
    Storage *storage;
    bool is_view; /* shares storage made by another tensor */

    /* autodiff */
    bool requires_grad;
    Tensor *grad;    /* contiguous, same shape; NULL until backward needs it */
    bool grad_unset; /* grad is made but not yet zeroed: read it through tensor_grad_data, tensor_grad
                      * or tensor_grads_begin */
    const char *op;  /* "leaf" for tensors made from values */
    Tensor *inputs[TENSOR_MAX_INPUTS];
    int n_inputs;
    BackwardFn backward; /* NULL for leaves */
    float param;         /* an op's scalar argument, e.g. pow's exponent */
    void *saved;         /* op-specific data kept for backward, owned by ctx */

    Tensor *next_in_ctx;
    unsigned visit; /* used by tensor_backward's topological sort */
};

/* ---- the context (arena) ------------------------------------------------------------- */

/* A new, empty context, or NULL if memory is exhausted. Free it with ctx_free. */
Ctx *ctx_new(void);
/* Frees every tensor, storage and gradient made in ctx. ctx_free(NULL) does nothing. */
void ctx_free(Ctx *ctx);
/* Zeroed memory owned by ctx (16-byte aligned), or NULL with an error recorded. */
void *ctx_alloc(Ctx *ctx, size_t bytes);
/* Bytes handed out by ctx so far. */
size_t ctx_bytes(const Ctx *ctx);
/* Training keeps parameters across steps while each step's computation is freed:
 *
 *   ... make the parameters, their gradients (tensor_grad) and the optimizer's state ...
 *   ctx_mark(ctx);
 *   for each step: build the loss, tensor_backward, update the parameters, ctx_reset(ctx);
 *
 * ctx_mark records what ctx holds now; ctx_reset frees everything made since (tensors,
 * storages, gradients, ctx_alloc memory) and keeps what was there at the mark, values and
 * all. Pointers to what was freed are invalid afterwards. A tensor that lives on and got its
 * gradient after the mark loses it (NULL again): make the gradients of what must keep them
 * before the mark. ctx_mark again moves the mark to now; with no mark, ctx_reset frees
 * everything and keeps ctx. NULL does nothing. */
void ctx_mark(Ctx *ctx);
void ctx_reset(Ctx *ctx);
/* Zeroes the gradient of every tensor in ctx. */
void ctx_zero_grads(Ctx *ctx);

/* ---- errors ------------------------------------------------------------------------- */

/* The message of the most recent failure ("add: operands could not be broadcast together
 * with shapes (2,3) (2,4)"), or NULL if nothing failed since tensor_clear_error(). */
const char *tensor_error(void);
void tensor_clear_error(void);
/* Records a failure, replacing any earlier message. Used by ops; printf-style. */
void tensor_set_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* For an op given a NULL input: keeps the message already recorded (the first thing that
 * went wrong), or records "<op>: input <which> is NULL" if there is none. Always false. */
bool tensor_null_input(const char *op, const char *which);
/* For an op whose helper failed: the helper's message with the op's name in place of the
 * helper's ("broadcast_shapes: operands could not ..." becomes "add: operands could not ..."),
 * and what only the op knows appended (fmt, printf-style, or NULL). Always false. */
bool tensor_error_as(const char *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The checks that ops repeat, each with its one message: true when the value is fine, else
 * false with the message recorded.
 *   rank_is_valid     "<op>: rank 9 is outside 0..8 (TENSOR_MAX_RANK)"
 *   axis_normalize    numpy's convention (-1 is the last axis): *out is the axis in 0..rank-1,
 *                     else "<op>: axis 2 is out of bounds for array of dimension 2"
 *   contexts_match    "<op>: <what> belong to different contexts" (what: "the operands")
 * A NULL out is "<op>: out is NULL for axis 2"; a NULL tensor, tensor_null_input's message. */
bool rank_is_valid(const char *op, int rank);
bool axis_normalize(const char *op, int axis, int rank, int *out);
bool contexts_match(const char *op, const Tensor *a, const Tensor *b, const char *what);
/* The checks an op with several inputs starts with: if (!inputs_valid(op, INPUTS(x, gamma,
 * beta))) return NULL; true when none is NULL and all share the first one's context, else
 * tensor_null_input's message for the first NULL ("layer_norm: input gamma is NULL") or
 * "layer_norm: x and gamma belong to different contexts". INPUTS passes the names as written,
 * the tensors and their count. */
bool inputs_valid(const char *op, const char *names, const Tensor *const *inputs, int n);
#define INPUTS(...) #__VA_ARGS__, INPUT_ARRAY(__VA_ARGS__), (int)(sizeof INPUT_ARRAY(__VA_ARGS__) / sizeof(Tensor *))
#define INPUT_ARRAY(...) ((const Tensor *const[]){__VA_ARGS__})
/* A shape an argument must have: if (!shape_is(op, "wq", wq, "(C, C)", DIMS(c, c), "x", x))
 * return NULL; else "attention: wq must be (C, C) = (4,4) for x (2,3,4), got (4,3)" (no " for
 * ..." when of is NULL; a NULL t is tensor_null_input's message). */
bool shape_is(const char *op, const char *name, const Tensor *t, const char *letters, const int64_t *want, int rank,
              const char *of_name, const Tensor *of);

/* ---- shapes ------------------------------------------------------------------------- */

/* True for a rank in 0..TENSOR_MAX_RANK, a non-NULL array when the rank is not 0, and no
 * negative dim; otherwise false, with "<op>: ..." recorded as the error. */
bool shape_is_valid(const char *op, const int64_t *shape, int rank);
/* Number of elements of a shape, or -1 if a dim is negative, the count would overflow, or it is
 * not a shape (a rank outside 0..TENSOR_MAX_RANK, a NULL array for a rank above 0). The
 * non-zero dims count even beside a 0: (0,2^40,2^40) overflows, as its strides would. */
int64_t shape_numel(const int64_t *shape, int rank);
/* Writes numpy's spelling of a shape into buf: "(2,3)", "(3,)", "()". Returns buf. */
char *shape_format(const int64_t *shape, int rank, char *buf, size_t size);
#define SHAPE_STR_MAX (TENSOR_MAX_RANK * 21 + 4)
/* Row-major (C order) strides of a shape: the last dim has stride 1, and each dim's stride is
 * the product of the sizes after it, a size of 0 counted as 1 (as numpy and PyTorch: (2,0,3)
 * has strides (3,3,1)). */
void contiguous_strides(const int64_t *shape, int rank, int64_t *strides);
/* Row-major flat index -> multi-index: peel dims off from the last one with % and /. */
void unravel_index(int64_t flat, const int64_t *shape, int rank, int64_t *index);
/* True for the same rank and dims. */
bool shape_equal(const int64_t *a, int a_rank, const int64_t *b, int b_rank);
/* These three write nothing (and shape_equal is false) for a rank outside 0..TENSOR_MAX_RANK or
 * a NULL array where the rank means it is read or written, with "<function>: ..." recorded. */

/* Building shapes and values inline:
 *   Tensor *a = tensor_from(ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
 * A scalar has rank 0: tensor_from(ctx, NULL, 0, VALUES(7)) or tensor_scalar(ctx, 7). */
#define DIMS(...) ((const int64_t[]){__VA_ARGS__}), (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
/* Strides for tensor_as_strided: STRIDES(1, 3). */
#define STRIDES(...) ((const int64_t[]){__VA_ARGS__})
#define VALUES(...) ((const float[]){__VA_ARGS__}), (int64_t)(sizeof((const float[]){__VA_ARGS__}) / sizeof(float))

/* ---- making tensors ----------------------------------------------------------------- */

/* A contiguous tensor of zeros, owned by ctx. NULL (with an error) for a NULL ctx, a rank
 * outside 0..TENSOR_MAX_RANK, a negative dim or an element count that would overflow. */
Tensor *tensor_zeros(Ctx *ctx, const int64_t *shape, int rank);
/* tensor_zeros without the zeros: the values are whatever the memory held. For an op that
 * writes every element of its result, so that it does not pay to clear memory first. Its
 * errors are tensor_zeros' (same words, same name). */
Tensor *tensor_empty(Ctx *ctx, const int64_t *shape, int rank);
/* A contiguous tensor holding n values in row-major order; n must equal the element count. */
Tensor *tensor_from(Ctx *ctx, const int64_t *shape, int rank, const float *values, int64_t n);
Tensor *tensor_scalar(Ctx *ctx, float value);
/* Marks a tensor as a parameter whose gradient backward should compute. Returns t (NULL for
 * NULL, keeping the message already recorded, as ops do). */
Tensor *tensor_requires_grad(Tensor *t);

/* A view: a new header over x's storage. Every element the view can address must lie inside
 * the storage, else NULL with an error. An empty view addresses nothing: any offset >= 0 is
 * accepted, and one past the end of the storage is kept at its end. The view has no backward
 * of its own: ops that make views (expand, permute) record one. */
Tensor *tensor_as_strided(Tensor *x, const int64_t *shape, int rank, const int64_t *strides, int64_t offset);

/* ---- reading tensors ---------------------------------------------------------------- */

int64_t tensor_numel(const Tensor *t);
/* True if t's strides are row-major for its shape (dims of size 1 may have any stride). */
bool tensor_is_contiguous(const Tensor *t);
/* The same for a shape and strides as arrays (rank 0..TENSOR_MAX_RANK, arrays not NULL): the
 * one test of contiguity, which the fast kernels ask too. Asked of the last dim alone
 * (&shape[rank - 1], 1, &strides[rank - 1]), it says whether each row is contiguous. */
bool strides_are_contiguous(const int64_t *shape, int rank, const int64_t *strides);
/* The element at a multi-index (no bounds check beyond the caller's). */
float tensor_get(const Tensor *t, const int64_t *index);
/* The value of a one-element tensor; NaN with an error otherwise. */
float tensor_item(const Tensor *t);
/* Copies the elements in row-major order of t's shape (works on any view). Returns the
 * number copied, or -1 with an error if t or out is NULL or out has room for fewer than numel. */
int64_t tensor_to_array(const Tensor *t, float *out, int64_t capacity);

/* ---- strided loops ------------------------------------------------------------------ */

#define NDITER_MAX_OPERANDS 6

/* Visits every multi-index of `shape` in row-major order and keeps, for each operand, the
 * element offset sum(index[d] * strides[k][d]). Advancing is an odometer: bump the last dim;
 * when it reaches its size, reset it to 0 and carry into the dim before it.
 *
 *   NdIter it;
 *   nditer_init(&it, rank, shape, 2, (const int64_t *[]){dst_strides, src_strides});
 *   while (nditer_next(&it)) dst[it.offset[0]] = src[it.offset[1]];
 */
typedef struct {
    int rank, n_operands;
    bool started;
    int64_t remaining;
    int64_t shape[TENSOR_MAX_RANK];
    int64_t index[TENSOR_MAX_RANK];
    int64_t strides[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK];
    int64_t offset[NDITER_MAX_OPERANDS];
} NdIter;

/* A rank outside 0..TENSOR_MAX_RANK, operands outside 0..NDITER_MAX_OPERANDS or a NULL array
 * records an error and makes an iterator that visits nothing. A NULL it records an error, and
 * nditer_next(NULL) is false. */
void nditer_init(NdIter *it, int rank, const int64_t *shape, int n_operands, const int64_t *const *strides);
bool nditer_next(NdIter *it);

/* Visits the rows of x, its 1-D slices along the last dim: it->offset[0] is the offset (from
 * tensor_data(x)) of each row's first element, and x->strides[x->rank - 1] steps along a row.
 * For rank 1 there is one row; a NULL or rank-0 x has none (an error is recorded). */
void nditer_init_rows(NdIter *it, const Tensor *x);

/* True when two adjacent dims, an outer one (outer_size elements, outer_stride apart) and an
 * inner one (inner_size elements, inner_stride apart), can be walked as one dim of
 * outer_size * inner_size elements, inner_stride apart: the outer dim steps over exactly one
 * run of the inner one (outer_stride == inner_size * inner_stride), or has a single element.
 * The one rule for merging dims: reshape's views (lesson 4), lesson 6's batch fold and the
 * fast loops (kernels.h) all ask it. */
bool dims_merge(int64_t outer_size, int64_t outer_stride, int64_t inner_size, int64_t inner_stride);
/* The dims of shape that every operand can walk as one (dims_merge) merged, and dims of size 1
 * dropped: a contiguous (4096,4096) is one dim of 16M elements, which the fast loops walk.
 * Writes the m merged dims, outermost first, and returns m (0 for one element); -1, writing
 * nothing, with an error, for a rank or operand count out of range or a NULL array. */
int merge_dims(int rank, const int64_t *shape, int n_operands, const int64_t *const *strides, int64_t *merged_shape,
               int64_t merged_strides[][TENSOR_MAX_RANK]);

/* dst[i] += src[i] for every index i of `shape`, both addressed through strides: the odometer
 * above. A stride of 0 in src reads one element many times (a broadcast); a stride of 0 in dst
 * adds many elements into one (a reduction). Where dst and src overlap, the result is the
 * odometer's, element after element in row-major order. */
void strided_accumulate(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                        const int64_t *src_strides);
/* dst[i] = src[i] for every index i of `shape`: the copy behind tensor_contiguous and
 * tensor_to_array, the same odometer. dst and src must not overlap, and dst must not have a
 * stride of 0. Both hand their work to a fast path first (kernels.h), which visits the same
 * pairs in memory order: a sum may come out rounded differently, never a copy. */
void strided_copy(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                  const int64_t *src_strides);
/* Both do nothing but record "strided_copy: ..." (or "strided_accumulate: ...") for a shape
 * that is not valid (shape_is_valid, or a count that overflows), or a NULL dst, src or strides
 * array when the shape has elements. */

/* Pointer to a tensor's first element (its storage plus its offset). */
float *tensor_data(const Tensor *t);

/* Returns x itself when x is already contiguous, else a contiguous copy made by walking x in
 * row-major order. Gradients pass straight through to x. */
Tensor *tensor_contiguous(Tensor *x);

/* ---- autodiff ----------------------------------------------------------------------- */

/* Records that `out` was made by `op` from inputs[0..n) and that `backward` undoes it.
 * out requires grad if any input does. Returns out, or NULL with an error (and out untouched)
 * for a NULL op, n outside 0..TENSOR_MAX_INPUTS, a NULL input or one from another context. */
Tensor *tensor_record(Tensor *out, const char *op, BackwardFn backward, int n, Tensor *const *inputs);

/* Reverse-mode autodiff from a one-element loss: seeds d loss/d loss = 1, then calls each op's
 * backward in reverse topological order (that of an op with no input that requires grad has
 * nothing to pass on, and is not called). Leaf gradients accumulate across calls (zero them
 * with tensor_zero_grad / ctx_zero_grads); gradients of intermediate tensors are recomputed
 * from zero on every call. Returns 0, or -1 with an error (NULL loss, non-scalar loss). */
int tensor_backward(Tensor *loss);
/* Same, seeding out's gradient with `upstream` (same shape as out) instead of 1, as if the
 * loss were sum(upstream * out). upstream NULL is tensor_backward. */
int tensor_backward_from(Tensor *out, const Tensor *upstream);
/* The gradient of t (contiguous, t's shape; zeros before any backward). NULL with an error
 * if t is NULL or does not require grad. */
Tensor *tensor_grad(Tensor *t);
void tensor_zero_grad(Tensor *t);
/* For backward functions: t's gradient buffer, allocated on first use, and zeroed at the first
 * call after it was made, or after tensor_backward marked it to restart (an intermediate's):
 * tensor_backward makes every gradient it needs at its start and zeroes each when it is first
 * used, when the memory is in the cache for the add; those nothing used, before it returns. */
float *tensor_grad_data(Tensor *t);
/* How a backward starts the gradients its kernel writes under one `accumulate` flag (true: add
 * into them; false: store over them). Sets grads[i] to inputs[i]'s gradient, NULL where it needs
 * none, and returns false (store, saving the clearing) only when nothing has reached any of
 * them yet, each is written whole (whole[i], or NULL for all: every element gets one term, as a
 * broadcast input's gradient does not) and no tensor is given twice (x * x); else true, having
 * cleared those nothing had reached. One gradient: bool acc = tensor_grads_begin(1, &x, NULL,
 * &gx). A NULL grads or inputs records "grads_begin: input grads is NULL" and returns true. */
bool tensor_grads_begin(int n, Tensor *const *inputs, const bool *whole, float **grads);

/* ---- printing ----------------------------------------------------------------------- */

/* Prints values as nested brackets, like numpy: "name = [[1. 2. 3.]\n       [4. 5. 6.]]".
 * name may be NULL. Integral values print as "3."; others with fmt (default "%.4f"). */
void tensor_print(const char *name, const Tensor *t);
void tensor_fprint(FILE *f, const char *name, const Tensor *t, const char *fmt);
/* One line: shape, strides, offset, storage and whether t is a view or contiguous. */
void tensor_describe(const char *name, const Tensor *t);
void tensor_fdescribe(FILE *f, const char *name, const Tensor *t);

#endif /* TENSOR_H */
