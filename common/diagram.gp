# diagram.gp - what every picture of memory shares. A lesson's diagram-NAME.gp sets width and
# height (pixels) and unit (pixels per unit of its coordinates), then loads this and its data:
#   gnuplot -e "data='FILE.dat'; output='FILE.png'" lessons/N-topic/diagram-NAME.gp
# (from the course's root, as make runs it; no display needed).
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size width,height font ",11"
} else {
    set terminal png size width,height
}
set output output
unset border
unset tics
unset key
set margins 0, 0, 0, 0
set xrange [0:width / unit]
set yrange [0:height / unit]

# Okabe and Ito's palette, told apart with every common colour-vision deficiency. The pictures
# also say in text what each colour means, so that colour is never the only cue.
okabe(k) = k == 0 ? 0x0072B2 : k == 1 ? 0xE69F00 : k == 2 ? 0x009E73 : k == 3 ? 0xCC79A7 : \
           k == 4 ? 0x56B4E9 : k == 5 ? 0xD55E00 : k == 6 ? 0xF0E442 : 0x999999
# the same colour mixed with white, as a cell's fill under black text
mix(c, f) = int(((c >> 16) & 255) * f + 255 * (1 - f)) * 65536 + int(((c >> 8) & 255) * f + 255 * (1 - f)) * 256 + \
            int((c & 255) * f + 255 * (1 - f))
tint(k) = k < 0 ? 0xFFFFFF : mix(okabe(k), 0.45)
# cell texts are the library's words, taken as they are: b[0] is no subscript
set termoption noenhanced
