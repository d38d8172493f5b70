/*
 * HOSTILE SUBMISSION damage-students (graded by tests/grading/test_hostile.sh's grade-all test;
 * deserves 0 points). Attacks: the other students' submissions. In 1.2's probe it finds the
 * grade-all.sh ancestor, reads its --submissions directory (its /proc/PID/cmdline and cwd) and
 * overwrites every other student's lessons/N-topic/exercises.c with one that does not compile,
 * so that those graded after it get 0. A safety interlock: it writes only where that directory
 * holds a file named hostile-victims-ok (the checker's temporary copy), never under plain
 * grade.sh.
 * Contained: the other students' files are unchanged and keep their marks.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */
#include <dirent.h>

static void h_damage_students(void) {
    char option[PATH_MAX], subs[PATH_MAX], path[3 * PATH_MAX], own[256] = "";
    int all = h_grader("grade-all.sh"), grade = h_grader("grade.sh");
    if (!all || !h_option(all, "--submissions", option, sizeof option)) return;
    h_resolve(all, option, subs, sizeof subs);
    snprintf(path, sizeof path, "%s/hostile-victims-ok", subs);
    if (!h_exists(path)) return; /* the interlock */
    if (grade) h_option(grade, "--name", own, sizeof own);
    DIR *d = opendir(subs);
    if (!d) return;
    struct dirent *student;
    while ((student = readdir(d))) {
        if (student->d_name[0] == '.' || !strcmp(student->d_name, own)) continue;
        snprintf(path, sizeof path, "%s/%s/lessons", subs, student->d_name);
        DIR *lessons = opendir(path);
        if (!lessons) continue;
        struct dirent *lesson;
        while ((lesson = readdir(lessons))) {
            if (lesson->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s/lessons/%s/exercises.c", subs, student->d_name, lesson->d_name);
            if (h_exists(path)) h_write(path, "#error hostile-marker-broken: another student's submission overwrote this file\n");
        }
        closedir(lessons);
    }
    closedir(d);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    if (!h_in_test()) h_damage_students(); /* once: 1.2's probe */
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
