/*
 * test_calls.c - how the grader carries lesson 4's exercise calls across the sandbox. For the
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

/* 4.1 void ex4_1_permute_by_hand(PermuteByHand *answer) */
#ifdef COURSE_RUNNER
static void serve_4_1(Served *s) { ex4_1_permute_by_hand(served_bytes(s, 0)); }
#else
void ex4_1_permute_by_hand(PermuteByHand *answer) {
    RemoteCall c;
    remote_begin(&c, "4.1");
    remote_bytes_back(&c, answer, sizeof *answer);
    remote_call(&c);
}
#endif

/* 4.2 void ex4_2_inverse_permutation(const int *dims, int n, int *inv) */
#ifdef COURSE_RUNNER
static void serve_4_2(Served *s) { ex4_2_inverse_permutation(served_ints(s, 0), served_int(s, 1), served_ints(s, 2)); }
#else
void ex4_2_inverse_permutation(const int *dims, int n, int *inv) {
    RemoteCall c;
    remote_begin(&c, "4.2");
    remote_ints(&c, dims, n);
    remote_int(&c, n);
    remote_ints_back(&c, inv, n);
    remote_call(&c);
}
#endif

/* 4.3 void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims,
 *                             int64_t *out_shape, int64_t *out_strides) */
#ifdef COURSE_RUNNER
static void serve_4_3(Served *s) {
    ex4_3_permute_view(served_i64s(s, 0), served_int(s, 1), served_i64s(s, 2), served_ints(s, 3), served_i64s(s, 4),
                       served_i64s(s, 5));
}
#else
void ex4_3_permute_view(const int64_t *shape, int rank, const int64_t *strides, const int *dims, int64_t *out_shape,
                        int64_t *out_strides) {
    RemoteCall c;
    remote_begin(&c, "4.3");
    remote_i64s(&c, shape, rank);
    remote_int(&c, rank);
    remote_i64s(&c, strides, rank);
    remote_ints(&c, dims, rank);
    remote_i64s_back(&c, out_shape, rank);
    remote_i64s_back(&c, out_strides, rank);
    remote_call(&c);
}
#endif

/* 4.4 void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides,
 *                                int64_t offset, float *out); data reaches the view's last element */
#ifdef COURSE_RUNNER
static void serve_4_4(Served *s) {
    ex4_4_contiguous_copy(served_floats(s, 0), served_i64s(s, 1), served_int(s, 2), served_i64s(s, 3), served_i64(s, 4),
                          served_floats(s, 5));
}
#else
void ex4_4_contiguous_copy(const float *data, const int64_t *shape, int rank, const int64_t *strides, int64_t offset,
                           float *out) {
    int64_t n = shape_numel(shape, rank),
            reach = offset + 1; /* the data the view addresses: up to its highest element */
    for (int d = 0; d < rank; d++)
        if (strides[d] > 0) reach += (shape[d] - 1) * strides[d];
    RemoteCall c;
    remote_begin(&c, "4.4");
    remote_floats(&c, data, n > 0 ? reach : 0);
    remote_i64s(&c, shape, rank);
    remote_int(&c, rank);
    remote_i64s(&c, strides, rank);
    remote_i64(&c, offset);
    remote_floats_back(&c, out, n);
    remote_call(&c);
}
#endif

#ifdef COURSE_RUNNER
const RunnerCall runner_calls[] = {
    {"4.1", serve_4_1}, {"4.2", serve_4_2}, {"4.3", serve_4_3}, {"4.4", serve_4_4}, {NULL, NULL}};
#endif
