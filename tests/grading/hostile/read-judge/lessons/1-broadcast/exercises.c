/*
 * HOSTILE SUBMISSION read-judge (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the memory of the process that checks its answers, where expected values would be.
 * Each exercise tries its parent and the processes with nearby ids (the judge, or whatever
 * started it): 1.2 with process_vm_readv, 1.3 with ptrace(PTRACE_SEIZE, which does not stop
 * the process), 1.4 through /proc/PID/mem. Whenever one of them is let through (for
 * process_vm_readv, an EFAULT means the access itself was allowed), it exits at once with
 * status 0, so that the exercise reads "exited early"; refused everywhere, it returns a wrong
 * answer.
 * Contained: 1.2, 1.3 and 1.4 are "wrong", never "exited early".
 */
#define _GNU_SOURCE /* process_vm_readv and ptrace */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include "exercises.h"

enum { NEAR = 64 }; /* how many process ids on either side of the parent's to try */

/* The pids to try: the parent's first, then its neighbours. */
static pid_t target(int k) {
    pid_t parent = getppid();
    return k == 0 ? parent : parent + (k % 2 ? (k + 1) / 2 : -(k / 2));
}

static int read_with_vm_readv(pid_t pid) {
    char buf[64];
    struct iovec local = {buf, sizeof buf}, remote = {(void *)&target, sizeof buf};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) > 0 || errno == EFAULT;
}

static int read_with_ptrace(pid_t pid) { return ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0; }

static int read_with_proc_mem(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

static void try_all(int (*attempt)(pid_t)) {
    for (int k = 0; k <= 2 * NEAR; k++)
        if (target(k) > 1 && target(k) != getpid() && attempt(target(k))) exit(0);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    try_all(read_with_vm_readv);
    return -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target_shape,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target_shape, (void)target_rank, (void)out_strides;
    try_all(read_with_ptrace);
    return -2;
}

void ex1_4_broadcast_map(const int64_t *target_shape, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target_shape, (void)target_rank, (void)src, (void)src_rank;
    try_all(read_with_proc_mem);
    map[0] = -1; /* wrong on purpose */
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank;
}
