/*
 * data.h - lesson 7's data: English words as streams of character tokens, the two baselines
 * a model must beat, batches, evaluation and sampling (docs/7-train.md, section 1).
 *
 * Tokens: 0 is the boundary '.', 1..26 are 'a'..'z' (V = 27). A split's words are one stream,
 * each word framed by one boundary, as makemore frames them: ".emma.olivia.ava." The model
 * reads T tokens of it and predicts, at every position, the token that follows.
 */
#ifndef DATA_H
#define DATA_H

#include <stdint.h>

#include "rng.h"
#include "train.h"

/* The course's word list: Debian's wamerican, filtered as words_load filters and shipped, so
 * that every machine trains on the same words (words-copyright.txt says how it was made). The
 * path is relative to the course's top directory, where make runs every program. */
#define WORDS_DEFAULT_PATH "lessons/7-train/words.txt"
#define WORDS_VOCAB 27

int64_t char_to_token(char c); /* -1 for anything but '.' and a-z */
char token_to_char(int64_t token);

typedef struct {
    int64_t *tokens;
    int64_t n;     /* tokens in the stream */
    int64_t words; /* words in it */
} TokenStream;

typedef struct {
    char **word; /* every word kept (lowercased, a-z only, each once), in split order */
    int64_t n_words;
    int64_t read;                 /* lines of the file, before filtering */
    TokenStream train, val, test; /* 80%, 10%, 10% of the shuffled words */
    char *text;                   /* the words' characters, owned */
} Words;

/* Reads the word list at path (WORDS_DEFAULT_PATH when NULL): every line lowercased, kept if it
 * is then letters a-z only, duplicates dropped, shuffled with `seed`, and split. Returns 0, or
 * -1 with an error (the course's own list, missing, says to run from the top directory). Free
 * with words_free (also after a failure). */
int words_load(Words *w, const char *path, uint64_t seed);
void words_free(Words *w);
/* True if `word` (a-z, any length) is one of w's words, in any split. */
int words_contains(const Words *w, const char *word);

/* The bigram model: P(next | this) from counts of adjacent pairs in a stream, with one added
 * to every count (so no pair has probability 0). */
typedef struct {
    double prob[WORDS_VOCAB][WORDS_VOCAB];
} Bigram;

/* Returns 0, or -1 with an error (NULL arguments, a token outside the vocabulary). */
int bigram_fit(Bigram *b, const TokenStream *s);
/* The mean of -ln P(next | this) over every adjacent pair of s: the same quantity as the
 * model's cross-entropy, in nats per character. */
double bigram_loss(const Bigram *b, const TokenStream *s);

/* B windows of T + 1 tokens at random positions of s: x gets tokens 0..T-1 of each window
 * and y tokens 1..T (the next token of each), row-major (B, T). s must hold > T tokens. */
int batch_sample(const TokenStream *s, int64_t batch, int64_t t, Rng *rng, int64_t *x,
                 int64_t *y); /* 0, or -1 with an error */

/* The model's mean cross-entropy over every adjacent pair of the first `limit` tokens of s (all
 * of them when limit <= 0), in windows of T, B at a time. Runs in m's ctx and frees what it made
 * with ctx_reset, so call it where ctx_mark was set after the parameters. NAN on error. */
double model_eval(Model *m, const TokenStream *s, int64_t batch, int64_t limit);

/* Samples a word: starts from the boundary and draws each next character from the model's
 * softmax (temperature 1) until the boundary comes again or max_len characters are drawn.
 * Writes it to out (room for max_len + 1). Returns its length, or -1 on error. Like
 * model_eval, it resets m's ctx when done. */
int sample_word(Model *m, Rng *rng, char *out, int max_len);

/* ---- checkpoints --------------------------------------------------------------------------
 * A small binary file, every number little-endian:
 *   offset 0   8 bytes   magic "C7MODEL\0"
 *          8   uint32    version, 1
 *         12   6 x int64 config: vocab, context, width, heads, layers, mlp
 *         60   uint32    n, the number of parameters (tensors)
 *         64   then per parameter: uint32 rank, rank x int64 dims, numel x float32 values,
 *                        in model_init's order
 *         end  uint64    FNV-1a hash of every byte before it
 * model_load checks each part in turn, and a file that is truncated, foreign, of another version
 * or config, or altered, gives an error that says which, never a crash. */
int model_save(const Model *m, const char *path);
/* Loads into m, made by model_init with the config the file must have. */
int model_load(Model *m, const char *path);

#endif /* DATA_H */
