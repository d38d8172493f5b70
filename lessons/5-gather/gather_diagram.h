/*
 * gather_diagram.h - lesson 5's picture of memory (docs/5-gather.md, section 6.2): the chapter's
 * table (3,2) = 1..6 gathered with indices [0, 2] and [0, 0], and the scatter-add that sends
 * the gradients back. diagram-rows.gp draws it.
 */
#ifndef GATHER_DIAGRAM_H
#define GATHER_DIAGRAM_H

#include "diagram.h"

/* For case c = 1 (indices [0, 2]) and c = 2 (indices [0, 0]), parts named with c at the end:
 *   $table      the table, cell (r,j), kind r (a colour; the same in both cases)
 *   $indicesC   cell (i,0): value and link indices[i]
 *   $outC       gather_rows' output, cell (i,j): link = the table cell it copies (gather_rows
 *               run on a table holding 1 at one cell and 0 elsewhere); kind = that cell's row
 *   $gC         out's gradient, upstream 1 everywhere (the backward of sum(out)), cell (i,j):
 *               link = the cell of the table's gradient it adds into (a backward from a 1 at
 *               (i,j) and 0 elsewhere); kind = that cell's row
 *   $gradC      the table's gradient after the backward, cell (r,j); where more than one
 *               gradient reached it, its label spells out the sum ("1+1=2"); kind r
 * note_caseC spells the indices: "indices = [0, 2]". */
int gather_diagram_rows(Diagram *d);

#endif /* GATHER_DIAGRAM_H */
