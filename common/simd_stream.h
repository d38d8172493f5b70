/*
 * simd_stream.h - streaming stores: whole cache lines sent to memory without being read into
 * the cache first, for results larger than it. x86-64 only (SIMD_STREAMS); elsewhere, stores.
 */
#ifndef SIMD_STREAM_H
#define SIMD_STREAM_H

#include "simd.h"

#if defined(__x86_64__)
#define SIMD_STREAMS 1
#else
#define SIMD_STREAMS 0
#endif

/* The fast kernels stream results larger than this. */
enum { SIMD_STREAM_BYTES = 16 << 20 };

/* 4, 8 or 16 floats to d, aligned to their size: the compilers' own builtins, so that no build
 * parses <immintrin.h>. */
SIMD_INLINE void stream4(float *d, vf4 v) {
#if SIMD_STREAMS && defined(__clang__)
    __builtin_nontemporal_store(v, (vf4 *)d);
#elif SIMD_STREAMS
    __builtin_ia32_movntps(d, v);
#else
    vf4_store(d, v);
#endif
}
SIMD_INLINE void stream8(float *d, vf8 v) {
#if SIMD_STREAMS && defined(__clang__)
    __builtin_nontemporal_store(v, (vf8 *)d);
#elif SIMD_STREAMS && defined(__AVX__)
    __builtin_ia32_movntps256(d, v);
#else
    stream4(d, vf8_low(v));
    stream4(d + 4, vf8_high(v));
#endif
}
SIMD_INLINE void stream16(float *d, vf16 v) { /* one whole line */
#if SIMD_STREAMS && defined(__clang__)
    __builtin_nontemporal_store(v, (vf16 *)d);
#elif SIMD_STREAMS && defined(__AVX512F__)
    __builtin_ia32_movntps512(d, v);
#else
    stream8(d, vf16_low(v));
    stream8(d + 8, vf16_high(v));
#endif
}

/* dst[i] = src[i] for i < n, streamed where dst is on 16 bytes and n a multiple of 4. */
SIMD_INLINE void stream_copy(float *dst, const float *src, int64_t n) {
    if (SIMD_STREAMS && (uintptr_t)dst % 16 == 0 && n % 4 == 0) {
        for (int64_t i = 0; i < n; i += 4) stream4(dst + i, vf4_load(src + i));
        return;
    }
    if (n > 0) memcpy(dst, src, (size_t)n * sizeof *dst);
}

/* After the last streamed store: the lines reach memory before any later store. */
SIMD_INLINE void stream_end(void) {
#if SIMD_STREAMS
    __builtin_ia32_sfence();
#endif
}

#endif /* SIMD_STREAM_H */
