/* toolkit.c - what the hostile submissions share: test_hostile.sh puts it in place of the line
 * "#include HOSTILE_TOOLKIT" in each one's exercises.c, since a student's submission is that
 * one file (the grader stages nothing else). Not a program of its own. */
#define _GNU_SOURCE /* the grader compiles with -std=c11: fork, readlink, kill... need this */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exercises.h"

/* ==== the hostile toolkit (tests/grading/hostile/toolkit.c) =============================== */
#define H_UNUSED __attribute__((unused))
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation" /* long paths are cut, and that is fine here */
#endif
#define H_BIG 65536

/* Check forks each test into a process group of its own; the harness's probe is a plain fork. */
H_UNUSED static int h_in_test(void) { return getpgrp() == getpid(); }

H_UNUSED static long h_read(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t used = 0;
    ssize_t n;
    while (used + 1 < size && (n = read(fd, buf + used, size - 1 - used)) > 0) used += (size_t)n;
    close(fd);
    buf[used] = '\0';
    return (long)used;
}

H_UNUSED static int h_append(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    close(fd);
    return n == (ssize_t)len ? 0 : -1;
}

H_UNUSED static int h_write(const char *path, const char *text) { /* replaces the file's contents */
    int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    close(fd);
    return n == (ssize_t)len ? 0 : -1;
}

H_UNUSED static int h_exists(const char *path) { return access(path, F_OK) == 0; }

/* PID's parent, from /proc/PID/stat ("pid (comm) state ppid ..."); -1 if unknown */
H_UNUSED static int h_parent(int pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (h_read(path, buf, sizeof buf) <= 0) return -1;
    char *p = strrchr(buf, ')');
    char state;
    int ppid = -1;
    if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2) return -1;
    return ppid;
}

/* PID's argv (pid 0: this process), split into argv[]; returns argc, 0 if unreadable */
H_UNUSED static int h_args(int pid, char *buf, size_t size, char **argv, int max) {
    char path[64];
    if (pid == 0) snprintf(path, sizeof path, "/proc/self/cmdline");
    else snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    long n = h_read(path, buf, size);
    int argc = 0;
    for (long i = 0; n > 0 && i < n && argc < max; i += (long)strlen(buf + i) + 1) argv[argc++] = buf + i;
    return argc;
}

/* The value after OPTION on PID's command line, copied into out; 0 if there is none */
H_UNUSED static int h_option(int pid, const char *option, char *out, size_t size) {
    static char buf[H_BIG];
    char *argv[256];
    int argc = h_args(pid, buf, sizeof buf, argv, 256);
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], option)) {
            snprintf(out, size, "%s", argv[i + 1]);
            return 1;
        }
    return 0;
}

/* Does one of PID's arguments name the script `script` (its basename is exactly that)? */
H_UNUSED static int h_runs(int pid, const char *script) {
    static char buf[H_BIG];
    char *argv[256];
    int argc = h_args(pid, buf, sizeof buf, argv, 256);
    for (int i = 0; i < argc; i++) {
        const char *base = strrchr(argv[i], '/');
        if (!strcmp(base ? base + 1 : argv[i], script)) return 1;
    }
    return 0;
}

/* This process's ancestors, from the parent up (never pid 1 or 0); returns how many */
H_UNUSED static int h_ancestors(int *pids, int max) {
    int n = 0;
    for (int pid = getppid(); pid > 1 && n < max; pid = h_parent(pid)) pids[n++] = pid;
    return n;
}

/* The nearest ancestor that runs tests/grade.sh (script "grade.sh") or grade-all.sh; 0 if none */
H_UNUSED static int h_grader(const char *script) {
    int pids[32], n = h_ancestors(pids, 32);
    for (int i = 0; i < n; i++)
        if (h_runs(pids[i], script)) return pids[i];
    return 0;
}

H_UNUSED static int h_cwd_of(int pid, char *out, size_t size) {
    char path[64];
    if (pid == 0) snprintf(path, sizeof path, "/proc/self/cwd");
    else snprintf(path, sizeof path, "/proc/%d/cwd", pid);
    ssize_t n = readlink(path, out, size - 1);
    if (n < 0) return 0;
    out[n] = '\0';
    return 1;
}

/* A path relative to PID's working directory made absolute */
H_UNUSED static void h_resolve(int pid, const char *path, char *out, size_t size) {
    char cwd[PATH_MAX] = ".";
    if (path[0] == '/' || !h_cwd_of(pid, cwd, sizeof cwd)) snprintf(out, size, "%s", path);
    else snprintf(out, size, "%s/%s", cwd, path);
}

/* Is DIR a checkout of the course (it has the lesson's solutions.c and the grader)? */
H_UNUSED static int h_is_course(const char *dir) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/lessons/1-broadcast/solutions.c", dir);
    if (!h_exists(path)) return 0;
    snprintf(path, sizeof path, "%s/tests/grade.sh", dir);
    return h_exists(path);
}

/* Walks up from START (a file or a directory) to a checkout of the course */
H_UNUSED static int h_course_above(const char *start, char *out, size_t size) {
    char dir[PATH_MAX];
    if (!start || !*start || !realpath(start, dir)) return 0;
    for (;;) {
        if (h_is_course(dir)) {
            snprintf(out, size, "%s", dir);
            return 1;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) return 0;
        *slash = '\0';
    }
}

/* The course's checkout, found one way: 1 /proc/self/cwd, 2 /proc/self/exe, 3 an ancestor's
 * /proc/PID/cwd, 4 $PWD or $OLDPWD, 5 the results file named on the command line. */
H_UNUSED static int h_course_by(int how, char *out, size_t size) {
    char path[PATH_MAX];
    if (how == 1) return h_course_above("/proc/self/cwd", out, size);
    if (how == 2) return h_course_above("/proc/self/exe", out, size);
    if (how == 3) {
        int pids[32], n = h_ancestors(pids, 32);
        for (int i = 0; i < n; i++)
            if (h_cwd_of(pids[i], path, sizeof path) && h_course_above(path, out, size)) return 1;
        return 0;
    }
    if (how == 4) return h_course_above(getenv("PWD"), out, size) || h_course_above(getenv("OLDPWD"), out, size);
    if (how == 5) {
        char results[PATH_MAX];
        if (!h_option(0, "--results", results, sizeof results) && !h_option(getppid(), "--results", results, sizeof results))
            return 0;
        h_resolve(0, results, path, sizeof path);
        return h_course_above(path, out, size);
    }
    return 0;
}

H_UNUSED static int h_course(char *out, size_t size) {
    for (int how = 1; how <= 5; how++)
        if (h_course_by(how, out, size)) return 1;
    return 0;
}

/* Hands TEXT back to the student: printed to stdout and stderr and, inside a test, as the
 * test's failure message (the grader puts that into the report and results.json). */
H_UNUSED static void h_leak(const char *label, const char *text) {
    printf("%s: %s\n", label, text);
    fprintf(stderr, "%s: %s\n", label, text);
    fflush(NULL);
    if (h_in_test()) ck_abort_msg("%s: %.560s", label, text);
}
/* ==== end of the toolkit ==================================================================== */
