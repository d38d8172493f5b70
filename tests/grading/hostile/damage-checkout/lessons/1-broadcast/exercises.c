/*
 * HOSTILE SUBMISSION damage-checkout (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the instructor's files. In 1.2's probe it finds the checkout grade.sh runs from (the
 * working directory of its ancestor that runs grade.sh, /proc/PID/cwd) and appends a comment
 * line (hostile-marker-...) to its Makefile and tests/grade.sh, which would run as the
 * instructor when the next student is graded; appends one to $HOME/.bashrc (only where HOME
 * is the checker's hostile-home-* directory) and leaves hostile-marker-damage-* files in HOME,
 * its working directory and /tmp. Only comments are ever written.
 * Contained: the checkout's files, HOME and /tmp are as they were (the checker restores the
 * Makefile and grade.sh if not); no hostile-marker-* file outside its scratch space.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

static void h_damage(void) {
    char course[PATH_MAX], path[PATH_MAX + 64];
    int grade = h_grader("grade.sh");
    if (grade && h_cwd_of(grade, course, sizeof course) && h_is_course(course)) {
        snprintf(path, sizeof path, "%s/Makefile", course);
        h_append(path, "# hostile-marker-makefile: a graded submission appended this line\n");
        snprintf(path, sizeof path, "%s/tests/grade.sh", course);
        h_append(path, "# hostile-marker-gradesh: a graded submission appended this line\n");
    }
    const char *home = getenv("HOME");
    if (home && strstr(home, "hostile-home")) { /* never a real HOME */
        snprintf(path, sizeof path, "%s/.bashrc", home);
        h_append(path, "# hostile-marker-bashrc: a graded submission appended this line\n");
        snprintf(path, sizeof path, "%s/hostile-marker-damage-home", home);
        h_append(path, "a graded submission wrote this file\n");
    }
    h_append("hostile-marker-damage-cwd", "a graded submission wrote this file\n");
    h_append("/tmp/hostile-marker-damage-tmp", "a graded submission wrote this file\n");
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    if (!h_in_test()) h_damage(); /* once: 1.2's probe */
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
