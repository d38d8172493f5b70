# diagram-sum.gp - lesson 2, section 3.5: the column sums of x, forward (left: many cells of x add
# into one cell of out) and backward (right: one cell of out's gradient goes to many cells of
# x's). The cells come from `diagram sum` (reduce_diagram.c); this script only places them.
width = 880; height = 470; unit = 80.0
load 'common/diagram.gp'
load data

# x's row 0 above the result, its row 1 below; the backward is the same picture on the right
cw = 1.3; ch = 0.8; gap = 0.2
fx(j) = 0.3 + cw / 2 + j * (cw + gap)
bx(j) = 5.7 + cw / 2 + j * (cw + gap)
ry(i) = i == 0 ? 4.1 : 1.4
my = 2.75

set label 1 "sum_axis(x, 0, keepdim): the column sums of x (2,3), and their backward" at width / unit / 2, 5.6 center font ",13"
set label 2 "forward: many cells of x add (+=) into one" at fx(1), 5.1 center
set label 3 "backward: one cell of g goes to many" at bx(1), 5.1 center
set label 4 "row 0 of x" at fx(0) - cw / 2, ry(0) + ch / 2 + 0.17 left font ",10"
set label 5 "row 1 of x" at fx(0) - cw / 2, ry(1) - ch / 2 - 0.2 left font ",10"
set label 6 "row 0 of x's gradient" at bx(0) - cw / 2, ry(0) + ch / 2 + 0.17 left font ",10"
set label 7 "row 1 of x's gradient" at bx(0) - cw / 2, ry(1) - ch / 2 - 0.2 left font ",10"
set label 8 sprintf("out, seen from x's shape, has strides %s:\nx(i,j) adds into out at i*stride[0] + j*stride[1]", note_strides) \
    at fx(1), 0.45 center font ",10"
set label 9 "out's gradient g is 1, 2, 3 here; read through the\nsame strides, each cell of x's gradient gets one g" \
    at bx(1), 0.45 center font ",10"
set style fill solid 1.0 border lc rgb "black"

plot $out using (fx($2)):(my):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $out using (fx($2)):(my + 0.14):(sprintf("out[%d]", $2)) with labels font ",11", \
     $out using (fx($2)):(my - 0.18):6 with labels font ",10", \
     $x using (fx($2)):(ry($1)):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $x using (fx($2)):(ry($1) + 0.16):(sprintf("x(%d,%d) = %g", $1, $2, $3)) with labels font ",11", \
     $x using (fx($2)):(ry($1) - 0.17):6 with labels font ",10", \
     $x using (fx($2)):(ry($1) + ($1 == 0 ? -ch / 2 : ch / 2)):(fx($4) - fx($2)):(my - ry($1) + ($1 == 0 ? ch : -ch)):(okabe($5)) \
         with vectors head filled size 0.12,20 lw 1.5 lc rgb variable, \
     $g using (bx($2)):(my):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $g using (bx($2)):(my):6 with labels font ",11", \
     $gx using (bx($2)):(ry($1)):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $gx using (bx($2)):(ry($1) + 0.16):(sprintf("x.grad(%d,%d)", $1, $2)) with labels font ",11", \
     $gx using (bx($2)):(ry($1) - 0.17):6 with labels font ",10", \
     $gx using (bx($4)):(my + ($1 == 0 ? ch / 2 : -ch / 2)):(bx($2) - bx($4)):(ry($1) - my + ($1 == 0 ? -ch : ch)):(okabe($5)) \
         with vectors head filled size 0.12,20 lw 1.5 lc rgb variable
