/*
 * tensor.c - the shared tensor core: the arena, errors, shapes, views and the strided loop.
 * tensor.h has each function's contract and docs/0-foundations.md the ideas. The tape
 * (reverse-mode autodiff) is in tape.c, printing in print.c; the fast kernels that
 * strided_copy and strided_accumulate hand their work to, through the table (kernels.h), in
 * tensor_fast.c.
 */
#include "tensor.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "tensor_internal.h"

/* ==== the context (arena) =============================================================== */

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

/* A block of zeroed memory, or (zeroed false) of whatever malloc hands out. A block that
 * ctx_reset let go of is used again when one is large enough, and not twice as large: a
 * training step asks for the same sizes as the step before, and malloc'ing them afresh costs
 * page faults (the kernel's zeroed pages) every step. */
static Block *block_new(Ctx *ctx, size_t capacity, bool zeroed) {
    Block **best = NULL;
    for (Block **b = &ctx->spare; *b; b = &(*b)->next)
        if ((*b)->allocated >= capacity && (*b)->allocated / 2 <= capacity &&
            (!best || (*b)->allocated < (*best)->allocated)) {
            best = b;
            if ((*b)->allocated == capacity) break; /* a step asks for what the step before did */
        }
    Block *block;
    if (best) {
        block = *best;
        *best = block->next;
        ASAN_UNPOISON_MEMORY_REGION(block->memory, capacity); /* a spare is poisoned; poisoned again below */
        if (zeroed) memset(block->memory, 0, capacity);
    } else {
        block = zeroed ? calloc(1, sizeof(Block) + capacity) : malloc(sizeof(Block) + capacity);
        if (!block) return NULL;
        block->allocated = capacity;
    }
    block->capacity = capacity;
    block->next = NULL;
    block->used = 0;
    block->serial = ctx->n_blocks++;
    ASAN_POISON_MEMORY_REGION(block->memory, block->allocated);
    return block;
}

static void blocks_free(Block *b) {
    while (b) {
        Block *next = b->next;
        ASAN_UNPOISON_MEMORY_REGION(b->memory, b->allocated);
        free(b);
        b = next;
    }
}

Ctx *ctx_new(void) {
    Ctx *ctx = calloc(1, sizeof(Ctx));
    if (!ctx) tensor_set_error("ctx_new: out of memory");
    return ctx;
}

void ctx_free(Ctx *ctx) {
    if (!ctx) return;
    blocks_free(ctx->blocks);
    blocks_free(ctx->spare);
    free(ctx);
}

/* ctx_alloc, except that with zeroed false a large allocation (a block of its own) is not
 * cleared: for a tensor whose every element its op is about to write. Clearing memory that was
 * used before costs as much as writing it once more (a small allocation comes from a block
 * that was cleared when it was made, and is never reused within its ctx: zeros either way). */
static void *arena_alloc(Ctx *ctx, size_t bytes, bool zeroed) {
    if (!ctx) return tensor_set_error("ctx_alloc: ctx is NULL"), NULL;
    if (bytes > SIZE_MAX - 2 * ALIGN - LINE - REDZONE - sizeof(Block))
        return tensor_set_error("ctx_alloc: %zu bytes is more than can be allocated", bytes), NULL;
    size_t size = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (size == 0) size = ALIGN; /* every allocation gets its own address */

    Block *head = ctx->blocks;
    if (!head || head->capacity - head->used < size + REDZONE) {
        if (size > BLOCK_SIZE / 4) {
            /* A large allocation gets a block of its own, linked behind the head (which keeps
             * serving small ones), its data on a 64-byte cache line: vector loads and stores
             * then never straddle two lines, and the fast copies can write whole lines. */
            Block *own = block_new(ctx, size + LINE, zeroed);
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
        Block *fresh = block_new(ctx, BLOCK_SIZE, true);
        if (!fresh) goto out_of_memory;
        fresh->next = head;
        ctx->blocks = head = fresh;
    }
    /* cppcheck-suppress nullPointerRedundantCheck ; head is the block just made when it was NULL */
    void *p = head->memory + head->used;
    /* cppcheck-suppress nullPointerRedundantCheck ; as above */
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

void ctx_mark(Ctx *ctx) {
    if (!ctx) return;
    ctx->mark.n_blocks = ctx->n_blocks;
    ctx->mark.head = ctx->blocks;
    ctx->mark.head_used = ctx->blocks ? ctx->blocks->used : 0;
    ctx->mark.bytes = ctx->bytes;
    ctx->mark.last_tensor = ctx->last_tensor;
    ctx->mark.n_tensors = ctx->n_tensors;
    ctx->mark.n_storages = ctx->n_storages;
}

void ctx_reset(Ctx *ctx) {
    if (!ctx) return;
    /* a tensor that lives on loses a gradient made after the mark: it is about to be freed */
    for (Tensor *t = ctx->mark.last_tensor ? ctx->first_tensor : NULL; t; t = t->next_in_ctx) {
        if (t->grad && t->grad->id > ctx->mark.n_tensors) t->grad = NULL;
        if (t == ctx->mark.last_tensor) break;
    }
    /* the blocks made after the mark become spares; the marked head serves small allocations again */
    Block *kept = NULL, **tail = &kept;
    for (Block *b = ctx->blocks, *next; b; b = next) {
        next = b->next;
        if (b->serial >= ctx->mark.n_blocks) {
            ASAN_POISON_MEMORY_REGION(b->memory, b->allocated);
            b->next = ctx->spare;
            ctx->spare = b;
        } else if (b != ctx->mark.head) {
            *tail = b;
            tail = &b->next;
        }
    }
    *tail = NULL;
    Block *head = ctx->mark.head;
    if (head) {
        /* what it handed out since the mark is zeroed again: small allocations count on it */
        ASAN_UNPOISON_MEMORY_REGION(head->memory + ctx->mark.head_used, head->used - ctx->mark.head_used);
        memset(head->memory + ctx->mark.head_used, 0, head->used - ctx->mark.head_used);
        ASAN_POISON_MEMORY_REGION(head->memory + ctx->mark.head_used, head->capacity - ctx->mark.head_used);
        head->used = ctx->mark.head_used;
        head->next = kept;
        kept = head;
    }
    ctx->blocks = kept;
    ctx->n_blocks = ctx->mark.n_blocks;
    ctx->bytes = ctx->mark.bytes;
    ctx->n_tensors = ctx->mark.n_tensors;
    ctx->n_storages = ctx->mark.n_storages;
    ctx->last_tensor = ctx->mark.last_tensor;
    if (ctx->last_tensor) ctx->last_tensor->next_in_ctx = NULL;
    else ctx->first_tensor = NULL;
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

bool tensor_error_as(const char *op, const char *fmt, ...) {
    char rest[sizeof error_message]; /* the message after its "name: " */
    const char *colon = error_recorded ? strstr(error_message, ": ") : NULL;
    snprintf(rest, sizeof rest, "%s", colon ? colon + 2 : error_recorded ? error_message : "failed");
    size_t used = strlen(rest);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rest + used, sizeof rest - used, fmt, ap);
        va_end(ap);
    }
    tensor_set_error("%s: %s", op, rest);
    return false;
}

bool rank_is_valid(const char *op, int rank) {
    if (rank >= 0 && rank <= TENSOR_MAX_RANK) return true;
    return tensor_set_error("%s: rank %d is outside 0..%d (TENSOR_MAX_RANK)", op, rank, TENSOR_MAX_RANK), false;
}

bool axis_normalize(const char *op, int axis, int rank, int *out) {
    if (!out) return tensor_set_error("%s: out is NULL for axis %d", op, axis), false;
    int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        return tensor_set_error("%s: axis %d is out of bounds for array of dimension %d", op, axis, rank), false;
    *out = a;
    return true;
}

bool contexts_match(const char *op, const Tensor *a, const Tensor *b, const char *what) {
    if (!a || !b) return tensor_null_input(op, !a ? "a" : "b");
    if (a->ctx == b->ctx) return true;
    return tensor_set_error("%s: %s belong to different contexts", op, what), false;
}

/* The i-th of INPUTS' names, "x, gamma, beta", into buf */
static const char *nth_name(const char *names, int i, char *buf, size_t size) {
    while (names && i-- > 0 && (names = strchr(names, ','))) names++;
    names = names ? names + strspn(names, " ") : "";
    snprintf(buf, size, "%.*s", (int)strcspn(names, ", "), names);
    return buf;
}

bool inputs_valid(const char *op, const char *names, const Tensor *const *inputs, int n) {
    char name[64], first[64], both[sizeof first + sizeof name + 8];
    for (int i = 0; i < n; i++)
        if (!inputs || !inputs[i]) return tensor_null_input(op, nth_name(names, i, name, sizeof name));
    for (int i = 1; i < n; i++) {
        snprintf(both, sizeof both, "%s and %s", nth_name(names, 0, first, sizeof first),
                 nth_name(names, i, name, sizeof name));
        if (!contexts_match(op, inputs[0], inputs[i], both)) return false;
    }
    return true;
}

bool shape_is(const char *op, const char *name, const Tensor *t, const char *letters, const int64_t *want, int rank,
              const char *of_name, const Tensor *of) {
    if (!t) return tensor_null_input(op, name);
    if (shape_equal(t->shape, t->rank, want, rank)) return true;
    char w[SHAPE_STR_MAX], o[SHAPE_STR_MAX], g[SHAPE_STR_MAX], from[SHAPE_STR_MAX + 80] = "";
    if (of) snprintf(from, sizeof from, " for %.64s %s", of_name, shape_format(of->shape, of->rank, o, sizeof o));
    return tensor_set_error("%s: %s must be %s = %s%s, got %s", op, name, letters,
                            shape_format(want, rank, w, sizeof w), from, shape_format(t->shape, t->rank, g, sizeof g)),
           false;
}

/* ==== shapes ============================================================================ */

/* For the functions that take plain arrays: false, with "<op>: ..." recorded, for a rank
 * outside 0..TENSOR_MAX_RANK, or a NULL array (a or b) where the rank means it is read. */
static bool arrays_valid(const char *op, int rank, const void *a, const void *b, const char *names) {
    if (!rank_is_valid(op, rank)) return false;
    if (rank > 0 && (!a || !b)) return tensor_set_error("%s: %s must not be NULL for rank %d", op, names, rank), false;
    return true;
}

int64_t shape_numel(const int64_t *shape, int rank) {
    /* The product of the non-zero dims must fit too, whatever the order of the dims: (0,2^40,2^40)
     * is refused like (2^40,2^40,0), since its row-major strides would overflow. */
    if (rank < 0 || rank > TENSOR_MAX_RANK || (rank > 0 && !shape)) return -1; /* not a shape */
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
    if (!arrays_valid("contiguous_strides", rank, shape, strides, "shape and strides")) return;
    /* a dim of 0 counts as 1, as in numpy and PyTorch: (2,0,3) has strides (3,3,1) */
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = stride;
        stride *= shape[d] > 0 ? shape[d] : 1;
    }
}

void unravel_index(int64_t flat, const int64_t *shape, int rank, int64_t *index) {
    if (!arrays_valid("unravel_index", rank, shape, index, "shape and index")) return;
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
    if (!arrays_valid("shape_equal", a_rank, a, a, "shape a") || !arrays_valid("shape_equal", b_rank, b, b, "shape b"))
        return false;
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
    if (!rank_is_valid(op, rank)) return false;
    if (rank > 0 && !shape) return tensor_set_error("%s: shape is NULL for rank %d", op, rank), false;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0)
            return tensor_set_error("%s: negative dimensions are not allowed, got shape %s", op,
                                    shape_format(shape, rank, s, sizeof s)),
                   false;
    }
    return true;
}

/* The element count of a valid shape whose floats fit in memory; -1 with an error otherwise. */
static int64_t checked_numel(const char *op, const int64_t *shape, int rank) {
    if (!shape_is_valid(op, shape, rank)) return -1;
    int64_t n = shape_numel(shape, rank);
    char s[SHAPE_STR_MAX];
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(float) / 2)
        return tensor_set_error("%s: shape %s has too many elements", op, shape_format(shape, rank, s, sizeof s)), -1;
    return n;
}

static Tensor *tensor_for(const char *op, Ctx *ctx, const int64_t *shape, int rank, bool zeroed) {
    if (!ctx) return tensor_set_error("%s: ctx is NULL", op), NULL;
    int64_t n = checked_numel(op, shape, rank);
    if (n < 0) return NULL;
    /* the floats first: if they do not fit, nothing half-made is left in ctx */
    float *data = arena_alloc(ctx, (size_t)n * sizeof(float), zeroed);
    char s[SHAPE_STR_MAX];
    if (!data)
        return tensor_set_error("%s: cannot allocate %lld bytes for shape %s", op,
                                (long long)n * (long long)sizeof(float), shape_format(shape, rank, s, sizeof s)),
               NULL;
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
    if (!ctx) return tensor_set_error("tensor_from: ctx is NULL"), NULL;
    int64_t size = checked_numel("tensor_from", shape, rank); /* checked before allocating anything */
    if (size < 0) return NULL;
    char s[SHAPE_STR_MAX];
    if (n != size)
        return tensor_set_error("tensor_from: %lld values given for shape %s, which holds %lld", (long long)n,
                                shape_format(shape, rank, s, sizeof s), (long long)size),
               NULL;
    if (n > 0 && !values) return tensor_set_error("tensor_from: values is NULL"), NULL;
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

Tensor *tensor_as_strided(Tensor *x, const int64_t *shape, int rank, const int64_t *strides, int64_t offset) {
    if (!x) return tensor_null_input("as_strided", "x"), NULL;
    if (!shape_is_valid("as_strided", shape, rank)) return NULL;
    int64_t n = shape_numel(shape, rank); /* a view allocates nothing: only int64 limits its count */
    char s[SHAPE_STR_MAX];
    if (n < 0)
        return tensor_set_error("as_strided: shape %s has too many elements", shape_format(shape, rank, s, sizeof s)),
               NULL;
    if (rank > 0 && !strides) return tensor_set_error("as_strided: strides is NULL for rank %d", rank), NULL;
    /* The lowest and highest offsets the view can reach must lie inside the storage. */
    int64_t size = x->storage->size, lo, hi;
    bool inside = offset >= 0 && (n == 0 || (strides_span(rank, shape, strides, &lo, &hi) && offset < size &&
                                             lo >= -offset && hi < size - offset));
    char st[SHAPE_STR_MAX];
    if (!inside)
        return tensor_set_error("as_strided: a view with shape %s, strides %s and offset %lld reaches outside "
                                "storage #%d of %lld floats",
                                shape_format(shape, rank, s, sizeof s), shape_format(strides, rank, st, sizeof st),
                                (long long)offset, x->storage->id, (long long)size),
               NULL;
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

bool strides_are_contiguous(const int64_t *shape, int rank, const int64_t *strides) {
    int64_t expected = 1;
    for (int d = rank - 1; d >= 0; d--) {
        if (shape[d] == 0) return true;
        if (shape[d] != 1 && strides[d] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

bool tensor_is_contiguous(const Tensor *t) { return t && strides_are_contiguous(t->shape, t->rank, t->strides); }

float *tensor_data(const Tensor *t) { return t ? t->storage->data + t->offset : NULL; }

/* ==== strided loops ===================================================================== */

/* The arguments of both walks below: a valid rank and count of operands, and no NULL array. */
static bool walk_args_valid(const char *op, int rank, const int64_t *shape, int n_operands,
                            const int64_t *const *strides) {
    if (!rank_is_valid(op, rank)) return false;
    if (n_operands < 0 || n_operands > NDITER_MAX_OPERANDS)
        return tensor_set_error("%s: %d operands, outside 0..%d (NDITER_MAX_OPERANDS)", op, n_operands,
                                NDITER_MAX_OPERANDS),
               false;
    bool null = rank > 0 && (!shape || (n_operands > 0 && !strides));
    for (int k = 0; k < n_operands && rank > 0 && !null; k++) null = !strides[k];
    if (null) tensor_set_error("%s: a shape or strides array is NULL for rank %d", op, rank);
    return !null;
}

void nditer_init(NdIter *it, int rank, const int64_t *shape, int n_operands, const int64_t *const *strides) {
    if (!it) return (void)tensor_set_error("nditer_init: it is NULL");
    memset(it, 0, sizeof *it); /* remaining 0: an iterator that fails to start visits nothing */
    if (!walk_args_valid("nditer_init", rank, shape, n_operands, strides)) return;
    char s[SHAPE_STR_MAX];
    if (shape_numel(shape, rank) < 0)
        return (void)tensor_set_error("nditer_init: shape %s has a negative dim or too many elements",
                                      shape_format(shape, rank, s, sizeof s));
    it->remaining = shape_numel(shape, rank);
    if (it->remaining == 0) return;
    it->rank = rank;
    it->n_operands = n_operands;
    for (int d = 0; d < rank; d++) it->shape[d] = shape[d];
    /* a dim of size 1 never moves: its stride, which may be anything, is never added */
    for (int k = 0; k < n_operands; k++)
        for (int d = 0; d < rank; d++) it->strides[k][d] = shape[d] == 1 ? 0 : strides[k][d];
}

bool nditer_next(NdIter *it) {
    if (!it) return tensor_set_error("nditer_next: it is NULL"), false;
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
    if (!it) return (void)tensor_set_error("nditer_init_rows: it is NULL");
    if (!x || x->rank == 0) {
        memset(it, 0, sizeof *it); /* nothing to visit */
        if (!x) tensor_null_input("nditer_init_rows", "x");
        else tensor_set_error("nditer_init_rows: a rank-0 tensor (a scalar) has no rows");
        return;
    }
    nditer_init(it, x->rank - 1, x->shape, 1, (const int64_t *[]){x->strides});
}

bool strides_span(int rank, const int64_t *shape, const int64_t *strides, int64_t *lo, int64_t *hi) {
    *lo = *hi = 0;
    for (int d = 0; d < rank; d++) {
        int64_t reach;
        if (shape[d] <= 1) continue; /* never moves (or is empty: reaches nothing) */
        if (__builtin_mul_overflow(shape[d] - 1, strides[d], &reach)) return false;
        if (__builtin_add_overflow(reach > 0 ? *hi : *lo, reach, reach > 0 ? hi : lo)) return false;
    }
    return true;
}

bool dims_merge(int64_t outer_size, int64_t outer_stride, int64_t inner_size, int64_t inner_stride) {
    int64_t run;
    if (outer_size == 1) return true;
    return !__builtin_mul_overflow(inner_size, inner_stride, &run) && outer_stride == run;
}

int merge_dims(int rank, const int64_t *shape, int n_operands, const int64_t *const *strides, int64_t *merged_shape,
               int64_t merged_strides[][TENSOR_MAX_RANK]) {
    if (!walk_args_valid("merge_dims", rank, shape, n_operands, strides)) return -1;
    if (rank > 0 && (!merged_shape || (n_operands > 0 && !merged_strides)))
        return tensor_set_error("merge_dims: a shape or strides array is NULL for rank %d", rank), -1;
    int64_t sizes[TENSOR_MAX_RANK], steps[NDITER_MAX_OPERANDS][TENSOR_MAX_RANK]; /* innermost first */
    int m = 0;
    for (int d = rank - 1; d >= 0; d--) {
        if (shape[d] == 1) continue; /* never moves */
        bool joins = m > 0;
        for (int k = 0; k < n_operands && joins; k++)
            joins = dims_merge(shape[d], strides[k][d], sizes[m - 1], steps[k][m - 1]);
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

/* The checks of both loops below, before either path runs: a valid shape (rank 0..8, no
 * negative dim, a count that fits) and, unless it is empty, the four arrays. */
static bool strided_args_valid(const char *op, int rank, const int64_t *shape, const float *dst,
                               const int64_t *dst_strides, const float *src, const int64_t *src_strides) {
    char s[SHAPE_STR_MAX];
    if (!shape_is_valid(op, shape, rank)) return false;
    int64_t n = shape_numel(shape, rank);
    if (n < 0)
        return tensor_set_error("%s: shape %s has too many elements", op, shape_format(shape, rank, s, sizeof s)),
               false;
    if (n > 0 && (!dst || !src || (rank > 0 && (!dst_strides || !src_strides))))
        return tensor_set_error("%s: dst, src and their strides must not be NULL for shape %s", op,
                                shape_format(shape, rank, s, sizeof s)),
               false;
    return true;
}

/* The reference kernels: the odometer, one element at a time. The two ops below check their
 * arguments and hand the work to the table (kernels.h), whose fast kernels (tensor_fast.c)
 * walk the same pairs of elements in an order that follows memory. */
void strided_copy_reference(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                            const int64_t *src_strides) {
    NdIter it;
    nditer_init(&it, rank, shape, 2, (const int64_t *[]){dst_strides, src_strides});
    while (nditer_next(&it)) dst[it.offset[0]] = src[it.offset[1]];
}

void strided_accumulate_reference(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides,
                                  const float *src, const int64_t *src_strides) {
    NdIter it;
    nditer_init(&it, rank, shape, 2, (const int64_t *[]){dst_strides, src_strides});
    while (nditer_next(&it)) dst[it.offset[0]] += src[it.offset[1]];
}

void strided_copy(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                  const int64_t *src_strides) {
    if (strided_args_valid("strided_copy", rank, shape, dst, dst_strides, src, src_strides))
        kernels()->copy(rank, shape, dst, dst_strides, src, src_strides);
}

void strided_accumulate(int rank, const int64_t *shape, float *dst, const int64_t *dst_strides, const float *src,
                        const int64_t *src_strides) {
    if (strided_args_valid("strided_accumulate", rank, shape, dst, dst_strides, src, src_strides))
        kernels()->accumulate(rank, shape, dst, dst_strides, src, src_strides);
}

/* contiguous: forward copies, backward passes the gradient straight through (copied, if it is
 * the first to reach x: tensor_grads_begin). */
static void contiguous_backward(Tensor *out) {
    Tensor *x = out->inputs[0];
    int64_t strides[TENSOR_MAX_RANK];
    contiguous_strides(x->shape, x->rank, strides);
    float *gx;
    bool accumulate = tensor_grads_begin(1, &x, NULL, &gx);
    (accumulate ? strided_accumulate : strided_copy)(x->rank, x->shape, gx, strides, tensor_grad_data(out), strides);
}

Tensor *tensor_contiguous(Tensor *x) {
    if (!x) return tensor_null_input("contiguous", "x"), NULL;
    if (tensor_is_contiguous(x)) return x;
    Tensor *out = tensor_empty(x->ctx, x->shape, x->rank); /* every element is written below */
    if (!out) return NULL;
    strided_copy(x->rank, x->shape, tensor_data(out), out->strides, tensor_data(x), x->strides);
    return tensor_record(out, "contiguous", contiguous_backward, 1, &x);
}

/* ==== the core's entries of the table of kernels (kernels.h) =============================== */

KERNELS_LESSON(tensor, .copy = strided_copy_reference, .accumulate = strided_accumulate_reference)
