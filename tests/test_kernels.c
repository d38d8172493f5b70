/*
 * test_kernels.c - kernels at the seam: every entry of the table of kernels (kernels.h),
 * under every setting of COURSE_KERNELS this CPU runs differently, against the reference
 * kernel it replaces, on the same arguments.
 *
 * The arguments are what the ops pass, and past them: sizes from 1 to past two of each fast
 * kernel's tiles and vector widths, views that are transposed, padded, reversed (negative
 * strides) or repeated (stride 0), and outputs that share memory with an input. Each kernel
 * runs on one copy of every buffer and the reference on another, guard floats around each
 * view included, so a write outside the view shows too. Results that are the same float
 * operations in another order (sums) are held to a bound; the rest must be equal, bit for bit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernels_fast.h"
#include "rng.h"
#include "simd_stream.h"

/* ==== matrices inside guarded buffers ======================================================= */

/* A (rows, cols) view: row-major, column-major (transposed), padded rows, reversed (both
 * strides negative), rows repeated (row stride 0) or columns repeated (column stride 0). */
enum { ROW_MAJOR, COL_MAJOR, PADDED, REVERSED, ROWS_REPEATED, COLS_REPEATED, LAYOUTS };
static const char *const layout_name[LAYOUTS] = {"row-major", "column-major",  "padded",
                                                 "reversed",  "rows repeated", "columns repeated"};
enum { GUARD = 5 }; /* floats before the lowest element and after the highest */

typedef struct {
    float *buf;
    int64_t len, at, rows, cols, rs, cs;
    int64_t shape[2], strides[2]; /* (rows, cols) and (rs, cs), for the kernels that take arrays */
} Mat;

static Mat mat_new(Rng *rng, int64_t rows, int64_t cols, int layout, float lo, float hi) {
    Mat m = {.rows = rows, .cols = cols};
    switch (layout) {
    case ROW_MAJOR: m.rs = cols, m.cs = 1; break;
    case COL_MAJOR: m.rs = 1, m.cs = rows; break;
    case PADDED: m.rs = cols + 3, m.cs = 1; break;
    case REVERSED: m.rs = -cols, m.cs = -1; break;
    case ROWS_REPEATED: m.rs = 0, m.cs = 1; break;
    default: m.rs = 1, m.cs = 0; break;
    }
    int64_t reach_r = rows > 1 ? (rows - 1) * m.rs : 0, reach_c = cols > 1 ? (cols - 1) * m.cs : 0;
    int64_t low = (reach_r < 0 ? reach_r : 0) + (reach_c < 0 ? reach_c : 0);
    int64_t high = (reach_r > 0 ? reach_r : 0) + (reach_c > 0 ? reach_c : 0);
    m.shape[0] = rows, m.shape[1] = cols, m.strides[0] = m.rs, m.strides[1] = m.cs;
    m.at = GUARD - low;
    m.len = m.at + high + 1 + GUARD;
    m.buf = malloc((size_t)m.len * sizeof(float));
    ck_assert(m.buf != NULL);
    for (int64_t i = 0; i < m.len; i++) m.buf[i] = rng_float(rng, lo, hi);
    return m;
}

static Mat mat_copy(const Mat *m) {
    Mat c = *m;
    c.buf = malloc((size_t)m->len * sizeof(float));
    ck_assert(c.buf != NULL);
    memcpy(c.buf, m->buf, (size_t)m->len * sizeof(float));
    return c;
}

static float *at(const Mat *m) { return m->buf + m->at; }
static const int64_t *shape_of(const Mat *m) { return m->shape; }
static const int64_t *strides_of(const Mat *m) { return m->strides; }

/* got against want, float by float: equal bit for bit when tol is 0, else within
 * tol * (1 + |want|). The message names the case and the first float that differs. */
static void expect_same(const char *what, const float *got, const float *want, int64_t n, double tol) {
    for (int64_t i = 0; i < n; i++) {
        /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison): the same bits first (nan, -0) */
        bool same = memcmp(&got[i], &want[i], sizeof(float)) == 0 ||
                    (tol > 0 && fabs((double)got[i] - (double)want[i]) <= tol * (1.0 + fabs((double)want[i])));
        if (!same)
            ck_abort_msg("%s: float %lld of the buffer is %.9g, the reference kernel gives %.9g%s", what, (long long)i,
                         (double)got[i], (double)want[i], tol == 0 ? " (they must be equal)" : "");
    }
}

static void expect_same_mat(const char *what, const Mat *got, const Mat *want, double tol) {
    expect_same(what, got->buf, want->buf, got->len, tol);
}

/* A buffer that a kernel stores over nan holds no nan once the reference has run: else a fast
 * kernel that left the nan where it lay would match it. */
static void expect_no_nan(const char *what, const float *want, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (isnan(want[i]))
            ck_abort_msg("%s: the reference kernel left float %lld of the buffer nan, where it must store", what,
                         (long long)i);
}

/* Every setting of COURSE_KERNELS whose table differs from the reference's. */
#define FOR_EACH_FAST_SETTING(name)                                                \
    for (const char *const *setting_ = test_kernel_modes(); *setting_; setting_++) \
        for (const char *(name) = use_kernels(*setting_); (name); (name) = NULL)   \
            if (strcmp((name), "reference") != 0)

/* Sizes from 1 to past two tiles of lesson 1's (256 x 64), and of the transposing copy's 256
 * rows, with the tails of 8- and 16-wide vectors between (test_transposes: its 128 columns). */
static const int64_t row_sizes[] = {1, 2, 7, 8, 9, 33, 255, 257, 513};
static const int64_t col_sizes[] = {1, 3, 8, 9, 16, 17, 31, 32, 33, 63, 65, 129};
enum { N_ROWS = sizeof row_sizes / sizeof row_sizes[0], N_COLS = sizeof col_sizes / sizeof col_sizes[0] };

/* ==== the core: strided copy and accumulate ================================================= */

/* The labels the benchmarks print say what runs on this CPU: NEON for aarch64's portable build,
 * never an x86 instruction set there, and each x86-64 build's own. */
START_TEST(test_instruction_labels) {
    const char *settings[] = {"reference", "portable", "avx2", "avx512", "native"};
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
        const char *name = kernels_use(settings[i]), *label = kernels_instructions();
        ck_assert_ptr_nonnull(label);
        if (strcmp(name, "reference") == 0) ck_assert_str_eq(label, "plain C loops");
#if defined(__aarch64__)
        else
            ck_assert_msg(strstr(label, "NEON") && !strstr(label, "AVX") && !strstr(label, "SSE"),
                          "COURSE_KERNELS=%s on aarch64 runs %s, labelled \"%s\"", settings[i], name, label);
#elif defined(__x86_64__)
        else if (strcmp(name, "portable") == 0) ck_assert_str_eq(label, "SSE2, 4 floats a vector");
        else if (strcmp(name, "avx2") == 0) ck_assert_str_eq(label, "AVX2 and FMA, 8 floats a vector");
        else ck_assert_str_eq(label, "AVX-512F, 16 floats a vector");
#endif
    }
    kernels_use(NULL);
}
END_TEST

START_TEST(test_strided_kernels) {
    Rng rng = rng_seeded(test_seed());
    const int dst_layouts[] = {ROW_MAJOR, COL_MAJOR, PADDED, REVERSED};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        int turn = 0;
        for (int r = 0; r < N_ROWS; r++)
            for (int c = 0; c < N_COLS; c++, turn++) {
                int64_t rows = row_sizes[r], cols = col_sizes[c];
                int src_layout = turn % LAYOUTS, dst_layout = dst_layouts[turn / LAYOUTS % 4];
                char what[200];
                Mat src = mat_new(&rng, rows, cols, src_layout, -1, 1);
                Mat dst = mat_new(&rng, rows, cols, dst_layout, -1, 1), want = mat_copy(&dst);
                snprintf(what, sizeof what, "%s kernels, copy of (%lld,%lld) from %s into %s", name, (long long)rows,
                         (long long)cols, layout_name[src_layout], layout_name[dst_layout]);
                k->copy(2, shape_of(&src), at(&dst), strides_of(&dst), at(&src), strides_of(&src));
                strided_copy_reference(2, shape_of(&src), at(&want), strides_of(&want), at(&src), strides_of(&src));
                expect_same_mat(what, &dst, &want, 0);
                /* added onto, and summed into a row or a column (a destination stride of 0) */
                for (int into = 0; into < 3; into++) {
                    Mat acc = mat_new(&rng, rows, cols,
                                      into == 0   ? dst_layout
                                      : into == 1 ? ROWS_REPEATED
                                                  : COLS_REPEATED,
                                      -1, 1);
                    Mat acc_want = mat_copy(&acc);
                    snprintf(what, sizeof what, "%s kernels, accumulate of (%lld,%lld) from %s into %s", name,
                             (long long)rows, (long long)cols, layout_name[src_layout],
                             layout_name[into == 0   ? dst_layout
                                         : into == 1 ? ROWS_REPEATED
                                                     : COLS_REPEATED]);
                    k->accumulate(2, shape_of(&src), at(&acc), strides_of(&acc), at(&src), strides_of(&src));
                    strided_accumulate_reference(2, shape_of(&src), at(&acc_want), strides_of(&acc_want), at(&src),
                                                 strides_of(&src));
                    /* a sum of up to 513 terms in [-1, 1], in another order */
                    expect_same_mat(what, &acc, &acc_want, into == 0 ? 0 : 1e-4);
                    free(acc.buf), free(acc_want.buf);
                }
                free(src.buf), free(dst.buf), free(want.buf);
            }
    }
}
END_TEST

/* The transposing copy and accumulate on every pair of sizes around its 16 x 16 blocks, its 8
 * x 8 leftovers and its tiles (256 x 128, past two of them), from a column-major source into a
 * row-major destination and into one with padded rows that start off a cache line. */
START_TEST(test_transposes) {
    const int64_t sizes[] = {1, 8, 15, 16, 17, 24, 127, 129, 257, 300};
    enum { N = sizeof sizes / sizeof sizes[0] };
    Rng rng = rng_seeded(test_seed());
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        for (int r = 0; r < N; r++)
            for (int c = 0; c < N; c++)
                for (int padded = 0; padded < 2; padded++)
                    for (int add = 0; add < 2; add++) {
                        int64_t rows = sizes[r], cols = sizes[c];
                        Mat src = mat_new(&rng, rows, cols, COL_MAJOR, -1, 1);
                        Mat dst = mat_new(&rng, rows, cols, padded ? PADDED : ROW_MAJOR, -1, 1), want = mat_copy(&dst);
                        StridedKernel *fast = add ? k->accumulate : k->copy;
                        StridedKernel *reference = add ? strided_accumulate_reference : strided_copy_reference;
                        fast(2, shape_of(&src), at(&dst), strides_of(&dst), at(&src), strides_of(&src));
                        reference(2, shape_of(&src), at(&want), strides_of(&want), at(&src), strides_of(&src));
                        char what[160];
                        snprintf(what, sizeof what, "%s kernels, %s of a transposed (%lld,%lld) into %s", name,
                                 add ? "accumulate" : "copy", (long long)rows, (long long)cols,
                                 layout_name[padded ? PADDED : ROW_MAJOR]);
                        expect_same_mat(what, &dst, &want, 0);
                        free(src.buf), free(dst.buf), free(want.buf);
                    }
    }
}
END_TEST

/* Transposed copies larger than SIMD_STREAM_BYTES into rows that start on a line: the
 * streamed path, with 8 rows left over after the 16 x 16 blocks (2056), with 8 columns left
 * over (rows of 2056 floats, 2064 apart) next to streamed lines, with 5 columns left over and
 * 5 rows left over, each time the padding left alone. */
START_TEST(test_strided_copy_streamed) {
    enum { ROWS = 2056, LD = 2064 }; /* 17 MB; rows 2064 floats apart start on a line */
    /* whole 16 x 16 blocks; columns left over in 8s; columns not a multiple of 8; rows not a multiple of 8 */
    const int64_t sizes[][2] = {{ROWS, LD}, {ROWS, ROWS}, {ROWS, 2061}, {2053, LD}};
    float *src = malloc((size_t)ROWS * LD * sizeof(float));
    float *got = aligned_alloc(64, (size_t)ROWS * LD * sizeof(float)),
          *want = malloc((size_t)ROWS * LD * sizeof(float));
    ck_assert(src && got && want);
    for (int64_t i = 0; i < (int64_t)ROWS * LD; i++) src[i] = (float)i;
    for (int s = 0; s < (int)(sizeof sizes / sizeof *sizes); s++) {
        const int64_t rows = sizes[s][0], cols = sizes[s][1];
        ck_assert(rows * cols * (int64_t)sizeof(float) > SIMD_STREAM_BYTES);
        const int64_t shape[2] = {rows, cols}, dst_strides[2] = {LD, 1}, src_strides[2] = {1, rows};
        for (int64_t i = 0; i < (int64_t)ROWS * LD; i++) want[i] = -1.0f;
        strided_copy_reference(2, shape, want, dst_strides, src, src_strides);
        FOR_EACH_FAST_SETTING(name) {
            for (int64_t i = 0; i < (int64_t)ROWS * LD; i++) got[i] = -1.0f;
            kernels()->copy(2, shape, got, dst_strides, src, src_strides);
            char what[120];
            snprintf(what, sizeof what, "%s kernels, copy of a transposed (%lld,%lld) into rows %d apart", name,
                     (long long)rows, (long long)cols, LD);
            expect_same(what, got, want, (int64_t)ROWS * LD, 0);
        }
    }
    free(src), free(got), free(want);
}
END_TEST

/* A head split, (B,T,H,D) read as (B,H,T,D), larger than SIMD_STREAM_BYTES: rows of D floats
 * move whole. With D a multiple of 16, every row is whole lines and is streamed, the outer dims
 * walked in the source's order; with D = 264, half a line is left over and it is not. */
START_TEST(test_strided_copy_streamed_rows) {
    enum { B = 2, H = 8, T = 1024 };
    const int64_t dims[] = {272, 264};
    for (int c = 0; c < 2; c++) {
        int64_t d = dims[c], n = (int64_t)B * H * T * d;
        ck_assert(n * (int64_t)sizeof(float) > SIMD_STREAM_BYTES);
        float *src = malloc((size_t)n * sizeof(float)), *got = aligned_alloc(64, (size_t)(n + 16) * sizeof(float));
        float *want = malloc((size_t)n * sizeof(float));
        ck_assert(src && got && want);
        for (int64_t i = 0; i < n; i++) src[i] = (float)i;
        const int64_t shape[4] = {B, H, T, d}, dst_strides[4] = {H * T * d, T * d, d, 1};
        const int64_t src_strides[4] = {T * H * d, d, H * d, 1};
        strided_copy_reference(4, shape, want, dst_strides, src, src_strides);
        FOR_EACH_FAST_SETTING(name) {
            for (int64_t i = 0; i < n + 16; i++) got[i] = -1.0f;
            kernels()->copy(4, shape, got, dst_strides, src, src_strides);
            char what[120];
            snprintf(what, sizeof what, "%s kernels, copy of a (%d,%d,%d,%lld) head split", name, B, T, H,
                     (long long)d);
            expect_same(what, got, want, n, 0);
            for (int64_t i = n; i < n + 16; i++)
                ck_assert_msg(got[i] == -1.0f, "%s: float %lld past the end was written", what, (long long)i);
        }
        free(src), free(got), free(want);
    }
}
END_TEST

/* A destination that shares memory with its source: the reference's order decides what each
 * element gets, so the fast kernels must give exactly its results. */
START_TEST(test_strided_kernels_aliasing) {
    Rng rng = rng_seeded(test_seed());
    const int64_t shifts[] = {1, -1, 7, 33};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        for (int s = 0; s < 4; s++)
            for (int layout = ROW_MAJOR; layout <= REVERSED; layout++)
                for (int add = 0; add < 2; add++) {
                    int64_t rows = 40, cols = 37;
                    Mat m = mat_new(&rng, rows, cols, layout, -1, 1);
                    /* room for the shifted view: the same buffer, grown by the shift on both sides */
                    int64_t pad = 40, len = m.len + 2 * pad;
                    float *got = calloc((size_t)len, sizeof(float)), *want = calloc((size_t)len, sizeof(float));
                    ck_assert(got && want);
                    for (int64_t i = 0; i < len; i++) got[i] = want[i] = rng_float(&rng, -1, 1);
                    float *src_got = got + pad + m.at, *src_want = want + pad + m.at;
                    StridedKernel *fast = add ? k->accumulate : k->copy;
                    StridedKernel *reference = add ? strided_accumulate_reference : strided_copy_reference;
                    fast(2, shape_of(&m), src_got + shifts[s], strides_of(&m), src_got, strides_of(&m));
                    reference(2, shape_of(&m), src_want + shifts[s], strides_of(&m), src_want, strides_of(&m));
                    char what[160];
                    snprintf(what, sizeof what, "%s kernels, %s of a %s (40,37) onto itself shifted by %lld floats",
                             name, add ? "accumulate" : "copy", layout_name[layout], (long long)shifts[s]);
                    expect_same(what, got, want, len, 0);
                    free(got), free(want), free(m.buf);
                }
    }
}
END_TEST

/* ==== lesson 1: the elementwise ops and their backward ====================================== */

static const char ops[] = "+-*/";

/* Strides of an operand of shape (rows or 1, cols or 1) read as (rows, cols): 0 along a dim
 * that is broadcast, and the gradient's (contiguous in the operand's own shape) likewise. */
typedef struct {
    Mat data;
    int64_t strides[2], grad_strides[2];
    float *grad, *grad_want;
    int64_t grad_len;
} Operand;

static Operand operand_new(Rng *rng, int64_t rows, int64_t cols, int kind, int layout, bool divisor) {
    /* kind: 0 full, 1 a row broadcast down (1, cols), 2 a column broadcast across (rows, 1) */
    int64_t own_rows = kind == 1 ? 1 : rows, own_cols = kind == 2 ? 1 : cols;
    Operand o = {.data = mat_new(rng, own_rows, own_cols, layout, divisor ? 1 : -2, 2)};
    if (divisor) /* away from 0: |b| in [1, 2), either sign */
        for (int64_t i = 0; i < o.data.len; i++) o.data.buf[i] *= rng_int(rng, 0, 1) ? 1.0f : -1.0f;
    o.strides[0] = kind == 1 ? 0 : o.data.rs, o.strides[1] = kind == 2 ? 0 : o.data.cs;
    o.grad_strides[0] = kind == 1 ? 0 : own_cols, o.grad_strides[1] = kind == 2 ? 0 : 1;
    o.grad_len = own_rows * own_cols;
    o.grad = malloc((size_t)o.grad_len * sizeof(float)), o.grad_want = malloc((size_t)o.grad_len * sizeof(float));
    ck_assert(o.grad && o.grad_want);
    for (int64_t i = 0; i < o.grad_len; i++) o.grad[i] = o.grad_want[i] = rng_float(rng, -1, 1);
    return o;
}

static void operand_free(Operand *o) { free(o->data.buf), free(o->grad), free(o->grad_want); }

START_TEST(test_binary_kernels) {
    Rng rng = rng_seeded(test_seed());
    static const char *const kinds[] = {"full", "(1,C) broadcast", "(R,1) broadcast"};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        int turn = 0;
        for (int r = 0; r < N_ROWS; r++)
            for (int c = 0; c < N_COLS; c++)
                for (int o = 0; o < 4; o++, turn++) {
                    int64_t rows = row_sizes[r], cols = col_sizes[c], shape[2] = {rows, cols};
                    int kind_a = turn % 3, kind_b = turn / 3 % 3, layout_a = turn % 4, layout_b = turn / 4 % 4;
                    Operand a = operand_new(&rng, rows, cols, kind_a, layout_a, false);
                    Operand b = operand_new(&rng, rows, cols, kind_b, layout_b, ops[o] == '/');
                    int64_t n = rows * cols;
                    float *out = malloc((size_t)n * sizeof(float)), *want = malloc((size_t)n * sizeof(float));
                    float *g = malloc((size_t)n * sizeof(float));
                    ck_assert(out && want && g);
                    for (int64_t i = 0; i < n; i++) g[i] = rng_float(&rng, -1, 1);
                    char what[200];
                    snprintf(what, sizeof what, "%s kernels, a %c b over (%lld,%lld), a %s %s, b %s %s", name, ops[o],
                             (long long)rows, (long long)cols, kinds[kind_a], layout_name[layout_a], kinds[kind_b],
                             layout_name[layout_b]);
                    k->binary(ops[o], 2, shape, out, at(&a.data), a.strides, at(&b.data), b.strides);
                    binary_reference(ops[o], 2, shape, want, at(&a.data), a.strides, at(&b.data), b.strides);
                    expect_same(what, out, want, n, 0);
                    /* the backward, with both gradients, then with one of them only; stored over nan
                     * every other turn where no gradient given is broadcast, else added */
                    bool need_a = turn % 3 != 1, need_b = turn % 3 != 2;
                    bool store = turn / 2 % 2 == 0 && (!need_a || a.grad_len == n) && (!need_b || b.grad_len == n);
                    for (int64_t i = 0; store && i < a.grad_len; i++) a.grad[i] = a.grad_want[i] = NAN;
                    for (int64_t i = 0; store && i < b.grad_len; i++) b.grad[i] = b.grad_want[i] = NAN;
                    k->binary_backward(ops[o], 2, shape, g, at(&a.data), a.strides, at(&b.data), b.strides,
                                       need_a ? a.grad : NULL, a.grad_strides, need_b ? b.grad : NULL, b.grad_strides,
                                       !store);
                    binary_backward_reference(ops[o], 2, shape, g, at(&a.data), a.strides, at(&b.data), b.strides,
                                              need_a ? a.grad_want : NULL, a.grad_strides, need_b ? b.grad_want : NULL,
                                              b.grad_strides, !store);
                    /* a broadcast operand's gradient is a sum of up to 513 terms of size up to 4; a full
                     * one's may be a multiply-add the compiler fused */
                    char grad_what[240];
                    snprintf(grad_what, sizeof grad_what, "%s: a's gradient%s", what, store ? ", stored over nan" : "");
                    if (store && need_a) expect_no_nan(grad_what, a.grad_want, a.grad_len);
                    expect_same(grad_what, a.grad, a.grad_want, a.grad_len, kind_a == 0 ? 1e-6 : 1e-4);
                    snprintf(grad_what, sizeof grad_what, "%s: b's gradient%s", what, store ? ", stored over nan" : "");
                    if (store && need_b) expect_no_nan(grad_what, b.grad_want, b.grad_len);
                    expect_same(grad_what, b.grad, b.grad_want, b.grad_len, kind_b == 0 ? 1e-6 : 1e-4);
                    free(out), free(want), free(g), operand_free(&a), operand_free(&b);
                }
    }
}
END_TEST

/* ==== lesson 3: softmax rows and cross-entropy ============================================== */

/* A (rows, d) tensor in the given layout, as a view over storage of its own. */
static Tensor *view_of(Rng *rng, int64_t rows, int64_t d, int layout, float lo, float hi) {
    Mat m = mat_new(rng, rows, d, layout, lo, hi);
    Tensor *storage = tensor_from(test_ctx, (const int64_t[]){m.len}, 1, m.buf, m.len);
    Tensor *x = tensor_as_strided(storage, (const int64_t[]){rows, d}, 2, strides_of(&m), m.at);
    free(m.buf);
    ck_assert_msg(x != NULL, "%s", tensor_error());
    return x;
}

START_TEST(test_softmax_kernels) {
    Rng rng = rng_seeded(test_seed());
    const int64_t lengths[] = {1, 2, 4, 7, 8, 9, 12, 15, 16, 17, 33, 100};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        int turn = 0;
        for (int l = 0; l < 12; l++)
            for (int layout = ROW_MAJOR; layout <= REVERSED; layout++, turn++) {
                /* up to 5 rows, or 19: rows of up to 16 floats go eight at a time, then one by one */
                int64_t rows = (turn / 3) % 2 ? 19 : 1 + turn % 5, d = lengths[l], n = rows * d;
                Tensor *x = view_of(&rng, rows, d, layout, -30, 30);
                if (turn % 3 == 0) /* masked scores, as attention's causal mask makes: not all of a row */
                    for (int64_t i = 0; i < rows; i++)
                        for (int64_t j = 1; j < d; j += 2)
                            tensor_data(x)[i * x->strides[0] + j * x->strides[1]] = -INFINITY;
                float *out = malloc((size_t)n * sizeof(float)), *want = malloc((size_t)n * sizeof(float));
                ck_assert(out && want);
                for (int log = 0; log < 2; log++) {
                    char what[160];
                    snprintf(what, sizeof what, "%s kernels, %s of a %s (%lld,%lld)", name,
                             log ? "log_softmax" : "softmax", layout_name[layout], (long long)rows, (long long)d);
                    k->softmax_rows(log, 2, x->shape, tensor_data(x), x->strides, out);
                    softmax_rows_reference(log, 2, x->shape, tensor_data(x), x->strides, want);
                    /* e^x within a few units in the last place of expf's */
                    expect_same(what, out, want, n, 2e-6);
                    /* the backward, from the reference's output (contiguous rows) */
                    float *g = malloc((size_t)n * sizeof(float)), *gx = malloc((size_t)n * sizeof(float));
                    float *gx_want = malloc((size_t)n * sizeof(float));
                    ck_assert(g && gx && gx_want);
                    for (int64_t i = 0; i < n; i++)
                        g[i] = rng_float(&rng, -1, 1), gx[i] = gx_want[i] = rng_float(&rng, -1, 1);
                    k->softmax_backward(log, rows, d, want, g, gx);
                    softmax_backward_reference(log, rows, d, want, g, gx_want);
                    snprintf(what, sizeof what, "%s kernels, %s's backward of (%lld,%lld)", name,
                             log ? "log_softmax" : "softmax", (long long)rows, (long long)d);
                    expect_same(what, gx, gx_want, n, 1e-5);
                    free(g), free(gx), free(gx_want);
                }
                int64_t targets[19];
                for (int64_t i = 0; i < rows; i++) targets[i] = 2 * rng_int(&rng, 0, (d - 1) / 2); /* never masked */
                const float *xd = tensor_data(x);
                int64_t rs = x->strides[0], cs = x->strides[1];
                double total = k->cross_entropy(rows, d, xd, rs, cs, targets);
                double total_want = cross_entropy_reference(rows, d, xd, rs, cs, targets);
                ck_assert_msg(fabs(total - total_want) <= 1e-5 * (1.0 + fabs(total_want)),
                              "%s kernels, cross_entropy of a %s (%lld,%lld): %.9g, the reference kernel gives %.9g",
                              name, layout_name[layout], (long long)rows, (long long)d, total, total_want);
                /* its backward adds into out (as a gradient), scaled as the mean over the rows */
                for (int64_t i = 0; i < n; i++) out[i] = want[i] = rng_float(&rng, -1, 1);
                k->cross_entropy_backward(rows, d, xd, rs, cs, targets, 0.7f, out);
                cross_entropy_backward_reference(rows, d, xd, rs, cs, targets, 0.7f, want);
                char what[160];
                snprintf(what, sizeof what, "%s kernels, cross_entropy's backward of a %s (%lld,%lld)", name,
                         layout_name[layout], (long long)rows, (long long)d);
                expect_same(what, out, want, n, 1e-5);
                free(out), free(want);
            }
    }
}
END_TEST

/* ==== lesson 5: gather ======================================================================= */

START_TEST(test_gather_kernel) {
    Rng rng = rng_seeded(test_seed());
    /* (V, D) tables: small and large, and a transposed one large enough for the slab path
     * (a column stride of 16 or more, and n >= V / 16 indices) */
    const int64_t tables[][2] = {{1, 1}, {5, 3}, {9, 17}, {64, 33}, {300, 20}, {40, 129}};
    const int64_t counts[] = {0, 1, 7, 40, 300};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        for (int t = 0; t < 6; t++)
            for (int layout = 0; layout < LAYOUTS; layout++)
                for (int c = 0; c < 5; c++) {
                    int64_t v = tables[t][0], d = tables[t][1], n = counts[c];
                    Tensor *table = view_of(&rng, v, d, layout, -1, 1);
                    int64_t *indices = malloc((size_t)(n > 0 ? n : 1) * sizeof *indices);
                    float *out = malloc((size_t)(n * d + 1) * sizeof(float)),
                          *want = malloc((size_t)(n * d + 1) * sizeof(float));
                    ck_assert(indices && out && want);
                    for (int64_t i = 0; i < n; i++) indices[i] = rng_int(&rng, 0, v - 1); /* repeats too */
                    const float *td = tensor_data(table);
                    k->gather_rows(v, d, td, table->strides[0], table->strides[1], indices, n, out);
                    gather_rows_reference(v, d, td, table->strides[0], table->strides[1], indices, n, want);
                    char what[160];
                    snprintf(what, sizeof what, "%s kernels, gather of %lld rows from a %s (%lld,%lld) table", name,
                             (long long)n, layout_name[layout], (long long)v, (long long)d);
                    expect_same(what, out, want, n * d, 0);
                    free(indices), free(out), free(want);
                }
    }
}
END_TEST

/* ==== lesson 6: matmul ======================================================================= */

START_TEST(test_matmul_kernel) {
    Rng rng = rng_seeded(test_seed());
    /* around the micro-kernels' tiles (6 or 8 rows, 16 or 32 columns), GEMM_SMALL (8 x 8 x 8),
     * a dot product, past one slice of the sum (KC = 256), and empty ones (k = 0 stores zeros) */
    const int64_t sizes[][3] = {{1, 1, 1},    {8, 8, 8},  {9, 8, 8},   {1, 600, 1}, {1, 60, 2},
                                {6, 16, 16},  {7, 9, 17}, {8, 33, 32}, {13, 5, 33}, {17, 257, 15},
                                {33, 64, 65}, {0, 3, 4},  {5, 0, 7}};
    const int a_layouts[] = {ROW_MAJOR, COL_MAJOR, ROWS_REPEATED, REVERSED, PADDED};
    const int out_layouts[] = {ROW_MAJOR, COL_MAJOR, PADDED, REVERSED};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        int turn = 0;
        for (int s = 0; s < (int)(sizeof sizes / sizeof *sizes); s++)
            for (int l = 0; l < 5; l++, turn++) {
                int64_t m = sizes[s][0], kk = sizes[s][1], n = sizes[s][2];
                int la = a_layouts[l], lb = a_layouts[(l + 1 + turn) % 5], lo = out_layouts[turn % 4];
                Mat a = mat_new(&rng, m, kk, la, -1, 1), b = mat_new(&rng, kk, n, lb, -1, 1);
                Mat out = mat_new(&rng, m, n, lo, -1, 1);
                /* every other case stores over out (accumulate false): out then holds nan, which
                 * must not reach the result */
                bool accumulate = turn % 2 == 0;
                if (!accumulate)
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t j = 0; j < n; j++) at(&out)[i * out.rs + j * out.cs] = NAN;
                Mat want = mat_copy(&out);
                k->matmul(at(&a), a.rs, a.cs, at(&b), b.rs, b.cs, at(&out), out.rs, out.cs, m, kk, n, accumulate);
                matmul_reference(at(&a), a.rs, a.cs, at(&b), b.rs, b.cs, at(&want), want.rs, want.cs, m, kk, n,
                                 accumulate);
                char what[200];
                snprintf(what, sizeof what, "%s kernels, matmul (%lld,%lld) @ (%lld,%lld), a %s, b %s, out %s%s", name,
                         (long long)m, (long long)kk, (long long)kk, (long long)n, layout_name[la], layout_name[lb],
                         layout_name[lo], accumulate ? ", added into" : ", stored over nan");
                /* sums of up to 600 products of size up to 1, in another order */
                if (!accumulate) expect_no_nan(what, want.buf, want.len);
                expect_same_mat(what, &out, &want, 4e-5);
                free(a.buf), free(b.buf), free(out.buf), free(want.buf);
            }
    }
}
END_TEST

/* ==== lesson 7: the linear layer ============================================================== */

START_TEST(test_linear_kernel) {
    Rng rng = rng_seeded(test_seed());
    /* (rows, k, n): around the tiles (8 x 16 and 8 x 32), the right and bottom edges, past one
     * slice of the sum (KC = 256: b is put in before the first slice only), small products
     * (GEMM_SMALL) that go to the reference, k = 0 (each row of out is b, or zeros), and rows
     * past the first block of GEMM_MC = 144 */
    const int64_t sizes[][3] = {{8, 16, 32}, {9, 64, 64}, {16, 300, 48}, {7, 5, 17},   {33, 64, 27},
                                {2, 2, 2},   {1, 40, 1},  {6, 0, 20},    {150, 64, 48}};
    const int w_layouts[] = {ROW_MAJOR, COL_MAJOR, PADDED, REVERSED};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        for (int s = 0; s < (int)(sizeof sizes / sizeof *sizes); s++)
            for (int l = 0; l < 4; l++) {
                int64_t rows = sizes[s][0], kk = sizes[s][1], n = sizes[s][2];
                Mat x = mat_new(&rng, rows, kk, ROW_MAJOR, -1, 1), w = mat_new(&rng, kk, n, w_layouts[l], -1, 1);
                /* b: none, contiguous, every other float of a longer row, or one float repeated;
                 * each size meets each kind of b with another layout of w */
                int b_kind = (s + l) % 4;
                int64_t b_stride = b_kind == 2 ? 2 : b_kind == 3 ? 0 : 1;
                Mat b = mat_new(&rng, 1, 2 * n, ROW_MAJOR, -1, 1);
                const float *bias = b_kind == 0 ? NULL : at(&b);
                Mat out = mat_new(&rng, rows, n, ROW_MAJOR, -1, 1);
                for (int64_t i = 0; i < rows * n; i++) at(&out)[i] = NAN; /* stored over: nan must not reach it */
                Mat want = mat_copy(&out);
                k->linear(at(&x), rows, kk, at(&w), w.rs, w.cs, bias, b_stride, at(&out), n);
                linear_reference(at(&x), rows, kk, at(&w), w.rs, w.cs, bias, b_stride, at(&want), n);
                char what[200];
                snprintf(what, sizeof what, "%s kernels, linear (%lld,%lld) @ (%lld,%lld) + b, w %s, b %s", name,
                         (long long)rows, (long long)kk, (long long)kk, (long long)n, layout_name[w_layouts[l]],
                         b_kind == 0   ? "none"
                         : b_kind == 1 ? "contiguous"
                         : b_kind == 2 ? "every other float"
                                       : "one float repeated");
                expect_no_nan(what, want.buf, want.len);
                expect_same_mat(what, &out, &want, 4e-5);
                free(x.buf), free(w.buf), free(b.buf), free(out.buf), free(want.buf);
            }
    }
}
END_TEST

/* ==== lesson 7: GELU and AdamW =============================================================== */

START_TEST(test_train_kernels) {
    Rng rng = rng_seeded(test_seed());
    const int64_t lengths[] = {1, 7, 8, 9, 17, 100};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        for (int l = 0; l < 6; l++)
            for (int layout = ROW_MAJOR; layout <= REVERSED; layout++) {
                int64_t rows = 3, d = lengths[l], n = rows * d, shape[2] = {rows, d};
                Mat x = mat_new(&rng, rows, d, layout, -6, 6);
                float *buf[6];
                for (int i = 0; i < 6; i++) ck_assert((buf[i] = malloc((size_t)n * sizeof(float))) != NULL);
                float *out = buf[0], *t = buf[1], *out_want = buf[2], *t_want = buf[3], *gx = buf[4], *gx_want = buf[5];
                k->gelu(2, shape, at(&x), strides_of(&x), out, t);
                gelu_reference(2, shape, at(&x), strides_of(&x), out_want, t_want);
                char what[160];
                snprintf(what, sizeof what, "%s kernels, gelu of a %s (%lld,%lld)", name, layout_name[layout],
                         (long long)rows, (long long)d);
                expect_same(what, out, out_want, n, 2e-6);
                expect_same(what, t, t_want, n, 2e-6);
                float g[300];
                bool accumulate = (l + layout) % 2 == 0; /* or stored, over nan */
                for (int64_t i = 0; i < n; i++)
                    g[i] = rng_float(&rng, -1, 1), gx[i] = gx_want[i] = accumulate ? rng_float(&rng, -1, 1) : NAN;
                k->gelu_backward(2, shape, at(&x), strides_of(&x), t_want, g, gx, accumulate);
                gelu_backward_reference(2, shape, at(&x), strides_of(&x), t_want, g, gx_want, accumulate);
                snprintf(what, sizeof what, "%s kernels, gelu's backward of a %s (%lld,%lld), %s", name,
                         layout_name[layout], (long long)rows, (long long)d, accumulate ? "added" : "stored over nan");
                if (!accumulate) expect_no_nan(what, gx_want, n);
                expect_same(what, gx, gx_want, n, 2e-6);
                /* AdamW over the same n floats, three steps from the same start */
                float *p = buf[0], *p_want = buf[2], m[300], v[300], m_want[300], v_want[300];
                for (int64_t i = 0; i < n; i++) {
                    p[i] = p_want[i] = rng_float(&rng, -1, 1);
                    m[i] = m_want[i] = rng_float(&rng, -0.1f, 0.1f);
                    v[i] = v_want[i] = rng_float(&rng, 0, 0.01f);
                }
                for (int64_t step = 1; step <= 3; step++) {
                    k->adamw(p, g, m, v, n, step, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f);
                    adamw_reference(p_want, g, m_want, v_want, n, step, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f);
                }
                snprintf(what, sizeof what, "%s kernels, three AdamW steps over %lld floats", name, (long long)n);
                expect_same(what, p, p_want, n, 1e-6);
                expect_same(what, m, m_want, n, 1e-6);
                expect_same(what, v, v_want, n, 1e-6);
                for (int i = 0; i < 6; i++) free(buf[i]);
                free(x.buf);
            }
    }
}
END_TEST

START_TEST(test_layer_norm_kernels) {
    Rng rng = rng_seeded(test_seed());
    /* rows of whole vectors and of a tail, and one past a chunk of the summation policy */
    const int64_t widths[] = {1, 7, 8, 9, 16, 24, 64, 100, SUM_CHUNK + 8};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        for (int w = 0; w < 9; w++)
            for (int grads = 0; grads < 4; grads++) {           /* all three gradients, then each one left out */
                int64_t rows = 13, c = widths[w], n = rows * c; /* eight rows at once, then five one by one */
                float *buf[8];
                for (int i = 0; i < 8; i++) ck_assert((buf[i] = malloc((size_t)n * sizeof(float))) != NULL);
                float *x = buf[0], *g = buf[1], *out = buf[2], *out_want = buf[3], *gx = buf[4], *gx_want = buf[5];
                float *params = buf[6], *param_grads = buf[7]; /* gamma, beta and their gradients, 2c each */
                float stats[26], stats_want[26];
                for (int64_t i = 0; i < n; i++) {
                    int64_t row = i / c; /* rows of their own offsets and spreads */
                    x[i] = (float)row * 3.0f - 6.0f + rng_float(&rng, -1, 1) * (float)(1 + row);
                    g[i] = rng_float(&rng, -1, 1);
                    gx[i] = gx_want[i] = rng_float(&rng, -1, 1);
                }
                for (int64_t i = 0; i < 2 * c; i++) params[i] = rng_float(&rng, -2, 2);
                const float *gamma = params, *beta = params + c;
                k->layer_norm(rows, c, x, gamma, beta, 1e-5f, out, stats);
                layer_norm_reference(rows, c, x, gamma, beta, 1e-5f, out_want, stats_want);
                char what[160];
                snprintf(what, sizeof what, "%s kernels, layer norm of %lld rows of %lld", name, (long long)rows,
                         (long long)c);
                /* the two add a row in other orders, and x - mean magnifies the difference by rstd */
                expect_same(what, out, out_want, n, 5e-5);
                expect_same(what, stats, stats_want, 2 * rows, 5e-6);
                float want_grads[2 * (SUM_CHUNK + 8)];
                for (int64_t i = 0; i < 2 * c; i++) param_grads[i] = want_grads[i] = rng_float(&rng, -1, 1);
                float *ggamma = grads == 1 ? NULL : param_grads, *gbeta = grads == 2 ? NULL : param_grads + c;
                float *ggamma_want = ggamma ? want_grads : NULL, *gbeta_want = gbeta ? want_grads + c : NULL;
                k->layer_norm_backward(rows, c, x, gamma, stats_want, g, grads == 3 ? NULL : gx, ggamma, gbeta);
                layer_norm_backward_reference(rows, c, x, gamma, stats_want, g, grads == 3 ? NULL : gx_want,
                                              ggamma_want, gbeta_want);
                snprintf(what, sizeof what, "%s kernels, layer norm's backward of %lld rows of %lld%s", name,
                         (long long)rows, (long long)c,
                         (const char *[]){"", " (no gamma gradient)", " (no beta gradient)",
                                          " (no x gradient)"}[grads]);
                expect_same(what, gx, gx_want, n, 5e-5);
                expect_same(what, param_grads, want_grads, 2 * c, 5e-5);
                for (int i = 0; i < 8; i++) free(buf[i]);
            }
    }
}
END_TEST

/* Attention over the heads: sizes the fast kernel takes (T and D multiples of its lanes, up to
 * 64: 8, or 16 in the avx512 build) and sizes it hands to the reference, a causal mask and one of finite values; the backward added
 * to gradients, stored over nan, and with k's gradient left out. */
START_TEST(test_attention_kernels) {
    Rng rng = rng_seeded(test_seed());
    const int64_t sizes[][4] = {{2, 16, 2, 16}, {1, 8, 3, 8}, {2, 24, 1, 16},
                                {1, 64, 1, 64}, {2, 5, 2, 3}, {1, 16, 2, 12}};
    FOR_EACH_FAST_SETTING(name) {
        const Kernels *k = kernels();
        for (int z = 0; z < 6; z++) {
            int64_t b = sizes[z][0], t = sizes[z][1], heads = sizes[z][2], d = sizes[z][3], n = b * t * heads * d;
            int64_t nw = b * heads * t * t;
            float *buf[13];
            for (int i = 0; i < 13; i++) /* mask (t, t), weights (b, h, t, t), the rest (b, t, h * d) */
                ck_assert((buf[i] = malloc((size_t)(i == 10 ? t * t : i < 10 ? n : nw) * sizeof(float))) != NULL);
            float *q = buf[0], *kk = buf[1], *v = buf[2], *gy = buf[3], *y = buf[4], *y_want = buf[5];
            float *grads = buf[6], *grads_want = buf[7], *spare = buf[8], *spare_want = buf[9], *mask = buf[10];
            float *w = buf[11], *w_want = buf[12];
            for (int64_t i = 0; i < n; i++)
                q[i] = rng_float(&rng, -2, 2), kk[i] = rng_float(&rng, -2, 2), v[i] = rng_float(&rng, -2, 2),
                gy[i] = rng_float(&rng, -1, 1);
            bool causal = z % 2 == 0;
            for (int64_t i = 0; i < t; i++)
                for (int64_t j = 0; j < t; j++)
                    mask[i * t + j] = causal ? (j <= i ? 0.0f : -INFINITY) : rng_float(&rng, -3, 3);
            float scale = 1.0f / sqrtf((float)d);
            k->attention(b, t, heads, d, q, kk, v, mask, scale, w, y);
            attention_reference(b, t, heads, d, q, kk, v, mask, scale, w_want, y_want);
            char what[200];
            snprintf(what, sizeof what, "%s kernels, attention of (B, T, H, D) = (%lld,%lld,%lld,%lld), %s mask", name,
                     (long long)b, (long long)t, (long long)heads, (long long)d, causal ? "a causal" : "a finite");
            expect_same(what, w, w_want, nw, 1e-5);
            expect_same(what, y, y_want, n, 1e-5);
            for (int pass = 0; pass < 3; pass++) {
                /* stored over nan (all three gradients); added, with no k gradient; added, with only k's.
                 * Two buffers: grads, and spare (v's, or k's in the last pass); y for k's in the first */
                bool accumulate = pass > 0;
                for (int64_t i = 0; i < n; i++) {
                    grads[i] = grads_want[i] = accumulate ? rng_float(&rng, -1, 1) : NAN;
                    spare[i] = spare_want[i] = accumulate ? rng_float(&rng, -1, 1) : NAN;
                }
                float *gq = pass < 2 ? grads : NULL, *gq_want = pass < 2 ? grads_want : NULL;
                float *gk = pass == 0   ? y
                            : pass == 2 ? spare
                                        : NULL,
                      *gk_want = pass == 0   ? y_want
                                 : pass == 2 ? spare_want
                                             : NULL;
                float *gv = pass < 2 ? spare : NULL, *gv_want = pass < 2 ? spare_want : NULL;
                k->attention_backward(b, t, heads, d, q, kk, v, w_want, scale, gy, gq, gk, gv, accumulate);
                attention_backward_reference(b, t, heads, d, q, kk, v, w_want, scale, gy, gq_want, gk_want, gv_want,
                                             accumulate);
                snprintf(what, sizeof what, "%s kernels, attention's backward of (%lld,%lld,%lld,%lld), %s", name,
                         (long long)b, (long long)t, (long long)heads, (long long)d,
                         (const char *[]){"stored over nan", "added, no k gradient", "added, only k's gradient"}[pass]);
                if (pass == 0) /* all three gradients stored */
                    expect_no_nan(what, grads_want, n), expect_no_nan(what, spare_want, n),
                        expect_no_nan(what, y_want, n);
                expect_same(what, grads, grads_want, n, 1e-4);
                expect_same(what, spare, spare_want, n, 1e-4);
                if (pass == 0) expect_same(what, y, y_want, n, 1e-4);
            }
            for (int i = 0; i < 13; i++) free(buf[i]);
        }
    }
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("kernels at the seam");
    TCase *core = add_test_case(s, "every entry of the table against its reference kernel");
    tcase_set_timeout(core, 60);
    add_test(core, test_instruction_labels);
    add_test(core, test_strided_kernels);
    add_test(core, test_strided_kernels_aliasing);
    add_test(core, test_transposes);
    add_test(core, test_strided_copy_streamed);
    add_test(core, test_strided_copy_streamed_rows);
    add_test(core, test_binary_kernels);
    add_test(core, test_softmax_kernels);
    add_test(core, test_gather_kernel);
    add_test(core, test_matmul_kernel);
    add_test(core, test_linear_kernel);
    add_test(core, test_train_kernels);
    add_test(core, test_layer_norm_kernels);
    add_test(core, test_attention_kernels);
    return run_core_tests(argc, argv, s);
}
