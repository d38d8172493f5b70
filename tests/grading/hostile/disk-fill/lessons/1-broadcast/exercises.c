/*
 * HOSTILE SUBMISSION disk-fill (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the disk, under the per-file output limit (1,000,000 bytes). In 1.2's probe it writes
 * 40 files of 999,000 bytes each into its working directory and 40 into /tmp
 * (hostile-marker-fill-NN), about 80 MB in all.
 * Contained: no hostile-marker-fill file in /tmp afterwards, and no more than 10 MB of them left
 * anywhere under the checkout (the scratch space is capped or discarded).
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

static void h_fill(const char *dir) {
    static char block[999000];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 40; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/hostile-marker-fill-%02d", dir, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return;
        size_t done = 0;
        ssize_t n;
        while (done < sizeof block && (n = write(fd, block + done, sizeof block - done)) > 0) done += (size_t)n;
        close(fd);
    }
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    if (!h_in_test()) { /* once: 1.2's probe */
        h_fill(".");
        h_fill("/tmp");
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
