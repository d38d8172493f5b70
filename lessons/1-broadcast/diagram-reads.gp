# diagram-reads.gp - lesson 1, section 2.4: which cell of b each cell of c = a + b reads, through
# the stride-0 view (left) and through the chapter's index map (right). The cells come from
# `diagram reads` (broadcast_diagram.c); this script only places them.
width = 880; height = 470; unit = 80.0
load 'common/diagram.gp'
load data

# the view: c's row 0 above b's storage, its row 1 below, so that each arrow is one read
cw = 1.3; ch = 0.8; gap = 0.2
vx(j) = 0.3 + cw / 2 + j * (cw + gap)
vy(i) = i == 0 ? 4.1 : 1.4
sy = 2.75
# the map: its six entries in a row, b's storage under them
mw = 0.72; mgap = 0.12
mx(t) = 5.75 + mw / 2 + t * (mw + mgap)
my = 4.1
bx(k) = 6.05 + cw / 2 + k * (cw + 0.35)

set label 1 "c = a + b with a (2,3) and b (3,): which cell of b each of the six cells of c reads" \
    at width / unit / 2, 5.6 center font ",13"
set label 2 note_view at vx(1), 5.1 center
set label 3 note_map at mx(2.5), 5.1 center
set label 4 "row 0 of c" at vx(0) - cw / 2, vy(0) + ch / 2 + 0.17 left font ",10"
set label 5 "row 1 of c" at vx(0) - cw / 2, vy(1) - ch / 2 - 0.2 left font ",10"
set label 6 "the map, one entry per cell of c" at mx(0) - mw / 2, my + ch / 2 + 0.17 left font ",10"
set label 7 "each cell of c: (i,j) and the value it reads;\nbelow, its offset in b: i*stride[0] + j*stride[1]" \
    at vx(1), 0.45 center font ",10"
set label 8 "each entry t: the cell (i,j) of c it stands for,\nand map[t], the cell of b that c(i,j) reads" \
    at mx(2.5), 0.45 center font ",10"
set style fill solid 1.0 border lc rgb "black"

plot $storage using (vx($2)):(sy):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $storage using (vx($2)):(sy + 0.14):6 with labels font ",11", \
     $storage using (vx($2)):(sy - 0.18):(sprintf("offset %d", $2)) with labels font ",10", \
     $view using (vx($2)):(vy($1)):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $view using (vx($2)):(vy($1) + 0.16):(sprintf("(%d,%d): %g", $1, $2, $3)) with labels font ",11", \
     $view using (vx($2)):(vy($1) - 0.17):6 with labels font ",10", \
     $view using (vx($4)):(sy + ($1 == 0 ? ch / 2 : -ch / 2)):(vx($2) - vx($4)):(vy($1) - sy + ($1 == 0 ? -ch : ch)):(okabe($5)) \
         with vectors head filled size 0.12,20 lw 1.5 lc rgb variable, \
     $storage using (bx($2)):(sy):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $storage using (bx($2)):(sy + 0.14):6 with labels font ",11", \
     $storage using (bx($2)):(sy - 0.18):(sprintf("offset %d", $2)) with labels font ",10", \
     $map using (mx($2)):(my):(mw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $map using (mx($2)):(my + 0.2):(sprintf("t=%d", $2)) with labels font ",10", \
     $map using (mx($2)):(my):6 with labels font ",10", \
     $map using (mx($2)):(my - 0.22):(sprintf("map %d", $4)) with labels font ",10", \
     $map using (bx($4)):(sy + ch / 2):(mx($2) - bx($4)):(my - ch / 2 - sy - ch / 2):(okabe($5)) \
         with vectors head filled size 0.12,20 lw 1.5 lc rgb variable
