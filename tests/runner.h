/*
 * runner.h - the runner's side of a graded call (tests/runner.c, wire.h). When an exercise is
 * graded, the student's functions run in a program of their own, the runner, inside the
 * sandbox: it reads calls from the judge, makes them, and sends back what they wrote. Each
 * lesson's test_calls.c (compiled with -DCOURSE_RUNNER) says how to make each of its calls:
 *
 *   static void serve_2_3(Served *s) {
 *       ex2_3_sum_axis(served_floats(s, 0), served_i64s(s, 1), served_int(s, 2), served_int(s, 3),
 *                      served_floats(s, 4));
 *   }
 *   const RunnerCall runner_calls[] = {{"2.3", serve_2_3}, ..., {NULL, NULL}};
 *
 * The arguments come in the order the judge's stand-in sent them (tests/remote.h). A pointer
 * argument points to a buffer of exactly the size the judge sent; NULL stays NULL.
 */
#ifndef RUNNER_H
#define RUNNER_H

#include <stdint.h>

#include "tensor.h"

typedef struct Served Served;

int served_int(Served *s, int i);
int64_t served_i64(Served *s, int i);
float served_float(Served *s, int i);
int *served_ints(Served *s, int i);
int64_t *served_i64s(Served *s, int i);
float *served_floats(Served *s, int i);
void *served_bytes(Served *s, int i);
Tensor *served_tensor(Served *s, int i);

/* What the call returned, for a function that returns something. */
void served_return_int(Served *s, int64_t value);
void served_return_tensor(Served *s, Tensor *t);

typedef struct {
    const char *id; /* the exercise's id, "2.3" */
    void (*serve)(Served *s);
} RunnerCall;

/* Defined by the lesson's test_calls.c; the last entry is {NULL, NULL}. */
extern const RunnerCall runner_calls[];

#endif /* RUNNER_H */
