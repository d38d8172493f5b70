/*
 * diagram.c - the table of cells behind each picture of memory, and its gnuplot form.
 * Contracts in diagram.h; each lesson's TOPIC_diagram.c fills the tables.
 */
#include "diagram.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

/* A name becomes a gnuplot identifier ($part, note_name): letters, digits and _, not a digit first. */
static bool name_is_valid(const char *op, const char *name) {
    size_t n = name ? strlen(name) : 0;
    bool ok = n > 0 && n < DIAGRAM_NAME_MAX && !isdigit((unsigned char)name[0]);
    for (size_t i = 0; ok && i < n; i++) ok = isalnum((unsigned char)name[i]) || name[i] == '_';
    if (!ok)
        tensor_set_error("%s: name \"%s\" must be 1 to %d letters, digits or _, not starting with a digit", op,
                         name ? name : "(NULL)", DIAGRAM_NAME_MAX - 1);
    return ok;
}

/* vsnprintf into buf, refusing text that does not fit or that gnuplot's "..." would not keep
 * as it is (a control character, or a byte beyond ASCII: the png terminal has no font for it). */
static bool format_text(const char *op, char *buf, size_t size, const char *fmt, va_list ap) {
    if (!fmt) return tensor_set_error("%s: the text's format is NULL", op), false;
    int n = vsnprintf(buf, size, fmt, ap);
    if (n < 0 || (size_t)n >= size)
        return tensor_set_error("%s: the text is longer than %zu characters", op, size - 1), false;
    for (int i = 0; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
            return tensor_set_error("%s: the text \"%s\" has a character other than printable ASCII", op, buf), false;
    return true;
}

void diagram_clear(Diagram *d) {
    if (d) d->n_cells = d->n_notes = 0;
}

int diagram_cell(Diagram *d, const char *part, int64_t row, int64_t col, float value, int64_t link, int kind,
                 const char *label_fmt, ...) {
    if (!d) return tensor_set_error("diagram_cell: the diagram is NULL"), -1;
    if (!name_is_valid("diagram_cell", part)) return -1;
    if (d->n_cells >= DIAGRAM_MAX_CELLS)
        return tensor_set_error("diagram_cell: the diagram is full (%d cells, DIAGRAM_MAX_CELLS)", DIAGRAM_MAX_CELLS),
               -1;
    DiagramCell *c = &d->cells[d->n_cells];
    va_list ap;
    va_start(ap, label_fmt);
    bool ok = format_text("diagram_cell", c->label, sizeof c->label, label_fmt, ap);
    va_end(ap);
    if (!ok) return -1;
    snprintf(c->part, sizeof c->part, "%s", part); /* name_is_valid: it fits */
    c->row = row, c->col = col, c->value = value, c->link = link, c->kind = kind;
    d->n_cells++;
    return 0;
}

int diagram_note(Diagram *d, const char *name, const char *text_fmt, ...) {
    if (!d) return tensor_set_error("diagram_note: the diagram is NULL"), -1;
    if (!name_is_valid("diagram_note", name)) return -1;
    int i = 0;
    while (i < d->n_notes && strcmp(d->notes[i].name, name) != 0) i++;
    if (i == DIAGRAM_MAX_NOTES)
        return tensor_set_error("diagram_note: the diagram is full (%d notes, DIAGRAM_MAX_NOTES)", DIAGRAM_MAX_NOTES),
               -1;
    char text[DIAGRAM_NOTE_MAX];
    va_list ap;
    va_start(ap, text_fmt);
    bool ok = format_text("diagram_note", text, sizeof text, text_fmt, ap);
    va_end(ap);
    if (!ok) return -1;                                              /* a failed replacement keeps the note as it was */
    snprintf(d->notes[i].name, sizeof d->notes[i].name, "%s", name); /* name_is_valid: it fits */
    snprintf(d->notes[i].text, sizeof d->notes[i].text, "%s", text); /* the same size */
    if (i == d->n_notes) d->n_notes++;
    return 0;
}

const DiagramCell *diagram_find(const Diagram *d, const char *part, int64_t row, int64_t col) {
    for (int i = 0; d && part && i < d->n_cells; i++)
        if (d->cells[i].row == row && d->cells[i].col == col && strcmp(d->cells[i].part, part) == 0)
            return &d->cells[i];
    return NULL;
}

int diagram_count(const Diagram *d, const char *part) {
    int n = 0;
    for (int i = 0; d && part && i < d->n_cells; i++) n += strcmp(d->cells[i].part, part) == 0;
    return n;
}

const char *diagram_note_text(const Diagram *d, const char *name) {
    for (int i = 0; d && name && i < d->n_notes; i++)
        if (strcmp(d->notes[i].name, name) == 0) return d->notes[i].text;
    return NULL;
}

/* Inside gnuplot's "...", a backslash and a quote need a backslash before them. */
static void put_quoted(FILE *f, const char *text) {
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

int diagram_write(const Diagram *d, FILE *f) {
    if (!d || !f) return tensor_set_error("diagram_write: %s is NULL", d ? "the file" : "the diagram"), -1;
    /* each part once, in the order its first cell was added */
    for (int i = 0; i < d->n_cells; i++) {
        const char *part = d->cells[i].part;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(d->cells[j].part, part) == 0;
        if (seen) continue;
        fprintf(f, "$%s << EOD\n# row col value link kind label\n", part);
        for (int j = i; j < d->n_cells; j++) {
            const DiagramCell *c = &d->cells[j];
            if (strcmp(c->part, part) != 0) continue;
            fprintf(f, "%lld %lld %.9g %lld %d ", (long long)c->row, (long long)c->col, (double)c->value,
                    (long long)c->link, c->kind);
            put_quoted(f, c->label);
            fputc('\n', f);
        }
        fprintf(f, "EOD\n");
    }
    for (int i = 0; i < d->n_notes; i++) {
        fprintf(f, "note_%s = ", d->notes[i].name);
        put_quoted(f, d->notes[i].text);
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f)) return tensor_set_error("diagram_write: writing failed"), -1;
    return 0;
}

int64_t diagram_probe_forward(const int64_t *shape, int rank, DiagramOp op, void *arg, float *jacobian,
                              int64_t capacity) {
    if (!op || !jacobian) return tensor_set_error("diagram_probe_forward: %s is NULL", op ? "jacobian" : "op"), -1;
    if (!shape_is_valid("diagram_probe_forward", shape, rank)) return -1;
    Ctx *ctx = ctx_new();
    if (!ctx) return -1;
    int64_t n_in = shape_numel(shape, rank), n_out = 0;
    bool ok = n_in >= 0;
    for (int64_t r = 0; r < n_in && ok; r++) {
        Tensor *x = tensor_zeros(ctx, shape, rank), *out = NULL;
        if (x) tensor_data(x)[r] = 1.0f, out = op(x, arg);
        ok = out != NULL;
        if (!ok) break;
        if (r == 0) n_out = tensor_numel(out);
        if (n_out > 0 && n_in > capacity / n_out) { /* n_in * n_out > capacity, without the overflow */
            tensor_set_error("diagram_probe_forward: room for %lld floats, but %lld inputs reach %lld outputs each",
                             (long long)capacity, (long long)n_in, (long long)n_out);
            ok = false;
        } else {
            ok = tensor_numel(out) == n_out && tensor_to_array(out, jacobian + r * n_out, n_out) == n_out;
            if (!ok && tensor_numel(out) != n_out)
                tensor_set_error("diagram_probe_forward: the op's output changed size");
        }
    }
    ctx_free(ctx);
    return ok ? n_out : -1;
}

int64_t diagram_probe_backward(Tensor *out, Tensor *x, float *jacobian, int64_t capacity) {
    if (!out || !x || !jacobian)
        return tensor_set_error("diagram_probe_backward: %s is NULL", !out ? "out" : !x ? "x" : "jacobian"), -1;
    if (!x->requires_grad) return tensor_set_error("diagram_probe_backward: x does not require grad"), -1;
    int64_t n_out = tensor_numel(out), n_x = tensor_numel(x);
    if (n_x > 0 && n_out > capacity / n_x)
        return tensor_set_error("diagram_probe_backward: room for %lld floats, but the output has %lld elements and x "
                                "%lld",
                                (long long)capacity, (long long)n_out, (long long)n_x),
               -1;
    for (int64_t t = 0; t < n_out; t++) {
        Tensor *upstream = tensor_zeros(out->ctx, out->shape, out->rank), *gx;
        if (!upstream) return -1;
        tensor_data(upstream)[t] = 1.0f;
        tensor_zero_grad(x);
        if (tensor_backward_from(out, upstream) < 0 || !(gx = tensor_grad(x))) return -1;
        if (tensor_to_array(gx, jacobian + t * n_x, n_x) < 0) return -1;
    }
    tensor_zero_grad(x);
    return n_out;
}

int64_t diagram_reached(const float *values, int64_t n, int64_t stride) {
    int64_t reached = -1;
    for (int64_t k = 0; values && k < n; k++)
        if (values[k * stride] != 0.0f) reached = reached == -1 ? k : -2;
    return reached;
}

int diagram_terms(char *buf, size_t size, const float *terms, const int64_t *links, int64_t n, int64_t target,
                  const char *sep) {
    size_t used = 0;
    int count = 0;
    if (buf && size > 0) buf[0] = '\0';
    for (int64_t i = 0; terms && links && i < n; i++) {
        if (links[i] != target) continue;
        if (buf && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%g", count ? sep : "", (double)terms[i]);
        count++;
    }
    return count;
}

int diagram_main(int argc, char **argv, const DiagramEntry *entries, int n) {
    const char *program = argc > 0 && argv && argv[0] ? argv[0] : "diagram";
    if (!entries || n < 0) return fprintf(stderr, "%s: no pictures to make\n", program), EXIT_FAILURE;
    const DiagramEntry *entry = NULL;
    for (int i = 0; argc == 3 && argv && argv[1] && argv[2] && i < n && !entry; i++)
        if (entries[i].name && entries[i].make && strcmp(entries[i].name, argv[1]) == 0) entry = &entries[i];
    if (!entry) {
        fprintf(stderr, "usage: %s NAME FILE   writes the data of picture NAME, one of:", program);
        for (int i = 0; i < n; i++) fprintf(stderr, " %s", entries[i].name ? entries[i].name : "(NULL)");
        fprintf(stderr, "\n");
        return EXIT_FAILURE;
    }
    Diagram *d = malloc(sizeof *d);
    if (!d) return fprintf(stderr, "%s: out of memory\n", program), EXIT_FAILURE;
    diagram_clear(d);
    tensor_clear_error();
    if (entry->make(d) < 0) {
        fprintf(stderr, "%s: %s: %s\n", program, entry->name, tensor_error() ? tensor_error() : "failed");
        free(d);
        return EXIT_FAILURE;
    }
    FILE *f = fopen(argv[2], "w");
    bool ok = f && diagram_write(d, f) == 0;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "%s: cannot write %s\n", program, argv[2]);
    free(d);
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
