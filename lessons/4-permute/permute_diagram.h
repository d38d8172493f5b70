/*
 * permute_diagram.h - lesson 4's pictures of memory (docs/4-permute.md, sections 5.1 and 5.3):
 * one storage of 6 floats, x = 1..6 as (2,3), read through several headers, and the order in
 * which contiguous() visits a permuted view. diagram-views.gp and diagram-walk.gp draw them.
 */
#ifndef PERMUTE_DIAGRAM_H
#define PERMUTE_DIAGRAM_H

#include "diagram.h"

/* The storage and five headers over it, each made by the library:
 *   $storage     the 6 floats, cell k at column k (kind k)
 *   $contiguous  x itself, (2,3), strides (3,1)
 *   $permuted    permute(x, (1,0)), (3,2), strides (1,3)
 *   $expanded    x's row 1 (a (3,) view at offset 3) expanded to (2,3), strides (0,1)
 *   $window      x[:, 1:3], (2,2), strides (3,1), offset 1
 *   $reversed    x[:, ::-1], (2,3), strides (3,-1), offset 2
 * cell (i,j) of a header: link = the storage cell it reads, offset + i*strides[0] + j*strides[1]
 * from the header itself; value = what tensor_get reads there; kind = link (a colour). Two
 * notes per header: note_NAME says how it was made, note_NAME_header gives its shape, strides
 * and offset. */
int permute_diagram_views(Diagram *d);

/* contiguous(y) for y = permute(x, (1,0)): the odometer's walk over y's indices.
 *   $storage  x's storage, as above
 *   $walk     step k (column k): its index of y (the label), link = the offset it reads (the
 *             core's NdIter over y's shape and strides, the loop behind contiguous), value =
 *             what contiguous(y) wrote into element k of its copy; kind = link
 *   $hop      the step from k-1 to k (column k, k >= 1): row = the offset it leaves, link = the
 *             offset it reaches, value = the change; its label says "+3", or "-2 (a carry)"
 *             when the last index went back to 0
 * note_y names y's shape and strides. */
int permute_diagram_walk(Diagram *d);

#endif /* PERMUTE_DIAGRAM_H */
