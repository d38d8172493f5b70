# diagram-views.gp - lesson 4, section 5.1: one storage of 6 floats read through five headers.
# Each cell of a header names the storage cell it reads. The cells come from `diagram views`
# (permute_diagram.c); this script only places them.
width = 880; height = 640; unit = 80.0
load 'common/diagram.gp'
load data

# the storage across the top; the headers in two rows of slots below it
sw = 1.0; sh = 0.6; sgap = 0.15
sx(k) = (width / unit - 6 * sw - 5 * sgap) / 2 + sw / 2 + k * (sw + sgap)
sy = 6.45
pw = 0.78; ph = 0.55; pgap = 0.08
slot(n) = n < 3 ? 1.85 + n * 3.65 : 3.675 + (n - 3) * 3.65   # slots 0-2 in row 1, 3-4 centred in row 2
top(n) = n < 3 ? 5.0 : 2.2                            # the top edge of a slot's first row of cells
px(n, j, cols) = slot(n) - (cols * pw + (cols - 1) * pgap) / 2 + pw / 2 + j * (pw + pgap)
py(n, i) = top(n) - ph / 2 - i * (ph + pgap)

# the boxes, the index and the storage cell of each cell of header `part` in slot n
cells(part, n, cols) = sprintf("%s using (px(%d,$2,%d)):(py(%d,$1)):(pw / 2):(ph / 2):(tint($5)) with boxxyerror fc rgb variable, " . \
    "%s using (px(%d,$2,%d)):(py(%d,$1) + 0.12):(sprintf('(%%d,%%d)', $1, $2)) with labels font ',9', " . \
    "%s using (px(%d,$2,%d)):(py(%d,$1) - 0.1):6 with labels font ',11'", \
    part, n, cols, n, part, n, cols, n, part, n, cols, n)
heading(n, name, header) = sprintf("set label %d \"%s\" at %g, %g center font ',11'; set label %d \"%s\" at %g, %g center font ',10'", \
    10 + 2 * n, name, slot(n), top(n) + 0.55, 11 + 2 * n, header, slot(n), top(n) + 0.25)

set label 1 "One storage of 6 floats, five headers: each cell names the storage cell s[k] it reads" \
    at width / unit / 2, 7.55 center font ",13"
set label 2 "the storage (x's 6 floats; colours follow it)" at sx(0) - sw / 2, sy + sh / 2 + 0.17 left font ",10"
set label 3 "a cell (i,j) reads s[offset + i*strides[0] + j*strides[1]]: nothing is copied, only the header changes" \
    at width / unit / 2, 0.35 center font ",10"
eval heading(0, note_contiguous, note_contiguous_header)
eval heading(1, note_permuted, note_permuted_header)
eval heading(2, note_expanded, note_expanded_header)
eval heading(3, note_window, note_window_header)
eval heading(4, note_reversed, note_reversed_header)
set style fill solid 1.0 border lc rgb "black"

c0 = cells("$contiguous", 0, 3)
c1 = cells("$permuted", 1, 2)
c2 = cells("$expanded", 2, 3)
c3 = cells("$window", 3, 2)
c4 = cells("$reversed", 4, 3)
plot $storage using (sx($2)):(sy):(sw / 2):(sh / 2):(tint($5)) with boxxyerror fc rgb variable, \
     $storage using (sx($2)):(sy):6 with labels font ",11", \
     @c0, @c1, @c2, @c3, @c4
