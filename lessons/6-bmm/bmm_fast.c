/*
 * bmm_fast.c - lesson 6's fast 2-D product: out += a @ b (or out = a @ b) for float32
 * matrices, the same sums as bmm.c's triple loop (matmul_reference). Every 2-D product of
 * lesson 6, forward and backward, runs here, and lesson 7's linear layer (bmm_fast.h); a tiny
 * product (at most GEMM_SMALL multiply-adds) or a dot product goes back to the reference.
 * docs/6-bmm.md (section 7.7) walks from the chapter's triple loop to this file, one step at a
 * time.
 *
 * The triple loop does 2*m*k*n flops but, for large matrices, keeps fetching the same values
 * from memory: the CPU can multiply far faster than memory can deliver. This file uses the
 * three ideas behind every fast BLAS (Goto's method, as in OpenBLAS and BLIS) so that each
 * value fetched is used many times while it sits in a near cache or in a register:
 *
 * 1. The micro-kernel. A tile of out, rows x 16, stays in registers for the whole sum over p.
 *    Each step loads `rows` values of a column of a and 16 values of a row of b and does
 *    rows x 16 multiply-adds: every value loaded is used 16 or `rows` times. Which tile fits
 *    is the build's register budget (simd.h): with 8-float registers (AVX2) or 32 of 4 floats
 *    (NEON), a 6 x 16 tile of vf8 (12 accumulators, 2 of b, 1 of a); with AVX-512's 32
 *    registers of 16, an 8 x 16 tile, or two side by side (8 x 32); with SSE's 16 registers of
 *    4, plain C over an 8 x 16 array, which the compiler keeps in the L1 cache.
 * 2. Packing. The kernel wants its 16 values of b side by side, step after step. So a block of
 *    b is first copied into a buffer in exactly that order, padded with zeros to whole tiles:
 *    whatever the view's strides (transposed, expanded, negative), the kernel then reads plain
 *    contiguous memory and never sees an edge. a is read where it lies when its rows or its
 *    columns are contiguous (the kernel takes a's strides), and otherwise packed too.
 * 3. Cache blocking. The sum over k is cut into slices of KC. A KC x NR sliver of packed b
 *    (16 KB) stays in the L1 cache while the kernel sweeps down an MC x KC block of a (144 KB,
 *    in L2), and the KC x NC block of packed b (up to 4 MB, L2/L3) serves every block of a.
 *    Each float brought from memory is used about MC or NC times before it is evicted.
 *
 * What lesson 7's training step asks of it, many products with k = 64 and attention's 16 x 16
 * ones, shaped the choices that say so below: a read where it lies, the 8 x 32 tile, and no
 * allocation for a small product.
 */
#include <stdlib.h>

#include "bmm_fast.h"
#include "kernels_fast.h"

#define NR GEMM_NR
#define MC GEMM_MC /* a multiple of every kernel's rows */
#define KC GEMM_KC
#define NC GEMM_NC /* a multiple of NR */

static int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }
static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* ==== the micro-kernel ===================================================================== */

/* kernel(kc, a, a_rs, a_cs, pb, c, ldc, from, from_rs), for the whole tile, ROWS x NR:
 *   c[i, j] = from[i*from_rs + j] + the sum over p < kc of a[i*a_rs + p*a_cs] * pb[p*NR + j]
 * from is c itself (from_rs = ldc) to add into c, one row (from_rs = 0) to start every row from
 * it (a bias), or NULL to store the sum without reading c. a is a sliver of ROWS rows read
 * through its strides (where it lies in a, or a packed copy), pb a packed sliver of b; c's rows
 * are ldc apart and its columns, and from's, contiguous. Where the build has the registers,
 * kernel2 does the same for a ROWS x 2NR tile: columns 0 .. NR-1 from pb, NR .. 2NR-1 from pb2.
 * Each is built once per kind of a that gemm hands it: rows contiguous (a_cs = 1, read where it
 * lies) or columns contiguous (a_rs = 1: a transposed, or packed); with one stride a constant,
 * the rows' loads are offsets from one or two registers, and the loop, unrolled, steps fewer
 * counters. */

/* X(i) for each row i of a tile: the rows are spelled out rather than looped over, so that the
 * accumulators surely stay in registers at -O2 */
#define EACH_OF_8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define EACH_OF_6(X) X(0) X(1) X(2) X(3) X(4) X(5)

#if SIMD_LANES >= 16
/* AVX-512, an 8 x 16 tile: row i is one vf16, and each step does eight fused multiply-adds. Eight
 * accumulators would just cover what two FMA units have in flight (each add waits for the
 * previous one on its row): so the even steps of p go into one set of eight and the odd steps
 * into another, added together at the end, and no add waits. */
#define ROWS 8
#define HAS_KERNEL2 1
/* *p = *from + v, or v when from is NULL */
SIMD_INLINE void put16(float *p, vf16 v, const float *from) { vf16_store(p, from ? vf16_load(from) + v : v); }
#define A_ROWS                                                                                                \
    const float *a0 = a, *a1 = a0 + a_rs, *a2 = a1 + a_rs, *a3 = a2 + a_rs, *a4 = a3 + a_rs, *a5 = a4 + a_rs, \
                *a6 = a5 + a_rs, *a7 = a6 + a_rs

SIMD_INLINE void kernel_body(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *pb, float *c,
                             int64_t ldc, const float *from, int64_t from_rs) {
    A_ROWS;
    vf16 e0 = {0}, e1 = e0, e2 = e0, e3 = e0, e4 = e0, e5 = e0, e6 = e0, e7 = e0; /* even steps */
    vf16 o0 = e0, o1 = e0, o2 = e0, o3 = e0, o4 = e0, o5 = e0, o6 = e0, o7 = e0;  /* odd steps */
    int64_t p = 0, q = 0, q1 = a_cs; /* a's columns p and p + 1 are q and q1 floats on */
    for (; p + 2 <= kc; p += 2, q += 2 * a_cs, q1 += 2 * a_cs, pb += 2 * NR) {
        vf16 b0 = vf16_load(pb), b1 = vf16_load(pb + NR);
#define ROW(i)            \
    e##i += a##i[q] * b0; \
    o##i += a##i[q1] * b1;
        EACH_OF_8(ROW)
#undef ROW
    }
    if (p < kc) {
        vf16 b0 = vf16_load(pb);
#define ROW(i) e##i += a##i[q] * b0;
        EACH_OF_8(ROW)
#undef ROW
    }
#define STORE(i) put16(c + ldc * (i), e##i + o##i, from ? from + from_rs * (i) : NULL);
    EACH_OF_8(STORE)
#undef STORE
}

/* Two slivers of b at once, an 8 x 32 tile: row i is two vf16, li (columns 0-15, from pb) and
 * ri (16-31, from pb2). Each step loads 32 floats of b and 8 of a for 16 fused multiply-adds,
 * where the 8 x 16 tile loads 16 of b and 8 of a for 8: a step waits less on loads, and the
 * tile's store at the end comes half as often, which counts when kc is 64. Sixteen accumulators
 * keep two FMA units busy without an even/odd split. */
SIMD_INLINE void kernel2_body(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *pb, const float *pb2,
                              float *c, int64_t ldc, const float *from, int64_t from_rs) {
    A_ROWS;
    vf16 l0 = {0}, l1 = l0, l2 = l0, l3 = l0, l4 = l0, l5 = l0, l6 = l0, l7 = l0; /* left */
    vf16 r0 = l0, r1 = l0, r2 = l0, r3 = l0, r4 = l0, r5 = l0, r6 = l0, r7 = l0;  /* right */
    _Pragma("GCC unroll 4")
    for (int64_t p = 0, q = 0; p < kc; p++, q += a_cs, pb += NR, pb2 += NR) {
        vf16 b0 = vf16_load(pb), b1 = vf16_load(pb2);
#define ROW(i)            \
    l##i += a##i[q] * b0; \
    r##i += a##i[q] * b1;
        EACH_OF_8(ROW)
#undef ROW
    }
#define STORE(i)                                                    \
    put16(c + ldc * (i), l##i, from ? from + from_rs * (i) : NULL); \
    put16(c + ldc * (i) + NR, r##i, from ? from + from_rs * (i) + NR : NULL);
    EACH_OF_8(STORE)
#undef STORE
}
#undef A_ROWS

static void kernel2(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *pb, const float *pb2, float *c,
                    int64_t ldc, const float *from, int64_t from_rs) {
    if (a_cs == 1) kernel2_body(kc, a, a_rs, 1, pb, pb2, c, ldc, from, from_rs);
    else kernel2_body(kc, a, 1, a_cs, pb, pb2, c, ldc, from, from_rs); /* a_rs == 1 */
}

#elif SIMD_LANES * SIMD_REGISTERS >= 128
/* A 6 x 16 tile in vf8: row i is two vectors of 8, ci0 (columns 0-7) and ci1 (8-15). Each step
 * loads the 16 floats of b once, then for each of the 6 rows multiplies a[i] into both and adds
 * (one fused multiply-add each, with FMA). 12 accumulators + 2 of b + 1 of a: with AVX2, 15 of
 * its 16 registers; with NEON, a vf8 is two of its 32. */
#define ROWS 6
#define HAS_KERNEL2 0
SIMD_INLINE void kernel_body(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *pb, float *c,
                             int64_t ldc, const float *from, int64_t from_rs) {
    const float *a0 = a, *a1 = a0 + a_rs, *a2 = a1 + a_rs, *a3 = a2 + a_rs, *a4 = a3 + a_rs, *a5 = a4 + a_rs;
    vf8 c00 = {0}, c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    vf8 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    _Pragma("GCC unroll 4")
    for (int64_t p = 0, q = 0; p < kc; p++, q += a_cs, pb += NR) { /* a's column p is q floats on */
        vf8 b0 = vf8_load(pb), b1 = vf8_load(pb + 8);
#define ROW(i)               \
    c##i##0 += a##i[q] * b0; \
    c##i##1 += a##i[q] * b1;
        EACH_OF_6(ROW)
#undef ROW
    }
    if (from) {
#define FROM(i)                                \
    c##i##0 += vf8_load(from + from_rs * (i)); \
    c##i##1 += vf8_load(from + from_rs * (i) + 8);
        EACH_OF_6(FROM)
#undef FROM
    }
#define STORE(i)                       \
    vf8_store(c + ldc * (i), c##i##0); \
    vf8_store(c + ldc * (i) + 8, c##i##1);
    EACH_OF_6(STORE)
#undef STORE
}

#else
/* Plain C, an 8 x 16 tile, summed in a local array, then added into c (or stored) once. With
 * SSE's 16 registers of 4 floats, too few for 128, the array stays in the L1 cache; every step
 * still uses each value it loads 8 or 16 times. */
#define ROWS 8
#define HAS_KERNEL2 0
SIMD_INLINE void kernel_body(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *pb, float *c,
                             int64_t ldc, const float *from, int64_t from_rs) {
    float t[ROWS][NR] = {{0}};
    for (int64_t p = 0; p < kc; p++, a += a_cs, pb += NR)
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < NR; j++) t[i][j] += a[i * a_rs] * pb[j];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < NR; j++) c[i * ldc + j] = (from ? from[i * from_rs + j] : 0.0f) + t[i][j];
}
#endif

/* The function starts on a 64-byte boundary: a short inner loop that straddles one can run
 * slower. */
__attribute__((aligned(64))) static void kernel(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *pb,
                                                float *c, int64_t ldc, const float *from, int64_t from_rs) {
    if (a_cs == 1) kernel_body(kc, a, a_rs, 1, pb, c, ldc, from, from_rs);
    else kernel_body(kc, a, 1, a_cs, pb, c, ldc, from, from_rs); /* a_rs == 1 */
}

/* ==== packing ============================================================================= */

/* A kc x nc block of b (rows rs apart, columns cs apart) as slivers of NR columns. Sliver s
 * holds columns s*NR .. s*NR + NR-1, row after row: pb[s*kc*NR + p*NR + j]. Columns past nc
 * are zeros, so the kernel computes them harmlessly and they are never stored. */
static void pack_b(int64_t kc, int64_t nc, const float *b, int64_t rs, int64_t cs, float *pb) {
    for (int64_t j0 = 0; j0 < nc; j0 += NR) {
        int64_t nr = min64(NR, nc - j0);
        if (nr == NR && rs == 1 && cs != 1) { /* a transposed b: column j of the sliver is contiguous */
            int64_t p = 0;
            for (; p + 4 <= kc; p += 4) /* 4 x 4 blocks through registers */
                for (int64_t j = 0; j < NR; j += 4) transpose4(b + (j0 + j) * cs + p, cs, pb + p * NR + j, NR);
            for (; p < kc; p++)
                for (int64_t j = 0; j < NR; j++) pb[p * NR + j] = b[(j0 + j) * cs + p];
            pb += kc * NR;
            continue;
        }
        for (int64_t p = 0; p < kc; p++, pb += NR) {
            const float *src = b + p * rs + j0 * cs;
            if (nr == NR && cs == 1) {
                memcpy(pb, src, NR * sizeof(float)); /* the common case: part of a contiguous row */
            } else {
                for (int64_t j = 0; j < NR; j++) pb[j] = j < nr ? src[j * cs] : 0.0f;
            }
        }
    }
}

/* The kernel reads a sliver of a through its strides, so a whole sliver of an a whose rows are
 * contiguous is read where it lies: each value, brought into the cache once, is used by every
 * sliver of b. Copying it first cost as much as the kernel on lesson 7's products, which use
 * a sliver only a few times. So is a sliver of a transposed a (columns contiguous, as in
 * x^T @ g, every weight's gradient): each step of the kernel reads its `rows` values side by
 * side. The other slivers (other layouts, and one of fewer rows than the kernel's at the
 * bottom edge) are packed: mr rows of a kc-column block, column after column, pa[p*rows + i],
 * with zeros for the rows past mr. */
static void pack_a(int64_t mr, int64_t rows, int64_t kc, const float *a, int64_t rs, int64_t cs, float *pa) {
    for (int64_t p = 0; p < kc; p++, pa += rows)
        for (int64_t i = 0; i < rows; i++) pa[i] = i < mr ? a[i * rs + p * cs] : 0.0f;
}

/* ==== the loops around the kernel ========================================================= */

/* One tile of out, ROWS x `width` (NR, or 2NR for kernel2), of which mr x nr
 * exist, added into out (stored over it when add is false, or, with a row, its floats row_cs
 * apart, set to that row in every row plus the product). A whole tile of an out whose rows are
 * contiguous is written in place; a partial one (the right and bottom edges) or one of a
 * strided out is computed into a local tile, and the part that exists is put into out. */
static void tile(int64_t width, int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *pb, float *out,
                 int64_t rs, int64_t cs, int64_t mr, int64_t nr, bool add, const float *row, int64_t row_cs) {
    float t[ROWS * 2 * NR];
    bool in_place = mr == ROWS && nr == width && cs == 1 && (!row || row_cs == 1);
    float *c = in_place ? out : t;
    int64_t ldc = in_place ? rs : width;
    const float *from = !in_place ? NULL : add ? out : row; /* the kernel adds onto out's tile, or the row */
#if HAS_KERNEL2
    if (width == 2 * NR) kernel2(kc, a, a_rs, a_cs, pb, pb + kc * NR, c, ldc, from, add ? rs : 0);
    else
#endif
        kernel(kc, a, a_rs, a_cs, pb, c, ldc, from, add ? rs : 0);
    if (in_place) return;
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++)
            /* cppcheck-suppress uninitvar ; the kernel wrote the whole tile into t, through c */
            out[i * rs + j * cs] = (add ? out[i * rs + j * cs] : row ? row[j * row_cs] : 0.0f) + t[i * width + j];
}

/* out (+)= a @ b: adding into out, or, without accumulate, storing over it; with a row (n
 * floats, row_cs apart), out = the row in every row + a @ b (accumulate false). False, with out
 * untouched, for k = 0 without accumulate (the reference stores the zeros) or when the buffer
 * cannot be allocated. */
static bool gemm(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs, float *out,
                 int64_t out_rs, int64_t out_cs, int64_t m, int64_t k, int64_t n, bool accumulate, const float *row,
                 int64_t row_cs) {
    if (m <= 0 || n <= 0) return true; /* no element of out */
    if (k <= 0) return accumulate;     /* nothing to add; an out to store 0 over goes back to the reference */
    /* One buffer for a packed block of a (only its bottom sliver, when a's rows are read where
     * they lie) and one of b, no larger than this product needs, each a whole number of 64-byte
     * cache lines (16 floats), so packed b starts 64-byte aligned for the kernel's aligned
     * loads. A small product uses a buffer of this thread's that lives on; a larger one
     * allocates its own. One allocation, not two: glibc gives blocks over 128 KB back to the
     * system when they are freed, and with two it did so, then faulted the pages in again, on
     * every call. */
    static _Thread_local float small_space[GEMM_SMALL_BUFFER + 16];
    /* aligned by hand: macOS's thread-local storage is only 16-byte aligned, whatever _Alignas says */
    float *small_buffer = (float *)(((uintptr_t)small_space + 63) & ~(uintptr_t)63);
    const int64_t rows = ROWS;
    bool a_in_place = a_cs == 1 || a_rs == 1; /* a's whole slivers are read where they lie */
    size_t a_floats = (size_t)round_up((a_in_place ? rows : round_up(min64(m, MC), rows)) * min64(k, KC), 16);
    size_t b_floats = (size_t)round_up(round_up(min64(n, NC), NR) * min64(k, KC), 16);
    float *pb = a_floats + b_floats <= GEMM_SMALL_BUFFER ? small_buffer
                                                         : aligned_alloc(64, (a_floats + b_floats) * sizeof(float));
    if (!pb) return false; /* out of memory */
    float *pa = pb + b_floats;
    for (int64_t jc = 0; jc < n; jc += NC) { /* columns of b and out, NC at a time */
        int64_t nc = min64(NC, n - jc);
        for (int64_t pc = 0; pc < k; pc += KC) { /* the sum over p, KC terms at a time */
            int64_t kc = min64(KC, k - pc);
            bool add = accumulate || pc > 0; /* the first KC terms are stored over out, without accumulate */
            const float *first_row = pc == 0 ? row : NULL; /* under the first KC terms */
            pack_b(kc, nc, b + pc * b_rs + jc * b_cs, b_rs, b_cs, pb);
            for (int64_t ic = 0; ic < m; ic += MC) { /* rows of a and out, MC at a time */
                int64_t mc = min64(MC, m - ic);
                /* the slivers of this block: read where they lie when whole and their rows or
                 * columns are contiguous (the first in_place rows), else packed into pa */
                const float *block = a + ic * a_rs + pc * a_cs;
                int64_t in_place = a_in_place ? mc / rows * rows : 0; /* the rows read where they lie */
                for (int64_t ir = in_place; ir < mc; ir += rows)
                    pack_a(min64(rows, mc - ir), rows, kc, block + ir * a_rs, a_rs, a_cs, pa + (ir - in_place) * kc);
                /* one sliver of b (or two) stays in L1 while the slivers of a stream past it */
                for (int64_t jr = 0, width; jr < nc; jr += width) {
                    width = HAS_KERNEL2 && nc - jr > NR ? 2 * NR : NR;
                    for (int64_t ir = 0; ir < mc; ir += rows) {
                        float *o = out + (ic + ir) * out_rs + (jc + jr) * out_cs;
                        const float *r = first_row ? first_row + (jc + jr) * row_cs : NULL;
                        if (ir < in_place)
                            tile(width, kc, block + ir * a_rs, a_rs, a_cs, pb + jr * kc, o, out_rs, out_cs, rows,
                                 min64(width, nc - jr), add, r, row_cs);
                        else
                            tile(width, kc, pa + (ir - in_place) * kc, 1, rows, pb + jr * kc, o, out_rs, out_cs,
                                 min64(rows, mc - ir), min64(width, nc - jr), add, r, row_cs);
                    }
                }
            }
        }
    }
    if (pb != small_buffer) free(pb);
    return true;
}

/* Below GEMM_SMALL multiply-adds, packing costs more than it saves; so it does for a dot product
 * (one row times one column), where no value is used twice. */
static bool is_small(int64_t m, int64_t k, int64_t n) {
    return (double)m * (double)k * (double)n <= GEMM_SMALL || (m == 1 && n == 1);
}

/* The reference takes the small products (k = 0 among them), and one whose buffer cannot be
 * allocated. */
static void matmul_fast(const float *a, int64_t a_rs, int64_t a_cs, const float *b, int64_t b_rs, int64_t b_cs,
                        float *out, int64_t out_rs, int64_t out_cs, int64_t m, int64_t k, int64_t n, bool accumulate) {
    if (is_small(m, k, n) || !gemm(a, a_rs, a_cs, b, b_rs, b_cs, out, out_rs, out_cs, m, k, n, accumulate, NULL, 0))
        matmul_reference(a, a_rs, a_cs, b, b_rs, b_cs, out, out_rs, out_cs, m, k, n, accumulate);
}

bool gemm_plus_row(const float *a, int64_t m, int64_t k, const float *b, int64_t b_rs, int64_t b_cs, const float *row,
                   int64_t row_stride, float *out, int64_t n) {
    return !is_small(m, k, n) && k > 0 && gemm(a, k, 1, b, b_rs, b_cs, out, n, 1, m, k, n, false, row, row_stride);
}

KERNELS_FAST(bmm, .matmul = matmul_fast);
