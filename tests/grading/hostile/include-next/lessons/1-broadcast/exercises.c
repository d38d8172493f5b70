/*
 * HOSTILE SUBMISSION include-next (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the include check, through #include_next (in the main file it acts like #include)
 * of the course's solutions.c by a /usr/include/../../proc/self/cwd/../.. path (see
 * include-proc-cwd), at several depths.
 * (This is how the grader before the sandbox was beaten, when it compiled the file in
 * BUILD/grade/NAME/lesson1/src inside the checkout; the stage is now outside it, and these
 * paths must stay closed wherever it is. include-abs-path and include-ancestor-cwd are the
 * variants that would still reach the checkout without a sandbox.)
 * Contained: the lesson is rejected or does not compile, and the submission scores 0.
 */
#include <stdint.h>
#include <string.h>

#include "exercises.h"

#if __has_include("/usr/include/../../proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c")
#include_next "/usr/include/../../proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c")
#include_next "/usr/include/../../proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c")
#include_next "/usr/include/../../proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c")
#include_next "/usr/include/../../proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c"
#else /* not found from here: the functions below, wrong on purpose */
/* wrong on purpose: a hostile submission must deserve 0 points */
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    return -2;
}
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    return -2;
}
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)src, (void)src_rank;
    for (int d = 0; d < target_rank; d++) map[d] = -1;
}
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out_shape;
    for (int d = 0; d < out_rank; d++) out[d] = -1;
}
#endif
