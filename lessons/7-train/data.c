/*
 * data.c - lesson 7's words, baselines, batches, evaluation, sampling and checkpoints
 * (data.h has each function's contract).
 */
#include "data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softmax.h"

int64_t char_to_token(char c) {
    if (c == '.') return 0;
    return c >= 'a' && c <= 'z' ? c - 'a' + 1 : -1;
}

char token_to_char(int64_t token) {
    return (char)(token == 0 ? '.' : token >= 1 && token <= 26 ? 'a' + token - 1 : '?');
}

/* ==== the words ============================================================================ */

static int compare_words(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ".w1.w2.w3." for words[0..n) */
static int stream_make(TokenStream *s, char **words, int64_t n) {
    int64_t length = 1;
    for (int64_t i = 0; i < n; i++) length += (int64_t)strlen(words[i]) + 1;
    s->tokens = malloc((size_t)length * sizeof *s->tokens);
    if (!s->tokens) return tensor_set_error("words_load: out of memory"), -1;
    int64_t k = 0;
    s->tokens[k++] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (const char *c = words[i]; *c; c++) s->tokens[k++] = char_to_token(*c);
        s->tokens[k++] = 0;
    }
    s->n = k;
    s->words = n;
    return 0;
}

int words_load(Words *w, const char *path, uint64_t seed) {
    memset(w, 0, sizeof *w);
    if (!path) path = WORDS_DEFAULT_PATH;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tensor_set_error("words_load: cannot read %s (%s)%s", path, strerror(errno),
                                strcmp(path, WORDS_DEFAULT_PATH) == 0
                                    ? ". The path is relative: run the program from the course's top directory, "
                                      "as make does, or name a word list with COURSE_WORDS=FILE"
                                    : ""),
               -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    w->text = size >= 0 ? malloc((size_t)size + 2) : NULL;
    size_t got = w->text ? fread(w->text, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!w->text || got != (size_t)size) return tensor_set_error("words_load: could not read all of %s", path), -1;
    w->text[got] = '\n';
    w->text[got + 1] = '\0';
    /* one line at a time, in place: lowercase it, keep it if it is a-z only */
    int64_t lines = 0;
    for (size_t i = 0; i <= got; i++) lines += w->text[i] == '\n';
    w->word = malloc((size_t)(lines + 1) * sizeof *w->word);
    if (!w->word) return tensor_set_error("words_load: out of memory"), -1;
    char *line = w->text;
    for (char *end; (end = strchr(line, '\n')); line = end + 1) {
        *end = '\0';
        if (end > line && end[-1] == '\r') end[-1] = '\0';
        if (line == end && end == w->text + got) break; /* the newline added after the last line */
        w->read++;
        bool ok = *line != '\0';
        for (char *c = line; *c && ok; c++) {
            if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
            ok = *c >= 'a' && *c <= 'z';
        }
        if (ok) w->word[w->n_words++] = line;
    }
    /* each word once: sort, drop repeats ("Bill" and "bill" are one word now) */
    qsort(w->word, (size_t)w->n_words, sizeof *w->word, compare_words);
    int64_t unique = 0;
    for (int64_t i = 0; i < w->n_words; i++)
        if (unique == 0 || strcmp(w->word[i], w->word[unique - 1]) != 0) w->word[unique++] = w->word[i];
    w->n_words = unique;
    if (w->n_words < 10)
        return tensor_set_error("words_load: %s has %lld usable words (lowercase a-z), too few to split", path,
                                (long long)w->n_words),
               -1;
    /* shuffle (Fisher-Yates) with the seed, then split 80/10/10 */
    Rng rng = rng_seeded(seed);
    for (int64_t i = w->n_words - 1; i > 0; i--) {
        int64_t j = rng_int(&rng, 0, i);
        char *t = w->word[i];
        w->word[i] = w->word[j];
        w->word[j] = t;
    }
    int64_t n_train = w->n_words * 8 / 10, n_val = w->n_words / 10;
    if (stream_make(&w->train, w->word, n_train) < 0 || stream_make(&w->val, w->word + n_train, n_val) < 0 ||
        stream_make(&w->test, w->word + n_train + n_val, w->n_words - n_train - n_val) < 0)
        return -1;
    return 0;
}

void words_free(Words *w) {
    if (!w) return;
    free(w->train.tokens), free(w->val.tokens), free(w->test.tokens);
    free(w->word), free(w->text);
    memset(w, 0, sizeof *w);
}

int words_contains(const Words *w, const char *word) {
    if (!w || !word) return 0;
    for (int64_t i = 0; i < w->n_words; i++)
        if (!strcmp(w->word[i], word)) return 1;
    return 0;
}

/* ==== the bigram baseline ================================================================== */

int bigram_fit(Bigram *b, const TokenStream *s) {
    if (!b || !s || (!s->tokens && s->n > 0)) {
        tensor_set_error("bigram_fit: %s is NULL", !b ? "the model" : !s ? "the stream" : "the stream's tokens");
        return -1;
    }
    for (int64_t i = 0; i < s->n; i++)
        if (s->tokens[i] < 0 || s->tokens[i] >= WORDS_VOCAB) {
            tensor_set_error("bigram_fit: token %lld at position %lld is not in 0..%d", (long long)s->tokens[i],
                             (long long)i, WORDS_VOCAB - 1);
            return -1;
        }
    double count[WORDS_VOCAB][WORDS_VOCAB];
    for (int i = 0; i < WORDS_VOCAB; i++)
        for (int j = 0; j < WORDS_VOCAB; j++) count[i][j] = 1.0; /* add-one smoothing */
    for (int64_t i = 0; i + 1 < s->n; i++) count[s->tokens[i]][s->tokens[i + 1]] += 1.0;
    for (int i = 0; i < WORDS_VOCAB; i++) {
        double row = 0.0;
        for (int j = 0; j < WORDS_VOCAB; j++) row += count[i][j];
        for (int j = 0; j < WORDS_VOCAB; j++) b->prob[i][j] = count[i][j] / row;
    }
    return 0;
}

double bigram_loss(const Bigram *b, const TokenStream *s) {
    double sum = 0.0;
    for (int64_t i = 0; i + 1 < s->n; i++) sum -= log(b->prob[s->tokens[i]][s->tokens[i + 1]]);
    return s->n > 1 ? sum / (double)(s->n - 1) : NAN;
}

/* ==== batches, evaluation, samples ========================================================= */

int batch_sample(const TokenStream *s, int64_t batch, int64_t t, Rng *rng, int64_t *x, int64_t *y) {
    if (!s || !rng || !x || !y || (!s->tokens && s->n > 0)) {
        tensor_set_error("batch_sample: %s is NULL", !s         ? "the stream"
                                                     : !rng     ? "the rng"
                                                     : !x || !y ? "x or y"
                                                                : "the stream's tokens");
        return -1;
    }
    if (batch < 0 || t < 1 || s->n <= t) {
        tensor_set_error("batch_sample: a batch of %lld windows of T = %lld from a stream of %lld tokens "
                         "(it needs B >= 0, T >= 1 and more than T tokens)",
                         (long long)batch, (long long)t, (long long)s->n);
        return -1;
    }
    for (int64_t b = 0; b < batch; b++) {
        int64_t start = rng_int(rng, 0, s->n - t - 1);
        /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): n > t >= 1 here, and tokens is non-NULL whenever n > 0 (checked above) */
        memcpy(x + b * t, s->tokens + start, (size_t)t * sizeof *x);
        memcpy(y + b * t, s->tokens + start + 1, (size_t)t * sizeof *y);
    }
    return 0;
}

double model_eval(Model *m, const TokenStream *s, int64_t batch, int64_t limit) {
    if (!m || !s || (!s->tokens && s->n > 0) || batch < 1) {
        tensor_set_error("model_eval: %s", !m          ? "the model is NULL"
                                           : !s        ? "the stream is NULL"
                                           : batch < 1 ? "the batch must be >= 1"
                                                       : "the stream's tokens are NULL");
        return NAN;
    }
    int64_t n = limit > 0 && limit < s->n ? limit : s->n, t = m->config.context;
    int64_t pairs = n - 1, full = pairs / t; /* full windows, then one shorter one */
    double total = 0.0;
    for (int64_t w0 = 0; w0 < full; w0 += batch) {
        int64_t rows = full - w0 < batch ? full - w0 : batch;
        /* windows w0 .. w0 + rows - 1 are adjacent in the stream: x and y are slices of it */
        const int64_t *x = s->tokens + w0 * t;
        Tensor *loss = model_loss(m, x, x + 1, rows, t);
        if (!loss) return NAN;
        total += (double)tensor_item(loss) * (double)(rows * t);
        ctx_reset(m->ctx);
    }
    int64_t rest = pairs - full * t;
    if (rest > 0) {
        Tensor *loss = model_loss(m, s->tokens + full * t, s->tokens + full * t + 1, 1, rest);
        if (!loss) return NAN;
        total += (double)tensor_item(loss) * (double)rest;
        ctx_reset(m->ctx);
    }
    return pairs > 0 ? total / (double)pairs : NAN;
}

int sample_word(Model *m, Rng *rng, char *out, int max_len) {
    if (!m || !rng || !out || max_len < 0) {
        tensor_set_error("sample_word: %s", !m     ? "the model is NULL"
                                            : !rng ? "the rng is NULL"
                                            : !out ? "out is NULL"
                                                   : "max_len is negative");
        return -1;
    }
    int64_t t = m->config.context, context[1 << 10];
    if (t > (int64_t)(sizeof context / sizeof context[0])) t = sizeof context / sizeof context[0];
    int64_t have = 1;
    context[0] = 0;
    int len = 0;
    while (len < max_len) {
        Tensor *logits = model_logits(m, context, 1, have); /* (1, have, V) */
        if (!logits) return -1;
        /* the distribution of the next token: softmax of the last position's logits */
        Tensor *last = tensor_as_strided(logits, (const int64_t[]){WORDS_VOCAB}, 1, (const int64_t[]){1},
                                         logits->offset + (have - 1) * WORDS_VOCAB);
        Tensor *p = tensor_softmax_last_dim(last);
        if (!p) return -1;
        float u = rng_float(rng, 0.0f, 1.0f), cumulative = 0.0f;
        int64_t next = WORDS_VOCAB - 1;
        for (int64_t k = 0; k < WORDS_VOCAB; k++) {
            cumulative += tensor_data(p)[k];
            if (u < cumulative) {
                next = k;
                break;
            }
        }
        ctx_reset(m->ctx);
        if (next == 0) break;
        out[len++] = token_to_char(next);
        if (have == t) memmove(context, context + 1, (size_t)(t - 1) * sizeof *context), have--;
        context[have++] = next;
    }
    out[len] = '\0';
    return len;
}

/* ==== checkpoints ========================================================================== */

static const char MAGIC[8] = "C7MODEL";
enum { VERSION = 1 };

typedef struct {
    FILE *f;
    uint64_t hash; /* FNV-1a of every byte so far */
    bool failed;
} Io;

static void hash_bytes(Io *io, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) io->hash = (io->hash ^ p[i]) * 0x100000001b3ULL;
}

/* little-endian, whatever the machine */
static void put(Io *io, uint64_t value, int bytes) {
    unsigned char b[8];
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(value >> (8 * i));
    hash_bytes(io, b, (size_t)bytes);
    if (fwrite(b, 1, (size_t)bytes, io->f) != (size_t)bytes) io->failed = true;
}

static bool get(Io *io, uint64_t *value, int bytes) {
    unsigned char b[8];
    if (fread(b, 1, (size_t)bytes, io->f) != (size_t)bytes) return false;
    hash_bytes(io, b, (size_t)bytes);
    *value = 0;
    for (int i = 0; i < bytes; i++) *value |= (uint64_t)b[i] << (8 * i);
    return true;
}

static uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static const int64_t *config_fields(const ModelConfig *c, int64_t out[6]) {
    out[0] = c->vocab, out[1] = c->context, out[2] = c->width, out[3] = c->heads, out[4] = c->layers, out[5] = c->mlp;
    return out;
}

int model_save(const Model *m, const char *path) {
    if (!m || !m->ctx || !path) return tensor_set_error("model_save: %s is NULL", !path ? "path" : "the model"), -1;
    Io io = {fopen(path, "wb"), 0xcbf29ce484222325ULL, false};
    if (!io.f) return tensor_set_error("model_save: cannot write %s (%s)", path, strerror(errno)), -1;
    for (int i = 0; i < 8; i++) put(&io, (unsigned char)MAGIC[i], 1);
    put(&io, VERSION, 4);
    int64_t config[6];
    config_fields(&m->config, config);
    for (int i = 0; i < 6; i++) put(&io, (uint64_t)config[i], 8);
    put(&io, (uint64_t)m->n_params, 4);
    for (int i = 0; i < m->n_params; i++) {
        const Tensor *p = m->params[i];
        put(&io, (uint64_t)p->rank, 4);
        for (int d = 0; d < p->rank; d++) put(&io, (uint64_t)p->shape[d], 8);
        const float *v = tensor_data(p);
        for (int64_t k = 0, n = tensor_numel(p); k < n; k++) put(&io, float_bits(v[k]), 4);
    }
    uint64_t hash = io.hash;
    put(&io, hash, 8);
    if (fclose(io.f) != 0 || io.failed) return tensor_set_error("model_save: writing %s failed", path), -1;
    return 0;
}

static const char *config_names[6] = {"vocab", "context", "width", "heads", "layers", "mlp"};

int model_load(Model *m, const char *path) {
    const char *op = "model_load";
    if (!m || !m->ctx || !path) return tensor_set_error("%s: %s is NULL", op, !path ? "path" : "the model"), -1;
    Io io = {fopen(path, "rb"), 0xcbf29ce484222325ULL, false};
    if (!io.f) return tensor_set_error("%s: cannot read %s (%s)", op, path, strerror(errno)), -1;
    uint64_t v;
    int status = -1;
    char magic[8];
    for (int i = 0; i < 8; i++) {
        if (!get(&io, &v, 1)) goto truncated;
        magic[i] = (char)v;
    }
    if (memcmp(magic, MAGIC, 8) != 0) {
        tensor_set_error("%s: %s is not a lesson 7 checkpoint (its first bytes are not \"C7MODEL\")", op, path);
        goto done;
    }
    if (!get(&io, &v, 4)) goto truncated;
    if (v != VERSION) {
        tensor_set_error("%s: %s has format version %llu; this code reads version %d", op, path, (unsigned long long)v,
                         VERSION);
        goto done;
    }
    int64_t want[6];
    config_fields(&m->config, want);
    for (int i = 0; i < 6; i++) {
        if (!get(&io, &v, 8)) goto truncated;
        if ((int64_t)v != want[i]) {
            tensor_set_error("%s: %s was saved from a model with %s %lld; this model has %s %lld", op, path,
                             config_names[i], (long long)(int64_t)v, config_names[i], (long long)want[i]);
            goto done;
        }
    }
    if (!get(&io, &v, 4)) goto truncated;
    if (v != (uint64_t)m->n_params) {
        tensor_set_error("%s: %s holds %llu parameters; this model has %d", op, path, (unsigned long long)v,
                         m->n_params);
        goto done;
    }
    /* read everything into a scratch copy first: a bad file leaves the model as it was */
    int64_t total = model_param_count(m);
    float *values = malloc((size_t)(total > 0 ? total : 1) * sizeof *values), *next = values;
    if (!values) {
        tensor_set_error("%s: out of memory", op);
        goto done;
    }
    for (int i = 0; i < m->n_params; i++) {
        const Tensor *p = m->params[i];
        char s1[SHAPE_STR_MAX], s2[SHAPE_STR_MAX];
        if (!get(&io, &v, 4)) goto truncated_free;
        int64_t shape[TENSOR_MAX_RANK];
        int rank = (int)v;
        bool same = v == (uint64_t)p->rank;
        for (int d = 0; same && d < rank; d++) {
            if (!get(&io, &v, 8)) goto truncated_free;
            shape[d] = (int64_t)v;
            same = shape[d] == p->shape[d];
        }
        if (!same) {
            tensor_set_error("%s: %s: parameter %d (%s) should have shape %s, the file gives %s%s", op, path, i,
                             m->names[i], shape_format(p->shape, p->rank, s1, sizeof s1),
                             v <= TENSOR_MAX_RANK ? shape_format(shape, rank, s2, sizeof s2) : "another rank",
                             " (the file does not match this model)");
            free(values);
            goto done;
        }
        for (int64_t k = 0, n = tensor_numel(p); k < n; k++) {
            if (!get(&io, &v, 4)) goto truncated_free;
            uint32_t bits = (uint32_t)v;
            memcpy(next++, &bits, sizeof bits);
        }
    }
    uint64_t expected = io.hash;
    if (!get(&io, &v, 8)) goto truncated_free;
    if (v != expected) {
        tensor_set_error("%s: %s is damaged: its checksum does not match its contents", op, path);
        free(values);
        goto done;
    }
    if (fgetc(io.f) != EOF) {
        tensor_set_error("%s: %s has bytes after the end of the checkpoint", op, path);
        free(values);
        goto done;
    }
    next = values;
    for (int i = 0; i < m->n_params; i++) {
        int64_t n = tensor_numel(m->params[i]);
        memcpy(tensor_data(m->params[i]), next, (size_t)n * sizeof *next);
        next += n;
    }
    free(values);
    status = 0;
    goto done;
truncated_free:
    free(values);
truncated:
    tensor_set_error("%s: %s is truncated: it ends before the checkpoint does", op, path);
done:
    fclose(io.f);
    return status;
}
