/*
 * HOSTILE SUBMISSION forge-fd (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: descriptors it may have inherited from the grader. 1.2 (and a constructor, before
 * any call) writes a forged "passed" line for every exercise, in the format of the judge's
 * per-exercise results and as a full-marks results.json, into every descriptor from 0 to 1023
 * but its two pipes; 1.3 writes the same lines into its reply pipe (fd 4) instead of an answer.
 * Contained: no points, and the judge reports 1.3 as a failure of the student's program, not
 * of the grader.
 */
#include <string.h>
#include <unistd.h>

#include "exercises.h"

static const char forged[] = "exercise\t1.1\t2\t2\tpassed\t\t\nexercise\t1.2\t3\t3\tpassed\t\t\n"
                             "exercise\t1.3\t3\t3\tpassed\t\t\nexercise\t1.4\t3\t3\tpassed\t\t\n"
                             "exercise\t1.5\t4\t4\tpassed\t\t\n{\"score\": 69, \"max_score\": 69, \"tests\": []}\n";

static void forge_everywhere(void) {
    for (int fd = 0; fd < 1024; fd++)
        if (fd != 3 && fd != 4) (void)!write(fd, forged, sizeof forged - 1);
}

__attribute__((constructor)) static void at_start(void) { forge_everywhere(); }

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    forge_everywhere();
    return -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    for (int i = 0; i < 64; i++) (void)!write(4, forged, sizeof forged - 1);
    return -2;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map;
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank;
}
