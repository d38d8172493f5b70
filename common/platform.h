/*
 * platform.h - the one place a CPU is named. The fast kernels include it for:
 *   - PLATFORM_X86, defined on x86-64 with gcc or clang, and there <immintrin.h>, the target
 *     attributes TARGET_AVX2 (AVX2 and FMA) and TARGET_AVX512, which compile one function for
 *     those instructions while the rest of the library stays plain x86-64;
 *   - platform_has_native() and platform_has_avx512(): whether this CPU has them, asked of the
 *     bits the C library read when the program started;
 *   - exp8, e^x for eight floats at once with AVX2 and FMA (lesson 3's softmax, lesson 7's
 *     GELU). The exp is the classic one (as in Cephes' expf): write x = n ln2 + r with n an
 *     integer and |r| <= ln2 / 2, so e^x = 2^n e^r; e^r is a degree-7 polynomial in r, and 2^n
 *     is built directly in the float's exponent bits.
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

#ifdef PLATFORM_X86

/* 2^k for 8 integers k in -126..127: the biased exponent k + 127, shifted into place. */
TARGET_AVX2 static inline __m256 pow2(__m256i k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

/* e^x for 8 floats. */
TARGET_AVX2 static inline __m256 exp8(__m256 x) {
    /* Past these bounds e^x rounds to inf or to 0 anyway; clamping keeps n in range. min and
     * max return their second operand when one operand is nan, so a nan passes through. */
    x = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(89.0f), x));
    /* n = round(x / ln2), r = x - n ln2. ln2 is split into a part with few bits (n * 0.693359375
     * is exact) and the rest, so r keeps its low bits (Cody and Waite). */
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    /* e^r = 1 + r + r^2 p(r), Cephes' coefficients, by Horner's rule with fused multiply-adds */
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
    /* times 2^n, n in -150..128, as 2^n1 * 2^n2 with both halves in range: the first product
     * is exact, the second rounds once, into the subnormals (gradual underflow) or to inf. */
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1);
    return _mm256_mul_ps(_mm256_mul_ps(p, pow2(n1)), pow2(_mm256_sub_epi32(ni, n1)));
}

#endif /* PLATFORM_X86 */

#endif /* PLATFORM_H */
