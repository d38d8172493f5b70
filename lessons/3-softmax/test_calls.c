/*
 * test_calls.c - how the grader carries lesson 3's exercise calls across the sandbox. For the
 * judge, each exercise function is a stand-in (tests/remote.h): it sends the arguments and
 * copies back what the student's function wrote, sized as exercises.h says. For the runner
 * (compiled with -DCOURSE_RUNNER, tests/runner.h), the matching entry makes the real call
 * with what arrived, in the same order.
 */
#include "exercises.h"

#ifdef COURSE_RUNNER
#include "runner.h"
#else
#include "remote.h"
#endif

/* 3.1 void ex3_1_softmax2_backward(float s0, float s1, float g0, float g1, float *dx0, float *dx1) */
#ifdef COURSE_RUNNER
static void serve_3_1(Served *s) {
    ex3_1_softmax2_backward(served_float(s, 0), served_float(s, 1), served_float(s, 2), served_float(s, 3),
                            served_floats(s, 4), served_floats(s, 5));
}
#else
void ex3_1_softmax2_backward(float s0, float s1, float g0, float g1, float *dx0, float *dx1) {
    RemoteCall c;
    remote_begin(&c, "3.1");
    remote_float(&c, s0);
    remote_float(&c, s1);
    remote_float(&c, g0);
    remote_float(&c, g1);
    remote_floats_back(&c, dx0, 1);
    remote_floats_back(&c, dx1, 1);
    remote_call(&c);
}
#endif

/* 3.2 void ex3_2_softmax_row(const float *x, int64_t d, float *out) */
#ifdef COURSE_RUNNER
static void serve_3_2(Served *s) { ex3_2_softmax_row(served_floats(s, 0), served_i64(s, 1), served_floats(s, 2)); }
#else
/* 3.2 and 3.4 take the same arguments: a row in, a row out */
static void row_call(const char *id, const float *x, int64_t d, float *out) {
    RemoteCall c;
    remote_begin(&c, id);
    remote_floats(&c, x, d);
    remote_i64(&c, d);
    remote_floats_back(&c, out, d);
    remote_call(&c);
}
void ex3_2_softmax_row(const float *x, int64_t d, float *out) { row_call("3.2", x, d, out); }
#endif

/* 3.3 void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) */
#ifdef COURSE_RUNNER
static void serve_3_3(Served *s) {
    ex3_3_softmax_row_backward(served_floats(s, 0), served_floats(s, 1), served_i64(s, 2), served_floats(s, 3));
}
#else
void ex3_3_softmax_row_backward(const float *s, const float *g, int64_t d, float *dx) {
    RemoteCall c;
    remote_begin(&c, "3.3");
    remote_floats(&c, s, d);
    remote_floats(&c, g, d);
    remote_i64(&c, d);
    remote_floats_back(&c, dx, d);
    remote_call(&c);
}
#endif

/* 3.4 void ex3_4_log_softmax_row(const float *x, int64_t d, float *out) */
#ifdef COURSE_RUNNER
static void serve_3_4(Served *s) { ex3_4_log_softmax_row(served_floats(s, 0), served_i64(s, 1), served_floats(s, 2)); }
#else
void ex3_4_log_softmax_row(const float *x, int64_t d, float *out) { row_call("3.4", x, d, out); }
#endif

#ifdef COURSE_RUNNER
const RunnerCall runner_calls[] = {
    {"3.1", serve_3_1}, {"3.2", serve_3_2}, {"3.3", serve_3_3}, {"3.4", serve_3_4}, {NULL, NULL}};
#endif
