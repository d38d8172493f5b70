# diagram-rows.gp - lesson 5, section 6.2: gather_rows with indices [0, 2] (left) and [0, 0]
# (right): which table row each output row copies, and the scatter-add that sends each output
# row's gradient back to it. The cells come from `diagram rows` (gather_diagram.c); this
# script only places them. The arrows are what the library did, found by probing it.
width = 880; height = 600; unit = 80.0
load 'common/diagram.gp'
load data

cw = 0.72; ch = 0.5; gap = 0.08; iw = 1.2
ox(p) = p == 1 ? 0.2 : 5.65                           # each case's left edge
tx(p, j) = ox(p) + cw / 2 + j * (cw + gap)            # the table (and its gradient): 2 columns
table_right(p) = ox(p) + 2 * cw + gap
ix(p) = table_right(p) + 0.55 + iw / 2                # the indices' centres
rx(p, j) = ix(p) + iw / 2 + 0.4 + cw / 2 + j * (cw + gap) # the output rows (and their gradient)
ty(top, r) = top - r * (ch + gap)                     # the table's row r
oy(top, i) = top - (ch + gap) / 2 - i * (ch + gap)    # output row i: centred against the 3 rows
ft = 5.1; bt = 2.4                                    # the tops of the forward and the backward

set label 1 "gather_rows(table, indices): out row i copies table row indices[i]; the backward adds it back" \
    at width / unit / 2, 7.1 center font ",13"
do for [p = 1:2] {
    set label (10 * p) (p == 1 ? note_case1 : note_case2 . ": row 0 is read twice") at ox(p) + 2.6, 6.6 center font ",12"
    set label (10 * p + 1) "forward: out row i is table row indices[i]" at ox(p) + 2.6, 6.15 center font ",10"
    set label (10 * p + 2) "table" at tx(p, 0.5), ft + 0.45 center font ",10"
    set label (10 * p + 3) "out" at rx(p, 0.5), ft + 0.45 center font ",10"
    set label (10 * p + 7) "indices" at ix(p), ft + 0.45 center font ",10"
    set label (10 * p + 8) "indices" at ix(p), bt + 0.45 center font ",10"
    set label (10 * p + 4) "backward, a scatter-add: g row i += into row indices[i]" at ox(p) + 2.6, bt + 0.85 center font ",10"
    set label (10 * p + 5) "table's gradient" at tx(p, 0.5), bt + 0.45 center font ",10"
    set label (10 * p + 6) "g, out's gradient" at rx(p, 0.5), bt + 0.45 center font ",10"
}
set label 2 "the arrows are what the library did: gather_rows run on a table with one 1, a backward from one 1" \
    at width / unit / 2, 0.35 center font ",10"
set style fill solid 1.0 border lc rgb "black"

# one case: its boxes and values, then the arrows, drawn from the cells in column 0
box(part, xf, yf) = sprintf("%s using (%s):(%s):(cw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, " . \
                            "%s using (%s):(%s):6 with labels font ',11'", part, xf, yf, part, xf, yf)
index_box(part, p, top) = sprintf("%s using (ix(%d)):(oy(%g,$1)):(iw / 2):(ch / 2):(tint($5)) with boxxyerror fc rgb variable, " . \
                                  "%s using (ix(%d)):(oy(%g,$1)):(sprintf('[%%d] = %%d', $1, $3)) with labels font ',11'", part, p, top, part, p, top)
arrow(part, x1, y1, x2, y2) = sprintf("%s using ($2 == 0 ? %s : NaN):(%s):((%s) - (%s)):((%s) - (%s)):(okabe($5)) " . \
                                      "with vectors head filled size 0.1,20 lw 1.5 lc rgb variable", part, x1, y1, x2, x1, y2, y1)
case(p) = box("$table", sprintf("tx(%d,$2)", p), sprintf("ty(ft,$1)")) . ", " . \
          index_box(sprintf("$indices%d", p), p, ft) . ", " . index_box(sprintf("$indices%d", p), p, bt) . ", " . \
          box(sprintf("$out%d", p), sprintf("rx(%d,$2)", p), "oy(ft,$1)") . ", " . \
          box(sprintf("$g%d", p), sprintf("rx(%d,$2)", p), "oy(bt,$1)") . ", " . \
          box(sprintf("$grad%d", p), sprintf("tx(%d,$2)", p), "ty(bt,$1)") . ", " . \
          arrow(sprintf("$out%d", p), sprintf("table_right(%d)", p), "ty(ft, int($4) / 2)", sprintf("ix(%d) - iw / 2", p), "oy(ft,$1)") . ", " . \
          arrow(sprintf("$out%d", p), sprintf("ix(%d) + iw / 2", p), "oy(ft,$1)", sprintf("rx(%d,0) - cw / 2", p), "oy(ft,$1)") . ", " . \
          arrow(sprintf("$g%d", p), sprintf("rx(%d,0) - cw / 2", p), "oy(bt,$1)", sprintf("ix(%d) + iw / 2", p), "oy(bt,$1)") . ", " . \
          arrow(sprintf("$g%d", p), sprintf("ix(%d) - iw / 2", p), "oy(bt,$1)", sprintf("table_right(%d)", p), "ty(bt, int($4) / 2)")
case1 = case(1)
case2 = case(2)
plot @case1, @case2
