/*
 * remote.c - the judge's side of a graded call. See remote.h and wire.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "harness.h"

enum { EXIT_SANITIZER = 87, MAX_PLACEHOLDER = 1 << 22, STATUS_WAIT_MS = 2000 };

static struct {
    const char *runner, *sandbox, *profile;
    long long max_output, max_memory;
} config;

/* This process's runner: the sandbox program that runs it, and the three pipes. */
static struct {
    pid_t owner; /* the process that started it (a forked test must not use its parent's) */
    pid_t launcher;
    int calls, replies, status;
} runner = {0, 0, -1, -1, -1};

void remote_configure(const char *runner_path, const char *sandbox, const char *profile, long long max_output,
                      long long max_memory) {
    config.runner = runner_path, config.sandbox = sandbox, config.profile = profile;
    config.max_output = max_output, config.max_memory = max_memory;
}

bool remote_enabled(void) { return config.runner != NULL; }

/* ---- failing a test ------------------------------------------------------------------------ */

/* Fails the test with "[kind] message": the harness reads the kind (crashed, exited, output,
 * memory, timeout) off the front. In a probe, any failure means the student has started. */
static void fail_test(const char *kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
static void fail_test(const char *kind, const char *fmt, ...) {
    char message[1024];
    int n = snprintf(message, sizeof message, "[%s] ", kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
    va_end(ap);
    remote_shutdown();
    if (harness_probing()) _exit(1);
    ck_abort_msg("%s", message);
    _exit(1); /* not reached */
}

/* ---- the runner's process -------------------------------------------------------------------- */

static int high_dup(int fd) {
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (copy < 0) fail_test("crashed", "the grader could not start the student's program: %s", strerror(errno));
    close(fd);
    return copy;
}

static void start_runner(void) {
    if (runner.owner == getpid() && runner.launcher > 0) return;
    runner.owner = getpid(), runner.launcher = 0; /* a forked test's inherited runner is not its own */
    int calls[2], replies[2], status[2];
    if (pipe(calls) != 0 || pipe(replies) != 0 || pipe(status) != 0)
        fail_test("crashed", "the grader could not start the student's program: %s", strerror(errno));
    for (int i = 0; i < 2; i++)
        calls[i] = high_dup(calls[i]), replies[i] = high_dup(replies[i]), status[i] = high_dup(status[i]);
    signal(SIGPIPE, SIG_IGN); /* a runner that has died is noticed by the write's error, below */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_test("crashed", "the grader could not start the student's program: %s", strerror(errno));
    if (pid == 0) {
#ifdef __linux__ /* the grader runs on Linux only; elsewhere this file is built but never runs a runner */
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a test that ends, or is killed, takes its runner with it */
#endif
        if (dup2(calls[0], 3) < 0 || dup2(replies[1], 4) < 0 || dup2(status[1], 5) < 0) _exit(126);
        char output[32], memory[32], seconds[32];
        snprintf(output, sizeof output, "%lld", config.max_output);
        /* AddressSanitizer reserves terabytes of address space: no address-space limit there */
        snprintf(memory, sizeof memory, "%lld", strcmp(config.profile, "runner-asan") ? config.max_memory : 0);
        /* a backstop: the test's own limit comes first */
        snprintf(seconds, sizeof seconds, "%u", harness_test_seconds() + 5);
        /* clang-format off */
        char *argv[] = {(char *)config.sandbox, "run", "--profile", (char *)config.profile,
                        "--ro", (char *)config.runner, "--time", seconds, "--memory", memory, "--output", output,
                        "--keep-fd", "3", "--keep-fd", "4", "--status-fd", "5",
                        "--", (char *)config.runner, NULL};
        /* clang-format on */
        execv(config.sandbox, argv);
        _exit(126);
    }
    close(calls[0]), close(replies[1]), close(status[1]);
    runner.launcher = pid, runner.calls = calls[1], runner.replies = replies[0], runner.status = status[0];
}

void remote_shutdown(void) {
    if (runner.owner != getpid() || runner.launcher <= 0) return;
    /* SIGTERM first: the sandbox then sweeps every process of the run (under a uid of its own,
     * only it can); SIGKILL if it has not finished within a second */
    kill(runner.launcher, SIGTERM);
    bool gone = false;
    for (int tick = 0; tick < 100 && !gone; tick++) {
        pid_t r = waitpid(runner.launcher, NULL, WNOHANG);
        gone = r == runner.launcher || (r < 0 && errno != EINTR);
        if (!gone) nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (!gone) {
        kill(runner.launcher, SIGKILL);
        while (waitpid(runner.launcher, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    close(runner.calls), close(runner.replies), close(runner.status);
    runner.launcher = 0, runner.calls = runner.replies = runner.status = -1;
}

/* The runner stopped answering: why, from the sandbox's status line. Never returns. */
static void runner_gone(void) {
    close(runner.calls);
    runner.calls = -1;
    char line[128] = "";
    struct pollfd p = {runner.status, POLLIN, 0};
    size_t used = 0;
    while (used < sizeof line - 1 && poll(&p, 1, STATUS_WAIT_MS) > 0) {
        ssize_t got = read(runner.status, line + used, sizeof line - 1 - used);
        if (got <= 0) break;
        used += (size_t)got;
        line[used] = '\0';
        if (strchr(line, '\n')) break;
    }
    int code, sig;
    if (sscanf(line, "signal %d", &sig) == 1) {
        const char *name = strsignal(sig);
        if (sig == SIGABRT)
            fail_test("crashed",
                      "crashed: received signal %d (%s). abort() was called: an assert() failed, or the C library "
                      "found the heap corrupted (a write outside a malloc'd array, a pointer freed twice); the test's "
                      "output says which",
                      sig, name);
        char limit[96] = "";
        if (config.max_memory > 0 && strcmp(config.profile, "runner-asan") != 0)
            snprintf(limit, sizeof limit, " (malloc returns NULL once a test has %lld MB)", config.max_memory >> 20);
        fail_test("crashed",
                  "crashed: received signal %d (%s). A crash in an exercise is most often a read or a write outside "
                  "an array, or through a NULL pointer%s; make lessonN test SANITIZE=1 points at the line",
                  sig, name, limit);
    }
    if (sscanf(line, "exit %d", &code) == 1 && code == EXIT_SANITIZER && strcmp(config.profile, "runner-asan") == 0)
        fail_test("memory",
                  "a memory or undefined-behaviour error, found by the sanitizers (their report, in the test's "
                  "output, names the line)");
    if (sscanf(line, "exit %d", &code) == 1)
        fail_test("exited",
                  "stopped the test before it finished, exiting with status %d (a call to exit() or _exit()? "
                  "Under SANITIZE=1, a sanitizer report in the test's output says what went wrong)",
                  code);
    if (!strncmp(line, "output", 6))
        fail_test("output", "wrote more than %lld bytes of output and was stopped", config.max_output);
    if (!strncmp(line, "timeout", 7))
        fail_test("timeout", "did not finish within %u s (an endless loop?)", harness_test_seconds());
    if (!strncmp(line, "error", 5))
        fail_test("crashed", "the sandbox could not run the student's program: %.80s", line + 6);
    fail_test("crashed",
              "stopped answering the grader: the student's program closed the grader's pipe, or wrote to it");
}

static void write_all(const void *p, size_t n) {
    const unsigned char *c = p;
    while (n > 0) {
        ssize_t w = write(runner.calls, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) runner_gone();
        c += w, n -= (size_t)w;
    }
}

static void read_all(void *p, size_t n) {
    unsigned char *c = p;
    while (n > 0) {
        ssize_t r = read(runner.replies, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) runner_gone();
        c += r, n -= (size_t)r;
    }
}

/* ---- messages --------------------------------------------------------------------------------- */

typedef struct {
    unsigned char *data;
    size_t used, size;
} Buffer;

static void put(Buffer *b, const void *p, size_t n) {
    if (b->used + n > b->size) {
        size_t size = b->size ? b->size : 4096;
        while (size < b->used + n) size *= 2;
        unsigned char *grown = realloc(b->data, size);
        if (!grown) fail_test("crashed", "the grader ran out of memory for a call");
        b->data = grown, b->size = size;
    }
    if (n) memcpy(b->data + b->used, p, n);
    b->used += n;
}
static void put_u32(Buffer *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(Buffer *b, uint64_t v) { put(b, &v, 8); }

static void send_message(uint32_t kind, Buffer *b) {
    if (b->used > WIRE_MAX_MESSAGE) fail_test("crashed", "the grader's call is too large to send (%zu bytes)", b->used);
    WireHeader h = {kind, (uint32_t)b->used};
    write_all(&h, sizeof h);
    write_all(b->data, b->used);
    free(b->data);
    b->data = NULL, b->used = b->size = 0;
}

/* A reply, read whole; everything in it is the student's program's to forge, so every read
 * from it is checked. */
typedef struct {
    unsigned char *data;
    const unsigned char *p, *end;
    uint32_t kind;
} Reply;

static void bad_reply(void) {
    fail_test("crashed", "sent the grader a reply it cannot read (did the code write to descriptor 4?)");
}

static Reply receive(void) {
    WireHeader h;
    read_all(&h, sizeof h);
    if ((h.kind != WIRE_RESULT && h.kind != WIRE_GRADS && h.kind != WIRE_TODO) || h.length > WIRE_MAX_MESSAGE)
        bad_reply();
    Reply r = {malloc(h.length ? h.length : 1), NULL, NULL, h.kind};
    if (!r.data) fail_test("crashed", "the grader ran out of memory for a reply");
    read_all(r.data, h.length);
    r.p = r.data, r.end = r.data + h.length;
    return r;
}

static const void *take(Reply *r, size_t n) {
    if ((size_t)(r->end - r->p) < n) bad_reply();
    const void *at = r->p;
    r->p += n;
    return at;
}
static uint8_t take_u8(Reply *r) { return *(const uint8_t *)take(r, 1); }
static uint32_t take_u32(Reply *r) {
    uint32_t v;
    memcpy(&v, take(r, 4), 4);
    return v;
}
static uint64_t take_u64(Reply *r) {
    uint64_t v;
    memcpy(&v, take(r, 8), 8);
    return v;
}
/* A name of at most WIRE_MAX_NAME - 1 bytes, its unprintable bytes as '?'. */
static void take_name(Reply *r, char *out) {
    uint8_t n = take_u8(r);
    if (n >= WIRE_MAX_NAME) bad_reply();
    memcpy(out, take(r, n), n);
    out[n] = '\0';
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 32 || (unsigned char)*c == 127) *c = '?';
}

/* A message the student's code recorded (tensor_error() in the runner, cleared before each
 * call) becomes tensor_error() here, as if the call had run in this process. */
static void take_error(Reply *r) {
    uint32_t n = take_u32(r);
    if (n > WIRE_MAX_ERROR) bad_reply();
    char message[WIRE_MAX_ERROR + 1];
    memcpy(message, take(r, n), n);
    message[n] = '\0';
    for (char *c = message; *c; c++)
        if ((unsigned char)*c < 32 && *c != '\n') *c = '?';
    if (n > 0) tensor_set_error("%s", message);
}

static void done_reading(Reply *r) {
    if (r->p != r->end) bad_reply();
    free(r->data);
}

/* A TODO reply: the student's code reached EXERCISE_TODO(). The harness decides what that
 * means (TODO in a probe of that exercise, a failure in a test). */
static void todo_reached(Reply *r) {
    char function[WIRE_MAX_NAME];
    take_name(r, function);
    free(r->data);
    remote_shutdown();
    exercise_todo(function);
    fail_test("crashed", "reached EXERCISE_TODO()"); /* exercise_todo does not return */
}

/* ---- building a call -------------------------------------------------------------------------- */

void remote_begin(RemoteCall *c, const char *exercise_id) {
    memset(c, 0, sizeof *c);
    c->id = exercise_id;
}

static RemoteArg *next_arg(RemoteCall *c) {
    if (c->n_args >= WIRE_MAX_ARGS)
        ck_abort_msg("test_calls.c: more than %d arguments in exercise %s", WIRE_MAX_ARGS, c->id);
    return &c->args[c->n_args++];
}

void remote_int(RemoteCall *c, int value) {
    RemoteArg *a = next_arg(c);
    a->type = ARG_INT, a->count = 1, a->value.i = value, a->data = &a->value.i;
}
void remote_i64(RemoteCall *c, int64_t value) {
    RemoteArg *a = next_arg(c);
    a->type = ARG_I64, a->count = 1, a->value.i64 = value, a->data = &a->value.i64;
}
void remote_float(RemoteCall *c, float value) {
    RemoteArg *a = next_arg(c);
    a->type = ARG_FLOAT, a->count = 1, a->value.f = value, a->data = &a->value.f;
}

static void array(RemoteCall *c, uint32_t type, size_t size, const void *p, void *back, int64_t n) {
    RemoteArg *a = next_arg(c);
    if (!p) {
        a->type = ARG_NULL;
        return;
    }
    if (n < 0) n = 0;
    a->type = type;
    a->count = (uint64_t)n, a->offset = 0, a->data = p, a->back = back;
    const void *base;
    size_t bytes;
    /* in a marked buffer: the whole buffer goes, guard regions and neighbours included */
    if (guard_region(p, (size_t)n * size, &base, &bytes) && ((uintptr_t)p - (uintptr_t)base) % size == 0) {
        a->offset = (uint64_t)(((uintptr_t)p - (uintptr_t)base) / size), a->count = bytes / size;
        a->data = base, a->back = back ? (void *)(uintptr_t)base : NULL;
    }
    a->returned = back != NULL;
}

void remote_ints(RemoteCall *c, const int *p, int64_t n) { array(c, ARG_INTS, sizeof *p, p, NULL, n); }
void remote_ints_back(RemoteCall *c, int *p, int64_t n) { array(c, ARG_INTS, sizeof *p, p, p, n); }
void remote_i64s(RemoteCall *c, const int64_t *p, int64_t n) { array(c, ARG_I64S, sizeof *p, p, NULL, n); }
void remote_i64s_back(RemoteCall *c, int64_t *p, int64_t n) { array(c, ARG_I64S, sizeof *p, p, p, n); }
void remote_floats(RemoteCall *c, const float *p, int64_t n) { array(c, ARG_FLOATS, sizeof *p, p, NULL, n); }
void remote_floats_back(RemoteCall *c, float *p, int64_t n) { array(c, ARG_FLOATS, sizeof *p, p, p, n); }
void remote_bytes_back(RemoteCall *c, void *p, size_t n) { array(c, ARG_BYTES, 1, p, p, (int64_t)n); }

void remote_tensor(RemoteCall *c, Tensor *t) {
    RemoteArg *a = next_arg(c);
    if (!t) {
        a->type = ARG_NULL;
        return;
    }
    /* one way only: what the student's code leaves in an input never reaches the judge's tensors,
     * from which the tests compute what they expect */
    a->type = ARG_TENSOR, a->tensor = t, a->count = (uint64_t)t->storage->size, a->offset = (uint64_t)t->offset;
    a->data = t->storage->data, a->back = NULL, a->returned = false;
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

/* Sends the call and reads its reply up to the return value; copies back what was returned. */
static Reply call(RemoteCall *c) {
    if (!remote_enabled()) ck_abort_msg("test_calls.c: exercise %s's stand-in was called outside the grader", c->id);
    start_runner();
    Buffer b = {0};
    size_t id_length = strlen(c->id);
    uint8_t n8 = (uint8_t)id_length;
    put(&b, &n8, 1);
    put(&b, c->id, id_length);
    put_u32(&b, (uint32_t)c->n_args);
    for (int i = 0; i < c->n_args; i++) {
        RemoteArg *a = &c->args[i];
        put_u32(&b, a->type);
        put_u32(&b, a->returned ? 1 : 0);
        put_u64(&b, a->count);
        put_u64(&b, a->offset);
        if (a->type == ARG_TENSOR) {
            put_u32(&b, (uint32_t)a->tensor->rank);
            put_u32(&b, a->tensor->requires_grad ? 1 : 0);
            put(&b, a->tensor->shape, (size_t)a->tensor->rank * sizeof(int64_t));
            put(&b, a->tensor->strides, (size_t)a->tensor->rank * sizeof(int64_t));
            put(&b, a->data, (size_t)a->count * sizeof(float));
        } else if (a->type != ARG_NULL) {
            put(&b, a->data, (size_t)a->count * element_size(a->type));
        }
    }
    guard_hints_clear();
    send_message(WIRE_CALL, &b);
    Reply r = receive();
    if (r.kind == WIRE_TODO) todo_reached(&r);
    if (r.kind != WIRE_RESULT) bad_reply();
    for (int i = 0; i < c->n_args; i++) {
        RemoteArg *a = &c->args[i];
        if (!a->returned || a->type == ARG_NULL) continue;
        if (take_u64(&r) != a->count) bad_reply();
        size_t bytes = (size_t)a->count * element_size(a->type);
        const void *data = take(&r, bytes);
        if (bytes && memcmp(a->back, data, bytes) != 0)
            memcpy(a->back, data, bytes); /* a const literal stays untouched */
    }
    return r;
}

void remote_call(RemoteCall *c) {
    Reply r = call(c);
    if (take_u32(&r) != RET_VOID) bad_reply();
    take_error(&r);
    done_reading(&r);
}

int64_t remote_call_int(RemoteCall *c) {
    Reply r = call(c);
    if (take_u32(&r) != RET_INT) bad_reply();
    int64_t value = (int64_t)take_u64(&r);
    take_error(&r);
    done_reading(&r);
    return value;
}

/* ---- a returned tensor ---------------------------------------------------------------------------- */

typedef struct {
    uint32_t handle;
    Tensor *args[WIRE_MAX_ARGS]; /* the call's tensor arguments, in order */
    int n_args;
} RemoteResult;

/* The returned tensor's backward: the runner runs the student's graph backward from this
 * gradient and sends the gradients of the call's tensor arguments, which are added here. */
static void remote_backward(Tensor *out) {
    RemoteResult *result = out->saved;
    int64_t n = tensor_numel(out);
    Buffer b = {0};
    put_u32(&b, result->handle);
    put_u64(&b, (uint64_t)n);
    put(&b, tensor_data(out->grad), (size_t)n * sizeof(float));
    start_runner();
    send_message(WIRE_BACKWARD, &b);
    Reply r = receive();
    if (r.kind == WIRE_TODO) todo_reached(&r);
    if (r.kind != WIRE_GRADS) bad_reply();
    uint32_t count = take_u32(&r);
    int wanted = 0;
    for (int i = 0; i < result->n_args; i++) wanted += result->args[i]->requires_grad;
    if (count != 0 && count != (uint32_t)wanted) bad_reply();
    for (int i = 0; i < result->n_args && count > 0; i++) {
        Tensor *arg = result->args[i];
        if (!arg->requires_grad) continue;
        int64_t m = tensor_numel(arg);
        if (take_u64(&r) != (uint64_t)m) bad_reply();
        const unsigned char *values = take(&r, (size_t)m * sizeof(float));
        float *grad = tensor_grad_data(arg);
        if (!grad) fail_test("crashed", "the grader ran out of memory for a gradient");
        for (int64_t k = 0; k < m; k++) {
            float g;
            memcpy(&g, values + (size_t)k * sizeof g, sizeof g);
            grad[k] += g;
        }
    }
    take_error(&r);
    done_reading(&r);
    if (count == 0 && wanted > 0)
        ck_abort_msg("the backward of exercise's result failed in the student's program: %s",
                     tensor_error() ? tensor_error() : "(no message)");
}

Tensor *remote_call_tensor(RemoteCall *c) {
    Reply r = call(c);
    uint32_t ret = take_u32(&r);
    if (ret == RET_NULL_TENSOR) {
        take_error(&r);
        done_reading(&r);
        return NULL;
    }
    if (ret != RET_TENSOR) bad_reply();
    Ctx *ctx = test_ctx;
    for (int i = 0; i < c->n_args; i++)
        if (c->args[i].type == ARG_TENSOR) ctx = c->args[i].tensor->ctx;
    RemoteResult *result = ctx_alloc(ctx, sizeof *result);
    if (!result) fail_test("crashed", "the grader ran out of memory for a result");
    for (int i = 0; i < c->n_args; i++)
        if (c->args[i].type == ARG_TENSOR) result->args[result->n_args++] = c->args[i].tensor;
    result->handle = take_u32(&r);
    uint32_t n = take_u32(&r);
    if (n < 1 || n > WIRE_MAX_NODES) bad_reply();
    struct {
        char op[WIRE_MAX_NAME];
        int rank;
        int64_t shape[TENSOR_MAX_RANK];
        bool requires_grad;
        int32_t arg;
        uint32_t n_inputs, inputs[TENSOR_MAX_INPUTS];
    } nodes[WIRE_MAX_NODES];
    for (uint32_t k = 0; k < n; k++) {
        take_name(&r, nodes[k].op);
        uint32_t rank = take_u32(&r);
        if (rank > TENSOR_MAX_RANK) bad_reply();
        nodes[k].rank = (int)rank;
        memcpy(nodes[k].shape, take(&r, rank * sizeof(int64_t)), rank * sizeof(int64_t));
        if (shape_numel(nodes[k].shape, nodes[k].rank) < 0) bad_reply();
        nodes[k].requires_grad = take_u8(&r) != 0;
        memcpy(&nodes[k].arg, take(&r, 4), 4);
        if (nodes[k].arg < -1 || nodes[k].arg >= c->n_args ||
            (nodes[k].arg >= 0 && c->args[nodes[k].arg].type != ARG_TENSOR))
            bad_reply();
        nodes[k].n_inputs = take_u32(&r);
        if (nodes[k].n_inputs > TENSOR_MAX_INPUTS) bad_reply();
        for (uint32_t j = 0; j < nodes[k].n_inputs; j++)
            if ((nodes[k].inputs[j] = take_u32(&r)) >= n) bad_reply();
    }
    /* a graph, not a cycle: each node after every node it is made from (Kahn's order) */
    int order[WIRE_MAX_NODES] = {0}, pending[WIRE_MAX_NODES] = {0}, placed = 0;
    for (uint32_t k = 0; k < n; k++) pending[k] = (int)nodes[k].n_inputs;
    bool done[WIRE_MAX_NODES] = {false};
    while (placed < (int)n) {
        int before = placed;
        for (uint32_t k = 0; k < n; k++) {
            if (done[k] || pending[k] > 0) continue;
            done[k] = true;
            order[placed++] = (int)k;
            for (uint32_t m = 0; m < n; m++)
                for (uint32_t j = 0; j < nodes[m].n_inputs; j++)
                    if (nodes[m].inputs[j] == k) pending[m]--;
        }
        if (placed == before) bad_reply();
    }
    Tensor *made[WIRE_MAX_NODES] = {NULL};
    for (int o = 0; o < placed; o++) {
        int k = order[o];
        if (nodes[k].arg >= 0) {
            made[k] = c->args[nodes[k].arg].tensor; /* the test's own tensor */
            continue;
        }
        if (shape_numel(nodes[k].shape, nodes[k].rank) > MAX_PLACEHOLDER)
            fail_test("crashed",
                      "returned a tensor whose tape holds one of %lld elements, more than the grader carries",
                      (long long)shape_numel(nodes[k].shape, nodes[k].rank));
        Tensor *t = tensor_zeros(ctx, nodes[k].shape, nodes[k].rank);
        size_t op_size = strlen(nodes[k].op) + 1;
        char *op = ctx_alloc(ctx, op_size);
        if (!t || !op) fail_test("crashed", "the grader ran out of memory for a result");
        memcpy(op, nodes[k].op, op_size);
        Tensor *inputs[TENSOR_MAX_INPUTS];
        for (uint32_t j = 0; j < nodes[k].n_inputs; j++) inputs[j] = made[nodes[k].inputs[j]];
        if (!tensor_record(t, op, k == 0 ? remote_backward : NULL, (int)nodes[k].n_inputs, inputs))
            fail_test("crashed", "the grader could not rebuild the result's tape: %s", tensor_error());
        t->requires_grad = nodes[k].requires_grad;
        if (k == 0) t->saved = result;
        made[k] = t;
    }
    Tensor *root = made[0];
    uint64_t count = take_u64(&r);
    if (count != (uint64_t)tensor_numel(root)) bad_reply();
    const void *values = take(&r, (size_t)count * sizeof(float));
    if (nodes[0].arg < 0) memcpy(tensor_data(root), values, (size_t)count * sizeof(float));
    take_error(&r);
    done_reading(&r);
    return root;
}
