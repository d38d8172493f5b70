/*
 * rng.h - a small seeded random number generator (splitmix64), so that every random test,
 * gradient check and benchmark can be replayed from its seed.
 */
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
} Rng;

static inline Rng rng_seeded(uint64_t seed) { return (Rng){seed}; }

static inline uint64_t rng_next(Rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static inline int64_t rng_int(Rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Uniform float in [lo, hi). */
static inline float rng_float(Rng *r, float lo, float hi) {
    return lo + (hi - lo) * (float)((double)(rng_next(r) >> 11) / 9007199254740992.0);
}

#endif /* RNG_H */
