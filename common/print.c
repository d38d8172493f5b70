/*
 * print.c - getting values out of a tensor: one element (tensor_get, tensor_item), all of them
 * in row-major order (tensor_to_array), printed like numpy (tensor_print), or its layout
 * described (tensor_describe). Contracts in tensor.h.
 */
#include <math.h>
#include <string.h>

#include "tensor.h"

float tensor_get(const Tensor *t, const int64_t *index) {
    if (!t) return tensor_null_input("get", "t"), NAN;
    char s[SHAPE_STR_MAX];
    if (t->rank > 0 && !index)
        return tensor_set_error("get: index is NULL for shape %s", shape_format(t->shape, t->rank, s, sizeof s)), NAN;
    int64_t off = 0;
    for (int d = 0; d < t->rank; d++) {
        if (index[d] < 0 || index[d] >= t->shape[d])
            return tensor_set_error("get: index %lld is out of range for dim %d of shape %s", (long long)index[d], d,
                                    shape_format(t->shape, t->rank, s, sizeof s)),
                   NAN;
        off += index[d] * t->strides[d];
    }
    return tensor_data(t)[off];
}

float tensor_item(const Tensor *t) {
    if (!t) return tensor_null_input("item", "t"), NAN;
    char s[SHAPE_STR_MAX];
    if (tensor_numel(t) != 1)
        return tensor_set_error("item: only a one-element tensor has an item, got shape %s",
                                shape_format(t->shape, t->rank, s, sizeof s)),
               NAN;
    return tensor_data(t)[0];
}

int64_t tensor_to_array(const Tensor *t, float *out, int64_t capacity) {
    if (!t) return tensor_null_input("to_array", "t"), -1;
    int64_t n = tensor_numel(t);
    if (n > 0 && !out) return tensor_set_error("to_array: out is NULL"), -1;
    char s[SHAPE_STR_MAX];
    if (capacity < n)
        return tensor_set_error("to_array: room for %lld floats, but shape %s holds %lld", (long long)capacity,
                                shape_format(t->shape, t->rank, s, sizeof s), (long long)n),
               -1;
    int64_t out_strides[TENSOR_MAX_RANK];
    contiguous_strides(t->shape, t->rank, out_strides);
    strided_copy(t->rank, t->shape, out, out_strides, tensor_data(t), t->strides);
    return n;
}

static void format_value(char *buf, size_t size, float v, bool integral, const char *fmt) {
    if (isnan(v)) snprintf(buf, size, "nan");
    else if (isinf(v)) snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else if (integral) snprintf(buf, size, "%.0f.", (double)v);
    else snprintf(buf, size, fmt, (double)v);
}

typedef struct {
    FILE *f;
    const Tensor *t;
    const char *fmt;
    bool integral;
    int width;  /* every element is right-aligned to this width */
    int indent; /* column of the outermost '[' */
} Printer;

static void print_level(Printer *p, int d, int64_t offset) {
    const Tensor *t = p->t;
    char buf[64];
    if (d == t->rank) {
        format_value(buf, sizeof buf, tensor_data(t)[offset], p->integral, p->fmt);
        fprintf(p->f, "%*s", p->width, buf);
        return;
    }
    fputc('[', p->f);
    for (int64_t i = 0; i < t->shape[d]; i++) {
        if (i > 0) {
            if (d == t->rank - 1) {
                fputc(' ', p->f);
            } else {
                /* a new row: one line break, plus a blank line per extra level of nesting */
                for (int k = 0; k < t->rank - 1 - d; k++) fputc('\n', p->f);
                fprintf(p->f, "%*s", p->indent + d + 1, "");
            }
        }
        print_level(p, d + 1, offset + i * t->strides[d]);
    }
    fputc(']', p->f);
}

void tensor_fprint(FILE *f, const char *name, const Tensor *t, const char *fmt) {
    if (!f) return;
    int indent = name ? fprintf(f, "%s = ", name) : 0;
    if (!t) {
        fprintf(f, "NULL (%s)\n", tensor_error() ? tensor_error() : "no error recorded");
        return;
    }
    Printer p = {f, t, fmt ? fmt : "%.4f", true, 1, indent};
    int64_t n = tensor_numel(t);
    if (n == 0) {
        fprintf(f, "[]\n");
        return;
    }
    /* First pass: are all values whole numbers, and how large and small are they? Very large or
     * very small values switch the default format to scientific notation, as numpy does. */
    NdIter it;
    nditer_init(&it, t->rank, t->shape, 1, (const int64_t *[]){t->strides});
    const float *data = tensor_data(t);
    float largest = 0.0f, smallest = INFINITY;
    while (nditer_next(&it)) {
        float v = data[it.offset[0]], a = fabsf(v);
        if (!isfinite(v)) continue;
        if (v != floorf(v) || a >= 1e15f) p.integral = false;
        if (a > largest) largest = a;
        if (a > 0.0f && a < smallest) smallest = a;
    }
    if (!fmt && !p.integral && (largest >= 1e6f || smallest < 1e-4f)) p.fmt = "%.4e";
    char buf[64];
    nditer_init(&it, t->rank, t->shape, 1, (const int64_t *[]){t->strides});
    while (nditer_next(&it)) {
        format_value(buf, sizeof buf, data[it.offset[0]], p.integral, p.fmt);
        int len = (int)strlen(buf);
        if (len > p.width) p.width = len;
    }
    print_level(&p, 0, 0);
    fputc('\n', f);
}

void tensor_print(const char *name, const Tensor *t) { tensor_fprint(stdout, name, t, NULL); }

void tensor_fdescribe(FILE *f, const char *name, const Tensor *t) {
    if (!f) return;
    if (name) fprintf(f, "%s: ", name);
    if (!t) {
        fprintf(f, "NULL\n");
        return;
    }
    char s[SHAPE_STR_MAX], st[SHAPE_STR_MAX];
    fprintf(f, "shape %s, strides %s, offset %lld, storage #%d (%lld float%s), view: %s, contiguous: %s\n",
            shape_format(t->shape, t->rank, s, sizeof s), shape_format(t->strides, t->rank, st, sizeof st),
            (long long)t->offset, t->storage->id, (long long)t->storage->size, t->storage->size == 1 ? "" : "s",
            t->is_view ? "yes" : "no", tensor_is_contiguous(t) ? "yes" : "no");
}

void tensor_describe(const char *name, const Tensor *t) { tensor_fdescribe(stdout, name, t); }
