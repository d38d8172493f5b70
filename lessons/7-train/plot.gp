# plot.gp - lesson 7's plot: training and validation loss against the step, with the baselines.
# usage: gnuplot -e "data='FILE.dat'; output='FILE.png'" plot.gp   (no display needed)
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 960,540 font ",11"
} else {
    set terminal png size 960,540
}
set output output
set title "Lesson 7: a 2-block transformer on English words (cross-entropy, nats per character)"
set xlabel "training step (32 sequences of 16 characters each)"
set ylabel "loss (nats per character)"
set grid
set key at graph 0.97, graph 0.72 right box opaque
set yrange [1.8:3.5]
plot data using 1:5 with lines dashtype 3 linewidth 2 linecolor rgb "#777777" title "uniform: ln 27", \
     data using 1:4 with lines dashtype 2 linewidth 2 linecolor rgb "#d95f02" title "bigram (validation)", \
     data using 1:2 with linespoints pointtype 6 linewidth 2 linecolor rgb "#1b9e77" title "transformer: training batches", \
     data using 1:3 with linespoints pointtype 7 linewidth 2 linecolor rgb "#7570b3" title "transformer: validation"
