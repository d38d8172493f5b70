# diagram-walk.gp - lesson 4, section 5.3: the order in which contiguous(y) visits y's storage,
# y = permute(x, (1,0)). Above the storage, the odometer's hops; below it, the copy it writes.
# The cells come from `diagram walk` (permute_diagram.c); this script only places them.
width = 880; height = 500; unit = 80.0
load 'common/diagram.gp'
load data

cw = 1.1; ch = 0.7; gap = 0.3
cx(k) = (width / unit - 6 * cw - 5 * gap) / 2 + cw / 2 + k * (cw + gap)
sy = 2.75
copy_y = 0.95
level(k) = sy + ch / 2 + 0.1 + 0.33 * k               # hop k's height above the storage
# a hop leaves a cell from its right part and reaches one on its left part; its label sits left
# of its line, where only lower hops, which end below it, have lines
hop_left(from, to) = cx(from) + 0.2 < cx(to) - 0.2 ? cx(from) + 0.2 : cx(to) - 0.2

set label 1 "contiguous(y) walks y's indices like an odometer, the last one fastest: the offsets it reads" \
    at width / unit / 2, 5.85 center font ",13"
set label 2 note_y . ": each step adds the stride of the index that turned" at width / unit / 2, 5.45 center
set label 3 "x's storage\n(the colours\nfollow it)" at cx(5) + cw / 2 + 0.12, sy left font ",10"
set label 4 "the copy:\nelement k,\nthe y(i,j)\nit holds" at cx(5) + cw / 2 + 0.12, copy_y left font ",10"
set style fill solid 1.0 border lc rgb "black"

plot $storage using (cx($2)):(sy):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $storage using (cx($2)):(sy):6 with labels font ",11", \
     $hop using (cx($1) + 0.2):(sy + ch / 2):(0):(level($2) - sy - ch / 2) with vectors nohead lw 1.5 lc rgb "black", \
     $hop using (cx($1) + 0.2):(level($2)):(cx($4) - cx($1) - 0.4):(0) with vectors nohead lw 1.5 lc rgb "black", \
     $hop using (cx($4) - 0.2):(level($2)):(0):(sy + ch / 2 - level($2)) with vectors head filled size 0.1,20 lw 1.5 lc rgb "black", \
     $hop using (hop_left($1, $4) - 0.08):(level($2)):(sprintf("step %d: %s", $2, strcol(6))) with labels right font ",10", \
     $walk using (cx($4)):(sy - ch / 2):(cx($2) - cx($4)):(copy_y + ch / 2 - sy + ch / 2):(okabe($5)) \
         with vectors head filled size 0.1,20 lw 1.5 lc rgb variable, \
     $walk using (cx($2)):(copy_y):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $walk using (cx($2)):(copy_y + 0.14):(sprintf("%d: y%s", $2, strcol(6))) with labels font ",11", \
     $walk using (cx($2)):(copy_y - 0.17):(sprintf("s[%d] = %g", $4, $3)) with labels font ",10"
