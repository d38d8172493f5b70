# bench.gp - lesson 6's benchmark plot: GFLOP/s of each matmul kernel against the matrix size,
# with tuned OpenBLAS as the line to reach. The data is bench --data's (make lesson6 bench-plots).
# usage: gnuplot -e "data='FILE.dat'; output='FILE.png'" bench.gp   (no display needed)
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,540 font ",12"
} else {
    set terminal png size 960,540
}
set output output

# columns: n naive_ijp loop_order_ipj blocked_ipj library_portable library_avx2 library openblas_detected openblas_tuned
# "-" is a time not measured. How each column is drawn, listed in the key's order:
array style[9]
style[9] = "with lines linewidth 5 dashtype 2 linecolor rgb '#444444' title 'OpenBLAS, tuned core'"
style[8] = "with linespoints linewidth 1 dashtype 3 pointtype 1 linecolor rgb '#888888' title 'OpenBLAS, detected core'"
style[7] = "with linespoints linewidth 2 pointtype 7 linecolor rgb '#17becf' title 'library (its native kernel)'"
style[6] = "with linespoints linewidth 2 pointtype 3 linecolor rgb '#9467bd' title 'library, AVX2+FMA kernel'"
style[5] = "with linespoints linewidth 2 pointtype 5 linecolor rgb '#ff7f0e' title 'library, plain C kernel'"
style[4] = "with linespoints linewidth 2 pointtype 9 linecolor rgb '#2ca02c' title 'blocked i,p,j'"
style[3] = "with linespoints linewidth 2 pointtype 11 linecolor rgb '#1f4e9c' title 'loop order i,p,j'"
style[2] = "with linespoints linewidth 2 pointtype 13 linecolor rgb '#d62728' title 'naive i,j,p'"

# A column can be "-" throughout: OpenBLAS's two when the benchmark was built without it,
# library_avx2 where the CPU has no AVX-512 (library is then that kernel), a slow kernel when
# --sizes holds only sizes it skips. Such a column is left out of the plot, not plotted empty;
# the y axis spans the columns that are plotted.
series = ""
rate_min = 1e300; rate_max = 0
do for [c = 9:2:-1] {
    stats data using (strcol(c) eq "-" ? 0 : 1) nooutput
    measured = STATS_sum > 0
    if (c == 9) { have_openblas = measured }
    if (measured) {
        series = series . sprintf("%sdata using 1:%d %s", series eq "" ? "" : ", ", c, style[c])
        stats data using (strcol(c) eq "-" ? NaN : column(c)) nooutput
        rate_min = STATS_min < rate_min ? STATS_min : rate_min
        rate_max = STATS_max > rate_max ? STATS_max : rate_max
    }
}
stats data using 1 nooutput
n_min = STATS_min; n_max = STATS_max
if (!have_openblas) {
    print "bench.gp: OpenBLAS was not found when the benchmark was built (tests/ensure-deps.sh openblas installs it): the plot leaves out its two series and the line to reach"
}

set datafile missing "-"
set title "n x n x n matmul, float32, one thread: from the triple loop to the library's kernel" . \
          (have_openblas ? "" : "\n(no OpenBLAS in this run, so no line to reach)")
set xlabel "n"
set ylabel "GFLOP/s (2 n^3 / time)"
set logscale x 2
set logscale y 10
set xrange [n_min / 1.35 : n_max * 1.35]
set yrange [rate_min / 2 : rate_max * 2]
set format y "%g"
set grid
set key outside right center Left reverse
eval "plot " . series
