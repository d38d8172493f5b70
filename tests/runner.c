/*
 * runner.c - the program a student's functions run in when they are graded (runner.h). It is
 * linked from the student's exercises.c, the lesson's test_calls.c and the course's library,
 * and started by the judge inside the sandbox (tests/sandbox.c), with the judge's calls on
 * descriptor 3 and its replies on descriptor 4. It decides nothing: whatever it sends back is
 * only what the student's code computed, and the judge checks it.
 */
#define _POSIX_C_SOURCE 200809L
#include "runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exercise.h"
#include "wire.h"

enum { CALLS_IN = 3, REPLIES_OUT = 4, MAX_HANDLES = 256 };

/* Under SANITIZE=1 the runner is built with the sanitizers; its environment is empty in the
 * sandbox, so their options are compiled in: a report exits with 87, which the judge calls a
 * memory error. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void) { return "exitcode=87:detect_leaks=0:abort_on_error=0:disable_coredump=0"; }
const char *__ubsan_default_options(void) { return "exitcode=87:halt_on_error=1:print_stacktrace=1"; }

static void die(const char *what) {
    fprintf(stderr, "runner: %s\n", what);
    _exit(70);
}

/* ---- writing a reply -------------------------------------------------------------------- */

typedef struct {
    unsigned char *data;
    size_t used, size;
} Buffer;

static void put(Buffer *b, const void *p, size_t n) {
    if (b->used + n > b->size) {
        size_t size = b->size ? b->size : 4096;
        while (size < b->used + n) size *= 2;
        unsigned char *grown = realloc(b->data, size);
        if (!grown) die("out of memory for a reply");
        b->data = grown, b->size = size;
    }
    if (n) memcpy(b->data + b->used, p, n);
    b->used += n;
}
static void put_u8(Buffer *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(Buffer *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(Buffer *b, int32_t v) { put(b, &v, 4); }
static void put_u64(Buffer *b, uint64_t v) { put(b, &v, 8); }
static void put_name(Buffer *b, const char *s) {
    size_t n = s ? strnlen(s, WIRE_MAX_NAME - 1) : 0;
    put_u8(b, (uint8_t)n);
    put(b, s, n);
}

static void write_all(int fd, const void *p, size_t n) {
    const unsigned char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(71); /* the judge has gone */
        c += w, n -= (size_t)w;
    }
}

static void send_message(uint32_t kind, const Buffer *b) {
    WireHeader h = {kind, (uint32_t)b->used};
    if (b->used > WIRE_MAX_MESSAGE) die("a reply too large to send");
    write_all(REPLIES_OUT, &h, sizeof h);
    write_all(REPLIES_OUT, b->data, b->used);
}

/* ---- reading a call --------------------------------------------------------------------- */

typedef struct {
    uint32_t type, returned;
    uint64_t count, offset;
    void *buffer; /* of its own: what arrived, sent back if returned */
    void *data;   /* the argument: where in the buffer the judge's pointer was */
    Tensor *tensor;
    int64_t value_i64;
    int value_int;
    float value_float;
} Arg;

struct Served {
    Arg args[WIRE_MAX_ARGS];
    int n_args;
    uint32_t ret;
    int64_t ret_int;
    Tensor *ret_tensor;
};

static Ctx *ctx; /* every tensor the runner makes, for as long as it runs */

typedef struct {
    Tensor *result;
    Tensor *args[WIRE_MAX_ARGS];
    int n_args;
} Handle;
static Handle handles[MAX_HANDLES];
static int n_handles;

static bool read_all(int fd, void *p, size_t n) {
    unsigned char *c = p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        c += r, n -= (size_t)r;
    }
    return true;
}

typedef struct {
    const unsigned char *p, *end;
} Reader;

static const void *take(Reader *r, size_t n) {
    if ((size_t)(r->end - r->p) < n) die("a call from the judge is cut short");
    const void *at = r->p;
    r->p += n;
    return at;
}
static uint32_t take_u32(Reader *r) {
    uint32_t v;
    memcpy(&v, take(r, 4), 4);
    return v;
}
static uint64_t take_u64(Reader *r) {
    uint64_t v;
    memcpy(&v, take(r, 8), 8);
    return v;
}

static size_t element_size(uint32_t type) {
    switch (type) {
    case ARG_INT:
    case ARG_INTS: return sizeof(int);
    case ARG_I64:
    case ARG_I64S: return sizeof(int64_t);
    case ARG_FLOAT:
    case ARG_FLOATS:
    case ARG_TENSOR: return sizeof(float);
    case ARG_BYTES: return 1;
    default: return 0;
    }
}

/* The tensor the judge sent: a leaf with the judge's view of a copy of its storage. */
static Tensor *view_of(float *storage, int64_t size, const int64_t *shape, const int64_t *strides, int rank,
                       int64_t offset) {
    int64_t low = offset, high = offset;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0) die("a tensor of a negative size");
        if (shape[d] == 0) low = 0, high = -1;
    }
    for (int d = 0; d < rank && high >= low; d++) {
        int64_t reach = (shape[d] - 1) * strides[d];
        if (reach > 0) high += reach;
        else low += reach;
    }
    if (high >= low && (low < 0 || high >= size)) die("a tensor whose view leaves its storage");
    Tensor *t = tensor_from(ctx, (int64_t[]){size}, 1, storage, size);
    if (!t) die("a tensor the library would not make");
    t->rank = rank, t->offset = offset;
    memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
    memcpy(t->strides, strides, (size_t)rank * sizeof *strides);
    return t;
}

static void read_arg(Reader *r, Arg *a) {
    a->type = take_u32(r);
    a->returned = take_u32(r);
    a->count = take_u64(r);
    a->offset = take_u64(r);
    if (a->type != ARG_NULL && a->type != ARG_TENSOR && a->offset > a->count) die("an argument outside its buffer");
    if (a->type == ARG_TENSOR) {
        uint32_t rank = take_u32(r), requires_grad = take_u32(r);
        if (rank > TENSOR_MAX_RANK) die("a tensor of too high a rank");
        int64_t shape[TENSOR_MAX_RANK], strides[TENSOR_MAX_RANK];
        memcpy(shape, take(r, rank * sizeof(int64_t)), rank * sizeof(int64_t));
        memcpy(strides, take(r, rank * sizeof(int64_t)), rank * sizeof(int64_t));
        if (a->count > (uint64_t)INT64_MAX / sizeof(float)) die("a tensor too large");
        const void *values = take(r, a->count * sizeof(float));
        float *copy = malloc(a->count * sizeof(float) + 1);
        if (!copy) die("out of memory for a tensor");
        memcpy(copy, values, a->count * sizeof(float));
        a->tensor = view_of(copy, (int64_t)a->count, shape, strides, (int)rank, (int64_t)a->offset);
        free(copy);
        if (requires_grad) tensor_requires_grad(a->tensor);
        return;
    }
    size_t size = element_size(a->type);
    if (a->type != ARG_NULL && size == 0) die("an argument of an unknown type");
    size_t bytes = (size_t)a->count * size;
    const void *data = take(r, bytes);
    if (a->type == ARG_INT) memcpy(&a->value_int, data, sizeof(int));
    else if (a->type == ARG_I64) memcpy(&a->value_i64, data, sizeof(int64_t));
    else if (a->type == ARG_FLOAT) memcpy(&a->value_float, data, sizeof(float));
    else if (a->type != ARG_NULL) {
        /* a buffer of exactly the judge's size: a write past it is the sanitizers' to see */
        a->buffer = malloc(bytes ? bytes : 1);
        if (!a->buffer) die("out of memory for an argument");
        memcpy(a->buffer, data, bytes);
        a->data = (unsigned char *)a->buffer + (size_t)a->offset * size;
    }
}

static Arg *arg_of(Served *s, int i, uint32_t type) {
    if (i < 0 || i >= s->n_args) die("a test_calls.c server asked for an argument the judge did not send");
    Arg *a = &s->args[i];
    if (a->type != type && a->type != ARG_NULL) die("a test_calls.c server asked for an argument of another type");
    return a;
}

int served_int(Served *s, int i) { return arg_of(s, i, ARG_INT)->value_int; }
int64_t served_i64(Served *s, int i) { return arg_of(s, i, ARG_I64)->value_i64; }
float served_float(Served *s, int i) { return arg_of(s, i, ARG_FLOAT)->value_float; }
int *served_ints(Served *s, int i) { return arg_of(s, i, ARG_INTS)->data; }
int64_t *served_i64s(Served *s, int i) { return arg_of(s, i, ARG_I64S)->data; }
float *served_floats(Served *s, int i) { return arg_of(s, i, ARG_FLOATS)->data; }
void *served_bytes(Served *s, int i) { return arg_of(s, i, ARG_BYTES)->data; }
Tensor *served_tensor(Served *s, int i) { return arg_of(s, i, ARG_TENSOR)->tensor; }
void served_return_int(Served *s, int64_t value) { s->ret = RET_INT, s->ret_int = value; }
void served_return_tensor(Served *s, Tensor *t) {
    s->ret = t ? RET_TENSOR : RET_NULL_TENSOR;
    s->ret_tensor = t;
}

static void put_error(Buffer *b) {
    const char *e = tensor_error();
    size_t n = e ? strnlen(e, WIRE_MAX_ERROR) : 0;
    put_u32(b, (uint32_t)n);
    put(b, e, n);
}

/* The tensor's graph, from the result through its inputs, breadth first. */
static void put_graph(Buffer *b, Served *s, Tensor *root) {
    Handle *h = n_handles < MAX_HANDLES ? &handles[n_handles] : NULL;
    if (!h) die("too many tensors returned in one test");
    h->result = root;
    h->n_args = 0;
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type == ARG_TENSOR) h->args[h->n_args++] = s->args[i].tensor;
    put_u32(b, (uint32_t)n_handles++);
    Tensor *nodes[WIRE_MAX_NODES];
    int n = 0;
    nodes[n++] = root;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < nodes[k]->n_inputs && j < TENSOR_MAX_INPUTS; j++) {
            Tensor *in = nodes[k]->inputs[j];
            bool seen = false;
            for (int m = 0; m < n; m++) seen = seen || nodes[m] == in;
            if (!seen && in && n < WIRE_MAX_NODES) nodes[n++] = in;
        }
    put_u32(b, (uint32_t)n);
    for (int k = 0; k < n; k++) {
        Tensor *t = nodes[k];
        put_name(b, t->op);
        int rank = t->rank >= 0 && t->rank <= TENSOR_MAX_RANK ? t->rank : 0;
        put_u32(b, (uint32_t)rank);
        put(b, t->shape, (size_t)rank * sizeof(int64_t));
        put_u8(b, t->requires_grad ? 1 : 0);
        int32_t arg = -1;
        for (int i = 0; i < s->n_args; i++)
            if (s->args[i].type == ARG_TENSOR && s->args[i].tensor == t) arg = i;
        put_i32(b, arg);
        uint32_t inputs[TENSOR_MAX_INPUTS], n_in = 0;
        for (int j = 0; j < t->n_inputs && j < TENSOR_MAX_INPUTS; j++)
            for (int m = 0; m < n; m++)
                if (nodes[m] == t->inputs[j]) {
                    inputs[n_in++] = (uint32_t)m;
                    break;
                }
        put_u32(b, n_in);
        put(b, inputs, n_in * sizeof(uint32_t));
    }
    int64_t count = tensor_numel(root);
    float *values = malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
    if (!values || tensor_to_array(root, values, count) != count) die("cannot read the result's values");
    put_u64(b, (uint64_t)count);
    put(b, values, (size_t)count * sizeof(float));
    free(values);
}

static void serve_call(Reader *r) {
    uint8_t id_length = *(const uint8_t *)take(r, 1);
    char id[WIRE_MAX_NAME];
    memcpy(id, take(r, id_length), id_length);
    id[id_length < WIRE_MAX_NAME ? id_length : WIRE_MAX_NAME - 1] = '\0';
    Served *s = calloc(1, sizeof *s);
    if (!s) die("out of memory for a call");
    s->n_args = (int)take_u32(r);
    if (s->n_args > WIRE_MAX_ARGS) die("a call with too many arguments");
    for (int i = 0; i < s->n_args; i++) read_arg(r, &s->args[i]);
    const RunnerCall *call = runner_calls;
    while (call->id && strcmp(call->id, id) != 0) call++;
    if (!call->id) die("a call to an exercise this runner does not know");
    tensor_clear_error();
    call->serve(s);
    Buffer b = {0};
    for (int i = 0; i < s->n_args; i++) {
        Arg *a = &s->args[i];
        if (!a->returned || a->type == ARG_NULL) continue;
        put_u64(&b, a->count);
        if (a->type == ARG_TENSOR) die("a tensor argument marked to be sent back"); /* the judge never asks */
        put(&b, a->buffer, (size_t)a->count * element_size(a->type));
    }
    put_u32(&b, s->ret);
    if (s->ret == RET_INT) put_u64(&b, (uint64_t)s->ret_int);
    if (s->ret == RET_TENSOR) put_graph(&b, s, s->ret_tensor);
    put_error(&b);
    send_message(WIRE_RESULT, &b);
    free(b.data);
    for (int i = 0; i < s->n_args; i++) free(s->args[i].buffer);
    free(s);
}

static void serve_backward(Reader *r) {
    uint32_t handle = take_u32(r);
    uint64_t count = take_u64(r);
    if (handle >= (uint32_t)n_handles) die("a backward of a tensor this runner never returned");
    Handle *h = &handles[handle];
    if ((int64_t)count != tensor_numel(h->result)) die("an upstream gradient of the wrong size");
    float *upstream = malloc(count * sizeof(float) + 1);
    if (!upstream) die("out of memory for a gradient");
    memcpy(upstream, take(r, count * sizeof(float)), count * sizeof(float));
    Tensor *u = tensor_from(ctx, h->result->shape, h->result->rank, upstream, (int64_t)count);
    free(upstream);
    for (int i = 0; i < h->n_args; i++) tensor_zero_grad(h->args[i]); /* the judge adds what comes back */
    tensor_clear_error();
    int status = u ? tensor_backward_from(h->result, u) : -1;
    Buffer b = {0};
    uint32_t n = 0;
    for (int i = 0; i < h->n_args; i++) n += h->args[i]->requires_grad;
    put_u32(&b, status == 0 ? n : 0);
    for (int i = 0; i < h->n_args && status == 0; i++) {
        if (!h->args[i]->requires_grad) continue;
        Tensor *g = tensor_grad(h->args[i]);
        int64_t m = tensor_numel(h->args[i]);
        put_u64(&b, (uint64_t)m);
        put(&b, g ? tensor_data(g) : NULL, g ? (size_t)m * sizeof(float) : 0);
        if (!g) die("no gradient for an input that requires one");
    }
    if (status != 0 && !tensor_error()) tensor_set_error("backward failed");
    put_error(&b);
    send_message(WIRE_GRADS, &b);
    free(b.data);
}

void exercise_todo(const char *function) {
    Buffer b = {0};
    put_name(&b, function);
    send_message(WIRE_TODO, &b);
    _exit(0);
}

int main(void) {
    ctx = ctx_new();
    if (!ctx) die("out of memory");
    for (;;) {
        WireHeader h;
        if (!read_all(CALLS_IN, &h, sizeof h)) return 0; /* the judge is done with this test */
        if (h.length > WIRE_MAX_MESSAGE) die("a call too large");
        unsigned char *payload = malloc(h.length ? h.length : 1);
        if (!payload) die("out of memory for a call");
        if (!read_all(CALLS_IN, payload, h.length)) return 0;
        Reader r = {payload, payload + h.length};
        if (h.kind == WIRE_CALL) serve_call(&r);
        else if (h.kind == WIRE_BACKWARD) serve_backward(&r);
        else die("a message of an unknown kind");
        free(payload);
    }
}
