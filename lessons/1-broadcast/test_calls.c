/*
 * test_calls.c - how the grader carries lesson 1's exercise calls across the sandbox. For the
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

/* 1.1 void ex1_1_broadcast_by_hand(BroadcastByHand *answer) */
#ifdef COURSE_RUNNER
static void serve_1_1(Served *s) { ex1_1_broadcast_by_hand(served_bytes(s, 0)); }
#else
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    RemoteCall c;
    remote_begin(&c, "1.1");
    remote_bytes_back(&c, answer, sizeof *answer);
    remote_call(&c);
}
#endif

/* 1.2 int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out,
 *                                int *out_rank); out has room for TENSOR_MAX_RANK dims */
#ifdef COURSE_RUNNER
static void serve_1_2(Served *s) {
    served_return_int(s, ex1_2_broadcast_shapes(served_i64s(s, 0), served_int(s, 1), served_i64s(s, 2),
                                                served_int(s, 3), served_i64s(s, 4), served_ints(s, 5)));
}
#else
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    RemoteCall c;
    remote_begin(&c, "1.2");
    remote_i64s(&c, a, a_rank);
    remote_int(&c, a_rank);
    remote_i64s(&c, b, b_rank);
    remote_int(&c, b_rank);
    remote_i64s_back(&c, out, TENSOR_MAX_RANK);
    remote_ints_back(&c, out_rank, 1);
    return (int)remote_call_int(&c);
}
#endif

/* 1.3 int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides,
 *                                 const int64_t *target, int target_rank, int64_t *out_strides);
 * out_strides has room for TENSOR_MAX_RANK */
#ifdef COURSE_RUNNER
static void serve_1_3(Served *s) {
    served_return_int(s, ex1_3_broadcast_strides(served_i64s(s, 0), served_int(s, 1), served_i64s(s, 2),
                                                 served_i64s(s, 3), served_int(s, 4), served_i64s(s, 5)));
}
#else
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    RemoteCall c;
    remote_begin(&c, "1.3");
    remote_i64s(&c, src, src_rank);
    remote_int(&c, src_rank);
    remote_i64s(&c, src_strides, src_rank);
    remote_i64s(&c, target, target_rank);
    remote_int(&c, target_rank);
    remote_i64s_back(&c, out_strides, TENSOR_MAX_RANK);
    return (int)remote_call_int(&c);
}
#endif

/* 1.4 void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank,
 *                              int64_t *map); map has numel(target) entries */
#ifdef COURSE_RUNNER
static void serve_1_4(Served *s) {
    ex1_4_broadcast_map(served_i64s(s, 0), served_int(s, 1), served_i64s(s, 2), served_int(s, 3), served_i64s(s, 4));
}
#else
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    RemoteCall c;
    remote_begin(&c, "1.4");
    remote_i64s(&c, target, target_rank);
    remote_int(&c, target_rank);
    remote_i64s(&c, src, src_rank);
    remote_int(&c, src_rank);
    remote_i64s_back(&c, map, shape_numel(target, target_rank));
    remote_call(&c);
}
#endif

/* 1.5 void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out,
 *                             const int64_t *out_shape, int out_rank) */
#ifdef COURSE_RUNNER
static void serve_1_5(Served *s) {
    ex1_5_sum_to_shape(served_floats(s, 0), served_i64s(s, 1), served_int(s, 2), served_floats(s, 3), served_i64s(s, 4),
                       served_int(s, 5));
}
#else
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    RemoteCall c;
    remote_begin(&c, "1.5");
    remote_floats(&c, grad, shape_numel(shape, rank));
    remote_i64s(&c, shape, rank);
    remote_int(&c, rank);
    remote_floats_back(&c, out, shape_numel(out_shape, out_rank));
    remote_i64s(&c, out_shape, out_rank);
    remote_int(&c, out_rank);
    remote_call(&c);
}
#endif

#ifdef COURSE_RUNNER
const RunnerCall runner_calls[] = {{"1.1", serve_1_1}, {"1.2", serve_1_2}, {"1.3", serve_1_3},
                                   {"1.4", serve_1_4}, {"1.5", serve_1_5}, {NULL, NULL}};
#endif
