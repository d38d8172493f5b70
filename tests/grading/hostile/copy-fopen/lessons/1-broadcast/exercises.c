/*
 * HOSTILE SUBMISSION copy-fopen (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: what a test may read at run time. Each exercise finds the course's checkout its own
 * way and reads lessons/1-broadcast/solutions.c with fopen, then hands a 450-byte slice of it
 * back as its failure message (and prints it):
 *   1.1 walking up from /proc/self/cwd      1.2 walking up from /proc/self/exe
 *   1.3 an ancestor's /proc/PID/cwd         1.4 $PWD and $OLDPWD
 *   1.5 the --results path on the test's command line (/proc/self/cmdline)
 * Contained: no line of any solutions.c appears in results.json, summary.tsv or the report,
 * and the submission scores 0.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

static void h_leak_solutions(int how) {
    char course[PATH_MAX], path[PATH_MAX + 64], label[64];
    static char text[H_BIG];
    if (!h_course_by(how, course, sizeof course)) return;
    snprintf(path, sizeof path, "%s/lessons/1-broadcast/solutions.c", course);
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    size_t at = (size_t)(how - 1) * 450;
    char slice[512];
    snprintf(slice, sizeof slice, "%.450s", at < n ? text + at : text);
    snprintf(label, sizeof label, "solutions.c, found by way %d", how);
    h_leak(label, slice);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    memset(answer, 0, sizeof *answer);
    h_leak_solutions(1);
}

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    h_leak_solutions(2);
    return -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    h_leak_solutions(3);
    return -2;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map;
    h_leak_solutions(4);
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank;
    h_leak_solutions(5);
}
