/*
 * wire.h - the messages between the grader's judge (the lesson's tests, tests/remote.c) and
 * the runner (the student's functions, tests/runner.c) when an exercise is graded. The judge
 * sends calls; the runner makes them and sends back only what the call wrote. The judge
 * trusts nothing it reads: every length is checked against what it sent and asked for.
 *
 * A message is a header, {uint32 kind, uint32 length}, then `length` bytes. Numbers are in
 * the machine's own byte order (both ends run on it).
 *
 *   CALL      id (u8 length, bytes); u32 count; that many arguments, each
 *             {u32 type, u32 returned (1: send it back after the call), u64 count,
 *             u64 offset, data}: for an array, the whole buffer the test's pointer is in
 *             (count elements) and where in it the pointer is (offset, in elements); for a
 *             tensor, its whole storage (count floats) and its view of it (below)
 *   BACKWARD  u32 handle (of a tensor a call returned); u64 count; the upstream gradient
 *   RESULT    per returned argument, in order: u64 count, data; then the return value:
 *             u32 RET_*, and for RET_INT an i64, for RET_TENSOR the graph (below); then the
 *             error message tensor_error() holds (u32 length, bytes; 0: none)
 *   GRADS     u32 count; per tensor argument that requires grad, in order: u64 count, floats;
 *             then an error message as in RESULT
 *   TODO      the function that reached EXERCISE_TODO() (u8 length, bytes)
 *
 * The graph of a returned tensor: u32 handle; u32 nodes (the result first, at most
 * WIRE_MAX_NODES, walked through inputs); per node: op (u8 length, bytes), u32 rank, i64
 * shape[rank], u8 requires_grad, i32 argument (the index of the call's argument it is, or
 * -1), u32 inputs, u32 input node[inputs]; then the result's values (u64 count, floats).
 */
#ifndef WIRE_H
#define WIRE_H

#include <stdint.h>

enum {
    WIRE_CALL = 1,
    WIRE_BACKWARD = 2,
    WIRE_RESULT = 101,
    WIRE_GRADS = 102,
    WIRE_TODO = 103,
};

/* argument types */
enum {
    ARG_NULL = 0,   /* a NULL pointer */
    ARG_INT = 1,    /* one int */
    ARG_I64 = 2,    /* one int64_t */
    ARG_FLOAT = 3,  /* one float */
    ARG_INTS = 4,   /* an array of int */
    ARG_I64S = 5,   /* an array of int64_t */
    ARG_FLOATS = 6, /* an array of float */
    ARG_BYTES = 7,  /* a struct, as bytes */
    ARG_TENSOR = 8, /* a tensor: u32 rank, u32 requires_grad, i64 shape[rank], i64 strides[rank], then its storage
                     * (count floats); the view starts at offset. Never sent back */
};

enum { RET_VOID = 0, RET_INT = 1, RET_TENSOR = 2, RET_NULL_TENSOR = 3 };

enum {
    WIRE_MAX_ARGS = 16,
    WIRE_MAX_NODES = 64,
    WIRE_MAX_NAME = 64,          /* an exercise id, an op's or a function's name */
    WIRE_MAX_ERROR = 1024,       /* an error message */
    WIRE_MAX_MESSAGE = 64 << 20, /* bytes of one message */
};

typedef struct {
    uint32_t kind, length;
} WireHeader;

#endif /* WIRE_H */
