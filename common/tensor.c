/*
 * tensor.c - the shared tensor core: the arena, errors, shapes, views, strided loops,
 * the autodiff engine and printing. See tensor.h for each function's contract and
 * docs/0-foundations.md for the ideas.
 */
#include "tensor.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ==== the context (arena) =============================================================== */

/* Memory comes in blocks; each block is carved front to back and freed only with its ctx. */
typedef struct Block {
    struct Block *next;
    size_t used, capacity;
    _Alignas(16) unsigned char memory[];
} Block;

struct Ctx {
    Block *blocks; /* the head is the block small allocations are carved from */
    size_t bytes;
    Tensor *first_tensor, *last_tensor;
    int n_tensors, n_storages;
    unsigned epoch; /* bumped by every backward's topological sort */
};

enum { BLOCK_SIZE = 64 * 1024, ALIGN = 16, LINE = 64 };

/* Under AddressSanitizer the arena marks what it has not handed out as poisoned, and leaves a
 * redzone after each allocation, so that a write past the end of a tensor's data is reported
 * like one past the end of a malloc'd array (make test SANITIZE=1, grading with SANITIZE=1). */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_REDZONES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_REDZONES 1
#endif
#endif
#ifdef ARENA_REDZONES
#include <sanitizer/asan_interface.h>
enum { REDZONE = 32 };
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
enum { REDZONE = 0 };
#endif

/* A block of zeroed memory, or (zeroed false) of whatever malloc hands out. */
static Block *block_new(size_t capacity, bool zeroed) {
    Block *b = zeroed ? calloc(1, sizeof(Block) + capacity) : malloc(sizeof(Block) + capacity);
    if (!b) return NULL;
    b->next = NULL;
    b->used = 0;
    b->capacity = capacity;
    ASAN_POISON_MEMORY_REGION(b->memory, capacity);
    return b;
}

Ctx *ctx_new(void) {
    Ctx *ctx = calloc(1, sizeof(Ctx));
    if (!ctx) {
        tensor_set_error("ctx_new: out of memory");
        return NULL;
    }
    return ctx;
}

void ctx_free(Ctx *ctx) {
    if (!ctx) return;
    Block *b = ctx->blocks;
    while (b) {
        Block *next = b->next;
        ASAN_UNPOISON_MEMORY_REGION(b->memory, b->capacity);
        free(b);
        b = next;
    }
    free(ctx);
}

/* ctx_alloc, except that with zeroed false a large allocation (a block of its own) is not
 * cleared: for a tensor whose every element its op is about to write. Clearing memory that was
 * used before costs as much as writing it once more (a small allocation comes from a block
 * that was cleared when it was made, and is never reused within its ctx: zeros either way). */
static void *arena_alloc(Ctx *ctx, size_t bytes, bool zeroed) {
    if (!ctx) {
        tensor_set_error("ctx_alloc: ctx is NULL");
        return NULL;
    }
    if (bytes > SIZE_MAX - 2 * ALIGN - LINE - REDZONE - sizeof(Block)) {
        tensor_set_error("ctx_alloc: %zu bytes is more than can be allocated", bytes);
        return NULL;
    }
    size_t size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (size == 0) size = ALIGN; /* every allocation gets its own address */

    Block *head = ctx->blocks;
    if (!head || head->capacity - head->used < size + REDZONE) {
        if (size > BLOCK_SIZE / 4) {
            /* A large allocation gets a block of its own, linked behind the head so the
             * head keeps serving small allocations. */
            /* its data starts on a 64-byte boundary, a cache line: vector loads and stores
             * then never straddle two lines, and the copies can stream whole lines */
            Block *own = block_new(size + LINE, zeroed);
            if (!own) goto out_of_memory;
            own->used = size + LINE;
            unsigned char *data = own->memory + (LINE - (uintptr_t)own->memory % LINE) % LINE;
            ASAN_UNPOISON_MEMORY_REGION(data, bytes);
            if (head) {
                own->next = head->next;
                head->next = own;
            } else {
                ctx->blocks = own;
            }
            ctx->bytes += size;
            return data;
        }
        Block *fresh = block_new(BLOCK_SIZE, true);
        if (!fresh) goto out_of_memory;
        fresh->next = head;
        ctx->blocks = head = fresh;
    }
    void *p = head->memory + head->used;
    head->used += size + REDZONE;
    ctx->bytes += size;
    ASAN_UNPOISON_MEMORY_REGION(p, bytes);
    return p; /* blocks come from calloc, so p is already zeroed */

out_of_memory:
    tensor_set_error("ctx_alloc: out of memory allocating %zu bytes", bytes);
    return NULL;
}

void *ctx_alloc(Ctx *ctx, size_t bytes) { return arena_alloc(ctx, bytes, true); }

size_t ctx_bytes(const Ctx *ctx) { return ctx ? ctx->bytes : 0; }

void ctx_zero_grads(Ctx *ctx) {
    if (!ctx) return;
    for (Tensor *t = ctx->first_tensor; t; t = t->next_in_ctx) tensor_zero_grad(t);
}

/* ==== errors ============================================================================ */

static _Thread_local char error_message[1024];
static _Thread_local bool error_recorded;

const char *tensor_error(void) { return error_recorded ? error_message : NULL; }

void tensor_clear_error(void) {
    error_recorded = false;
    error_message[0] = '\0';
}

void tensor_set_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    error_recorded = true;
}

bool tensor_null_input(const char *op, const char *which) {
    if (!error_recorded) tensor_set_error("%s: input %s is NULL", op, which);
    return false;
}

/* ==== shapes ============================================================================ */

int64_t shape_numel(const int64_t *shape, int rank) {
    /* The product of the non-zero dims must fit too, whatever the order of the dims: (0,2^40,2^40)
     * is refused like (2^40,2^40,0), since its row-major strides would overflow. */
    int64_t n = 1;
    bool empty = false;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0) return -1;
        if (shape[d] == 0) empty = true;
        else if (n > INT64_MAX / shape[d]) return -1;
        else n *= shape[d];
    }
    return empty ? 0 : n;
}

char *shape_format(const int64_t *shape, int rank, char *buf, size_t size) {
    size_t used = 0;
    if (!shape || rank < 0 || rank > TENSOR_MAX_RANK) rank = 0;
    used += (size_t)snprintf(buf, size, "(");
    for (int d = 0; d < rank && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, d ? ",%lld" : "%lld", (long long)shape[d]);
    if (used < size) snprintf(buf + used, size - used, rank == 1 ? ",)" : ")");
    return buf;
}

void contiguous_strides(const int64_t *shape, int rank, int64_t *strides) {
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = stride;
        stride *= shape[d] > 0 ? shape[d] : 1;
    }
}

void unravel_index(int64_t flat, const int64_t *shape, int rank, int64_t *index) {
    for (int d = rank - 1; d >= 0; d--) {
        if (shape[d] <= 0) { /* a shape with no elements has no valid flat index */
            index[d] = 0;
            continue;
        }
        index[d] = flat % shape[d];
        flat /= shape[d];
    }
}

bool shape_equal(const int64_t *a, int a_rank, const int64_t *b, int b_rank) {
    if (a_rank != b_rank) return false;
    for (int d = 0; d < a_rank; d++)
        if (a[d] != b[d]) return false;
    return true;
}

/* ==== making tensors ==================================================================== */

static Tensor *header_new(Ctx *ctx) {
    Tensor *t = ctx_alloc(ctx, sizeof(Tensor));
    if (!t) return NULL;
    t->ctx = ctx;
    t->id = ++ctx->n_tensors;
    t->op = "leaf";
    if (ctx->last_tensor) ctx->last_tensor->next_in_ctx = t;
    else ctx->first_tensor = t;
    ctx->last_tensor = t;
    return t;
}

bool shape_is_valid(const char *op, const int64_t *shape, int rank) {
    char s[SHAPE_STR_MAX];
    if (rank < 0 || rank > TENSOR_MAX_RANK) {
        tensor_set_error("%s: rank %d is outside 0..%d (TENSOR_MAX_RANK)", op, rank, TENSOR_MAX_RANK);
        return false;
    }
    if (rank > 0 && !shape) {
        tensor_set_error("%s: shape is NULL for rank %d", op, rank);
        return false;
    }
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0) {
            tensor_set_error("%s: negative dimensions are not allowed, got shape %s", op,
                             shape_format(shape, rank, s, sizeof s));
            return false;
        }
    }
    return true;
}

/* The element count of a valid shape whose floats fit in memory; -1 with an error otherwise. */
static int64_t checked_numel(const char *op, const int64_t *shape, int rank) {
    if (!shape_is_valid(op, shape, rank)) return -1;
    int64_t n = shape_numel(shape, rank);
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(float) / 2) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("%s: shape %s has too many elements", op, shape_format(shape, rank, s, sizeof s));
        return -1;
    }
    return n;
}

static Tensor *tensor_for(const char *op, Ctx *ctx, const int64_t *shape, int rank, bool zeroed) {
    if (!ctx) {
        tensor_set_error("%s: ctx is NULL", op);
        return NULL;
    }
    int64_t n = checked_numel(op, shape, rank);
    if (n < 0) return NULL;
    /* the floats first: if they do not fit, nothing half-made is left in ctx */
    float *data = arena_alloc(ctx, (size_t)n * sizeof(float), zeroed);
    if (!data) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("%s: cannot allocate %lld bytes for shape %s", op, (long long)n * (long long)sizeof(float),
                         shape_format(shape, rank, s, sizeof s));
        return NULL;
    }
    Tensor *t = header_new(ctx);
    Storage *st = ctx_alloc(ctx, sizeof(Storage));
    if (!t || !st) return NULL;
    st->data = data;
    st->size = n;
    st->id = ++ctx->n_storages;
    t->storage = st;
    t->rank = rank;
    if (rank > 0) memcpy(t->shape, shape, (size_t)rank * sizeof(int64_t));
    contiguous_strides(t->shape, rank, t->strides);
    return t;
}

Tensor *tensor_zeros(Ctx *ctx, const int64_t *shape, int rank) {
    return tensor_for("tensor_zeros", ctx, shape, rank, true);
}

/* Its errors name tensor_zeros, whose allocation it is: the messages of ops that fail to make
 * their result stay the same whichever of the two they call. */
Tensor *tensor_empty(Ctx *ctx, const int64_t *shape, int rank) {
    return tensor_for("tensor_zeros", ctx, shape, rank, false);
}

Tensor *tensor_from(Ctx *ctx, const int64_t *shape, int rank, const float *values, int64_t n) {
    if (!ctx) {
        tensor_set_error("tensor_from: ctx is NULL");
        return NULL;
    }
    int64_t size = checked_numel("tensor_from", shape, rank); /* checked before allocating anything */
    if (size < 0) return NULL;
    if (n != size) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("tensor_from: %lld values given for shape %s, which holds %lld", (long long)n,
                         shape_format(shape, rank, s, sizeof s), (long long)size);
        return NULL;
    }
    if (n > 0 && !values) {
        tensor_set_error("tensor_from: values is NULL");
        return NULL;
    }
    Tensor *t = tensor_for("tensor_from", ctx, shape, rank, false); /* every value is set below */
    if (t && n > 0) memcpy(t->storage->data, values, (size_t)n * sizeof(float));
    return t;
}

Tensor *tensor_scalar(Ctx *ctx, float value) {
    Tensor *t = tensor_for("tensor_scalar", ctx, NULL, 0, true);
    if (t) t->storage->data[0] = value;
    return t;
}

Tensor *tensor_requires_grad(Tensor *t) {
    if (!t) return tensor_null_input("requires_grad", "t"), NULL;
    t->requires_grad = true;
    return t;
}

Tensor *tensor_as_strided(Tensor *x, const int64_t *shape, int rank, const int64_t *strides,
                          int64_t offset) {
    if (!x) return tensor_null_input("as_strided", "x"), NULL;
    if (!shape_is_valid("as_strided", shape, rank)) return NULL;
    int64_t n = shape_numel(shape, rank); /* a view allocates nothing: only int64 limits its count */
    if (n < 0) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("as_strided: shape %s has too many elements", shape_format(shape, rank, s, sizeof s));
        return NULL;
    }
    if (rank > 0 && !strides) {
        tensor_set_error("as_strided: strides is NULL for rank %d", rank);
        return NULL;
    }
    /* The lowest and highest offsets the view can reach must lie inside the storage. Each step
     * is checked before it is taken, so that huge strides cannot overflow the arithmetic. */
    int64_t size = x->storage->size, lo = offset, hi = offset;
    bool inside = offset >= 0 && (offset < size || n == 0);
    for (int d = 0; d < rank && n > 0 && inside; d++) {
        if (shape[d] == 1 || strides[d] == 0) continue;
        int64_t step = strides[d] > 0 ? strides[d] : strides[d] == INT64_MIN ? INT64_MAX : -strides[d]; /* |stride| */
        if (step >= size || shape[d] - 1 > (size - 1) / step) { /* reach >= size: cannot fit */
            inside = false;
            break;
        }
        int64_t reach = step * (shape[d] - 1); /* < size, so no overflow below */
        if (strides[d] > 0) hi += reach;
        else lo -= reach;
        inside = lo >= 0 && hi < size;
    }
    if (!inside) {
        char s[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
        tensor_set_error("as_strided: a view with shape %s, strides %s and offset %lld reaches outside "
                         "storage #%d of %lld floats",
                         shape_format(shape, rank, s, sizeof s), shape_format(strides, rank, st, sizeof st),
                         (long long)offset, x->storage->id, (long long)size);
        return NULL;
    }
    /* An empty view reaches nothing, so any offset >= 0 will do (as in PyTorch); one past the end
     * of the storage is kept at its end, so that tensor_data never points outside it. */
    if (n == 0 && offset > size) offset = size;
    Tensor *v = header_new(x->ctx);
    if (!v) return NULL;
    v->storage = x->storage;
    v->is_view = true;
    v->rank = rank;
    if (rank > 0) {
        memcpy(v->shape, shape, (size_t)rank * sizeof(int64_t));
        memcpy(v->strides, strides, (size_t)rank * sizeof(int64_t));
    }
    v->offset = offset;
    return v;
}

/* ==== reading tensors =================================================================== */

int64_t tensor_numel(const Tensor *t) { return t ? shape_numel(t->shape, t->rank) : 0; }

bool tensor_is_contiguous(const Tensor *t) {
    if (!t) return false;
    int64_t expected = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (t->shape[d] == 0) return true;
        if (t->shape[d] != 1 && t->strides[d] != expected) return false;
        expected *= t->shape[d];
    }
    return true;
}

float *tensor_data(const Tensor *t) { return t ? t->storage->data + t->offset : NULL; }

float tensor_get(const Tensor *t, const int64_t *index) {
    if (!t) return tensor_null_input("get", "t"), NAN;
    char s[SHAPE_STR_MAX];
    if (t->rank > 0 && !index) {
        tensor_set_error("get: index is NULL for shape %s", shape_format(t->shape, t->rank, s, sizeof s));
        return NAN;
    }
    int64_t off = 0;
    for (int d = 0; d < t->rank; d++) {
        if (index[d] < 0 || index[d] >= t->shape[d]) {
            tensor_set_error("get: index %lld is out of range for dim %d of shape %s", (long long)index[d], d,
                             shape_format(t->shape, t->rank, s, sizeof s));
            return NAN;
        }
        off += index[d] * t->strides[d];
    }
    return tensor_data(t)[off];
}

float tensor_item(const Tensor *t) {
    if (!t) return tensor_null_input("item", "t"), NAN;
    if (tensor_numel(t) != 1) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("item: only a one-element tensor has an item, got shape %s",
                         shape_format(t->shape, t->rank, s, sizeof s));
        return NAN;
    }
    return tensor_data(t)[0];
}

int64_t tensor_to_array(const Tensor *t, float *out, int64_t capacity) {
    if (!t) return tensor_null_input("to_array", "t"), -1;
    int64_t n = tensor_numel(t);
    if (n > 0 && !out) {
        tensor_set_error("to_array: out is NULL");
        return -1;
    }
    if (capacity < n) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("to_array: room for %lld floats, but shape %s holds %lld", (long long)capacity,
                         shape_format(t->shape, t->rank, s, sizeof s), (long long)n);
        return -1;
    }
    int64_t out_strides[TENSOR_MAX_RANK];
    contiguous_strides(t->shape, t->rank, out_strides);
    strided_copy(t->rank, t->shape, out, out_strides, tensor_data(t), t->strides);
    return n;
}

/* ==== strided loops ===================================================================== */

void nditer_init(NdIter *it, int rank, const int64_t *shape, int n_operands,
                 const int64_t *const *strides) {
    memset(it, 0, sizeof *it); /* remaining 0: an iterator that fails to start visits nothing */
    if (rank < 0 || rank > TENSOR_MAX_RANK) {
        tensor_set_error("nditer_init: rank %d is outside 0..%d (TENSOR_MAX_RANK)", rank, TENSOR_MAX_RANK);
        return;
    }
    if (n_operands < 0 || n_operands > NDITER_MAX_OPERANDS) {
        tensor_set_error("nditer_init: %d operands, outside 0..%d (NDITER_MAX_OPERANDS)", n_operands,
                         NDITER_MAX_OPERANDS);
        return;
    }
    for (int k = -1; k < n_operands && rank > 0; k++) {
        if (k < 0 ? !shape || (n_operands > 0 && !strides) : !strides[k]) {
            tensor_set_error("nditer_init: a shape or strides array is NULL for rank %d", rank);
            return;
        }
    }
    it->rank = rank;
    it->n_operands = n_operands;
    it->remaining = shape_numel(shape, rank);
    for (int d = 0; d < rank; d++) it->shape[d] = shape[d];
    for (int k = 0; k < n_operands; k++)
        for (int d = 0; d < rank; d++) it->strides[k][d] = strides[k][d];
}

bool nditer_next(NdIter *it) {
    if (it->remaining <= 0) return false;
    it->remaining--;
    if (!it->started) {
        it->started = true;
        return true;
    }
    for (int d = it->rank - 1; d >= 0; d--) {
        it->index[d]++;
        for (int k = 0; k < it->n_operands; k++) it->offset[k] += it->strides[k][d];
        if (it->index[d] < it->shape[d]) break;
        /* this dim wrapped around: rewind it and carry into the dim before it */
        for (int k = 0; k < it->n_operands; k++) it->offset[k] -= it->strides[k][d] * it->shape[d];
        it->index[d] = 0;
    }
    return true;
}

void nditer_init_rows(NdIter *it, const Tensor *x) {
    if (!x || x->rank == 0) {
        memset(it, 0, sizeof *it); /* nothing to visit */
        if (!x) tensor_null_input("nditer_init_rows", "x");
        else tensor_set_error("nditer_init_rows: a rank-0 tensor (a scalar) has no rows");
        return;
    }
    nditer_init(it, x->rank - 1, x->shape, 1, (const int64_t *[]){x->strides});
}

/* Dims that can be walked as one, found from the last dim backwards: a dim joins the merged dim
 * after it when, for every operand, its stride is that dim's stride times that dim's size (a
 * contiguous (4096,4096) is one dim of 16M elements). Dims of size 1 never move and are dropped.
 * Writes the m merged dims in order, outermost first, and returns m (0 for a single element). */
static int merge_dims(int rank, const int64_t *shape, int n_operands, const int64_t *const *strides,
                      int64_t *merged_shape, int64_t merged_strides[][TENSOR_MAX_RANK]) {
    int64_t sizes[TENSOR_MAX_RANK], steps[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK]; /* innermost first */
    int m = 0;
    for (int d = rank - 1; d >= 0; d--) {
        if (shape[d] == 1) continue;
        bool joins = m > 0;
        for (int k = 0; k < n_operands && joins; k++) joins = strides[k][d] == steps[k][m - 1] * sizes[m - 1];
        if (joins) {
            sizes[m - 1] *= shape[d];
        } else {
            sizes[m] = shape[d];
            for (int k = 0; k < n_operands; k++) steps[k][m] = strides[k][d];
            m++;
        }
    }
    for (int d = 0; d < m; d++) {
        merged_shape[d] = sizes[m - 1 - d];
        for (int k = 0; k < n_operands; k++) merged_strides[k][d] = steps[k][m - 1 - d];
    }
    return m;
}

void nditer_init_inner(NdIter *it, int rank, const int64_t *shape, int n_operands, const int64_t *const *strides,
                       int64_t *inner_n, int64_t *inner_strides) {
    nditer_init(it, rank, shape, n_operands, strides); /* checks the arguments */
    *inner_n = 0;
    if (it->remaining == 0) return; /* a failed start, or an empty shape */
    int64_t merged_shape[TENSOR_MAX_RANK], merged[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK];
    int m = merge_dims(rank, shape, n_operands, strides, merged_shape, merged);
    /* The last merged dim is the inner loop's; the others are the iterator's. */
    *inner_n = m > 0 ? merged_shape[m - 1] : 1;
    for (int k = 0; k < n_operands; k++) inner_strides[k] = m > 0 ? merged[k][m - 1] : 0;
    it->rank = m > 0 ? m - 1 : 0;
    for (int d = 0; d < it->rank; d++) {
        it->shape[d] = merged_shape[d];
        for (int k = 0; k < n_operands; k++) it->strides[k][d] = merged[k][d];
    }
    it->remaining = it->remaining / *inner_n;
}

/* ==== cache-blocked loops =============================================================== */

/* Copying a transposed (4096,4096) in row-major order writes the destination with stride 1 but
 * reads the source with stride 4096: every read lands in a different 64-byte cache line (and
 * a different 4 KB page), and by the time the next column comes round to use the other 15
 * floats of that line, it has been evicted. Cutting the loop into TILE x TILE tiles keeps the
 * lines of one tile in the L1 cache until all of their floats are used. Inside a tile, a kernel
 * moves 8 x 8 blocks through AVX2 registers when the CPU has them (TRANSPOSE_KERNEL=generic forces
 * the plain C loop, which is the reference the tests compare it with). */
enum { TILE = NDTILE_SIZE, LINE_FLOATS = 16 /* floats in a 64-byte cache line */ };
/* ndtiles_use_panels: blocks of all rows x 16 columns, when the source's rows are 1 KB or
 * more apart */
enum { PANEL_COLS = 16, PANEL_STRIDE = 256 /* floats */ };

/* |s|, kept in range for the one stride whose negation overflows */
static int64_t magnitude(int64_t s) { return s >= 0 ? s : s == INT64_MIN ? INT64_MAX : -s; }

/* How a block is written: copied, added to (+=), or copied with streaming stores, which send
 * whole cache lines to memory without first reading them into the cache. A large copy into
 * memory that is not in the cache saves a third of its memory traffic that way (memcpy does
 * the same); a small one, or one whose result is read right after, is better off cached. */
typedef enum { COPY, ADD, STREAM } Write;
enum { STREAM_BYTES = 16 << 20 }; /* stream copies of more than 16 MB, half this machine's L3 */

/* d[i * ld + j] = s[j * ls + i] (or += for ADD) for i < ni, j < nj: the transposing copy of
 * one tile. The destination's rows are contiguous, and so are the source's columns. */
static void transpose_generic(int how, int64_t ni, int64_t nj, float *d, int64_t ld, const float *s, int64_t ls) {
    for (int64_t i = 0; i < ni; i++) {
        float *row = d + i * ld;
        if (how == ADD)
            for (int64_t j = 0; j < nj; j++) row[j] += s[j * ls + i];
        else
            for (int64_t j = 0; j < nj; j++) row[j] = s[j * ls + i];
    }
}

/* a op b, or b op a when swap: the four ops of lesson 1, for one element */
static float tile_op1(TileOp op, bool swap, float a, float b) {
    if (swap) {
        float t = a;
        a = b;
        b = t;
    }
    switch (op) {
    case TILE_ADD: return a + b;
    case TILE_SUB: return a - b;
    case TILE_MUL: return a * b;
    default: return a / b;
    }
}

/* d[i * ld + j] = s[j * ls + i] op b[i * br + j * bc] (the operands swapped when swap) for
 * i < ni, j < nj: an elementwise op whose input s is read transposed, the plain C loop. */
static void transpose_op_generic(TileOp op, bool swap, bool stream, int64_t ni, int64_t nj, float *d, int64_t ld,
                                 const float *s, int64_t ls, const float *b, int64_t br, int64_t bc) {
    (void)stream;
    for (int64_t i = 0; i < ni; i++)
        for (int64_t j = 0; j < nj; j++) d[i * ld + j] = tile_op1(op, swap, s[j * ls + i], b[i * br + j * bc]);
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TENSOR_X86 1
#include <immintrin.h>

/* Eight rows of eight floats in, eight columns out: the standard three rounds of shuffles
 * (pairs of floats, pairs of pairs, then 128-bit halves). STORE(i, v) writes column i. */
#define TRANSPOSE8X8(s, ls, STORE)                                                                               \
    do {                                                                                                        \
        __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ls), r2 = _mm256_loadu_ps(s + 2 * ls),            \
               r3 = _mm256_loadu_ps(s + 3 * ls), r4 = _mm256_loadu_ps(s + 4 * ls), r5 = _mm256_loadu_ps(s + 5 * ls), \
               r6 = _mm256_loadu_ps(s + 6 * ls), r7 = _mm256_loadu_ps(s + 7 * ls);                                 \
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),  \
               t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),  \
               t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);                                   \
        __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),                        \
               u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),                        \
               u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),                        \
               u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);                        \
        STORE(0, _mm256_permute2f128_ps(u0, u4, 0x20));                                                         \
        STORE(1, _mm256_permute2f128_ps(u1, u5, 0x20));                                                         \
        STORE(2, _mm256_permute2f128_ps(u2, u6, 0x20));                                                         \
        STORE(3, _mm256_permute2f128_ps(u3, u7, 0x20));                                                         \
        STORE(4, _mm256_permute2f128_ps(u0, u4, 0x31));                                                         \
        STORE(5, _mm256_permute2f128_ps(u1, u5, 0x31));                                                         \
        STORE(6, _mm256_permute2f128_ps(u2, u6, 0x31));                                                         \
        STORE(7, _mm256_permute2f128_ps(u3, u7, 0x31));                                                         \
    } while (0)
#define STORE_COPY(i, v) _mm256_storeu_ps(d + (i) * ld, (v))
#define STORE_ADD(i, v) _mm256_storeu_ps(d + (i) * ld, _mm256_add_ps(_mm256_loadu_ps(d + (i) * ld), (v)))
#define STORE_STREAM(i, v) _mm256_stream_ps(d + (i) * ld, (v))

__attribute__((target("avx2"))) static void transpose_avx2(int how, int64_t ni, int64_t nj, float *dst, int64_t ld,
                                                          const float *src, int64_t ls) {
    int64_t i8 = ni - ni % 8, j8 = nj - nj % 8, j16 = 0;
    /* Streaming stores write whole 64-byte lines: 16 floats of each of 8 rows, two 8 x 8 blocks
     * side by side, on rows that start on a line. In which order depends on how far apart the
     * source's rows are. When they are 1 KB or more apart (a transposed (4096,4096): 16 KB),
     * the tile is walked in strips 16 columns wide, 16 source rows at a time, each read from
     * left to right: with rows a multiple of 1 KB apart, their lines all fall in the same few
     * sets of the L1 cache, which holds 8 lines per set, and more rows at a time would evict
     * each other. (Such copies come in panels of 16 columns: ndtiles_use_panels.) When they
     * are closer (K of one attention head, (T,64): 256 bytes), the whole tile's source fits,
     * and each group of 8 rows is written from left to right instead: both halves of a line
     * go out one after the other, and this copy was 15% faster. The caller fences
     * (copy_stream_end) after its last tile, not every tile (6% more). */
    if (how == STREAM && (uintptr_t)dst % 64 == 0 && ld % 16 == 0) {
        j16 = nj - nj % 16;
        if (magnitude(ls) >= PANEL_STRIDE)
            for (int64_t j0 = 0; j0 < j16; j0 += 16)
                for (int64_t i = 0; i < i8; i += 8)
                    for (int64_t j = j0; j < j0 + 16; j += 8) {
                        float *d = dst + i * ld + j;
                        const float *s = src + j * ls + i;
                        TRANSPOSE8X8(s, ls, STORE_STREAM);
                    }
        else
            for (int64_t i = 0; i < i8; i += 8)
                for (int64_t j = 0; j < j16; j += 8) {
                    float *d = dst + i * ld + j;
                    const float *s = src + j * ls + i;
                    TRANSPOSE8X8(s, ls, STORE_STREAM);
                }
    }
    for (int64_t j = j16; j < j8; j += 8)
        for (int64_t i = 0; i < i8; i += 8) {
            float *d = dst + i * ld + j;
            const float *s = src + j * ls + i;
            if (how == ADD) TRANSPOSE8X8(s, ls, STORE_ADD);
            else TRANSPOSE8X8(s, ls, STORE_COPY);
        }
    /* Clear the upper halves of the AVX registers before plain SSE code runs again: otherwise
     * every SSE instruction after this (the compiler's scalar float code, say) pays for
     * keeping them, and was measured to run twice as slow. gcc does not always do it itself. */
    _mm256_zeroupper();
    transpose_generic(how, ni - i8, nj, dst + i8 * ld, ld, src + i8, ls); /* the rows left over */
    transpose_generic(how, i8, nj - j8, dst + j8, ld, src + j8 * ls, ls); /* the columns left over */
}

__attribute__((target("avx2"))) static inline __m256 tile_op8(TileOp op, bool swap, __m256 a, __m256 b) {
    if (swap) {
        __m256 t = a;
        a = b;
        b = t;
    }
    switch (op) {
    case TILE_ADD: return _mm256_add_ps(a, b);
    case TILE_SUB: return _mm256_sub_ps(a, b);
    case TILE_MUL: return _mm256_mul_ps(a, b);
    default: return _mm256_div_ps(a, b);
    }
}

/* Row k of the 8 x 8 block just transposed, v, combined with b's eight elements of that row
 * (or its one element, broadcast, when bc is 0) and stored. */
#define STORE_OP(k, v)                                                                                      \
    do {                                                                                                    \
        __m256 w = same_rows ? bj : bc ? _mm256_loadu_ps(bk + (k) * br) : _mm256_set1_ps(bk[(k) * br]);    \
        __m256 r = tile_op8(op, swap, (v), w);                                                              \
        if (streaming) _mm256_stream_ps(d + (k) * ld, r);                                                   \
        else _mm256_storeu_ps(d + (k) * ld, r);                                                             \
    } while (0)

/* transpose_op_generic through AVX2 registers: each 8 x 8 block of s is transposed as in
 * transpose_avx2, and the op applied to its eight rows before they are stored (streamed, in
 * strips 16 columns wide so that whole lines are written, when stream and the rows start on
 * 64-byte lines; the caller fences after its last tile, see ndtiles_binary). bc is 0 or 1.
 * When b is the same for every row (br == 0: a bias), its elements are loaded once per strip, before the strip's stores. Loaded between the stores,
 * they made lesson 1's benchmark add 1.8 times slower, and how much slower depended on where
 * the bias sat relative to the result: the likely cause is that a load waits for an earlier
 * store whose address has the same last 12 bits (all a processor compares at first), and the
 * rows of a (4096,4096) result are 16 KB apart, so every row's store matches. */
__attribute__((target("avx2"), always_inline)) static inline void
transpose_op_body(TileOp op, bool swap, bool stream, int64_t ni, int64_t nj, float *dst, int64_t ld, const float *src,
                  int64_t ls, const float *b, int64_t br, int64_t bc) {
    int64_t i8 = ni - ni % 8, j8 = nj - nj % 8;
    bool streaming = stream && (uintptr_t)dst % 64 == 0 && ld % 16 == 0 && nj % 16 == 0, same_rows = br == 0;
    for (int64_t j0 = 0; j0 < j8; j0 += 16) {
        /* b's elements for the strip's two halves, when they are the same for every row */
        __m256 b_half[2] = {bc ? _mm256_loadu_ps(b + j0) : _mm256_set1_ps(b[0]),
                            bc && j0 + 8 < j8 ? _mm256_loadu_ps(b + j0 + 8) : _mm256_set1_ps(b[0])};
        for (int64_t i = 0; i < i8; i += 8)
            for (int h = 0; h < 2 && j0 + 8 * h < j8; h++) {
                int64_t j = j0 + 8 * h;
                __m256 bj = b_half[h];
                float *d = dst + i * ld + j;
                const float *s = src + j * ls + i, *bk = b + i * br + j * bc;
                TRANSPOSE8X8(s, ls, STORE_OP);
            }
    }
    _mm256_zeroupper();
    transpose_op_generic(op, swap, false, ni - i8, nj, dst + i8 * ld, ld, src + i8, ls, b + i8 * br, br, bc);
    transpose_op_generic(op, swap, false, i8, nj - j8, dst + j8, ld, src + j8 * ls, ls, b + j8 * bc, br, bc);
}
#undef STORE_OP

/* One copy of the kernel per op, order and kind of b, so that none of these is asked per store. */
__attribute__((target("avx2"))) static void transpose_op_avx2(TileOp op, bool swap, bool stream, int64_t ni,
                                                             int64_t nj, float *d, int64_t ld, const float *s,
                                                             int64_t ls, const float *b, int64_t br, int64_t bc) {
#define CASE(OP, SWAP, BC) \
    if (op == OP && swap == SWAP && bc == BC) return transpose_op_body(OP, SWAP, stream, ni, nj, d, ld, s, ls, b, br, BC)
#define CASES(OP) CASE(OP, false, 0); CASE(OP, false, 1); CASE(OP, true, 0); CASE(OP, true, 1)
    CASES(TILE_ADD);
    CASES(TILE_SUB);
    CASES(TILE_MUL);
    CASES(TILE_DIV);
#undef CASES
#undef CASE
    transpose_op_generic(op, swap, stream, ni, nj, d, ld, s, ls, b, br, bc); /* not reached: bc is 0 or 1 */
}
#undef STORE_COPY
#undef STORE_ADD
#undef STORE_STREAM
#undef TRANSPOSE8X8
#endif

typedef void TransposeFn(int how, int64_t ni, int64_t nj, float *d, int64_t ld, const float *s, int64_t ls);

/* The kernel for this CPU, asked once per loop (so a test can change TRANSPOSE_KERNEL between
 * calls). */
static TransposeFn *pick_transpose(const char **name) {
    const char *force = getenv("TRANSPOSE_KERNEL");
    bool generic = force && strcmp(force, "generic") == 0;
#ifdef TENSOR_X86
    if (!generic && __builtin_cpu_supports("avx2")) {
        if (name) *name = "avx2";
        return transpose_avx2;
    }
#endif
    (void)generic;
    if (name) *name = "generic";
    return transpose_generic;
}

const char *transpose_kernel_name(void) {
    const char *name;
    pick_transpose(&name);
    return name;
}

void ndtiles_init(NdTiles *t, int rank, const int64_t *shape, int n_operands, const int64_t *const *strides) {
    memset(t, 0, sizeof *t);
    nditer_init(&t->outer, rank, shape, n_operands, strides); /* checks the arguments */
    if (t->outer.remaining == 0) return;                       /* a failed start, or an empty shape */
    int64_t merged_shape[TENSOR_MAX_RANK], merged[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK];
    int m = merge_dims(rank, shape, n_operands, strides, merged_shape, merged);
    /* The block's columns are the last merged dim, q. Its rows are the dim before it, unless an
     * operand steps over a cache line or more along q but less along another dim p: then rows
     * are p (where that operand's stride is smallest) and the blocks are tiles. */
    int q = m - 1, p = m - 2;
    int64_t best = INT64_MAX;
    for (int k = 0; k < n_operands && q >= 0; k++) {
        int64_t along_q = magnitude(merged[k][q]);
        for (int d = 0; d < q && along_q >= LINE_FLOATS; d++) {
            int64_t along_d = magnitude(merged[k][d]);
            if (along_d != 0 && along_d < along_q && along_d < best) {
                best = along_d;
                p = d;
                t->tiled = true;
            }
        }
    }
    t->n_operands = n_operands;
    t->n_rows = p >= 0 ? merged_shape[p] : 1;
    t->n_cols = q >= 0 ? merged_shape[q] : 1;
    t->tile_rows = t->tiled ? TILE : t->n_rows;
    t->tile_cols = t->tiled ? TILE : t->n_cols;
    for (int k = 0; k < n_operands; k++) {
        t->row_step[k] = p >= 0 ? merged[k][p] : 0;
        t->col_step[k] = q >= 0 ? merged[k][q] : 0;
    }
    /* every other merged dim is walked by an ordinary odometer, outside the blocks */
    int64_t outer_shape[TENSOR_MAX_RANK], outer[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK];
    const int64_t *outer_strides[NDITER_MAX_OPERANDS];
    int rest = 0;
    for (int d = 0; d < m; d++) {
        if (d == p || d == q) continue;
        outer_shape[rest] = merged_shape[d];
        for (int k = 0; k < n_operands; k++) outer[k][rest] = merged[k][d];
        rest++;
    }
    for (int k = 0; k < n_operands; k++) outer_strides[k] = outer[k];
    nditer_init(&t->outer, rest, outer_shape, n_operands, outer_strides);
    t->stream = t->tiled && shape_numel(shape, rank) > STREAM_BYTES / (int64_t)sizeof(float);
    t->transpose = pick_transpose(NULL);
}

/* Panels: a transposed (4096,4096) copied in 64 x 64 tiles reads 64 rows of the source 256
 * bytes at a time, and on this machine reads in short pieces from rows 16 KB apart run at a
 * third of the speed of reads in order. A panel of all rows x 16 columns reads 16 rows of the
 * source from one end to the other instead, and it is the result's writes that scatter, one
 * whole line per row: streamed stores do not wait for memory, where loads do. Lesson 4's
 * benchmark timed the copy at 7.4 to 7.8 ms this way, 8.9 to 10.3 in tiles (memcpy: 4.9 to
 * 6.2). */
void ndtiles_use_panels(NdTiles *t) {
    if (!t->stream || t->started) return;
    int transposed = -1;
    for (int k = 0; k < t->n_operands; k++) {
        int64_t along_q = magnitude(t->col_step[k]);
        if (along_q <= 1) continue; /* contiguous or broadcast along the block's columns */
        if (magnitude(t->row_step[k]) != 1 || along_q < PANEL_STRIDE || transposed >= 0) return;
        transposed = k;
    }
    if (transposed < 0) return;
    t->tile_rows = t->n_rows;
    t->tile_cols = PANEL_COLS;
}

bool ndtiles_next(NdTiles *t) {
    if (!t->started) {
        if (!nditer_next(&t->outer)) return false;
        t->started = true;
    } else if ((t->c0 += t->tile_cols) >= t->n_cols) { /* the next tile along the row of tiles ... */
        t->c0 = 0;
        if ((t->r0 += t->tile_rows) >= t->n_rows) { /* ... or the next row of tiles ... */
            t->r0 = 0;
            if (!nditer_next(&t->outer)) return false; /* ... or the next position outside */
        }
    }
    t->rows = t->n_rows - t->r0 < t->tile_rows ? t->n_rows - t->r0 : t->tile_rows;
    t->cols = t->n_cols - t->c0 < t->tile_cols ? t->n_cols - t->c0 : t->tile_cols;
    for (int k = 0; k < t->n_operands; k++)
        t->offset[k] = t->outer.offset[k] + t->r0 * t->row_step[k] + t->c0 * t->col_step[k];
    return true;
}

/* One row of a block: d[i * ds] = s[i * ss], or +=, for i < n. The common cases first, as
 * plain loops (or memcpy). */
static void row_copy(bool add, int64_t n, float *d, int64_t ds, const float *s, int64_t ss) {
    if (ds == 1 && ss == 1) {
        if (!add) memcpy(d, s, (size_t)n * sizeof *d);
        else for (int64_t i = 0; i < n; i++) d[i] += s[i];
    } else if (ds == 1 && ss == 0) {
        if (!add) for (int64_t i = 0; i < n; i++) d[i] = s[0];
        else for (int64_t i = 0; i < n; i++) d[i] += s[0];
    } else if (ds == 0 && add) { /* a reduction: the sum of a row, added once */
        /* With stride 1, eight running sums, which the compiler turns into one vector (lesson 2),
         * over chunks of 1024 floats, each chunk's total added into a double: a float running
         * sum loses more and more digits as it grows (over 16M floats, eight of them were off
         * by 5e-4), and this way the error stops growing after a chunk. */
        double sum = 0.0;
        int64_t i = 0;
        if (ss == 1)
            while (n - i >= 8) {
                float acc[8] = {0};
                int64_t end = n - i > 1024 ? i + 1024 : i + (n - i) / 8 * 8;
                for (; i < end; i += 8)
                    for (int k = 0; k < 8; k++) acc[k] += s[i + k];
                sum += ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            }
        for (; i < n; i++) sum += s[i * ss];
        d[0] = (float)(d[0] + sum);
    } else if (add) {
        for (int64_t i = 0; i < n; i++) d[i * ds] += s[i * ss];
    } else {
        for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];
    }
}

/* A block of rows x cols: d[r * dr + c * dc] = s[r * sr + c * sc], or +=. When one side's rows
 * are contiguous and the other's columns are (a tile of a transpose), the transposing kernel. */
static void block_copy(TransposeFn *transpose, Write how, int64_t rows, int64_t cols, float *d, int64_t dr,
                       int64_t dc, const float *s, int64_t sr, int64_t sc) {
    bool tile = rows > 1 && cols > 1;
    if (tile && dc == 1 && sr == 1 && magnitude(sc) > 1) {
        transpose(how, rows, cols, d, dr, s, sc);
    } else if (tile && dr == 1 && sc == 1 && magnitude(dc) > 1) {
        transpose(how, cols, rows, d, dc, s, sr); /* the same, with rows and columns swapped */
    } else {
        for (int64_t r = 0; r < rows; r++) row_copy(how == ADD, cols, d + r * dr, dc, s + r * sr, sc);
    }
}

const float *ndtiles_load(const NdTiles *t, int k, const float *base, float *buf) {
    if (t->rows > TILE || t->cols > TILE) return NULL; /* a panel: more than buf holds */
    block_copy(t->transpose, COPY, t->rows, t->cols, buf, t->cols, 1, base + t->offset[k], t->row_step[k],
               t->col_step[k]);
    return buf;
}

/* The kernel that goes with the tiles' transposing kernel: AVX2, or the plain C loop. */
typedef void TransposeOpFn(TileOp op, bool swap, bool stream, int64_t ni, int64_t nj, float *d, int64_t ld,
                           const float *s, int64_t ls, const float *b, int64_t br, int64_t bc);

static TransposeOpFn *transpose_op_kernel(const NdTiles *t) {
#ifdef TENSOR_X86
    if (t->transpose == transpose_avx2) return transpose_op_avx2;
#endif
    (void)t;
    return transpose_op_generic;
}

void ndtiles_binary(const NdTiles *t, TileOp op, float *out, const float *x, const float *y) {
    float x_tile[TILE * TILE], y_tile[TILE * TILE];
    float *o = out + t->offset[0];
    int64_t ld = t->row_step[0]; /* out's col_step is 1 */
    const float *in[2] = {x + t->offset[1], y + t->offset[2]};
    int64_t row[2] = {t->row_step[1], t->row_step[2]}, col[2] = {t->col_step[1], t->col_step[2]};
    /* The input the kernel transposes: one read down the block's columns with stride 1. */
    int k = row[0] == 1 && magnitude(col[0]) > 1 ? 0 : row[1] == 1 && magnitude(col[1]) > 1 ? 1 : -1;
    /* Any other input whose columns are neither contiguous nor broadcast is copied into a
     * buffer first, where they are. */
    for (int m = 0; m < 2; m++) {
        if (m == k || col[m] == 0 || col[m] == 1) continue;
        in[m] = ndtiles_load(t, m + 1, m == 0 ? x : y, m == 0 ? x_tile : y_tile);
        row[m] = t->cols;
        col[m] = 1;
    }
    if (k < 0) { /* nothing left to transpose */
        for (int64_t r = 0; r < t->rows; r++)
            for (int64_t c = 0; c < t->cols; c++)
                o[r * ld + c] = tile_op1(op, false, in[0][r * row[0] + c * col[0]], in[1][r * row[1] + c * col[1]]);
        return;
    }
    transpose_op_kernel(t)(op, k == 1, t->stream, t->rows, t->cols, o, ld, in[k], col[k], in[1 - k], row[1 - k],
                           col[1 - k]);
}

static void strided_blocks(Write how, int rank, const int64_t *shape, float *dst, const int64_t *dst_strides,
                           const float *src, const int64_t *src_strides) {
    int64_t sorted_shape[TENSOR_MAX_RANK], sorted_dst[TENSOR_MAX_RANK], sorted_src[TENSOR_MAX_RANK];
    if (how == ADD && rank >= 0 && rank <= TENSOR_MAX_RANK && shape && dst_strides && src_strides) {
        /* A dim walked backwards by both (a reversed view summed: src's stride negative, dst's
         * negative or 0) is walked forwards instead, from its other end: the same pairs of
         * elements, and then stride 1 can be the fast loop below. */
        int64_t flipped_dst[TENSOR_MAX_RANK], flipped_src[TENSOR_MAX_RANK];
        for (int k = 0; k < rank; k++) {
            flipped_dst[k] = dst_strides[k], flipped_src[k] = src_strides[k];
            if (shape[k] > 1 && dst_strides[k] <= 0 && src_strides[k] <= 0 && dst_strides[k] > INT64_MIN &&
                src_strides[k] > INT64_MIN && (dst_strides[k] < 0 || src_strides[k] < 0)) {
                dst += (shape[k] - 1) * dst_strides[k], src += (shape[k] - 1) * src_strides[k];
                flipped_dst[k] = -dst_strides[k], flipped_src[k] = -src_strides[k];
            }
        }
        dst_strides = flipped_dst, src_strides = flipped_src;
        /* A sum visits the dims in any order, and the best order walks memory: the dims sorted by
         * their larger stride, largest outermost (a stable sort, so ties keep their order). The
         * sum of a transposed (4096,4096) then reads it row by row, as it lies, and the dims
         * that line up merge into one long row. */
        int order[TENSOR_MAX_RANK];
        for (int k = 0; k < rank; k++) {
            int64_t key = magnitude(dst_strides[k]) > magnitude(src_strides[k]) ? magnitude(dst_strides[k])
                                                                                 : magnitude(src_strides[k]);
            int m = k;
            for (; m > 0; m--) {
                int p = order[m - 1];
                int64_t prev = magnitude(dst_strides[p]) > magnitude(src_strides[p]) ? magnitude(dst_strides[p])
                                                                                      : magnitude(src_strides[p]);
                if (prev >= key) break;
                order[m] = p;
            }
            order[m] = k;
        }
        for (int k = 0; k < rank; k++) {
            sorted_shape[k] = shape[order[k]];
            sorted_dst[k] = dst_strides[order[k]];
            sorted_src[k] = src_strides[order[k]];
        }
        shape = sorted_shape, dst_strides = sorted_dst, src_strides = sorted_src;
    }
    NdTiles t;
    ndtiles_init(&t, rank, shape, 2, (const int64_t *[]){dst_strides, src_strides});
    if (how == COPY && t.stream) {
        how = STREAM;
        ndtiles_use_panels(&t);
    }
    while (ndtiles_next(&t))
        block_copy(t.transpose, how, t.rows, t.cols, dst + t.offset[0], t.row_step[0], t.col_step[0],
                   src + t.offset[1], t.row_step[1], t.col_step[1]);
    if (how == STREAM) copy_stream_end();
}

void strided_accumulate(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides,
                        const float *src, const int64_t *src_strides) {
    strided_blocks(ADD, rank, shape, dst, dst_strides, src, src_strides);
}

void strided_copy(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                  const int64_t *src_strides) {
    strided_blocks(COPY, rank, shape, dst, dst_strides, src, src_strides);
}

#ifdef TENSOR_X86
__attribute__((target("sse"))) static void copy_stream_sse(float *dst, const float *src, int64_t n) {
    for (int64_t i = 0; i < n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
}
#endif

void copy_stream(float *dst, const float *src, int64_t n) {
#ifdef TENSOR_X86
    if ((uintptr_t)dst % 16 == 0 && n % 4 == 0) {
        copy_stream_sse(dst, src, n);
        return;
    }
#endif
    if (n > 0) memcpy(dst, src, (size_t)n * sizeof *dst);
}

void copy_stream_end(void) {
#ifdef TENSOR_X86
    _mm_sfence(); /* the streamed lines reach memory before any later store */
#endif
}

/* contiguous: forward copies, backward passes the gradient straight through. */
static void contiguous_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t strides[TENSOR_MAX_RANK];
    contiguous_strides(x->shape, x->rank, strides);
    strided_accumulate(x->rank, x->shape, tensor_grad_data(x), strides, tensor_grad_data(out), strides);
}

Tensor *tensor_contiguous(Tensor *x) {
    if (!x) return tensor_null_input("contiguous", "x"), NULL;
    if (tensor_is_contiguous(x)) return x;
    Tensor *out = tensor_empty(x->ctx, x->shape, x->rank); /* every element is written below */
    if (!out) return NULL;
    strided_copy(x->rank, x->shape, tensor_data(out), out->strides, tensor_data(x), x->strides);
    return tensor_record(out, "contiguous", contiguous_backward, 1, &x);
}

/* ==== autodiff ========================================================================== */

Tensor *tensor_record(Tensor *out, const char *op, BackwardFn backward, int n, Tensor *const *inputs) {
    if (!out) return tensor_null_input("record", "out"), NULL;
    /* checked before out is touched, so a failed record leaves out as it was */
    if (!op || n < 0 || n > TENSOR_MAX_INPUTS || (n > 0 && !inputs)) {
        tensor_set_error("record: op %s with %d inputs%s: give a name and 0..%d (TENSOR_MAX_INPUTS) inputs",
                         op ? op : "NULL", n, n > 0 && !inputs ? " (NULL)" : "", TENSOR_MAX_INPUTS);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char which[16];
        snprintf(which, sizeof which, "%d", i);
        if (!inputs[i]) return tensor_null_input(op, which), NULL;
        if (inputs[i]->ctx != out->ctx) {
            tensor_set_error("%s: input %d belongs to a different context than the output", op, i);
            return NULL;
        }
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

float *tensor_grad_data(Tensor *t) {
    if (!t) return tensor_null_input("grad_data", "t"), NULL;
    if (!t->grad) {
        t->grad = tensor_zeros(t->ctx, t->shape, t->rank);
        if (!t->grad) return NULL;
    }
    return tensor_data(t->grad);
}

Tensor *tensor_grad(Tensor *t) {
    if (!t) return tensor_null_input("grad", "t"), NULL;
    if (!t->requires_grad) {
        char s[SHAPE_STR_MAX];
        tensor_set_error("grad: tensor #%d with shape %s does not require grad; call "
                         "tensor_requires_grad() on it before building the computation",
                         t->id, shape_format(t->shape, t->rank, s, sizeof s));
        return NULL;
    }
    return tensor_grad_data(t) ? t->grad : NULL;
}

void tensor_zero_grad(Tensor *t) {
    if (t && t->grad) memset(t->grad->storage->data, 0, (size_t)t->grad->storage->size * sizeof(float));
}

/* Every tensor that `root` depends on and that requires grad, inputs before the tensors made
 * from them (a post-order depth-first walk, kept iterative so long chains cannot overflow
 * the C stack). Returns the count, or -1 if memory ran out. */
static int topological_order(Tensor *root, Tensor **order) {
    Ctx *ctx = root->ctx;
    int capacity = ctx->n_tensors;
    Tensor **stack = malloc((size_t)capacity * sizeof *stack);
    int *next_input = malloc((size_t)capacity * sizeof *next_input);
    if (!stack || !next_input) {
        free(stack);
        free(next_input);
        return -1;
    }
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
    free(stack);
    free(next_input);
    return n;
}

int tensor_backward_from(Tensor *out, const Tensor *upstream) {
    char s[SHAPE_STR_MAX], u[SHAPE_STR_MAX];
    if (!out) return tensor_null_input("backward", "loss"), -1;
    if (!upstream && tensor_numel(out) != 1) {
        tensor_set_error("backward: the loss must be a scalar (one element), got shape %s; reduce it first "
                         "(e.g. tensor_sum) or use tensor_backward_from with an upstream gradient",
                         shape_format(out->shape, out->rank, s, sizeof s));
        return -1;
    }
    if (!out->requires_grad) {
        tensor_set_error("backward: tensor #%d with shape %s does not require grad: no input of "
                         "its computation was marked with tensor_requires_grad()",
                         out->id, shape_format(out->shape, out->rank, s, sizeof s));
        return -1;
    }
    if (upstream && !shape_equal(upstream->shape, upstream->rank, out->shape, out->rank)) {
        tensor_set_error("backward: upstream gradient has shape %s but the output has shape %s",
                         shape_format(upstream->shape, upstream->rank, u, sizeof u),
                         shape_format(out->shape, out->rank, s, sizeof s));
        return -1;
    }
    Tensor **order = malloc((size_t)out->ctx->n_tensors * sizeof *order);
    int n = order ? topological_order(out, order) : -1;
    if (n < 0) {
        free(order);
        tensor_set_error("backward: out of memory");
        return -1;
    }
    /* Every gradient exists before any backward runs, so backward functions never allocate. */
    for (int i = 0; i < n; i++) {
        if (!tensor_grad_data(order[i])) {
            free(order);
            return -1;
        }
    }
    /* upstream is copied before any gradient is reset: it may be one of them (tensor_grad(out)) */
    int64_t n_seed = tensor_numel(out);
    float *seed = upstream ? malloc((size_t)(n_seed > 0 ? n_seed : 1) * sizeof *seed) : NULL;
    if (upstream && !seed) {
        free(order);
        tensor_set_error("backward: out of memory");
        return -1;
    }
    if (upstream) tensor_to_array(upstream, seed, n_seed);
    /* Intermediate gradients restart from zero; leaf gradients keep accumulating. */
    for (int i = 0; i < n; i++)
        if (order[i]->backward) tensor_zero_grad(order[i]);
    float *g = tensor_data(out->grad); /* contiguous: the same row-major order as seed */
    if (upstream)
        for (int64_t i = 0; i < n_seed; i++) g[i] += seed[i];
    else
        g[0] += 1.0f; /* d loss / d loss */
    for (int i = n - 1; i >= 0; i--)
        if (order[i]->backward) order[i]->backward(order[i]);
    free(seed);
    free(order);
    return 0;
}

int tensor_backward(Tensor *loss) { return tensor_backward_from(loss, NULL); }

/* ==== printing ========================================================================== */

static void format_value(char *buf, size_t size, float v, bool integral, const char *fmt) {
    if (isnan(v)) snprintf(buf, size, "nan");
    else if (isinf(v)) snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else if (integral) snprintf(buf, size, "%.0f.", (double)v);
    else snprintf(buf, size, fmt, (double)v);
}

typedef struct {
    FILE *f;
    const Tensor *t;
    const char *fmt;
    bool integral;
    int width;  /* every element is right-aligned to this width */
    int indent; /* column of the outermost '[' */
} Printer;

static void print_level(Printer *p, int d, int64_t offset) {
    const Tensor *t = p->t;
    char buf[64];
    if (d == t->rank) {
        format_value(buf, sizeof buf, tensor_data(t)[offset], p->integral, p->fmt);
        fprintf(p->f, "%*s", p->width, buf);
        return;
    }
    fputc('[', p->f);
    for (int64_t i = 0; i < t->shape[d]; i++) {
        if (i > 0) {
            if (d == t->rank - 1) {
                fputc(' ', p->f);
            } else {
                /* a new row: one line break, plus a blank line per extra level of nesting */
                for (int k = 0; k < t->rank - 1 - d; k++) fputc('\n', p->f);
                fprintf(p->f, "%*s", p->indent + d + 1, "");
            }
        }
        print_level(p, d + 1, offset + i * t->strides[d]);
    }
    fputc(']', p->f);
}

void tensor_fprint(FILE *f, const char *name, const Tensor *t, const char *fmt) {
    if (!f) return;
    int indent = name ? fprintf(f, "%s = ", name) : 0;
    if (!t) {
        fprintf(f, "NULL (%s)\n", tensor_error() ? tensor_error() : "no error recorded");
        return;
    }
    Printer p = {f, t, fmt ? fmt : "%.4f", true, 1, indent};
    int64_t n = tensor_numel(t);
    if (n == 0) {
        fprintf(f, "[]\n");
        return;
    }
    /* First pass: are all values whole numbers, and how large and small are they? Very large or
     * very small values switch the default format to scientific notation, as numpy does. */
    NdIter it;
    nditer_init(&it, t->rank, t->shape, 1, (const int64_t *[]){t->strides});
    const float *data = tensor_data(t);
    float largest = 0.0f, smallest = INFINITY;
    while (nditer_next(&it)) {
        float v = data[it.offset[0]], a = fabsf(v);
        if (!isfinite(v)) continue;
        if (v != floorf(v) || a >= 1e15f) p.integral = false;
        if (a > largest) largest = a;
        if (a > 0.0f && a < smallest) smallest = a;
    }
    if (!fmt && !p.integral && (largest >= 1e6f || smallest < 1e-4f)) p.fmt = "%.4e";
    char buf[64];
    nditer_init(&it, t->rank, t->shape, 1, (const int64_t *[]){t->strides});
    while (nditer_next(&it)) {
        format_value(buf, sizeof buf, data[it.offset[0]], p.integral, p.fmt);
        int len = (int)strlen(buf);
        if (len > p.width) p.width = len;
    }
    print_level(&p, 0, 0);
    fputc('\n', f);
}

void tensor_print(const char *name, const Tensor *t) { tensor_fprint(stdout, name, t, NULL); }

void tensor_fdescribe(FILE *f, const char *name, const Tensor *t) {
    if (!f) return;
    if (name) fprintf(f, "%s: ", name);
    if (!t) {
        fprintf(f, "NULL\n");
        return;
    }
    char s[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
    fprintf(f, "shape %s, strides %s, offset %lld, storage #%d (%lld float%s), view: %s, contiguous: %s\n",
            shape_format(t->shape, t->rank, s, sizeof s), shape_format(t->strides, t->rank, st, sizeof st),
            (long long)t->offset, t->storage->id, (long long)t->storage->size, t->storage->size == 1 ? "" : "s",
            t->is_view ? "yes" : "no", tensor_is_contiguous(t) ? "yes" : "no");
}

void tensor_describe(const char *name, const Tensor *t) { tensor_fdescribe(stdout, name, t); }
