# bench.gp - lesson 1's benchmark plot: the chapter's index map against the library's stride-0
# view, as the tensor grows; time per element (left) and memory (right). The data is bench
# --data's (make lesson1 plot).
# usage: gnuplot -e "data='FILE.dat'; output='FILE.png'" bench.gp   (no display needed)
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1200,500 font ",11"
} else {
    set terminal png size 1200,500
}
set output output

# columns: side elements data_bytes map_bytes plain_ns views_ns map_built_ns map_prebuilt_ns
set multiplot layout 1,2 title "(N,N) + (N,) in float32, one thread: the index map against the stride-0 view"

set xlabel "N (the result has N x N elements)"
set logscale x 2
set xrange [48:5500]
set grid
set key top left

set title "time per element of the result"
set ylabel "ns per element"
set logscale y 10
set yrange [0.03:1000]  # room above the slowest line for the key
set format y "%g"
plot data using 1:7 with linespoints linewidth 2 pointtype 7 linecolor rgb "#d62728" title "index maps, built in the call", \
     data using 1:8 with linespoints linewidth 2 pointtype 5 linecolor rgb "#ff7f0e" title "index maps, built beforehand", \
     data using 1:6 with linespoints linewidth 2 pointtype 9 linecolor rgb "#1f77b4" title "stride-0 view (tensor\\_add)", \
     data using 1:5 with linespoints linewidth 2 dashtype 2 pointtype 1 linecolor rgb "#444444" title "plain loop, same-shape arrays"

set title "memory"
set ylabel "MB"
set key bottom right
set yrange [0.01:1000]
plot data using 1:($4 / 1e6) with linespoints linewidth 2 pointtype 7 linecolor rgb "#d62728" title "the two index maps (16 bytes per element)", \
     data using 1:($3 / 1e6) with linespoints linewidth 2 pointtype 9 linecolor rgb "#1f77b4" title "the data: a, the bias, the result (the view adds none)"

unset multiplot
