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
 *     softmax and lesson 7's GELU;
 *   - vf16, sixteen floats, the same helpers for it (vector_lanes.h writes them once for
 *     both), and VECTOR_WIDE, the attribute of a kernel built for AVX-512 with it;
 *   - streaming stores, which send whole lines to memory without reading them first.
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
#define VF16_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#define VF8_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#define VF4_SHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#else
#define VF16_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi16){__VA_ARGS__})
#define VF8_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi8){__VA_ARGS__})
#define VF4_SHUFFLE(a, b, ...) __builtin_shuffle((a), (b), (vi4){__VA_ARGS__})
#endif

/* vf8_load, vf8_store, vf8_splat, vf8_max, vf8_min, vf8_exp, vf8_tanh and the rest, and
 * their vf16_ twins: one text, vector_lanes.h, for each number of lanes */
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef uint32_t vu16 __attribute__((vector_size(64)));
typedef double vd8 __attribute__((vector_size(64)));
#define LANES 8
#include "vector_lanes.h"
#undef LANES
#define LANES 16
#include "vector_lanes.h"
#undef LANES

VECTOR_BODY vf4 vf4_load(const float *p) { vf4 v; memcpy(&v, p, sizeof v); return v; }
VECTOR_BODY void vf4_store(float *p, vf4 v) { memcpy(p, &v, sizeof v); }
/* mask ? a : b, lane by lane; mask is a comparison's result (all ones or all zeros a lane) */
VECTOR_BODY vf8 vf8_select(vi8 mask, vf8 a, vf8 b) { return (vf8)((mask & (vi8)a) | (~mask & (vi8)b)); }
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

/* the same for sixteen rows: the first eight, then the next */
VECTOR_BODY void rows16_to_columns(const float *m, int64_t ld, int64_t n, float *cols, int64_t cld) {
    rows8_to_columns(m, ld, n, cols, cld);
    rows8_to_columns(m + 8 * ld, ld, n, cols + 8, cld);
}
VECTOR_BODY void columns_to_rows16(const float *cols, int64_t cld, int64_t n, float *m, int64_t ld) {
    columns_to_rows8(cols, cld, n, m, ld);
    columns_to_rows8(cols + 8, cld, n, m + 8 * ld, ld);
}

/* ==== sixteen lanes ====================================================================== */
/* vf16, sixteen floats: one AVX-512 register. A kernel body written once for a number of lanes
 * (lessons/7-train/train_lanes.h) is compiled with vf8 for the portable build and AVX2, and
 * with vf16 in a function for AVX-512 (VECTOR_WIDE, on x86-64). */
#ifdef PLATFORM_X86
#define VECTOR_WIDE __attribute__((target("avx512f,fma")))
#endif

/* the eight low and eight high lanes, those widened to double, and back */
VECTOR_BODY vf8 vf16_low(vf16 v) { vf8 h; memcpy(&h, &v, sizeof h); return h; }
VECTOR_BODY vf8 vf16_high(vf16 v) { vf8 h; memcpy(&h, (const char *)&v + sizeof h, sizeof h); return h; }
VECTOR_BODY vf16 vf16_join(vf8 low, vf8 high) {
    vf16 v;
    memcpy(&v, &low, sizeof low);
    memcpy((char *)&v + sizeof low, &high, sizeof high);
    return v;
}
VECTOR_BODY vd8 vf16_low_double(vf16 v) { return __builtin_convertvector(vf16_low(v), vd8); }
VECTOR_BODY vd8 vf16_high_double(vf16 v) { return __builtin_convertvector(vf16_high(v), vd8); }
VECTOR_BODY vf16 vf16_from_doubles(vd8 low, vd8 high) {
    return vf16_join(__builtin_convertvector(low, vf8), __builtin_convertvector(high, vf8));
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
/* The same a whole register at a time, for kernels built for AVX2 (32 bytes, d on 32) or
 * AVX-512 (64, d on 64): fewer stores per line (docs/4-permute.md measures the transposes that
 * use them). Not always_inline, and v by address (no vector argument to change the ABI), so
 * that a body compiled for every target may name them in a branch only the wider ones take. */
#ifdef PLATFORM_X86
TARGET_AVX2 static inline void vf8_stream_whole(float *d, const vf8 *v) { _mm256_stream_ps(d, (__m256)*v); }
VECTOR_WIDE static inline void vf16_stream(float *d, const vf16 *v) { _mm512_stream_ps(d, (__m512)*v); }
#else
static inline void vf8_stream_whole(float *d, const vf8 *v) { vf8_store(d, *v); }
static inline void vf16_stream(float *d, const vf16 *v) { vf16_store(d, *v); }
#endif
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
