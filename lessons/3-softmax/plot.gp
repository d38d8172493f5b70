# plot.gp - lesson 3's plot: the naive and the stable softmax against the logit scale.
# usage: gnuplot -e "data='FILE.dat'; output='FILE.png'" plot.gp   (no display needed)
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,540 font ",12"
} else {
    set terminal png size 960,540
}
set output output

# Where float32 gives out: e^x passes the largest float32 (2^128 - 2^104) above `overflow`,
# and rounds to 0 (below half the smallest float32, 2^-149) below `underflow`.
overflow = log(2.0**128 - 2.0**104)
underflow = log(2.0**-150)
# The naive sum e^(s-2) + e^(s-1) + e^s = e^s (1 + e^-1 + e^-2) overflows a little earlier.
sum_overflow = overflow - log(1 + exp(-1) + exp(-2))

set title "softmax([s-2, s-1, s]) in float32: error against a double-precision reference"
set xlabel "logit scale s"
set ylabel "max |p - p_{ref}|   (1 = nan)"
set logscale y
set yrange [1e-10:5]  # the strip below the stable line's 1.2e-8 holds the two labels
set format y "10^{%L}"
set xrange [-120:120]
set grid
set key top center opaque
# Each label sits in the bottom strip, a character away from its dashed line, on an opaque box
# so that no grid line runs through its text.
set style textbox opaque noborder
set arrow from sum_overflow, graph 0 to sum_overflow, graph 1 nohead dashtype 2 linecolor rgb "#555555"
set label sprintf("the sum of e^x\noverflows (s > %.2f)", sum_overflow) at sum_overflow, 1e-9 right offset character -1, 0 boxed front
set arrow from underflow, graph 0 to underflow, graph 1 nohead dashtype 2 linecolor rgb "#555555"
set label sprintf("every e^x rounds\nto 0 (s < %.2f)", underflow) at underflow, 1e-9 left offset character 1, 0 boxed front
# The stable line is dashed and drawn last: where the naive error is as small, both lines show.
plot data using 1:2 with lines linewidth 2 linecolor rgb "#9400d3" title "naive: exp(x) / sum exp(x)", \
     data using 1:3 with lines linewidth 3 dashtype (8, 5) linecolor rgb "#009e73" title "stable: exp(x - max) / sum exp(x - max)"
