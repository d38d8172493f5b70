/*
 * simd_sum.h - the fast kernels' one summation policy, and the one place they add in lanes.
 * simd.h includes it once per width (LANES 8 and 16), as simd_lanes.h.
 *
 * A fast kernel adds a row many terms at a time, each lane a running sum of its own (one
 * running sum makes every add wait for the one before). How those sums are kept follows the
 * reference kernel's, never less exact:
 *   - where the reference adds in float (the core's sums over an axis, lesson 1's gradient of a
 *     broadcast operand, layer norm's means): eight float lanes (sumf_*), over chunks of
 *     SUM_CHUNK floats, each chunk's lanes totalled in double. A float running sum loses more
 *     digits the larger it grows; a chunk's cannot grow far. A chunk whose lanes overflow float
 *     (+inf and -inf would meet as nan) is added again in double.
 *   - where the reference adds in double (lesson 3's sums of exps and its dot products,
 *     attention's softmax): each term widened to double, in lanes of doubles (V(sumd_*)).
 * A product (lesson 6's matmul, and the small ones inside lesson 7's attention) keeps its sums
 * in a tile of registers, as a BLAS does.
 */

/* ==== in double: LANES running sums of doubles =========================================== */

typedef struct {
    VD low, high; /* the sums of lanes 0 .. LANES/2 - 1, and of the rest */
} V(sumd);

SIMD_INLINE void V(sumd_add)(V(sumd) * s, VF terms) {
    s->low += V(low_double)(terms);
    s->high += V(high_double)(terms);
}
/* a * b, the product taken in double */
SIMD_INLINE void V(sumd_add_products)(V(sumd) * s, VF a, VF b) {
    s->low += V(low_double)(a) * V(low_double)(b);
    s->high += V(high_double)(a) * V(high_double)(b);
}
/* the sum of every lane: lane k's and lane k + LANES/2's, then those added pairwise */
SIMD_INLINE double V(sumd_total)(V(sumd) s) {
    VD t = s.low + s.high;
    for (int w = 1; w < LANES / 2; w *= 2)
        for (int k = 0; k < LANES / 2; k += 2 * w) t[k] += t[k + w];
    return t[0];
}
/* lane k's own sum, where each lane is a row of its own */
SIMD_INLINE double V(sumd_lane)(V(sumd) s, int k) { return k < LANES / 2 ? s.low[k] : s.high[k - LANES / 2]; }
/* each lane's sum, rounded to float */
SIMD_INLINE VF V(sumd_lanes)(V(sumd) s) { return V(from_doubles)(s.low, s.high); }
/* 1 / each lane's sum, rounded to float */
SIMD_INLINE VF V(sumd_reciprocals)(V(sumd) s) { return V(from_doubles)(1.0 / s.low, 1.0 / s.high); }

#if LANES == 8
/* ==== in float: eight running float sums, totalled in double ============================= */

enum { SUM_CHUNK = 1024 };

SIMD_INLINE void sumf_add(vf8 *acc, vf8 terms) { *acc += terms; }

/* A chunk's eight running sums, totalled in double, lane 0 first. */
SIMD_INLINE double sumf_total(vf8 acc) {
    double total = 0.0;
    for (int k = 0; k < 8; k++) total += acc[k];
    return total;
}

/* Eight chunks' totals at once, lane r sumf_total(acc[r]) rounded to float: the same lanes
 * added in the same order, as eight rows turned into columns (one row's total is a chain of
 * dependent adds; eight side by side are not). */
SIMD_INLINE vf8 sumf_totals8(const vf8 acc[8]) {
    float rows[64], cols[64];
    SIMD_UNROLL
    for (int r = 0; r < 8; r++) vf8_store(rows + r * 8, acc[r]);
    rows_to_columns(8, rows, 8, 8, cols, 8);
    vd4 low = vf8_low_double(vf8_load(cols)), high = vf8_high_double(vf8_load(cols));
    SIMD_UNROLL
    for (int e = 1; e < 8; e++) {
        low += vf8_low_double(vf8_load(cols + e * 8));
        high += vf8_high_double(vf8_load(cols + e * 8));
    }
    return vf8_from_doubles(low, high);
}

/* A chunk's total from its running sums, or, where a lane overflowed, the chunk x[0..n) again,
 * in double. */
SIMD_INLINE double sumf_chunk(vf8 acc, const float *x, int64_t n) {
    double total = sumf_total(acc);
    if (isfinite(total)) return total;
    total = 0.0;
    for (int64_t i = 0; i < n; i++) total += x[i];
    return total;
}

/* The sums of k <= 4 rows of n contiguous floats by the float policy, into totals[0..k), the
 * last n % 8 floats of each added one by one in double. Rows read side by side keep more of
 * memory's requests in flight than one. */
SIMD_INLINE void sumf_rows(int k, const float *const *rows, int64_t n, double *totals) {
    int64_t i = 0;
    for (int r = 0; r < k; r++) totals[r] = 0.0;
    while (n - i >= 8) {
        vf8 acc[4] = {{0}};
        int64_t start = i, end = n - i > SUM_CHUNK ? i + SUM_CHUNK : i + (n - i) / 8 * 8;
        for (; i < end; i += 8) {
            SIMD_UNROLL
            for (int r = 0; r < k; r++) sumf_add(&acc[r], vf8_load(rows[r] + i));
        }
        for (int r = 0; r < k; r++) totals[r] += sumf_chunk(acc[r], rows[r] + start, end - start);
    }
    for (int r = 0; r < k; r++)
        for (int64_t j = i; j < n; j++) totals[r] += rows[r][j];
}
SIMD_INLINE double sumf_row(const float *x, int64_t n) {
    double total;
    sumf_rows(1, &x, n, &total);
    return total;
}

/* One long row (a whole tensor's sum) as four quarters read side by side. */
SIMD_INLINE double sumf_row_quarters(const float *x, int64_t n) {
    int64_t q = n / 4 / 8 * 8;
    if (q < SUM_CHUNK) return sumf_row(x, n);
    double t[4];
    sumf_rows(4, (const float *[]){x, x + q, x + 2 * q, x + 3 * q}, q, t);
    return ((t[0] + t[1]) + (t[2] + t[3])) + sumf_row(x + 4 * q, n - 4 * q);
}

/* x[0], x[step], ..., n of them, one at a time in double: a row that is not contiguous. */
SIMD_INLINE double sumd_strided(const float *x, int64_t n, int64_t step) {
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) total += x[i * step];
    return total;
}
#endif
