/*
 * tensor_internal.h - what the core's own files (tensor.c, tape.c, tensor_fast.c) share and
 * nothing else includes: the context's layout, and the reach of a view.
 */
#ifndef TENSOR_INTERNAL_H
#define TENSOR_INTERNAL_H

#include "tensor.h"

/* Memory comes in blocks; each block is carved front to back and freed only with its ctx. */
typedef struct Block Block;
struct Block {
    struct Block *next;
    unsigned serial;       /* order of making within its ctx: ctx_reset frees those made after the mark */
    size_t used, capacity; /* capacity: what this use of the block may carve, at most `allocated` */
    size_t allocated;
    _Alignas(16) unsigned char memory[];
};

struct Ctx {
    Block *blocks; /* the head is the block small allocations are carved from */
    Block *spare;  /* blocks ctx_reset let go of, kept to be used again */
    size_t bytes;
    Tensor *first_tensor, *last_tensor;
    int n_tensors, n_storages;
    unsigned epoch; /* bumped by every backward's topological sort */
    unsigned n_blocks;
    /* ctx_mark's record of what lives on: blocks made before it, the head's fill, the tensors */
    struct {
        unsigned n_blocks;
        Block *head;
        size_t head_used, bytes;
        Tensor *last_tensor;
        int n_tensors, n_storages;
    } mark;
};

/* The lowest and highest offsets, from the first element, that shape and strides reach
 * (0 and 0 for an empty shape, or one of one element). False when they overflow int64. */
bool strides_span(int rank, const int64_t *shape, const int64_t *strides, int64_t *lo, int64_t *hi);

#endif /* TENSOR_INTERNAL_H */
