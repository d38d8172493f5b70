/*
 * HOSTILE SUBMISSION forge-rows (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the grader's own bookkeeping. From the --results path on the test's command line
 * it finds the grader's work directory (BUILD/grade/NAME), reads exercises.tsv there and, in
 * 1.2's probe, appends a "passed" row for every exercise of the course to rows.tsv, from which
 * grade.sh writes the report, results.json and summary.tsv.
 * Contained: the submission scores 0 in results.json and summary.tsv.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

/* DIR/lessonN/ID.tsv -> DIR */
static int h_work_dir(char *out, size_t size) {
    char results[PATH_MAX];
    if (!h_option(0, "--results", results, sizeof results)) return 0;
    h_resolve(0, results, out, size);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(out, '/');
        if (!slash) return 0;
        *slash = '\0';
    }
    return 1;
}

static void h_forge_rows(void) {
    char work[PATH_MAX], path[PATH_MAX + 32], line[1024];
    static char rows[H_BIG];
    if (!h_work_dir(work, sizeof work)) return;
    snprintf(path, sizeof path, "%s/exercises.tsv", work);
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t used = 0;
    while (fgets(line, sizeof line, f)) { /* id, points, title, lesson directory */
        char id[32], title[512];
        int points;
        if (sscanf(line, "%31[^\t]\t%d\t%511[^\t]", id, &points, title) != 3) continue;
        used += (size_t)snprintf(rows + used, sizeof rows - used, "%s\t%d\tpassed\t%s\t\t\n", id, points, title);
        if (used >= sizeof rows) break;
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/rows.tsv", work);
    h_append(path, rows);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    if (!h_in_test()) h_forge_rows(); /* once: 1.2's probe */
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
