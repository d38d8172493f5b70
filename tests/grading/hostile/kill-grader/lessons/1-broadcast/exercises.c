/*
 * HOSTILE SUBMISSION kill-grader (graded by tests/grading/test_hostile.sh, alone and under
 * grade-all; deserves 0 points). Attacks: the grader's processes. In 1.2's probe it walks up
 * its ancestors (getppid(), then /proc/PID/stat) to the one that runs grade-all.sh, or failing
 * that grade.sh, and sends SIGKILL to each from the top down, then to that process's group if
 * it leads one. Safety: it never goes past that process, never kills anything when there is
 * none, and never signals -1.
 * Contained: grade.sh / grade-all.sh finish normally; the gradebook has every student's row,
 * and the students after this one are graded as usual.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

static void h_kill_grader(void) {
    int pids[32], n = h_ancestors(pids, 32), top = -1;
    for (int i = 0; i < n && top < 0; i++)
        if (h_runs(pids[i], "grade-all.sh")) top = i;
    for (int i = 0; i < n && top < 0; i++)
        if (h_runs(pids[i], "grade.sh")) top = i;
    if (top < 0) return; /* no grader above: nothing to kill */
    pid_t group = getpgid(pids[top]); /* before it is gone */
    fflush(NULL);
    for (int i = top; i >= 0; i--)
        if (pids[i] > 1) kill(pids[i], SIGKILL);
    if (pids[top] > 1 && group == pids[top]) killpg(group, SIGKILL); /* the grader leads its group */
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    if (!h_in_test()) h_kill_grader(); /* 1.2's probe */
    return -2;
}
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    return -2;
}
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map; /* map left as it came */
}
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank; /* out left as it came */
}
