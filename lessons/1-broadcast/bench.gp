# bench.gp - lesson 1's benchmark plot: the chapter's index map against the library's stride-0
# view, as the tensor grows; time per element (left) and memory (right). The data is bench
# --data's (make lesson1 bench-plots).
# usage: gnuplot -e "data='FILE.dat'; output='FILE.png'" bench.gp   (no display needed)
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1200,620 font ",14"
} else {
    set terminal png size 1200,620
}
set output output

# columns: side elements data_bytes map_bytes plain_ns views_ns map_built_ns map_prebuilt_ns
# The axes span the measurements with room to spare, whatever the machine or --sizes gave.
stats data using 1 nooutput
n_min = STATS_min; n_max = STATS_max
t_min = 1e300; t_max = 0
do for [c = 5:8] {
    stats data using c nooutput
    t_min = STATS_min < t_min ? STATS_min : t_min
    t_max = STATS_max > t_max ? STATS_max : t_max
}

# The two panels share fixed margins; each key sits below its panel's x label, out of the data's way.
set multiplot layout 1,2 title "(N,N) + (N,) in float32, one thread: the index map against the stride-0 view" \
    margins screen 0.075, 0.98, 0.32, 0.84 spacing screen 0.1, 0
set xlabel "N (the result has N x N elements)"
set logscale x 2
set xrange [n_min / 1.4 : n_max * 1.4]
set grid
set key at graph 0, graph -0.25 left top Left reverse

set title "time per element of the result"
set ylabel "ns per element"
set logscale y 10
set yrange [t_min / 3 : t_max * 3]
set format y "%g"
plot data using 1:7 with linespoints linewidth 2 pointtype 7 linecolor rgb "#d62728" title "index map, built in the call (the chapter)", \
     data using 1:8 with linespoints linewidth 2 pointtype 5 linecolor rgb "#ff7f0e" title "index map, built beforehand", \
     data using 1:6 with linespoints linewidth 2 pointtype 9 linecolor rgb "#1f77b4" title "tensor\\_add: the bias through a stride-0 view", \
     data using 1:5 with linespoints linewidth 2 dashtype 2 pointtype 1 linecolor rgb "#444444" title "plain C loop, same-shape arrays"

set title "memory (the data: a, the bias and the result)"
set ylabel "MB"
set yrange [*:*]
plot data using 1:(($3 + $4) / 1e6) with linespoints linewidth 2 pointtype 7 linecolor rgb "#d62728" title "index map: the data and the bias's map", \
     data using 1:($3 / 1e6) with linespoints linewidth 2 pointtype 9 linecolor rgb "#1f77b4" title "stride-0 view: the data alone"

unset multiplot
