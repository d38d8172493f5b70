/*
 * gather_fast.h - the fast path of lesson 5's gather_rows (gather_fast.c). The reference,
 * gather.c's loop, offers it every gather; docs/5-gather.md ("How fast") measures it.
 */
#ifndef GATHER_FAST_H
#define GATHER_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

/* out[i, :] = table[indices[i], :] for i < n: table is (V, D) (any view), out is contiguous
 * (n, D). True when done; false, with nothing written, when COURSE_KERNELS=reference
 * (kernels.h), or for what gather.c never passes: a NULL or non-2-D table, a negative n, a
 * NULL indices or out, an index outside 0..V-1. */
bool gather_fast_rows(const Tensor *table, const int64_t *indices, int64_t n, float *out);

#endif /* GATHER_FAST_H */
