/*
 * remote.h - the judge's side of a graded call (wire.h). When an exercise is graded, the
 * lesson's tests run in the judge, a program built from the course alone, and the student's
 * functions in the runner, inside the sandbox (tests/runner.c, tests/sandbox.c). In the judge,
 * each exercise function is a stand-in, defined in the lesson's test_calls.c, that sends its
 * arguments to the runner and copies back what the student's function wrote:
 *
 *   void ex2_3_sum_axis(const float *x, const int64_t *shape, int rank, int axis, float *out) {
 *       RemoteCall c;
 *       remote_begin(&c, "2.3");
 *       remote_floats(&c, x, shape_numel(shape, rank));
 *       ...
 *       remote_floats_back(&c, out, numel of the result);
 *       remote_call(&c);
 *   }
 *
 * A pointer into a buffer the test marked (harness.h: guarded_buffer(), guarded_input(),
 * guard_hint()) takes the whole buffer along, guard regions included, and a tensor its whole
 * storage and its view of it, so that the student's code reads and writes the same memory in
 * the runner as in-process: a read outside the view, or a write past the end, shows in the
 * judge as it would in-process. The comparison with the expected values is made by the test, in the judge,
 * where the student's code never ran. A crash, an exit, a flood of output or a sanitizer's
 * report in the runner fails the test with the message the in-process tests would give.
 */
#ifndef REMOTE_H
#define REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h"
#include "wire.h"

typedef struct {
    uint32_t type;
    bool returned;
    uint64_t count, offset; /* elements sent; where the argument's pointer is in them */
    const void *data;       /* what is sent */
    void *back;             /* where what comes back goes (returned only) */
    Tensor *tensor;
    union {
        int i;
        int64_t i64;
        float f;
    } value;
} RemoteArg;

typedef struct {
    const char *id;
    RemoteArg args[WIRE_MAX_ARGS];
    int n_args;
} RemoteCall;

void remote_begin(RemoteCall *c, const char *exercise_id);
void remote_int(RemoteCall *c, int value);
void remote_i64(RemoteCall *c, int64_t value);
void remote_float(RemoteCall *c, float value);
/* n elements sent; _back also copies what the call left in them back into p. NULL is sent
 * as NULL. */
void remote_ints(RemoteCall *c, const int *p, int64_t n);
void remote_ints_back(RemoteCall *c, int *p, int64_t n);
void remote_i64s(RemoteCall *c, const int64_t *p, int64_t n);
void remote_i64s_back(RemoteCall *c, int64_t *p, int64_t n);
void remote_floats(RemoteCall *c, const float *p, int64_t n);
void remote_floats_back(RemoteCall *c, float *p, int64_t n);
void remote_bytes_back(RemoteCall *c, void *p, size_t n);
/* A tensor: its view (shape, strides, offset), its whole storage and requires_grad. In the
 * runner it is a new leaf with that view of a copy of the storage (one copy per argument,
 * even where two share a storage here); nothing the call writes into it comes back, but the
 * gradient backward gives it there comes back into this one. */
void remote_tensor(RemoteCall *c, Tensor *t);

/* Makes the call and copies back what it wrote; the error message the student's code left
 * becomes tensor_error() here. */
void remote_call(RemoteCall *c);
int64_t remote_call_int(RemoteCall *c);
/* The returned tensor, in the judge: its values, and a stand-in for each tensor on its tape
 * (op names and shapes, for tests that check which ops made it). Its backward asks the
 * runner for the gradients of the call's tensor arguments. NULL if the call returned NULL. */
Tensor *remote_call_tensor(RemoteCall *c);

/* Set by the harness in the judge (run_exercise_tests --runner): the runner program, the
 * sandbox program, the sandbox's profile, and the limits of each test's runner. */
void remote_configure(const char *runner, const char *sandbox, const char *profile, long long max_output,
                      long long max_memory);
/* True in the judge. */
bool remote_enabled(void);
/* Ends this process's runner, if it has one (the harness calls it when a test ends). */
void remote_shutdown(void);

#endif /* REMOTE_H */
