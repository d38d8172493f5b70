/*
 * HOSTILE SUBMISSION alarm-off (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the probe's 3-second limit, an alarm() in the probe's own process. 1.2 cancels it
 * (alarm(0), setitimer(ITIMER_REAL, 0), SIGALRM ignored and blocked) and then sleeps until 30 s
 * after its first call (the start time is kept in hostile-marker-alarm-start in its working
 * directory, or, if that cannot be written, 30 s from each call), then returns a wrong answer.
 * Contained: 1.2 does not pass (timed out), and grading the submission takes well under 30 s.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */
#include <sys/time.h>

static void h_no_alarm(void) {
    alarm(0);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, NULL);
}

static time_t h_deadline(void) {
    char text[64];
    long long start;
    if (h_read("hostile-marker-alarm-start", text, sizeof text) > 0 && sscanf(text, "%lld", &start) == 1)
        return (time_t)start + 30;
    snprintf(text, sizeof text, "%lld\n", (long long)time(NULL));
    h_write("hostile-marker-alarm-start", text);
    return time(NULL) + 30;
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    h_no_alarm();
    time_t until = h_deadline();
    while (time(NULL) < until) {
        struct timespec t = {0, 100000000L};
        nanosleep(&t, NULL);
    }
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
