/*
 * simd.h - a fast kernel written once, built for each CPU. A fast file is compiled once per
 * build of its CPU family (the Makefile's SIMD_BUILDS) with that build's instructions on and
 * SIMD_BUILD set to its name: portable (the family's baseline: SSE2 on x86-64, NEON on
 * aarch64), avx2 (with FMA) or avx512 (AVX-512F). SIMD_LANES and SIMD_REGISTERS are constants
 * of the build, by which a kernel picks its tile; kernels.c puts the build the CPU runs into
 * the table, so no kernel asks. Vectors are GCC's and clang's vector extensions.
 */
#ifndef SIMD_H
#define SIMD_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifndef SIMD_BUILD
#define SIMD_BUILD portable /* a file outside the builds: a test that includes a fast header, a linter */
#endif
#define SIMD_CAT_(a, b) a##b
#define SIMD_CAT(a, b) SIMD_CAT_(a, b)
/* name_portable, name_avx2 or name_avx512: what a fast file exports, once per build */
#define SIMD_NAME(name) SIMD_CAT(name##_, SIMD_BUILD)

#if defined(__AVX512F__)
#define SIMD_LANES 16
#define SIMD_REGISTERS 32
#elif defined(__AVX2__)
#define SIMD_LANES 8
#define SIMD_REGISTERS 16
#elif defined(__aarch64__)
#define SIMD_LANES 4
#define SIMD_REGISTERS 32
#else
#define SIMD_LANES 4 /* SSE2: x86-64's baseline */
#define SIMD_REGISTERS 16
#endif

/* -Wpsabi warns how a vector would pass between builds; the helpers are inlined, so none does */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

/* A vector helper: always inlined into the kernel, so it is compiled with the kernel's build. */
#define SIMD_INLINE static inline __attribute__((always_inline))
/* A loop over a small array of vectors, unrolled so that gcc keeps the array in registers. */
#define SIMD_UNROLL _Pragma("GCC unroll 16")

typedef float vf4 __attribute__((vector_size(16)));
typedef int32_t vi4 __attribute__((vector_size(16)));
typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef uint32_t vu8 __attribute__((vector_size(32)));
typedef double vd4 __attribute__((vector_size(32)));
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef uint32_t vu16 __attribute__((vector_size(64)));
typedef double vd8 __attribute__((vector_size(64)));

/* Lanes picked from two vectors by index (0 .. n-1 from a, n .. 2n-1 from b); gcc before 12
 * has only __builtin_shuffle. */
#if defined(__clang__) || __GNUC__ >= 12
#define VF4_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#define VF8_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#define VF16_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#else
#define VF4_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi4){__VA_ARGS__})
#define VF8_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi8){__VA_ARGS__})
#define VF16_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi16){__VA_ARGS__})
#endif

SIMD_INLINE vf4 vf4_load(const float *p) {
    vf4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
SIMD_INLINE void vf4_store(float *p, vf4 v) { memcpy(p, &v, sizeof v); }

/* ==== moving rows into lanes ============================================================== */

/* d[i * ld + j] = s[j * ls + i] for a 4 x 4 block: two rounds of shuffles of 16-byte vectors,
 * each one SSE or NEON instruction. */
SIMD_INLINE void transpose4(const float *s, int64_t ls, float *d, int64_t ld) {
    vf4 r0 = vf4_load(s), r1 = vf4_load(s + ls), r2 = vf4_load(s + 2 * ls), r3 = vf4_load(s + 3 * ls);
    vf4 t0 = VF4_SHUFFLE(r0, r1, 0, 4, 1, 5), t1 = VF4_SHUFFLE(r0, r1, 2, 6, 3, 7);
    vf4 t2 = VF4_SHUFFLE(r2, r3, 0, 4, 1, 5), t3 = VF4_SHUFFLE(r2, r3, 2, 6, 3, 7);
    vf4_store(d, VF4_SHUFFLE(t0, t2, 0, 1, 4, 5));
    vf4_store(d + ld, VF4_SHUFFLE(t0, t2, 2, 3, 6, 7));
    vf4_store(d + 2 * ld, VF4_SHUFFLE(t1, t3, 0, 1, 4, 5));
    vf4_store(d + 3 * ld, VF4_SHUFFLE(t1, t3, 2, 3, 6, 7));
}

/* cols[e * cld + r] = m[r * ld + e] (rows and n multiples of 4): a row in each lane, so that a
 * kernel over short rows (attention's heads) works on many at once with no sum across lanes. */
SIMD_INLINE void rows_to_columns(int rows, const float *m, int64_t ld, int64_t n, float *cols, int64_t cld) {
    for (int r = 0; r < rows; r += 4)
        for (int64_t e = 0; e < n; e += 4) transpose4(m + r * ld + e, ld, cols + e * cld + r, cld);
}
/* the other way: m[r * ld + e] = cols[e * cld + r] */
SIMD_INLINE void columns_to_rows(int rows, const float *cols, int64_t cld, int64_t n, float *m, int64_t ld) {
    for (int r = 0; r < rows; r += 4)
        for (int64_t e = 0; e < n; e += 4) transpose4(cols + e * cld + r, cld, m + r * ld + e, ld);
}

/* The helpers and sums, one text for each width: V(exp) is vf8_exp where LANES is 8; VF holds
 * LANES floats, VH and VD half as many floats and doubles. */
#define VF SIMD_CAT(vf, LANES)
#define VI SIMD_CAT(vi, LANES)
#define VU SIMD_CAT(vu, LANES)
#define V(op) SIMD_CAT(SIMD_CAT(vf, LANES), _##op)
#define SIMD_HALF_8 4
#define SIMD_HALF_16 8
#define VH SIMD_CAT(vf, SIMD_CAT(SIMD_HALF_, LANES))
#define VD SIMD_CAT(vd, SIMD_CAT(SIMD_HALF_, LANES))
#define LANES 8
#include "simd_lanes.h"
#include "simd_sum.h"
#undef LANES
#define LANES 16
#include "simd_lanes.h"
#include "simd_sum.h"
#undef LANES

/* The build's widest vector, for kernels written for either width: VFLOAT(load) is vf16_load
 * with AVX-512, else vf8_load. */
#if SIMD_LANES >= 16
typedef vf16 vfloat;
#define VFLOAT_LANES 16
#define VFLOAT(op) vf16_##op
#else
typedef vf8 vfloat;
#define VFLOAT_LANES 8
#define VFLOAT(op) vf8_##op
#endif

#endif /* SIMD_H */
