/*
 * bmm_diagram.h - lesson 6's picture of memory (docs/6-bmm.md, section 7.6): seed 002's
 * (4,2,5) result of expand(queries) @ keys, cell by cell, as the library computes it and as the
 * invalid fold into columns (candle 0.11's) leaves it. diagram-fold.gp draws it.
 */
#ifndef BMM_DIAGRAM_H
#define BMM_DIAGRAM_H

#include "diagram.h"

/* The kinds of a result cell: its value is the product's (within 1e-5), another one, or the 0
 * it started with because nothing wrote it. */
enum { BMM_CELL_RIGHT = 0, BMM_CELL_WRONG = 1, BMM_CELL_UNWRITTEN = 2 };

/* queries (1,2,3) = 0..5, expanded to q (4,2,3) (batch stride 0), keys (4,3,5) = 0..59 * 0.01.
 * Two results, each a part of 40 cells, cell (r,j) the element at row r = 2*batch + row of
 * (4,2,5) in row-major order (memory order), column j:
 *   $lib    tensor_matmul(q, keys)
 *   $fold   matmul_wrong_column_fold(queries, keys)
 * value = what the cell holds; kind = BMM_CELL_*, against the product summed in double here
 * (the definition, not the library); link = the row of q that wrote the cell, found by running
 * the same call with row i of queries all i+1 and keys all 1 (a cell then holds 3*(i+1)), -1 for
 * none; label = "right", "want 0.70" or "unwritten".
 * $lib_rows and $fold_rows: cell (r,0) per row r of the picture, link = the row of q that wrote
 * all of it (-1: nothing, -2: not one row), label "q row 1", "nothing" or "several rows".
 * Notes: lib, fold (what ran), lib_counts, fold_counts ("10 right, 15 wrong, 15 never
 * written"), lib_survivors, fold_survivors (the batches all right: "only batch 0 survives"), q (q's strides), rows ("no": matmul_folds_into_rows refuses the row fold) and
 * overlap and tail (where the fold's rows landed, from the probe: "written 5 apart", "from
 * element 25 on"). */
int bmm_diagram_fold(Diagram *d);

#endif /* BMM_DIAGRAM_H */
