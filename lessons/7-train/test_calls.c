/*
 * test_calls.c - how the grader carries lesson 7's exercise calls across the sandbox. For the
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

/* 7.1 void ex7_1_causal_mask(int64_t t, float *mask) */
#ifdef COURSE_RUNNER
static void serve_7_1(Served *s) { ex7_1_causal_mask(served_i64(s, 0), served_floats(s, 1)); }
#else
void ex7_1_causal_mask(int64_t t, float *mask) {
    RemoteCall c;
    remote_begin(&c, "7.1");
    remote_i64(&c, t);
    remote_floats_back(&c, mask, t * t);
    remote_call(&c);
}
#endif

/* 7.2 Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv) */
#ifdef COURSE_RUNNER
static void serve_7_2(Served *s) {
    served_return_tensor(s, ex7_2_attention_head(served_tensor(s, 0), served_tensor(s, 1), served_tensor(s, 2),
                                                 served_tensor(s, 3)));
}
#else
Tensor *ex7_2_attention_head(Tensor *x, Tensor *wq, Tensor *wk, Tensor *wv) {
    RemoteCall c;
    remote_begin(&c, "7.2");
    remote_tensor(&c, x);
    remote_tensor(&c, wq);
    remote_tensor(&c, wk);
    remote_tensor(&c, wv);
    return remote_call_tensor(&c);
}
#endif

/* 7.3 Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) */
#ifdef COURSE_RUNNER
static void serve_7_3(Served *s) {
    served_return_tensor(s, ex7_3_layer_norm(served_tensor(s, 0), served_tensor(s, 1), served_tensor(s, 2),
                                             served_float(s, 3)));
}
#else
Tensor *ex7_3_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
    RemoteCall c;
    remote_begin(&c, "7.3");
    remote_tensor(&c, x);
    remote_tensor(&c, gamma);
    remote_tensor(&c, beta);
    remote_float(&c, eps);
    return remote_call_tensor(&c);
}
#endif

/* 7.4 void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
 *                           float beta1, float beta2, float eps, float weight_decay) */
#ifdef COURSE_RUNNER
static void serve_7_4(Served *s) {
    ex7_4_adamw_step(served_floats(s, 0), served_floats(s, 1), served_floats(s, 2), served_floats(s, 3),
                     served_i64(s, 4), served_i64(s, 5), served_float(s, 6), served_float(s, 7), served_float(s, 8),
                     served_float(s, 9), served_float(s, 10));
}
#else
void ex7_4_adamw_step(float *param, const float *grad, float *m, float *v, int64_t n, int64_t step, float lr,
                      float beta1, float beta2, float eps, float weight_decay) {
    RemoteCall c;
    remote_begin(&c, "7.4");
    remote_floats_back(&c, param, n);
    remote_floats(&c, grad, n);
    remote_floats_back(&c, m, n);
    remote_floats_back(&c, v, n);
    remote_i64(&c, n);
    remote_i64(&c, step);
    remote_float(&c, lr);
    remote_float(&c, beta1);
    remote_float(&c, beta2);
    remote_float(&c, eps);
    remote_float(&c, weight_decay);
    remote_call(&c);
}
#endif

#ifdef COURSE_RUNNER
const RunnerCall runner_calls[] = {
    {"7.1", serve_7_1}, {"7.2", serve_7_2}, {"7.3", serve_7_3}, {"7.4", serve_7_4}, {NULL, NULL}};
#endif
