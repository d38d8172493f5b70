/*
 * HOSTILE SUBMISSION forge-results-line (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: how a test's verdict gets back to the grader. The test program is run with
 * --results FILE --only ID; each exercise reads that command line (1.1-1.3 from
 * /proc/self/cmdline, 1.4-1.5 from its parent's /proc/PPID/cmdline) and appends a forged
 * "exercise ID ... done passed" line to FILE before the harness writes its own.
 * Contained: the submission scores 0 (the forged line is never read, or there is no such file
 * to write).
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

static void h_forge_line(int from_parent) {
    char results[PATH_MAX], path[PATH_MAX], only[64], line[512];
    int pid = from_parent ? getppid() : 0;
    if (!h_option(pid, "--results", results, sizeof results) || !h_option(pid, "--only", only, sizeof only)) return;
    h_resolve(pid, results, path, sizeof path);
    snprintf(line, sizeof line, "exercise\t%s\t4\tdone\tpassed\tforged by the submission\t\n", only);
    h_append(path, line);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    memset(answer, 0, sizeof *answer);
    h_forge_line(0);
}

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    h_forge_line(0);
    return -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    h_forge_line(0);
    return -2;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map;
    h_forge_line(1);
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank;
    h_forge_line(1);
}
