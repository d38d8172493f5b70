/*
 * simd_sum.h - the fast kernels' one summation policy, and the one place a sum is split across
 * lanes (included by simd.h once per width). Each lane keeps a running sum, as exact as the
 * reference's or more:
 *   - where the reference adds in float (sums over an axis, layer norm's means): eight float
 *     lanes over chunks of SUM_CHUNK floats, each chunk's lanes totalled in double, so no float
 *     sum grows far; a chunk that overflows float is added again in double (sumf_*).
 *   - where it adds in double (softmax's sums and dot products): lanes of doubles (V(sumd_*)).
 * Where each lane is an output of its own (a product's tile, columns summed down rows), a
 * kernel adds in its vector type, in float where the reference does.
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

/* Lane r: sumf_total(acc[r]) rounded to float, the same adds in the same order, eight chains
 * side by side (rows turned into columns). */
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

/* The sums of k <= 4 rows of n floats by the float policy, read side by side (more of memory's
 * requests in flight), the last n % 8 added one by one in double. */
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
