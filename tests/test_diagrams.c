/*
 * test_diagrams.c - pictures of memory: the cells behind each lesson's diagrams (make diagrams),
 * built by the same functions the pictures are drawn from, held against the library's own
 * strides, offsets and maps and against the chapter's tables. A stride that changes in the
 * library changes a picture, and fails here. Then the table's own contract: its gnuplot form
 * and its errors.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bmm_diagram.h"
#include "broadcast.h"
#include "broadcast_diagram.h"
#include "gather_diagram.h"
#include "harness.h"
#include "permute.h"
#include "permute_diagram.h"
#include "reduce_diagram.h"

static Diagram diagram; /* each test runs in a process of its own */

/* Fills the picture with maker, or fails with the library's message. */
static Diagram *make(DiagramMaker maker, const char *name) {
    diagram_clear(&diagram);
    tensor_clear_error();
    ck_assert_msg(maker(&diagram) == 0, "making picture %s failed: %s", name, tensor_error() ? tensor_error() : "?");
    return &diagram;
}

/* Fails unless `part` has exactly n cells, cell k at (k / cols, k % cols), with link links[k]
 * and, unless values is NULL, value values[k]. */
#define EXPECT_CELLS(d, part, n, cols, links, values) \
    expect_cells_((d), (part), (n), (cols), (links), (values), __FILE__, __LINE__)
static void expect_cells_(const Diagram *d, const char *part, int n, int cols, const int64_t *links,
                          const float *values, const char *file, int line) {
    ck_assert_msg(diagram_count(d, part) == n, "%s:%d: part %s has %d cells, expected %d", file, line, part,
                  diagram_count(d, part), n);
    for (int k = 0; k < n; k++) {
        const DiagramCell *c = diagram_find(d, part, k / cols, k % cols);
        ck_assert_msg(c != NULL, "%s:%d: part %s has no cell (%d,%d)", file, line, part, k / cols, k % cols);
        ck_assert_msg(c->link == links[k], "%s:%d: %s cell (%d,%d) links to %lld, expected %lld", file, line, part,
                      k / cols, k % cols, (long long)c->link, (long long)links[k]);
        if (values)
            ck_assert_msg(c->value == values[k], "%s:%d: %s cell (%d,%d) holds %g, expected %g", file, line, part,
                          k / cols, k % cols, (double)c->value, (double)values[k]);
    }
}

#define EXPECT_LABEL(d, part, row, col, text) expect_label_((d), (part), (row), (col), (text), __FILE__, __LINE__)
static void expect_label_(const Diagram *d, const char *part, int64_t row, int64_t col, const char *text,
                          const char *file, int line) {
    const DiagramCell *c = diagram_find(d, part, row, col);
    ck_assert_msg(c != NULL, "%s:%d: part %s has no cell (%lld,%lld)", file, line, part, (long long)row,
                  (long long)col);
    ck_assert_msg(strcmp(c->label, text) == 0, "%s:%d: %s cell (%lld,%lld) says \"%s\", expected \"%s\"", file, line,
                  part, (long long)row, (long long)col, c->label, text);
}

#define EXPECT_NOTE(d, name, text) expect_note_((d), (name), (text), __FILE__, __LINE__)
static void expect_note_(const Diagram *d, const char *name, const char *text, const char *file, int line) {
    const char *note = diagram_note_text(d, name);
    ck_assert_msg(note && strcmp(note, text) == 0, "%s:%d: note %s is \"%s\", expected \"%s\"", file, line, name,
                  note ? note : "(none)", text);
}

/* The offset a header gives element (i,j) of a rank-2 view, or (j) of a rank-1 one. */
static int64_t header_offset(const Tensor *v, int64_t i, int64_t j) {
    return v->offset + j * v->strides[v->rank - 1] + (v->rank == 2 ? i * v->strides[0] : 0);
}

/* Fails unless every cell of `part` (rows x cols) links to the offset v's header gives it. */
static void expect_header_links(const Diagram *d, const char *part, const Tensor *v) {
    ck_assert_ptr_nonnull(v);
    int64_t rows = v->rank == 2 ? v->shape[0] : 1, cols = v->shape[v->rank - 1], links[16];
    for (int64_t k = 0; k < rows * cols; k++) links[k] = header_offset(v, k / cols, k % cols);
    EXPECT_CELLS(d, part, (int)(rows * cols), (int)cols, links, NULL);
}

/* ==== lesson 1 ============================================================================== */

START_TEST(test_broadcast_reads_are_the_view_and_the_map) {
    Diagram *d = make(broadcast_diagram_reads, "reads");
    Tensor *b = tensor_from(test_ctx, DIMS(3), VALUES(10, 20, 30));
    Tensor *view = EXPECT_OK(tensor_expand(b, DIMS(2, 3)));
    /* the library's own header, and the chapter's table (2.4): (1,0) reads b[0] again */
    expect_header_links(d, "view", view);
    const int64_t chapter[6] = {0, 1, 2, 0, 1, 2};
    EXPECT_CELLS(d, "view", 6, 3, chapter, ((const float[]){10, 20, 30, 10, 20, 30}));
    int64_t map[6];
    ck_assert_int_eq(broadcast_map(DIMS(2, 3), DIMS(3), map), 0);
    EXPECT_CELLS(d, "map", 6, 6, map, NULL);
    EXPECT_CELLS(d, "map", 6, 6, chapter, NULL);
    EXPECT_CELLS(d, "storage", 3, 3, ((const int64_t[]){-1, -1, -1}), ((const float[]){10, 20, 30}));
    EXPECT_LABEL(d, "view", 1, 2, "1*0 + 2*1 = 2");
    EXPECT_LABEL(d, "map", 0, 3, "(1,0)");
    EXPECT_NOTE(d, "view", "the library: b viewed as (2,3), strides (0,1), offset 0");
}
END_TEST

START_TEST(test_broadcast_grads_add_into_the_cell_read) {
    Diagram *d = make(broadcast_diagram_grads, "grads");
    /* each gradient of c goes where its cell of c read: the forward's map, turned around */
    EXPECT_CELLS(d, "g", 6, 3, ((const int64_t[]){0, 1, 2, 0, 1, 2}), ((const float[]){1, 2, 3, 4, 5, 6}));
    EXPECT_CELLS(d, "gb", 3, 3, ((const int64_t[]){-1, -1, -1}), ((const float[]){5, 7, 9}));
    EXPECT_LABEL(d, "gb", 0, 0, "1 + 4 = 5");
    EXPECT_LABEL(d, "g", 1, 0, "g = 4");
}
END_TEST

/* ==== lesson 2 ============================================================================== */

START_TEST(test_reduce_adds_through_a_stride0_output) {
    Diagram *d = make(reduce_diagram_sum, "sum");
    /* out (1,3) seen from x's shape: the strides sum_to_shape and sum_axis add through */
    int64_t strides[2], links[6];
    ck_assert_int_eq(broadcast_strides(DIMS(1, 3), STRIDES(3, 1), DIMS(2, 3), strides), 0);
    for (int r = 0; r < 6; r++) links[r] = r / 3 * strides[0] + r % 3 * strides[1];
    EXPECT_CELLS(d, "x", 6, 3, links, ((const float[]){1, 2, 3, 4, 5, 6}));
    EXPECT_CELLS(d, "x", 6, 3, ((const int64_t[]){0, 1, 2, 0, 1, 2}), NULL);
    EXPECT_CELLS(d, "out", 3, 3, ((const int64_t[]){-1, -1, -1}), ((const float[]){5, 7, 9}));
    EXPECT_LABEL(d, "out", 0, 0, "1 + 4 = 5");
    EXPECT_LABEL(d, "x", 1, 2, "1*0 + 2*1 = 2");
    /* the backward reads g through the same strides: each column's g goes to both rows */
    EXPECT_CELLS(d, "gx", 6, 3, ((const int64_t[]){0, 1, 2, 0, 1, 2}), ((const float[]){1, 2, 3, 1, 2, 3}));
    EXPECT_NOTE(d, "strides", "(0,1)");
}
END_TEST

/* ==== lesson 4 ============================================================================== */

START_TEST(test_permute_views_name_the_cells_they_read) {
    Diagram *d = make(permute_diagram_views, "views");
    Tensor *x = tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6));
    /* each header against the library's own view, made the same way */
    expect_header_links(d, "contiguous", x);
    expect_header_links(d, "permuted", tensor_permute(x, AXES(1, 0)));
    expect_header_links(d, "expanded", tensor_expand(tensor_as_strided(x, DIMS(3), STRIDES(1), 3), DIMS(2, 3)));
    expect_header_links(d, "window", tensor_as_strided(x, DIMS(2, 2), STRIDES(3, 1), 1));
    expect_header_links(d, "reversed", tensor_as_strided(x, DIMS(2, 3), STRIDES(3, -1), 2));
    /* ... and against what lesson 4 teaches they read: (1,0) of the transpose is s[1] */
    EXPECT_CELLS(d, "contiguous", 6, 3, ((const int64_t[]){0, 1, 2, 3, 4, 5}), ((const float[]){1, 2, 3, 4, 5, 6}));
    EXPECT_CELLS(d, "permuted", 6, 2, ((const int64_t[]){0, 3, 1, 4, 2, 5}), ((const float[]){1, 4, 2, 5, 3, 6}));
    EXPECT_CELLS(d, "expanded", 6, 3, ((const int64_t[]){3, 4, 5, 3, 4, 5}), ((const float[]){4, 5, 6, 4, 5, 6}));
    EXPECT_CELLS(d, "window", 4, 2, ((const int64_t[]){1, 2, 4, 5}), ((const float[]){2, 3, 5, 6}));
    EXPECT_CELLS(d, "reversed", 6, 3, ((const int64_t[]){2, 1, 0, 5, 4, 3}), ((const float[]){3, 2, 1, 6, 5, 4}));
    EXPECT_LABEL(d, "permuted", 1, 0, "s[1]");
    EXPECT_NOTE(d, "permuted_header", "shape (3,2), strides (1,3), offset 0");
    EXPECT_NOTE(d, "expanded_header", "shape (2,3), strides (0,1), offset 3");
    EXPECT_NOTE(d, "reversed_header", "shape (2,3), strides (3,-1), offset 2");
}
END_TEST

START_TEST(test_permute_walk_is_the_odometer) {
    Diagram *d = make(permute_diagram_walk, "walk");
    Tensor *y = tensor_permute(tensor_from(test_ctx, DIMS(2, 3), VALUES(1, 2, 3, 4, 5, 6)), AXES(1, 0));
    /* the offsets y's header gives its indices in row-major order, and the copy's values */
    int64_t links[6];
    float copied[6];
    for (int k = 0; k < 6; k++) links[k] = header_offset(y, k / 2, k % 2);
    ck_assert_int_eq(tensor_to_array(tensor_contiguous(y), copied, 6), 6);
    EXPECT_CELLS(d, "walk", 6, 6, links, copied);
    EXPECT_CELLS(d, "walk", 6, 6, ((const int64_t[]){0, 3, 1, 4, 2, 5}), ((const float[]){1, 4, 2, 5, 3, 6}));
    EXPECT_LABEL(d, "walk", 0, 2, "(1,0)");
    /* the hops of 5.3: +3, then a carry of -2 */
    ck_assert_int_eq(diagram_count(d, "hop"), 5);
    EXPECT_LABEL(d, "hop", 0, 1, "+3");
    EXPECT_LABEL(d, "hop", 3, 2, "-2 (a carry)");
    EXPECT_LABEL(d, "hop", 2, 5, "+3");
    EXPECT_NOTE(d, "y", "y = permute(x, (1,0)): shape (3,2), strides (1,3)");
}
END_TEST

/* ==== lesson 5 ============================================================================== */

START_TEST(test_gather_rows_and_their_scatter_add) {
    Diagram *d = make(gather_diagram_rows, "rows");
    /* out cell (i,j) copies table cell (indices[i], j): flat indices[i]*2 + j */
    EXPECT_CELLS(d, "out1", 4, 2, ((const int64_t[]){0, 1, 4, 5}), ((const float[]){1, 2, 5, 6}));
    EXPECT_CELLS(d, "out2", 4, 2, ((const int64_t[]){0, 1, 0, 1}), ((const float[]){1, 2, 1, 2}));
    /* the backward sends each gradient back there: with [0, 0], row 0 receives twice */
    EXPECT_CELLS(d, "g1", 4, 2, ((const int64_t[]){0, 1, 4, 5}), NULL);
    EXPECT_CELLS(d, "g2", 4, 2, ((const int64_t[]){0, 1, 0, 1}), NULL);
    EXPECT_CELLS(d, "grad1", 6, 2, ((const int64_t[]){-1, -1, -1, -1, -1, -1}), ((const float[]){1, 1, 0, 0, 1, 1}));
    EXPECT_CELLS(d, "grad2", 6, 2, ((const int64_t[]){-1, -1, -1, -1, -1, -1}), ((const float[]){2, 2, 0, 0, 0, 0}));
    EXPECT_LABEL(d, "grad2", 0, 1, "1+1=2");
    EXPECT_LABEL(d, "grad1", 0, 0, "1");
    EXPECT_CELLS(d, "indices2", 2, 1, ((const int64_t[]){0, 0}), NULL);
    EXPECT_NOTE(d, "case1", "indices = [0, 2]");
}
END_TEST

/* ==== lesson 6 ============================================================================== */

START_TEST(test_bmm_fold_as_seed_002_counted) {
    Diagram *d = make(bmm_diagram_fold, "fold");
    int kinds[2][3] = {{0}};
    for (int t = 0; t < 40; t++) {
        const DiagramCell *lib = diagram_find(d, "lib", t / 5, t % 5), *fold = diagram_find(d, "fold", t / 5, t % 5);
        ck_assert_ptr_nonnull(lib);
        ck_assert_ptr_nonnull(fold);
        kinds[0][lib->kind]++, kinds[1][fold->kind]++;
        /* the library: every row r of the picture right, and written by row r % 2 of q */
        ck_assert_msg(lib->kind == BMM_CELL_RIGHT && lib->link == t / 5 % 2,
                      "the library's element %d: kind %d, written by q row %lld; expected right (0), by q row %d", t,
                      lib->kind, (long long)lib->link, t / 5 % 2);
        /* the fold: row 0 of its product lands at 0, row 1 at 5 over it, nothing from 25 on */
        int64_t writer = t < 5 ? 0 : t < 25 ? 1 : -1;
        int kind = t < 10 ? BMM_CELL_RIGHT : t < 25 ? BMM_CELL_WRONG : BMM_CELL_UNWRITTEN;
        ck_assert_msg(fold->kind == kind && fold->link == writer,
                      "the fold's element %d: kind %d, written by q row %lld; expected kind %d, by q row %lld", t,
                      fold->kind, (long long)fold->link, kind, (long long)writer);
    }
    ck_assert_int_eq(kinds[0][BMM_CELL_RIGHT], 40);
    /* seed 002's counts: 30 of 40 wrong, 15 of them exact zeros */
    ck_assert_int_eq(kinds[1][BMM_CELL_RIGHT], 10);
    ck_assert_int_eq(kinds[1][BMM_CELL_WRONG], 15);
    ck_assert_int_eq(kinds[1][BMM_CELL_UNWRITTEN], 15);
    /* batch 1 row 0 as the case study printed it: 1.3 where 0.7 belongs */
    const DiagramCell *c = diagram_find(d, "fold", 2, 0);
    ck_assert_float_eq_tol(c->value, 1.3f, 1e-5f);
    EXPECT_LABEL(d, "fold", 2, 0, "want 0.70");
    EXPECT_LABEL(d, "fold", 7, 4, "unwritten");
    ck_assert_float_eq_tol(diagram_find(d, "lib", 6, 0)->value, 1.6f, 1e-5f);
    EXPECT_LABEL(d, "fold_rows", 3, 0, "q row 1");
    EXPECT_LABEL(d, "fold_rows", 5, 0, "nothing");
    EXPECT_NOTE(d, "fold_counts", "10 right, 15 wrong, 15 never written (still 0)");
    EXPECT_NOTE(d, "lib_counts", "40 of 40 right");
    EXPECT_NOTE(d, "fold_survivors", "only batch 0 survives");
    EXPECT_NOTE(d, "lib_survivors", "batches 0, 1, 2, 3 survive");
    EXPECT_NOTE(d, "q", "q = expand(queries (1,2,3), (4,2,3)): strides (0,3,1)");
    EXPECT_NOTE(d, "rows", "no");
    EXPECT_NOTE(d, "overlap", "its 2 rows, 20 wide, are written 5 apart");
    EXPECT_NOTE(d, "tail", "row 1 covers all but 5 of row 0, and nothing is written from element 25 on");
}
END_TEST

/* ==== the table itself ======================================================================= */

/* Everything f holds, as a string (f is rewound first). */
static char *contents(FILE *f, char *buf, size_t size) {
    rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    return buf;
}

START_TEST(test_diagram_written_for_gnuplot) {
    Diagram *d = &diagram;
    diagram_clear(d);
    ck_assert_int_eq(diagram_cell(d, "a", 0, 0, 1.5f, 2, 0, "x[%d]", 0), 0);
    ck_assert_int_eq(diagram_cell(d, "b_2", 1, 3, -2, -1, 1, "say \"hi\\\""), 0);
    ck_assert_int_eq(diagram_cell(d, "a", 0, 1, 0.1f, -1, 2, "%s", ""), 0);
    ck_assert_int_eq(diagram_note(d, "title", "first"), 0);
    ck_assert_int_eq(diagram_note(d, "title", "strides %s", "(0,1)"), 0); /* replaces */
    ck_assert_int_eq(d->n_notes, 1);
    ck_assert_int_eq(diagram_count(d, "a"), 2);
    ck_assert_int_eq(diagram_count(d, "c"), 0);
    ck_assert_ptr_null(diagram_find(d, "a", 1, 0));
    ck_assert_ptr_null(diagram_note_text(d, "other"));
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(diagram_write(d, f), 0);
    char text[1024];
    /* a part's cells together, in the order they came; the quotes and backslash escaped */
    ck_assert_str_eq(contents(f, text, sizeof text), "$a << EOD\n# row col value link kind label\n"
                                                     "0 0 1.5 2 0 \"x[0]\"\n0 1 0.100000001 -1 2 \"\"\nEOD\n"
                                                     "$b_2 << EOD\n# row col value link kind label\n"
                                                     "1 3 -2 -1 1 \"say \\\"hi\\\\\\\"\"\nEOD\n"
                                                     "note_title = \"strides (0,1)\"\n");
    fclose(f);
}
END_TEST

START_TEST(test_diagram_bad_input_is_an_error) {
    Diagram *d = &diagram;
    diagram_clear(d);
    diagram_clear(NULL);
    ck_assert_int_eq(diagram_cell(NULL, "a", 0, 0, 0, -1, 0, "x"), -1);
    EXPECT_ERROR("diagram_cell: the diagram is NULL", "a NULL diagram");
    const char *bad_names[] = {"", "1a", "a-b", "$a", "a_name_of_more_than_23ch", NULL};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(diagram_cell(d, bad_names[i], 0, 0, 0, -1, 0, "x"), -1);
        EXPECT_ERROR("must be 1 to 23 letters, digits or _", bad_names[i]);
        ck_assert_int_eq(diagram_note(d, bad_names[i], "x"), -1);
    }
    ck_assert_int_eq(diagram_cell(d, NULL, 0, 0, 0, -1, 0, "x"), -1);
    EXPECT_ERROR("name \"(NULL)\"", "a NULL part");
    ck_assert_int_eq(
        diagram_cell(d, "a", 0, 0, 0, -1, 0, "%s", "a label of more than forty characters, which is too long"), -1);
    EXPECT_ERROR("diagram_cell: the text is longer than 39 characters", "a long label");
    ck_assert_int_eq(diagram_cell(d, "a", 0, 0, 0, -1, 0, "two\nlines"), -1);
    EXPECT_ERROR("other than printable ASCII", "a newline");
    ck_assert_int_eq(diagram_note(d, "a", "caf\xc3\xa9"), -1);
    EXPECT_ERROR("diagram_note: the text \"caf", "a byte beyond ASCII");
    ck_assert_int_eq(diagram_cell(d, "a", 0, 0, 0, -1, 0, NULL), -1);
    EXPECT_ERROR("format is NULL", "a NULL format");
    ck_assert_int_eq(d->n_cells + d->n_notes, 0); /* nothing half-added */
    for (int i = 0; i < DIAGRAM_MAX_CELLS; i++) ck_assert_int_eq(diagram_cell(d, "a", i, 0, 0, -1, 0, "x"), 0);
    ck_assert_int_eq(diagram_cell(d, "a", 0, 0, 0, -1, 0, "x"), -1);
    EXPECT_ERROR("diagram_cell: the diagram is full (256 cells", "one cell too many");
    for (int i = 0; i < DIAGRAM_MAX_NOTES; i++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", i);
        ck_assert_int_eq(diagram_note(d, name, "x"), 0);
    }
    ck_assert_int_eq(diagram_note(d, "n_more", "x"), -1);
    EXPECT_ERROR("full (16 notes", "one note too many");
    ck_assert_int_eq(diagram_note(d, "n0", "still room to replace"), 0);
    ck_assert_int_eq(diagram_write(NULL, stdout), -1);
    EXPECT_ERROR("diagram_write: the diagram is NULL", "writing a NULL diagram");
    ck_assert_int_eq(diagram_write(d, NULL), -1);
    EXPECT_ERROR("diagram_write: the file is NULL", "writing to a NULL file");
    ck_assert_ptr_null(diagram_find(NULL, "a", 0, 0));
    ck_assert_int_eq(diagram_count(NULL, "a"), 0);
    ck_assert_ptr_null(diagram_note_text(d, NULL));
    /* the makers report a NULL diagram instead of crashing */
    const DiagramMaker makers[] = {broadcast_diagram_reads, broadcast_diagram_grads, reduce_diagram_sum,
                                   permute_diagram_views,   permute_diagram_walk,    gather_diagram_rows,
                                   bmm_diagram_fold};
    for (int i = 0; i < 7; i++) {
        tensor_clear_error();
        ck_assert_int_eq(makers[i](NULL), -1);
        EXPECT_ERROR("the diagram is NULL", "a maker given NULL");
    }
}
END_TEST

static Tensor *twice(Tensor *x, void *arg) { return (void)arg, tensor_mul_scalar(x, 2); }

START_TEST(test_diagram_probes) {
    float jacobian[9];
    /* a linear op's columns: x * 2 sends element r to element r, doubled */
    ck_assert_int_eq(diagram_probe_forward(DIMS(3), twice, NULL, jacobian, 9), 3);
    EXPECT_ARRAY(jacobian, ((const float[]){2, 0, 0, 0, 2, 0, 0, 0, 2}), 9, 0, "the jacobian of x * 2");
    ck_assert_int_eq(diagram_probe_forward(DIMS(3), twice, NULL, jacobian, 8), -1);
    EXPECT_ERROR("room for 8 floats, but 3 inputs reach 3 outputs each", "too little room");
    ck_assert_int_eq(diagram_probe_forward(DIMS(3), NULL, NULL, jacobian, 9), -1);
    EXPECT_ERROR("diagram_probe_forward: op is NULL", "no op");
    ck_assert_int_eq(diagram_probe_forward(DIMS(-1), twice, NULL, jacobian, 9), -1);
    EXPECT_ERROR("negative dimensions", "a negative dim");
    Tensor *x = tensor_requires_grad(tensor_zeros(test_ctx, DIMS(3)));
    Tensor *sum = tensor_sum(x);
    ck_assert_int_eq(diagram_probe_backward(sum, x, jacobian, 3), 1);
    EXPECT_ARRAY(jacobian, ((const float[]){1, 1, 1}), 3, 0, "the gradient of sum(x)");
    ck_assert_int_eq(diagram_probe_backward(sum, x, jacobian, 2), -1);
    EXPECT_ERROR("room for 2 floats", "too little room");
    ck_assert_int_eq(diagram_probe_backward(sum, tensor_zeros(test_ctx, DIMS(3)), jacobian, 3), -1);
    EXPECT_ERROR("x does not require grad", "x without a gradient");
    ck_assert_int_eq(diagram_probe_backward(NULL, x, jacobian, 3), -1);
    EXPECT_ERROR("diagram_probe_backward: out is NULL", "no output");
    /* where a 1 landed: along a row, down a column, nowhere, or in more than one place */
    const float reach[6] = {0, 0, 3, 0, 0, 0}, two[4] = {1, 0, 1, 0}, three[3] = {1, 1, 1};
    ck_assert_int_eq(diagram_reached(reach, 6, 1), 2);
    ck_assert_int_eq(diagram_reached(reach + 2, 2, 3), 0);
    ck_assert_int_eq(diagram_reached(reach + 1, 2, 3), -1);
    ck_assert_int_eq(diagram_reached(two, 4, 1), -2);
    ck_assert_int_eq(diagram_reached(three, 3, 1), -2); /* a third does not make it one again */
    ck_assert_int_eq(diagram_reached(NULL, 3, 1), -1);
    /* the sum a cell received, spelled out */
    char spelled[8];
    const float terms[4] = {1, 2, 3, 4};
    const int64_t links[4] = {0, 1, 0, 1};
    ck_assert_int_eq(diagram_terms(spelled, sizeof spelled, terms, links, 4, 1, " + "), 2);
    ck_assert_str_eq(spelled, "2 + 4");
    ck_assert_int_eq(diagram_terms(spelled, sizeof spelled, terms, links, 4, 2, " + "), 0);
    ck_assert_str_eq(spelled, "");
    ck_assert_int_eq(diagram_terms(spelled, 4, terms, links, 4, 0, " + "), 2);
    ck_assert_str_eq(spelled, "1 +"); /* cut short, still a string */
    ck_assert_int_eq(diagram_terms(NULL, 0, terms, links, 4, 0, "+"), 2);
}
END_TEST

START_TEST(test_diagram_main_says_what_it_knows) {
    const DiagramEntry entries[] = {{"reads", broadcast_diagram_reads}};
    char *unknown[] = {"diagram", "nothing", "/dev/null", NULL}, *unwritable[] = {"diagram", "reads", "/", NULL};
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr)); /* its usage lines are not this test's report */
    ck_assert_int_eq(diagram_main(3, unknown, entries, 1), EXIT_FAILURE);
    ck_assert_int_eq(diagram_main(2, unknown, entries, 1), EXIT_FAILURE);
    ck_assert_int_eq(diagram_main(3, unwritable, entries, 1), EXIT_FAILURE);
    ck_assert_int_eq(diagram_main(3, NULL, entries, 1), EXIT_FAILURE);
    ck_assert_int_eq(diagram_main(3, unknown, NULL, 1), EXIT_FAILURE);
    char path[] = "/tmp/test_diagrams_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    char *good[] = {"diagram", "reads", path, NULL};
    ck_assert_int_eq(diagram_main(3, good, entries, 1), EXIT_SUCCESS);
    FILE *f = fdopen(fd, "r");
    char text[4096];
    ck_assert_ptr_nonnull(strstr(contents(f, text, sizeof text), "$view << EOD\n"));
    fclose(f);
    unlink(path);
}
END_TEST

int main(int argc, char **argv) {
    Suite *s = suite_create("pictures of memory");
    TCase *pictures = add_test_case(s, "each lesson's pictures");
    add_test(pictures, test_broadcast_reads_are_the_view_and_the_map);
    add_test(pictures, test_broadcast_grads_add_into_the_cell_read);
    add_test(pictures, test_reduce_adds_through_a_stride0_output);
    add_test(pictures, test_permute_views_name_the_cells_they_read);
    add_test(pictures, test_permute_walk_is_the_odometer);
    add_test(pictures, test_gather_rows_and_their_scatter_add);
    add_test(pictures, test_bmm_fold_as_seed_002_counted);
    TCase *table = add_test_case(s, "the table of cells");
    add_test(table, test_diagram_written_for_gnuplot);
    add_test(table, test_diagram_bad_input_is_an_error);
    add_test(table, test_diagram_probes);
    add_test(table, test_diagram_main_says_what_it_knows);
    return run_core_tests(argc, argv, s);
}
