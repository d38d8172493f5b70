/*
 * platform.h - the one place a CPU is named. The fast kernels include it for:
 *   - PLATFORM_X86, defined on x86-64 with gcc or clang, and there <immintrin.h>, the target
 *     attributes TARGET_AVX2 (AVX2 and FMA) and TARGET_AVX512, which compile one function for
 *     those instructions while the rest of the library stays plain x86-64;
 *   - platform_has_native() and platform_has_avx512(): whether this CPU has them, asked of the
 *     bits the C library read when the program started;
 *   - vf8, eight floats in GCC and clang's vector extensions, with which the fast kernels'
 *     vector code is written once for every CPU, and the one vector exp (vf8_exp, whose core
 *     vf8_exp_unclamped takes softmax's x - max directly) and tanh (vf8_tanh) of lesson 3's
 *     softmax and lesson 7's GELU.
 */
#ifndef PLATFORM_H
#define PLATFORM_H

#include <stdbool.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PLATFORM_X86 1
#include <immintrin.h>
#define TARGET_AVX2 __attribute__((target("avx2,fma")))
#define TARGET_AVX512 __attribute__((target("avx512f")))
#define ALWAYS_INLINE __attribute__((always_inline)) inline

static inline bool platform_has_native(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
static inline bool platform_has_avx512(void) { return __builtin_cpu_supports("avx512f"); }
#else
static inline bool platform_has_native(void) { return false; }
static inline bool platform_has_avx512(void) { return false; }
#endif

/* ==== vectors, written once for every CPU =============================================== */
/* The fast kernels' vector code is written with GCC and clang's vector extensions: a vf8 is
 * eight floats, and + - * / and comparisons work on all eight at once. The compiler turns them
 * into the instructions of the CPU it compiles for: two SSE or NEON registers in the portable
 * build, one AVX2 register in a function compiled for AVX2 (VECTOR_NATIVE). A kernel's vector
 * code is one body, always inlined, and two thin wrappers, one of each:
 *
 *   VECTOR_BODY void rows_body(...) { ... vf8 ... }
 *   static void rows_portable(...) { rows_body(...); }
 *   VECTOR_NATIVE static void rows_native(...) { rows_body(...); }
 *
 * and the kernel calls rows_native when kernels_mode() is KERNELS_NATIVE. (The helpers pass
 * vf8 by value, which -Wpsabi warns changes the calling convention between SSE and AVX code;
 * they are always inlined, so no call between the two ever passes one.) */
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef uint32_t vu8 __attribute__((vector_size(32)));
typedef double vd4 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));
typedef int32_t vi4 __attribute__((vector_size(16)));

#define VECTOR_BODY static inline __attribute__((always_inline))
/* The 16-byte vector registers the portable build has: SSE's 16 on x86-64, NEON's 32 on
 * aarch64 (a kernel whose tile needs more than 16 is for the latter, or for VECTOR_NATIVE). */
#if defined(__aarch64__)
#define PLATFORM_VECTOR_REGISTERS 32
#else
#define PLATFORM_VECTOR_REGISTERS 16
#endif
#ifdef PLATFORM_X86
#define VECTOR_NATIVE TARGET_AVX2
#else
#define VECTOR_NATIVE /* the portable build is this CPU's best (NEON on aarch64) */
#endif

/* A loop over a small array of vectors, unrolled all the way: left a loop, gcc -O2 keeps the
 * array in memory, and the transposing copy took 1.3-1.5 times as long (docs/4-permute.md). */
#define VECTOR_UNROLL _Pragma("GCC unroll 16")

/* Eight lanes picked from two vectors by index (0-7 from a, 8-15 from b):
 * __builtin_shufflevector, which gcc has from version 12 and clang always; older gcc has
 * __builtin_shuffle. */
#if defined(__clang__) || __GNUC__ >= 12
#define VF8_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#define VF4_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#else
#define VF8_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi8){__VA_ARGS__})
#define VF4_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi4){__VA_ARGS__})
#endif

VECTOR_BODY vf8 vf8_load(const float *p) { vf8 v; memcpy(&v, p, sizeof v); return v; }
VECTOR_BODY void vf8_store(float *p, vf8 v) { memcpy(p, &v, sizeof v); }
VECTOR_BODY vf4 vf4_load(const float *p) { vf4 v; memcpy(&v, p, sizeof v); return v; }
VECTOR_BODY void vf4_store(float *p, vf4 v) { memcpy(p, &v, sizeof v); }
VECTOR_BODY vf8 vf8_splat(float x) { return (vf8){x, x, x, x, x, x, x, x}; }
/* mask ? a : b, lane by lane; mask is a comparison's result (all ones or all zeros a lane) */
VECTOR_BODY vf8 vf8_select(vi8 mask, vf8 a, vf8 b) { return (vf8)((mask & (vi8)a) | (~mask & (vi8)b)); }
/* The larger (smaller) of each pair, b's lane when either is nan: `if (a > m)` skips a nan a.
 * Written lane by lane, the form clang turns into one max (min) instruction; gcc 12 often
 * writes a compare and a blend instead (a constant operand in a VECTOR_BODY, even in a file
 * compiled with -mavx2), which some cores take three micro-operations for. */
VECTOR_BODY vf8 vf8_max(vf8 a, vf8 b) {
    vf8 r;
    for (int k = 0; k < 8; k++) r[k] = a[k] > b[k] ? a[k] : b[k];
    return r;
}
VECTOR_BODY vf8 vf8_min(vf8 a, vf8 b) {
    vf8 r;
    for (int k = 0; k < 8; k++) r[k] = a[k] < b[k] ? a[k] : b[k];
    return r;
}
VECTOR_BODY float vf8_max_lanes(vf8 v) {
    float m = v[0];
    for (int k = 1; k < 8; k++) m = v[k] > m ? v[k] : m;
    return m;
}
/* the four low and four high lanes, and those widened to double */
VECTOR_BODY vf4 vf8_low(vf8 v) { vf4 h; memcpy(&h, &v, sizeof h); return h; }
VECTOR_BODY vf4 vf8_high(vf8 v) { vf4 h; memcpy(&h, (const char *)&v + sizeof h, sizeof h); return h; }
VECTOR_BODY vd4 vf8_low_double(vf8 v) { return __builtin_convertvector(vf8_low(v), vd4); }
VECTOR_BODY vd4 vf8_high_double(vf8 v) { return __builtin_convertvector(vf8_high(v), vd4); }
/* the other way: eight doubles, low lanes first, each rounded to float */
VECTOR_BODY vf8 vf8_from_doubles(vd4 low, vd4 high) {
    vf4 l = __builtin_convertvector(low, vf4), h = __builtin_convertvector(high, vf4);
    vf8 v;
    memcpy(&v, &l, sizeof l);
    memcpy((char *)&v + sizeof l, &h, sizeof h);
    return v;
}

/* Four rows of four floats, ls apart, in; their four columns out, ld apart (d[i * ld + j] =
 * s[j * ls + i]): two rounds of shuffles, each one SSE or NEON instruction. The form for
 * 16-byte registers, where eight-lane shuffles across halves become element-by-element moves
 * (measured 6x slower on SSE). The core's transposing copy and lesson 6's packing use it. */
VECTOR_BODY void transpose4(const float *s, int64_t ls, float *d, int64_t ld) {
    vf4 r0 = vf4_load(s), r1 = vf4_load(s + ls), r2 = vf4_load(s + 2 * ls), r3 = vf4_load(s + 3 * ls);
    vf4 t0 = VF4_SHUFFLE(r0, r1, 0, 4, 1, 5), t1 = VF4_SHUFFLE(r0, r1, 2, 6, 3, 7);
    vf4 t2 = VF4_SHUFFLE(r2, r3, 0, 4, 1, 5), t3 = VF4_SHUFFLE(r2, r3, 2, 6, 3, 7);
    vf4_store(d, VF4_SHUFFLE(t0, t2, 0, 1, 4, 5));
    vf4_store(d + ld, VF4_SHUFFLE(t0, t2, 2, 3, 6, 7));
    vf4_store(d + 2 * ld, VF4_SHUFFLE(t1, t3, 0, 1, 4, 5));
    vf4_store(d + 3 * ld, VF4_SHUFFLE(t1, t3, 2, 3, 6, 7));
}

/* Eight rows of n floats (n a multiple of 4), ld apart, turned into n columns of eight, one
 * row in each lane, the columns cld apart: cols[e * cld + r] = m[r * ld + e]. Kernels whose
 * rows are short (softmax's over 16 scores, attention's heads) work on eight rows at once this
 * way, with no sum across lanes. */
VECTOR_BODY void rows8_to_columns(const float *m, int64_t ld, int64_t n, float *cols, int64_t cld) {
    for (int64_t e = 0; e < n; e += 4) {
        transpose4(m + e, ld, cols + e * cld, cld);
        transpose4(m + 4 * ld + e, ld, cols + e * cld + 4, cld);
    }
}

/* the other way: m[r * ld + e] = cols[e * cld + r] */
VECTOR_BODY void columns_to_rows8(const float *cols, int64_t cld, int64_t n, float *m, int64_t ld) {
    for (int64_t e = 0; e < n; e += 4) {
        transpose4(cols + e * cld, cld, m + e, ld);
        transpose4(cols + e * cld + 4, cld, m + 4 * ld + e, ld);
    }
}

/* 2^k for integers k in -126..127: the biased exponent k + 127, shifted into place (unsigned, so
 * that a lane of garbage, which the caller masks, wraps instead of overflowing). */
VECTOR_BODY vf8 vf8_pow2(vi8 k) { return (vf8)(((vu8)k + 127u) << 23); }

/* The heart of e^x: x = n ln2 + r with n an integer and |r| <= ln2 / 2 (for |x| below about
 * 88), so that e^x = 2^n e^r. Returns e^r, a degree-7 polynomial in r, and n, as an integer.
 * n = round(x / ln2): adding 1.5 * 2^23 rounds x / ln2 to an integer, which the sum's low bits
 * then hold (its bits less those of 1.5 * 2^23, unsigned, so that a lane out of range gives
 * garbage, never undefined behaviour, as converting it to an integer would). r = x - n ln2,
 * ln2 split into a part with few bits (n * 0.693359375 is exact) and the rest, so that r keeps
 * its low bits (Cody and Waite); the polynomial is Cephes' (as in its expf), by Horner's rule. */
VECTOR_BODY vf8 vf8_exp_reduced(vf8 x, vi8 *n) {
    vf8 shifted = x * 1.44269504088896341f + 12582912.0f, nf = shifted - 12582912.0f;
    *n = (vi8)((vu8)shifted - 0x4B400000u); /* 0x4B400000: the bits of 1.5 * 2^23 */
    vf8 r = x - nf * 0.693359375f;
    r = r - nf * -2.12194440e-4f;
    vf8 p = vf8_splat(1.9875691500e-4f); /* e^r = 1 + r + r^2 p(r) */
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return p * (r * r) + r + 1.0f;
}

/* e^x for eight floats no greater than 89, or nan, as softmax's x - max is: 2^n e^r from
 * vf8_exp_reduced, with 2^n built directly in the float's exponent bits. Within 2 units in the
 * last place of the exact e^x, with gradual underflow: exactly 0 below -103.97, nan for nan.
 * Below -104, where e^x rounds to 0, a lane's result is replaced by 0 (an and with a mask:
 * gcc 12 made a clamp or a select of x into compares and blends, docs/3-softmax.md), and its n
 * by 0 first: a multiply whose result rounds to a tiny number or 0 takes the CPU's slow path
 * (a microcode assist), which x from -112 to -104 would otherwise take (docs/3-softmax.md). */
VECTOR_BODY vf8 vf8_exp_unclamped(vf8 x) {
    vi8 zero = x < vf8_splat(-104.0f); /* false for nan */
    vi8 n;
    vf8 p = vf8_exp_reduced(x, &n);
    n &= ~((vi8)(x + 104.0f) >> 31); /* 0 where x < -104 (or x is a nan with its sign bit set) */
    /* times 2^n, n in -150..128, as 2^n1 * 2^n2 with both halves in range: the first product is
     * exact, the second rounds once, into the subnormals (gradual underflow) or to inf */
    vi8 n1 = n >> 1;
    return (vf8)(~zero & (vi8)(p * vf8_pow2(n1) * vf8_pow2(n - n1)));
}

/* e^x for any eight floats: inf above 88.72 (x is clamped to 89 first; min passes a nan on),
 * otherwise as vf8_exp_unclamped. */
VECTOR_BODY vf8 vf8_exp(vf8 x) { return vf8_exp_unclamped(vf8_min(vf8_splat(89.0f), x)); }

/* tanh(x) = 1 - 2 / (e^2x + 1): 1 at e^2x = inf, -1 at 0. For |x| >= 10 that is +-1 in float,
 * the same as for |x| = 10, so 2x is clamped to [-20, 20] first (a nan stays a nan); e^2x then
 * needs one power of two and none of vf8_exp's care at the ends of its range: the same values
 * as from vf8_exp, bit for bit, in less time (docs/7-train.md). */
VECTOR_BODY vf8 vf8_tanh(vf8 x) {
    vi8 n;
    vf8 p = vf8_exp_reduced(vf8_min(vf8_splat(20.0f), vf8_max(vf8_splat(-20.0f), x + x)), &n);
    return 1.0f - 2.0f / (p * vf8_pow2(n) + 1.0f);
}

/* Stores that send whole cache lines to memory without reading them into the cache first
 * (docs/4-permute.md): on x86-64, SSE2's, which every such CPU has, and a fence after the last;
 * elsewhere plain stores. vf8_stream wants d on 16 bytes. */
VECTOR_BODY void vf8_stream(float *d, vf8 v) {
#ifdef PLATFORM_X86
    _mm_stream_ps(d, (__m128)vf8_low(v));
    _mm_stream_ps(d + 4, (__m128)vf8_high(v));
#else
    vf8_store(d, v);
#endif
}
/* dst[i] = src[i], i < n, streamed: true when done (x86-64, dst on 16 bytes, n a multiple of
 * 4), false, having done nothing, otherwise. */
static inline bool platform_stream_copy(float *dst, const float *src, int64_t n) {
#ifdef PLATFORM_X86
    if ((uintptr_t)dst % 16 != 0 || n % 4 != 0) return false;
    for (int64_t i = 0; i < n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
    return true;
#else
    (void)dst, (void)src, (void)n;
    return false;
#endif
}
static inline void platform_stream_end(void) {
#ifdef PLATFORM_X86
    _mm_sfence(); /* the streamed lines reach memory before any later store */
#endif
}

#endif /* PLATFORM_H */
