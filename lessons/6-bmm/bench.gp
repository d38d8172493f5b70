# bench.gp - lesson 6's benchmark plot: GFLOP/s of each matmul kernel against the matrix size,
# with tuned OpenBLAS as the line to reach. The data is bench --data's (make lesson6 plot).
# usage: gnuplot -e "data='FILE.dat'; output='FILE.png'" bench.gp   (no display needed)
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,540 font ",11"
} else {
    set terminal png size 960,540
}
set output output

# columns: n naive_ijp loop_order_ipj blocked_ipj library_generic library_avx2 library openblas_detected openblas_tuned
# (library_avx2 is "-" where the CPU has no AVX-512: library is then the AVX2+FMA kernel itself)
set datafile missing "-"
set title "n x n x n matmul, float32, one thread: from the triple loop to the library's kernel"
set xlabel "n"
set ylabel "GFLOP/s (2 n^3 / time)"
set logscale x 2
set logscale y 10
set xrange [48:1400]
set yrange [0.5:300]
set format y "%g"
set grid
set key outside right center
plot data using 1:9 with lines linewidth 5 dashtype 2 linecolor rgb "#444444" title "OpenBLAS, tuned core", \
     data using 1:8 with linespoints linewidth 1 dashtype 3 linecolor rgb "#888888" pointtype 1 title "OpenBLAS, detected core", \
     data using 1:7 with linespoints linewidth 2 pointtype 7 linecolor rgb "#17becf" title "library (its native kernel)", \
     data using 1:6 with linespoints linewidth 2 pointtype 3 linecolor rgb "#9467bd" title "library, AVX2+FMA kernel", \
     data using 1:5 with linespoints linewidth 2 pointtype 5 linecolor rgb "#ff7f0e" title "library, plain C kernel", \
     data using 1:4 with linespoints linewidth 2 pointtype 9 linecolor rgb "#2ca02c" title "blocked i,p,j", \
     data using 1:3 with linespoints linewidth 2 pointtype 11 linecolor rgb "#1f4e9c" title "loop order i,p,j", \
     data using 1:2 with linespoints linewidth 2 pointtype 13 linecolor rgb "#d62728" title "naive i,j,p"
