/*
 * reduce_diagram.h - lesson 2's picture of memory (docs/2-reduce.md, section 3.5): the column
 * sums of x (2,3) = 1..6, sum_axis(x, 0, keepdim), forward and backward. diagram-sum.gp draws it.
 */
#ifndef REDUCE_DIAGRAM_H
#define REDUCE_DIAGRAM_H

#include "diagram.h"

/* Forward: many cells of x add into one of out; backward: one cell of out's gradient goes to
 * many of x's. Every link is found by running the library's op on a 1 at one cell and 0 elsewhere:
 *   $x    x, cell (i,j): link = the cell of out it adds into (sum_axis on a one-hot x)
 *   $out  out = sum_axis(x, 0, keepdim), cell (0,j); its label sums what adds into it
 *   $g    out's gradient, upstream 1, 2, 3, cell (0,j)
 *   $gx   x's gradient after the backward, cell (i,j): link = the cell of g it receives
 *         (a backward from a one-hot g)
 * kind is the cell of out (a colour). note_strides is out's strides seen from x's shape, "(0,1)":
 * 0 along the summed axis, the stride-0 output that sum_axis adds into. */
int reduce_diagram_sum(Diagram *d);

#endif /* REDUCE_DIAGRAM_H */
