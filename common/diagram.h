/*
 * diagram.h - the pictures of memory: what each element reads, drawn from the library itself.
 *
 * A lesson's TOPIC_diagram.c fills a Diagram with cells by asking the library (a view's
 * strides and offset, broadcast_map, the cells a kernel wrote) and diagram_write prints it as
 * gnuplot data. The lesson's diagram-NAME.gp scripts only lay the cells out, so a picture
 * cannot disagree with the code, and tests/test_diagrams.c checks the cells themselves.
 *
 * A cell belongs to a part (one group of the picture: "storage", "view", ...) and sits at a
 * row and a column of it. `link` is the flat index, in another part, of the cell it reads or
 * adds into (-1: none); `kind` is a small number whose meaning each picture states.
 */
#ifndef DIAGRAM_H
#define DIAGRAM_H

#include <stdint.h>
#include <stdio.h>

#include "tensor.h"

#define DIAGRAM_MAX_CELLS 256
#define DIAGRAM_MAX_NOTES 16
#define DIAGRAM_NAME_MAX 24  /* a part's or a note's name, with its terminating 0 */
#define DIAGRAM_LABEL_MAX 40 /* a cell's text */
#define DIAGRAM_NOTE_MAX 200 /* a note's text: a title or a caption inside the picture */

typedef struct {
    char part[DIAGRAM_NAME_MAX];
    int64_t row, col;
    float value;
    int64_t link;
    int kind;
    char label[DIAGRAM_LABEL_MAX];
} DiagramCell;

typedef struct {
    char name[DIAGRAM_NAME_MAX];
    char text[DIAGRAM_NOTE_MAX];
} DiagramNote;

typedef struct {
    int n_cells, n_notes;
    DiagramCell cells[DIAGRAM_MAX_CELLS];
    DiagramNote notes[DIAGRAM_MAX_NOTES];
} Diagram;

/* Empties d. NULL does nothing. */
void diagram_clear(Diagram *d);
/* Adds a cell; label is printf-style. A part's name is a C identifier (it becomes the gnuplot
 * datablock $part), and the label is printable ASCII. Returns 0, or -1 with an error for a
 * NULL d, a bad name, a full diagram (DIAGRAM_MAX_CELLS) or a label too long. */
int diagram_cell(Diagram *d, const char *part, int64_t row, int64_t col, float value, int64_t link, int kind,
                 const char *label_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;
/* Adds a note, the gnuplot string variable note_NAME (a title, the strides in words, a count),
 * or replaces the one of that name. The same errors as diagram_cell. */
int diagram_note(Diagram *d, const char *name, const char *text_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The cell of `part` at (row, col), or NULL (no error: a test asks what is there). */
const DiagramCell *diagram_find(const Diagram *d, const char *part, int64_t row, int64_t col);
/* The number of cells of `part`. */
int diagram_count(const Diagram *d, const char *part);
/* The text of note `name`, or NULL. */
const char *diagram_note_text(const Diagram *d, const char *name);

/* Writes d as a file gnuplot can `load`: one datablock per part ($part, one line per cell:
 * row col value link kind "label", in the order the cells were added) and one string per note.
 * Returns 0, or -1 with an error if d or f is NULL or writing fails. */
int diagram_write(const Diagram *d, FILE *f);

/* ---- asking a linear op what goes where ------------------------------------------------ */

/* For an op linear in x (a view, a sum, a gather): jacobian[r * n_out + t] is element t (row-
 * major) of op's output when x holds 1 at element r and 0 elsewhere: which output elements
 * input element r reaches, as the op's own forward computes it. x gets `shape`, in a context
 * of its own. Returns n_out, the output's element count, or -1 with an error (op failed, or
 * capacity holds fewer than numel(shape) * n_out floats). */
typedef Tensor *(*DiagramOp)(Tensor *x, void *arg);
int64_t diagram_probe_forward(const int64_t *shape, int rank, DiagramOp op, void *arg, float *jacobian,
                              int64_t capacity);
/* The backward's side: jacobian[t * numel(x) + r] is x's gradient at element r after a backward
 * from out with upstream 1 at element t and 0 elsewhere. x must require grad, and its gradient
 * is zeroed before each backward (it is left zeroed). Returns numel(out), or -1 with an error. */
int64_t diagram_probe_backward(Tensor *out, Tensor *x, float *jacobian, int64_t capacity);
/* Where a probe's 1 landed: the k in 0..n-1 with values[k * stride] != 0 (a row of a jacobian
 * with stride 1, a column with the row's length), -1 if there is none, -2 if there are more. */
int64_t diagram_reached(const float *values, int64_t n, int64_t stride);
/* The sum a cell received, spelled out: the terms[i] with links[i] == target, joined by sep, into
 * buf ("1 + 4"; "" for none, cut short if buf is too small). Returns how many there were. */
int diagram_terms(char *buf, size_t size, const float *terms, const int64_t *links, int64_t n, int64_t target,
                  const char *sep);

/* The program of a lesson's pictures (lessons/N-topic/diagram.c):
 *   diagram NAME FILE   fills the picture NAME with its maker and writes it to FILE.
 * Returns the exit status; an unknown NAME, or a maker that fails, is a message on stderr. */
typedef int (*DiagramMaker)(Diagram *d);
typedef struct {
    const char *name;
    DiagramMaker make;
} DiagramEntry;
int diagram_main(int argc, char **argv, const DiagramEntry *entries, int n);

#endif /* DIAGRAM_H */
