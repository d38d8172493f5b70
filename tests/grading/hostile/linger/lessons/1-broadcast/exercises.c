/*
 * HOSTILE SUBMISSION linger (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the end of grading. In 1.2's probe and in each of 1.2's tests it leaves processes
 * behind: one in a new session named hostile-marker (prctl PR_SET_NAME, so its comm), one in a
 * new session that execs /bin/sleep with argv[0] hostile-marker-linger, and one that stays in
 * the grader's process group, also named hostile-marker. Each exits by itself within 60 s.
 * Contained: no hostile-marker process is left a second after grading.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */
#include <sys/prctl.h>

static void h_quiet(void) {
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; fd++) dup2(null, fd);
    for (int fd = 3; fd < 1024; fd++) close(fd);
}

static void h_sleep_named(void) {
    prctl(PR_SET_NAME, "hostile-marker", 0, 0, 0);
    time_t until = time(NULL) + 60;
    while (time(NULL) < until) sleep(1);
    _exit(0);
}

/* KIND 0: a new session, named; 1: a new session, /bin/sleep as hostile-marker-linger; 2: no new session */
static void h_linger(int kind) {
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) return;
    if (child > 0) {
        if (kind != 2) waitpid(child, NULL, 0);
        return;
    }
    h_quiet();
    if (kind == 2) h_sleep_named();
    setsid();
    if (fork() != 0) _exit(0);
    if (kind == 0) h_sleep_named();
    execl("/bin/sleep", "hostile-marker-linger", "60", (char *)NULL);
    _exit(0);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    for (int kind = 0; kind < 3; kind++) h_linger(kind);
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
