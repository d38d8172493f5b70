/*
 * train_lanes.h - bodies of train_fast.c's kernels written once for LANES floats a vector: 8
 * (vf8, for the portable build and AVX2) or 16 (vf16, for AVX-512). train_fast.c includes it
 * once for each, with LANES defined; the names it defines end in the number (gelu_body8,
 * attention_body16). Here are GELU's forward, whose tanh is most of its time, and the
 * attention over the heads, whose lesson 7 sizes (T = 16 query rows a head) fill sixteen lanes
 * in one pass.
 */
#define LANES_CAT2(a, b) a##b
#define LANES_CAT(a, b) LANES_CAT2(a, b)
#define VF LANES_CAT(vf, LANES)                       /* vf8 or vf16 */
#define V(op) LANES_CAT(LANES_CAT(vf, LANES), _##op) /* V(load): vf8_load or vf16_load */
#define LANE(name) LANES_CAT(name, LANES)            /* LANE(attention_body): attention_body8 */
#define ROWS_TO_COLUMNS LANES_CAT(LANES_CAT(rows, LANES), _to_columns) /* platform.h's rows8_to_columns */
#define COLUMNS_TO_ROWS LANES_CAT(columns_to_rows, LANES)

/* ==== GELU ================================================================================ */

/* LANES at a time, tanh from the vector exp (common/vector_lanes.h); the last n % LANES go
 * through the same vector code from a padded copy, so a value's result does not depend on where
 * it sits. */
VECTOR_BODY void LANE(gelu_lanes)(const float *x, float *out, float *tanh_u) {
    VF v = V(load)(x);
    VF t = V(tanh)(GELU_S * ((GELU_A * v * v) * v + v));
    V(store)(tanh_u, t);
    V(store)(out, 0.5f * v * (1.0f + t));
}

VECTOR_BODY void LANE(gelu_body)(const float *x, int64_t n, float *out, float *tanh_u) {
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) LANE(gelu_lanes)(x + i, out + i, tanh_u + i);
    if (i < n) {
        float xs[LANES] = {0}, o[LANES], t[LANES];
        for (int64_t k = 0; k < n - i; k++) xs[k] = x[i + k];
        LANE(gelu_lanes)(xs, o, t);
        for (int64_t k = 0; k < n - i; k++) out[i + k] = o[k], tanh_u[i + k] = t[k];
    }
}

/* ==== attention over the heads ============================================================= */

/* One head of one batch at a time, LANES of its query rows at once (platform.h's
 * rows8_to_columns turns them into columns): their scores against a key are one vector, their
 * softmaxes over the keys need no sum across lanes (as softmax_fast.c's short rows), and each
 * sum over the keys or the columns of a head is a few multiply-adds of whole vectors. T and D
 * must be multiples of LANES and of 8 (y's, gq's, gk's and gv's rows take LANES columns at a
 * time), both at most ATTENTION_MAX. */

/* out[o * os + lane] = (or += when add) the sum over p < n of a[o * ao + p * as] * b[p * bs +
 * lane], for the eight o: eight sums side by side, so that each vector of b is loaded once for
 * all of them and no multiply-add waits for another (with one sum at a time, each waits for the
 * one before) */
VECTOR_BODY void LANE(weighted_rows)(const float *a, int64_t ao, int64_t as, const float *b, int64_t bs, int64_t n,
                                     float *out, int64_t os, bool add) {
    VF s[8];
    VECTOR_UNROLL for (int o = 0; o < 8; o++) s[o] = V(splat)(0.0f);
    for (int64_t p = 0; p < n; p++, a += as, b += bs) {
        VF bp = V(load)(b);
        VECTOR_UNROLL for (int o = 0; o < 8; o++) s[o] += a[o * ao] * bp;
    }
    VECTOR_UNROLL for (int o = 0; o < 8; o++) V(store)(out + o * os, add ? V(load)(out + o * os) + s[o] : s[o]);
}

/* one head: q, k, v, y at its column h*D of row 0, rows c apart; w its (T, T) weights; mask_t
 * the mask turned, mask_t[j * t + i] = mask[i * t + j] */
VECTOR_BODY void LANE(attention_head_body)(int64_t t, int64_t d, int64_t c, const float *q, const float *k,
                                           const float *v, const float *mask_t, float scale, float *w, float *y) {
    float qc[ATTENTION_MAX * LANES], wc[ATTENTION_MAX * LANES];
    for (int64_t i = 0; i < t; i += LANES) { /* rows i .. i + LANES - 1, lane r row i + r */
        ROWS_TO_COLUMNS(q + i * c, c, d, qc, LANES);
        VF m = V(splat)(-INFINITY);
        for (int64_t j = 0; j < t; j += 8)
            LANE(weighted_rows)(k + j * c, c, 1, qc, LANES, d, wc + j * LANES, LANES, false);
        for (int64_t j = 0; j < t; j++) {
            VF s = V(load)(wc + j * LANES) * scale + V(load)(mask_t + j * t + i);
            V(store)(wc + j * LANES, s);
            m = V(max)(s, m); /* skips a nan, as the reference's `if (w[j] > m)` */
        }
        /* each row's sum of exps in double, as the reference's: the low lanes and the high */
        __typeof__(V(low_double)(m)) low = {0}, high = {0};
        for (int64_t j = 0; j < t; j++) {
            VF e = V(exp_unclamped)(V(load)(wc + j * LANES) - m); /* of a score less the max: <= 0, or nan */
            V(store)(wc + j * LANES, e);
            low += V(low_double)(e), high += V(high_double)(e);
        }
        VF inv = V(from_doubles)(1.0 / low, 1.0 / high);
        for (int64_t j = 0; j < t; j++) V(store)(wc + j * LANES, V(load)(wc + j * LANES) * inv);
        COLUMNS_TO_ROWS(wc, LANES, t, w + i * t, t);
        /* y's rows i + r, eight at a time, LANES of their columns in lanes: each straight into y */
        for (int64_t r = 0; r < LANES; r += 8)
            for (int64_t e = 0; e < d; e += LANES)
                LANE(weighted_rows)(wc + r, 1, LANES, v + e, c, t, y + (i + r) * c + e, c, false);
    }
}

/* The reference's backward for one head, LANES query rows at once as in the forward: their
 * dw_ij = g_i . v_j and ds_ij in lanes, kept for the whole head turned (ds_t[j * t + i], and w
 * the same way), gq's rows from those; then each row of gk and of gv, a sum over all the query
 * rows at once, LANES of its columns in lanes. */
VECTOR_BODY void LANE(attention_head_backward_body)(int64_t t, int64_t d, int64_t c, const float *q, const float *k,
                                                    const float *v, const float *w, float scale, const float *gy,
                                                    float *gq, float *gk, float *gv, bool accumulate) {
    float w_t[ATTENTION_MAX * ATTENTION_MAX], ds_t[ATTENTION_MAX * ATTENTION_MAX], gc[ATTENTION_MAX * LANES];
    for (int64_t i = 0; i < t; i += LANES) { /* rows i .. i + LANES - 1, lane r row i + r */
        ROWS_TO_COLUMNS(w + i * t, t, t, w_t + i, t);
        ROWS_TO_COLUMNS(gy + i * c, c, d, gc, LANES);
        for (int64_t j = 0; j < t; j += 8)
            LANE(weighted_rows)(v + j * c, c, 1, gc, LANES, d, ds_t + j * t + i, t, false); /* dw */
        VF zero = V(splat)(0.0f);
        __typeof__(V(low_double)(zero)) low = {0}, high = {0}; /* each row's sum of w_ij dw_ij, in double */
        for (int64_t j = 0; j < t; j++) {
            VF dw = V(load)(ds_t + j * t + i), wj = V(load)(w_t + j * t + i);
            low += V(low_double)(dw) * V(low_double)(wj), high += V(high_double)(dw) * V(high_double)(wj);
        }
        VF dot = V(from_doubles)(low, high); /* dw - dot then in float, where the reference rounds after */
        for (int64_t j = 0; j < t; j++)
            V(store)(ds_t + j * t + i, V(load)(w_t + j * t + i) * (V(load)(ds_t + j * t + i) - dot) * scale);
        if (gq) /* its rows i + r, eight at a time, LANES of their columns in lanes, as y's */
            for (int64_t r = 0; r < LANES; r += 8)
                for (int64_t e = 0; e < d; e += LANES)
                    LANE(weighted_rows)(ds_t + i + r, 1, t, k + e, c, t, gq + (i + r) * c + e, c, accumulate);
    }
    for (int64_t j = 0; j < t; j += 8) /* rows j .. j+7 of gk and of gv */
        for (int64_t e = 0; e < d; e += LANES) {
            if (gk) LANE(weighted_rows)(ds_t + j * t, t, 1, q + e, c, t, gk + j * c + e, c, accumulate);
            if (gv) LANE(weighted_rows)(w_t + j * t, t, 1, gy + e, c, t, gv + j * c + e, c, accumulate);
        }
}

VECTOR_BODY void LANE(attention_body)(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q, const float *k,
                                      const float *v, const float *mask, float scale, float *weights, float *y) {
    int64_t c = heads * d;
    float mask_t[ATTENTION_MAX * ATTENTION_MAX];
    for (int64_t i = 0; i < t; i += 8) rows8_to_columns(mask + i * t, t, t, mask_t + i, t);
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t h = 0; h < heads; h++) {
            int64_t at = bi * t * c + h * d;
            LANE(attention_head_body)(t, d, c, q + at, k + at, v + at, mask_t, scale,
                                      weights + (bi * heads + h) * t * t, y + at);
        }
}

VECTOR_BODY void LANE(attention_backward_body)(int64_t b, int64_t t, int64_t heads, int64_t d, const float *q,
                                               const float *k, const float *v, const float *weights, float scale,
                                               const float *gy, float *gq, float *gk, float *gv, bool accumulate) {
    int64_t c = heads * d;
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t h = 0; h < heads; h++) {
            int64_t at = bi * t * c + h * d;
            LANE(attention_head_backward_body)(t, d, c, q + at, k + at, v + at, weights + (bi * heads + h) * t * t,
                                               scale, gy + at, gq ? gq + at : NULL, gk ? gk + at : NULL,
                                               gv ? gv + at : NULL, accumulate);
        }
}

#undef LANES_CAT2
#undef LANES_CAT
#undef VF
#undef V
#undef LANE
#undef ROWS_TO_COLUMNS
#undef COLUMNS_TO_ROWS
