/*
 * test_calls.c - how the grader carries lesson 6's exercise calls across the sandbox. For the
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

/* 6.1 int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out,
 *                            int *out_rank); out has room for 8 dims */
#ifdef COURSE_RUNNER
static void serve_6_1(Served *s) {
    served_return_int(s, ex6_1_matmul_shape(served_i64s(s, 0), served_int(s, 1), served_i64s(s, 2), served_int(s, 3),
                                            served_i64s(s, 4), served_ints(s, 5)));
}
#else
int ex6_1_matmul_shape(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    RemoteCall c;
    remote_begin(&c, "6.1");
    remote_i64s(&c, a, a_rank);
    remote_int(&c, a_rank);
    remote_i64s(&c, b, b_rank);
    remote_int(&c, b_rank);
    remote_i64s_back(&c, out, 8);
    remote_ints_back(&c, out_rank, 1);
    return (int)remote_call_int(&c);
}
#endif

/* 6.2 void ex6_2_bmm_backward(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k,
 *                             int64_t n, float *da, float *db) */
#ifdef COURSE_RUNNER
static void serve_6_2(Served *s) {
    ex6_2_bmm_backward(served_floats(s, 0), served_floats(s, 1), served_floats(s, 2), served_i64(s, 3),
                       served_i64(s, 4), served_i64(s, 5), served_i64(s, 6), served_floats(s, 7), served_floats(s, 8));
}
#else
void ex6_2_bmm_backward(const float *a, const float *b, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                        float *da, float *db) {
    RemoteCall c;
    remote_begin(&c, "6.2");
    remote_floats(&c, a, batch * m * k);
    remote_floats(&c, b, batch * k * n);
    remote_floats(&c, g, batch * m * n);
    remote_i64(&c, batch);
    remote_i64(&c, m);
    remote_i64(&c, k);
    remote_i64(&c, n);
    remote_floats_back(&c, da, batch * m * k);
    remote_floats_back(&c, db, batch * k * n);
    remote_call(&c);
}
#endif

/* 6.3 void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
 *                                   float *dw) */
#ifdef COURSE_RUNNER
static void serve_6_3(Served *s) {
    ex6_3_shared_weight_grad(served_floats(s, 0), served_floats(s, 1), served_i64(s, 2), served_i64(s, 3),
                             served_i64(s, 4), served_i64(s, 5), served_floats(s, 6));
}
#else
void ex6_3_shared_weight_grad(const float *x, const float *g, int64_t batch, int64_t m, int64_t k, int64_t n,
                              float *dw) {
    RemoteCall c;
    remote_begin(&c, "6.3");
    remote_floats(&c, x, batch * m * k);
    remote_floats(&c, g, batch * m * n);
    remote_i64(&c, batch);
    remote_i64(&c, m);
    remote_i64(&c, k);
    remote_i64(&c, n);
    remote_floats_back(&c, dw, k * n);
    remote_call(&c);
}
#endif

/* 6.4 void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k,
 *                                      int64_t n, float *out) */
#ifdef COURSE_RUNNER
static void serve_6_4(Served *s) {
    ex6_4_shared_queries_matmul(served_floats(s, 0), served_floats(s, 1), served_i64(s, 2), served_i64(s, 3),
                                served_i64(s, 4), served_i64(s, 5), served_floats(s, 6));
}
#else
void ex6_4_shared_queries_matmul(const float *queries, const float *keys, int64_t b, int64_t m, int64_t k, int64_t n,
                                 float *out) {
    RemoteCall c;
    remote_begin(&c, "6.4");
    remote_floats(&c, queries, m * k);
    remote_floats(&c, keys, b * k * n);
    remote_i64(&c, b);
    remote_i64(&c, m);
    remote_i64(&c, k);
    remote_i64(&c, n);
    remote_floats_back(&c, out, b * m * n);
    remote_call(&c);
}
#endif

#ifdef COURSE_RUNNER
const RunnerCall runner_calls[] = {
    {"6.1", serve_6_1}, {"6.2", serve_6_2}, {"6.3", serve_6_3}, {"6.4", serve_6_4}, {NULL, NULL}};
#endif
