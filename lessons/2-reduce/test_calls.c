/*
 * test_calls.c - how the grader carries lesson 2's exercise calls across the sandbox. For the
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

/* 2.1 Tensor *ex2_1_row_mean(Tensor *x) */
#ifdef COURSE_RUNNER
static void serve_2_1(Served *s) { served_return_tensor(s, ex2_1_row_mean(served_tensor(s, 0))); }
#else
Tensor *ex2_1_row_mean(Tensor *x) {
    RemoteCall c;
    remote_begin(&c, "2.1");
    remote_tensor(&c, x);
    return remote_call_tensor(&c);
}
#endif

/* 2.2 void ex2_2_sum_last_dim_backward(const float *g, int64_t rows, int64_t d, float *gx) */
#ifdef COURSE_RUNNER
static void serve_2_2(Served *s) {
    ex2_2_sum_last_dim_backward(served_floats(s, 0), served_i64(s, 1), served_i64(s, 2), served_floats(s, 3));
}
#else
void ex2_2_sum_last_dim_backward(const float *g, int64_t rows, int64_t d, float *gx) {
    RemoteCall c;
    remote_begin(&c, "2.2");
    remote_floats(&c, g, rows);
    remote_i64(&c, rows);
    remote_i64(&c, d);
    remote_floats_back(&c, gx, rows * d);
    remote_call(&c);
}
#endif

/* 2.3 void ex2_3_sum_axis(const float *x, const int64_t *shape, int rank, int axis, float *out) */
#ifdef COURSE_RUNNER
static void serve_2_3(Served *s) {
    ex2_3_sum_axis(served_floats(s, 0), served_i64s(s, 1), served_int(s, 2), served_int(s, 3), served_floats(s, 4));
}
#else
void ex2_3_sum_axis(const float *x, const int64_t *shape, int rank, int axis, float *out) {
    int64_t kept = 1; /* out: every dim but `axis` */
    for (int d = 0; d < rank; d++)
        if (d != axis) kept *= shape[d];
    RemoteCall c;
    remote_begin(&c, "2.3");
    remote_floats(&c, x, shape_numel(shape, rank));
    remote_i64s(&c, shape, rank);
    remote_int(&c, rank);
    remote_int(&c, axis);
    remote_floats_back(&c, out, kept);
    remote_call(&c);
}
#endif

/* 2.4 Tensor *ex2_4_mse_loss(Tensor *pred, Tensor *target) */
#ifdef COURSE_RUNNER
static void serve_2_4(Served *s) { served_return_tensor(s, ex2_4_mse_loss(served_tensor(s, 0), served_tensor(s, 1))); }
#else
Tensor *ex2_4_mse_loss(Tensor *pred, Tensor *target) {
    RemoteCall c;
    remote_begin(&c, "2.4");
    remote_tensor(&c, pred);
    remote_tensor(&c, target);
    return remote_call_tensor(&c);
}
#endif

#ifdef COURSE_RUNNER
const RunnerCall runner_calls[] = {
    {"2.1", serve_2_1}, {"2.2", serve_2_2}, {"2.3", serve_2_3}, {"2.4", serve_2_4}, {NULL, NULL}};
#endif
