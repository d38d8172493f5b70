# diagram-fold.gp - lesson 6, section 7.6: seed 002's (4,2,5) result, cell by cell, as the
# library computes it (left) and as the invalid fold into columns leaves it (right). The cells
# come from `diagram fold` (bmm_diagram.c); this script only places and colours them.
width = 880; height = 640; unit = 80.0
load 'common/diagram.gp'
load data

cw = 0.84; ch = 0.5; gap = 0.04
lx(j) = 0.08 + cw / 2 + j * (cw + gap)                 # the library's result
fx(j) = 5.74 + cw / 2 + j * (cw + gap)                # the fold's
ry(r) = 5.7 - r * (ch + gap) - (r >= 2) * 0.06 * int(r / 2) # rows in memory order, a small gap between batches
# right, wrong, never written: blue, vermillion, grey (Okabe and Ito); each cell also says which
fill(kind) = kind == 0 ? mix(0x56B4E9, 0.5) : kind == 1 ? mix(0xD55E00, 0.45) : 0xDDDDDD

set label 1 "expand(queries) @ keys, seed 002's (4,2,5) result cell by cell: " . note_fold_survivors . " the fold" \
    at width / unit / 2, 7.5 center font ",13"
set label 2 note_q . "; keys (4,3,5)" at width / unit / 2, 7.1 center font ",10"
set label 3 note_lib at lx(2), 6.65 center font ",11"
set label 4 "one (2,3) @ (3,5) per batch: " . note_lib_counts at lx(2), 6.35 center font ",10"
set label 5 note_fold at fx(2), 6.65 center font ",11"
set label 6 note_fold_counts at fx(2), 6.35 center font ",10"
set label 7 "out's row" at (lx(4) + fx(0)) / 2, ry(0) + 0.45 center font ",10"
set label 8 "written by" at width / unit - 0.04, ry(0) + 0.45 right font ",10"
do for [r = 0:7] {
    set label (10 + r) sprintf("batch %d, row %d", r / 2, r % 2) at (lx(4) + fx(0)) / 2, ry(r) center font ",9"
}
set label 30 sprintf("The library folds a batch only into rows, and matmul_folds_into_rows says %s here: q's batch stride is 0.", note_rows) . \
    "\nThe fold into columns is never valid for batch-major keys: " . note_overlap . ":\n" . note_tail . "." \
    at width / unit / 2, 1.1 center font ",10"
# the key, in words and colours
set object 1 rect center 0.55, 0.3 size 0.4, 0.28 fc rgb fill(0) fs solid border lc rgb "black"
set label 40 "right" at 0.85, 0.3 left font ",10"
set object 2 rect center 1.9, 0.3 size 0.4, 0.28 fc rgb fill(1) fs solid border lc rgb "black"
set label 41 "wrong: the value it got, and the one wanted" at 2.2, 0.3 left font ",10"
set object 3 rect center 6.3, 0.3 size 0.4, 0.28 fc rgb fill(2) fs solid border lc rgb "black"
set label 42 "never written: the 0 it started with" at 6.6, 0.3 left font ",10"
set style fill solid 1.0 border lc rgb "black"

plot $lib using (lx($2)):(ry($1)):(cw / 2):(ch / 2):(fill($5)) with boxxyerror fc rgb variable, \
     $lib using (lx($2)):(ry($1) + 0.1):(sprintf("%.2f", $3)) with labels font ",11", \
     $lib using (lx($2)):(ry($1) - 0.13):6 with labels font ",9", \
     $fold using (fx($2)):(ry($1)):(cw / 2):(ch / 2):(fill($5)) with boxxyerror fc rgb variable, \
     $fold using (fx($2)):(ry($1) + 0.1):(sprintf("%.2f", $3)) with labels font ",11", \
     $fold using (fx($2)):(ry($1) - 0.13):6 with labels font ",9", \
     $fold_rows using (fx(4) + cw / 2 + 0.12):(ry($1)):6 with labels left font ",10"
