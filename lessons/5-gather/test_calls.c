/*
 * test_calls.c - how the grader carries lesson 5's exercise calls across the sandbox. For the
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

/* 5.1 void ex5_1_gather_by_hand(GatherByHand *answer) */
#ifdef COURSE_RUNNER
static void serve_5_1(Served *s) { ex5_1_gather_by_hand(served_bytes(s, 0)); }
#else
void ex5_1_gather_by_hand(GatherByHand *answer) {
    RemoteCall c;
    remote_begin(&c, "5.1");
    remote_bytes_back(&c, answer, sizeof *answer);
    remote_call(&c);
}
#endif

/* 5.2 void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable);
 * gtable has V rows, and V is not passed: at least the rows the indices name */
#ifdef COURSE_RUNNER
static void serve_5_2(Served *s) {
    ex5_2_scatter_add(served_floats(s, 0), served_i64s(s, 1), served_i64(s, 2), served_i64(s, 3), served_floats(s, 4));
}
#else
void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable) {
    int64_t rows = 0;
    for (int64_t i = 0; i < n; i++)
        if (indices[i] + 1 > rows) rows = indices[i] + 1;
    RemoteCall c;
    remote_begin(&c, "5.2");
    remote_floats(&c, g, n * d);
    remote_i64s(&c, indices, n);
    remote_i64(&c, n);
    remote_i64(&c, d);
    remote_floats_back(&c, gtable, rows * d);
    remote_call(&c);
}
#endif

/* 5.3 int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n,
 *                                   float *out, int64_t *bad_position) */
#ifdef COURSE_RUNNER
static void serve_5_3(Served *s) {
    served_return_int(s, ex5_3_gather_rows_checked(served_floats(s, 0), served_i64(s, 1), served_i64(s, 2),
                                                   served_i64s(s, 3), served_i64(s, 4), served_floats(s, 5),
                                                   served_i64s(s, 6)));
}
#else
int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n, float *out,
                              int64_t *bad_position) {
    RemoteCall c;
    remote_begin(&c, "5.3");
    remote_floats(&c, table, v * d);
    remote_i64(&c, v);
    remote_i64(&c, d);
    remote_i64s(&c, indices, n);
    remote_i64(&c, n);
    remote_floats_back(&c, out, n * d);
    remote_i64s_back(&c, bad_position, 1);
    return (int)remote_call_int(&c);
}
#endif

/* 5.4 Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n) */
#ifdef COURSE_RUNNER
static void serve_5_4(Served *s) {
    served_return_tensor(s, ex5_4_sentence_vector(served_tensor(s, 0), served_i64s(s, 1), served_i64(s, 2)));
}
#else
Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n) {
    RemoteCall c;
    remote_begin(&c, "5.4");
    remote_tensor(&c, table);
    remote_i64s(&c, words, n);
    remote_i64(&c, n);
    return remote_call_tensor(&c);
}
#endif

#ifdef COURSE_RUNNER
const RunnerCall runner_calls[] = {
    {"5.1", serve_5_1}, {"5.2", serve_5_2}, {"5.3", serve_5_3}, {"5.4", serve_5_4}, {NULL, NULL}};
#endif
