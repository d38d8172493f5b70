# diagram-grads.gp - lesson 1, section 2.5: the backward of c = a + b. Each cell of c's gradient
# is added (+=) into the cell of b's gradient that its cell of c read, so b[0]'s collects two.
# The cells come from `diagram grads` (broadcast_diagram.c); this script only places them.
width = 640; height = 470; unit = 80.0
load 'common/diagram.gp'
load data

# the picture of the forward (diagram-reads.gp) with the arrows turned around
cw = 1.6; ch = 0.8; gap = 0.25
gx(j) = 1.35 + cw / 2 + j * (cw + gap)
gy(i) = i == 0 ? 4.1 : 1.4
sy = 2.75

set label 1 "The backward of c = a + b: each cell of b collects its copies' gradients" at width / unit / 2, 5.6 center font ",12"
set label 2 note_grads at width / unit / 2, 5.1 center font ",10"
set label 3 "row 0 of c's gradient" at gx(0) - cw / 2, gy(0) + ch / 2 + 0.17 left font ",10"
set label 4 "row 1 of c's gradient" at gx(0) - cw / 2, gy(1) - ch / 2 - 0.2 left font ",10"
set label 6 "c's gradient g is 1..6 here (any values would do);\nthe middle row is b's gradient, each cell with the sum it received" \
    at width / unit / 2, 0.45 center font ",10"
set style fill solid 1.0 border lc rgb "black"

plot $gb using (gx($2)):(sy):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $gb using (gx($2)):(sy + 0.14):(sprintf("b.grad[%d]", $2)) with labels font ",11", \
     $gb using (gx($2)):(sy - 0.18):6 with labels font ",10", \
     $g using (gx($2)):(gy($1)):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $g using (gx($2)):(gy($1) + 0.16):(sprintf("g(%d,%d) = %g", $1, $2, $3)) with labels font ",11", \
     $g using (gx($2)):(gy($1) - 0.17):(sprintf("+= into b.grad[%d]", $4)) with labels font ",10", \
     $g using (gx($2)):(gy($1) + ($1 == 0 ? -ch / 2 : ch / 2)):(gx($4) - gx($2)):(sy - gy($1) + ($1 == 0 ? ch : -ch)):(okabe($5)) \
         with vectors head filled size 0.12,20 lw 1.5 lc rgb variable
