/*
 * broadcast_diagram.h - lesson 1's pictures of memory (docs/1-broadcast.md, sections 2.4 and
 * 2.5), for c = a + b with a (2,3) and b (3,). diagram-reads.gp and diagram-grads.gp draw them.
 */
#ifndef BROADCAST_DIAGRAM_H
#define BROADCAST_DIAGRAM_H

#include "diagram.h"

/* Which cell of b each of the six cells of b expanded to (2,3) reads, two ways:
 *   $storage  b's storage, cell k at column k (link -1, kind k)
 *   $view     the stride-0 view, cell (i,j): link = its offset from the view's own header,
 *             offset + i*strides[0] + j*strides[1]; value = what tensor_get reads there
 *   $map      the chapter's index map, cell t at column t: link = broadcast_map's map[t]
 * kind is the storage cell read (a colour), and note_view, note_map name the strides and the map. */
int broadcast_diagram_reads(Diagram *d);

/* The backward of sum(w * (a + b)), upstream weights g = 1..6 in c's order:
 *   $g   c's gradient, cell (i,j): link = the cell of b's gradient it adds into, found by a
 *        backward from a gradient of 1 at (i,j) and 0 elsewhere
 *   $gb  b's gradient after the real backward, cell k at column k; its label sums the g's
 *        that add into it ("1 + 4 = 5")
 * kind is the cell of b's gradient (a colour). */
int broadcast_diagram_grads(Diagram *d);

#endif /* BROADCAST_DIAGRAM_H */
