/*
 * simd_lanes.h - the vector helpers and the fast kernels' one exp and tanh, written once for
 * LANES lanes: simd.h includes it for 8 (vf8_load, vf8_exp, ...) and 16 (vf16_load, ...).
 */

SIMD_INLINE VF V(load)(const float *p) {
    VF v;
    memcpy(&v, p, sizeof v);
    return v;
}
SIMD_INLINE void V(store)(float *p, VF v) { memcpy(p, &v, sizeof v); }
SIMD_INLINE VF V(splat)(float x) {
    VF v;
    for (int k = 0; k < LANES; k++) v[k] = x;
    return v;
}

/* The larger (smaller) of each pair, b's where either is nan: the form that compiles to one
 * max (min) instruction. */
SIMD_INLINE VF V(max)(VF a, VF b) {
    VF r;
    for (int k = 0; k < LANES; k++) r[k] = a[k] > b[k] ? a[k] : b[k];
    return r;
}
SIMD_INLINE VF V(min)(VF a, VF b) {
    VF r;
    for (int k = 0; k < LANES; k++) r[k] = a[k] < b[k] ? a[k] : b[k];
    return r;
}
/* the largest lane, skipping a nan as V(max) does */
SIMD_INLINE float V(max_lanes)(VF v) {
    float m = v[0];
    for (int k = 1; k < LANES; k++) m = v[k] > m ? v[k] : m;
    return m;
}

/* The low and the high half, the two joined, and the halves widened to double and back. */
SIMD_INLINE VH V(low)(VF v) {
    VH h;
    memcpy(&h, &v, sizeof h);
    return h;
}
SIMD_INLINE VH V(high)(VF v) {
    VH h;
    memcpy(&h, (const char *)&v + sizeof h, sizeof h);
    return h;
}
SIMD_INLINE VF V(join)(VH low, VH high) {
    VF v;
    memcpy(&v, &low, sizeof low);
    memcpy((char *)&v + sizeof low, &high, sizeof high);
    return v;
}
SIMD_INLINE VD V(low_double)(VF v) { return __builtin_convertvector(V(low)(v), VD); }
SIMD_INLINE VD V(high_double)(VF v) { return __builtin_convertvector(V(high)(v), VD); }
SIMD_INLINE VF V(from_doubles)(VD low, VD high) {
    return V(join)(__builtin_convertvector(low, VH), __builtin_convertvector(high, VH));
}

/* 2^k for integers k in -126..127: the biased exponent k + 127, shifted into place (unsigned, so
 * that a lane of garbage, which the caller masks, wraps instead of overflowing). */
SIMD_INLINE VF V(pow2)(VI k) { return (VF)(((VU)k + 127u) << 23); }

/* The heart of e^x: x = n ln2 + r with n an integer and |r| <= ln2 / 2 (for |x| below about
 * 88), so that e^x = 2^n e^r. Returns e^r, a degree-7 polynomial in r, and n, as an integer.
 * n = round(x / ln2): adding 1.5 * 2^23 rounds x / ln2 to an integer, which the sum's low bits
 * then hold (its bits less those of 1.5 * 2^23, unsigned, so that a lane out of range gives
 * garbage, never undefined behaviour, as converting it to an integer would). r = x - n ln2,
 * ln2 split into a part with few bits (n * 0.693359375 is exact) and the rest, so that r keeps
 * its low bits (Cody and Waite); the polynomial is Cephes' (as in its expf), by Horner's rule. */
SIMD_INLINE VF V(exp_reduced)(VF x, VI *n) {
    VF shifted = x * 1.44269504088896341f + 12582912.0f, nf = shifted - 12582912.0f;
    *n = (VI)((VU)shifted - 0x4B400000u); /* 0x4B400000: the bits of 1.5 * 2^23 */
    VF r = x - nf * 0.693359375f;
    r = r - nf * -2.12194440e-4f;
    VF p = V(splat)(1.9875691500e-4f); /* e^r = 1 + r + r^2 p(r) */
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return p * (r * r) + r + 1.0f;
}

/* e^x for floats no greater than 89, or nan, as softmax's x - max is: 2^n e^r from
 * V(exp_reduced), with 2^n built directly in the float's exponent bits. Within 2 units in the
 * last place of the exact e^x, with gradual underflow: exactly 0 below -103.97, nan for nan.
 * Below -104, where e^x rounds to 0, a lane's result is replaced by 0 (an and with a mask), and
 * its n by 0 first: a multiply whose result rounds to a tiny number or 0 takes the CPU's slow
 * path (a microcode assist), which x from -112 to -104 would otherwise take. */
SIMD_INLINE VF V(exp_unclamped)(VF x) {
    VI zero = x < V(splat)(-104.0f); /* false for nan */
    VI n;
    VF p = V(exp_reduced)(x, &n);
    n &= ~((VI)(x + 104.0f) >> 31); /* 0 where x < -104 (or x is a nan with its sign bit set) */
    /* times 2^n, n in -150..128, as 2^n1 * 2^n2 with both halves in range: the first product is
     * exact, the second rounds once, into the subnormals (gradual underflow) or to inf */
    VI n1 = n >> 1;
    return (VF)(~zero & (VI)(p * V(pow2)(n1) * V(pow2)(n - n1)));
}

/* e^x for any floats: inf above 88.72 (x is clamped to 89 first; min passes a nan on),
 * otherwise as V(exp_unclamped). */
SIMD_INLINE VF V(exp)(VF x) { return V(exp_unclamped)(V(min)(V(splat)(89.0f), x)); }

/* tanh(x) = 1 - 2 / (e^2x + 1): 1 at e^2x = inf, -1 at 0. For |x| >= 10 that is +-1 in float,
 * the same as for |x| = 10, so 2x is clamped to [-20, 20] first (a nan stays a nan); e^2x then
 * needs one power of two and none of V(exp)'s care at the ends of its range: the same values
 * as from V(exp), bit for bit. */
SIMD_INLINE VF V(tanh)(VF x) {
    VI n;
    VF p = V(exp_reduced)(V(min)(V(splat)(20.0f), V(max)(V(splat)(-20.0f), x + x)), &n);
    return 1.0f - 2.0f / (p * V(pow2)(n) + 1.0f);
}
