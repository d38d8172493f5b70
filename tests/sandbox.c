/*
 * sandbox.c - where the grader runs what a student wrote: the compiler and linker on their
 * file, and the program their functions run in. docs/instructors.md ("What the grader
 * defends") says what each layer protects; in short:
 *
 *   namespaces  (bubblewrap) the program sees a file system of its own: the system's
 *               directories read-only, what the grader binds in, and a tmpfs of capped size
 *               to write to; no network; process ids of its own, so that everything it
 *               starts dies with it; user 65534 (inside; as root, outside, a user of
 *               the run's own, as below).
 *   uid         where user namespaces are not allowed (a container run as root, such as
 *               Gradescope's): a user of the run's own (a new uid each time), from whom
 *               the grader's files must be hidden by their permissions (grade.sh checks
 *               before grading).
 *   seccomp     in every mode. A student's functions may compute, read and write the pipes
 *               they were given, map memory and exit: they cannot open a file, start a
 *               process, make a socket or signal another process. The compiler may not use
 *               the network, trace other processes or mount anything.
 *
 *   sandbox describe [--hidden PATH]...
 *       Prints one line, "sandbox: ...", saying what is in effect, and exits 0 if the
 *       isolation is complete (every PATH unreadable from inside), 3 if something is missing.
 *   sandbox run --profile compile|runner|runner-asan [OPTION]... -- PROGRAM [ARG]...
 *       Runs PROGRAM (an absolute path) with an empty environment (PATH and LC_ALL only),
 *       stdin from /dev/null, its stdout and stderr relayed to ours up to --output bytes,
 *       and kills everything it started at the end. Options:
 *         --ro PATH            PATH (absolute) readable at the same place inside
 *         --scratch PATH       a writable directory at PATH (a tmpfs under namespaces)
 *         --scratch-size BYTES its size (default 64 MiB; under uid, RLIMIT_FSIZE per file)
 *         --chdir DIR          the working directory
 *         --time SECONDS       wall-clock limit (default 60)
 *         --memory BYTES       address-space limit (default none)
 *         --output BYTES       limit on stdout and stderr together (default 1000000)
 *         --keep-fd N          pass descriptor N through (the rest are closed)
 *         --status-fd N        write how it ended to N: "exit CODE", "signal N", "timeout",
 *                              "output" (over --output) or "error MESSAGE"
 *       Exit status: the program's; 128 + N for signal N; 124 on timeout, 125 over
 *       --output, 126 if the sandbox could not be made.
 *
 * GRADE_SANDBOX=namespaces|uid|none forces a mode; the default is the strongest that works.
 */
#ifndef __linux__
#error "the grader's sandbox is made of Linux's seccomp and namespaces: build and grade on Linux"
#endif
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The student's code runs as user 65534 inside a user namespace. Outside one (as root), as a
 * user of each run's own, drawn from UID_BASE + [0, 2^24): no file has it for an owner, and the
 * sweep that kills what a run leaves kills that run's processes only, so that gradings at once
 * on one machine leave each other alone. The range lies between systemd's container users
 * (which end at 0x6fffffff) and its foreign ones (from 0x7ffe0000). */
enum { UID_BASE = 0x70000000 };
static uid_t run_uid;

static uid_t pick_uid(void) {
    unsigned r = 0;
    if (getrandom(&r, sizeof r, 0) != sizeof r) r = (unsigned)getpid() ^ (unsigned)time(NULL) * 2654435761u;
    return (uid_t)UID_BASE + (r & 0xffffff);
}
enum { EXIT_TIMEOUT = 124, EXIT_OUTPUT = 125, EXIT_SANDBOX = 126 };
enum { MAX_LIST = 64 };

typedef enum { MODE_NONE, MODE_UID, MODE_NAMESPACES } Mode;
typedef enum { PROFILE_COMPILE, PROFILE_RUNNER, PROFILE_RUNNER_ASAN } Profile;

typedef struct {
    Profile profile;
    const char *ro[MAX_LIST];
    int n_ro;
    const char *scratch[MAX_LIST];
    int n_scratch;
    long long scratch_size, memory, output;
    const char *chdir_to;
    int seconds;
    int keep[MAX_LIST];
    int n_keep;
    int status_fd;
    char **program; /* PROGRAM ARG... NULL */
} Options;

_Noreturn static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sandbox: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(EXIT_SANDBOX);
}

static long long parse_number(const char *option, const char *text) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno || v < 0) fail("%s takes a whole number, got '%s'", option, text);
    return v;
}

/* ==== which mode this machine allows ================================================== */

static const char *bwrap_path(void) {
    static const char *const candidates[] = {"/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++)
        if (access(candidates[i], X_OK) == 0) return candidates[i];
    return NULL;
}

static bool drop_to_run_uid(void) {
    return setgroups(0, NULL) == 0 && setresgid(run_uid, run_uid, run_uid) == 0 &&
           setresuid(run_uid, run_uid, run_uid) == 0;
}

/* Waits for a child of a check (pid < 0: it could not be started); true if it exited with 0. */
static bool exited_zero(pid_t pid) {
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Does bubblewrap work here (as the user it would run as)? Tried once, in a child. */
static bool namespaces_work(void) {
    const char *bwrap = bwrap_path();
    if (!bwrap) return false;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) dup2(null, 0), dup2(null, 1), dup2(null, 2);
        if (geteuid() == 0 && !drop_to_run_uid()) _exit(1);
        execl(bwrap, "bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--", "/bin/true",
              (char *)NULL);
        _exit(1);
    }
    return exited_zero(pid);
}

static Mode choose_mode(void) {
    const char *forced = getenv("GRADE_SANDBOX");
    if (forced && *forced && strcmp(forced, "auto") != 0) {
        if (!strcmp(forced, "namespaces")) {
            if (!namespaces_work()) fail("GRADE_SANDBOX=namespaces, but bubblewrap cannot make namespaces here");
            return MODE_NAMESPACES;
        }
        if (!strcmp(forced, "uid")) {
            if (geteuid() != 0) fail("GRADE_SANDBOX=uid needs root, to run the student's code as a user of its own");
            return MODE_UID;
        }
        if (!strcmp(forced, "none")) return MODE_NONE;
        fail("GRADE_SANDBOX must be auto, namespaces, uid or none, got '%s'", forced);
    }
    if (namespaces_work()) return MODE_NAMESPACES;
    return geteuid() == 0 ? MODE_UID : MODE_NONE;
}

/* ==== seccomp ============================================================================ */

static int allow(scmp_filter_ctx f, int syscall) { return seccomp_rule_add(f, SCMP_ACT_ALLOW, syscall, 0); }

/* A rule on one argument: (argument `index` `op` a), or for SCMP_CMP_MASKED_EQ, (argument & a) == b. */
static int rule(scmp_filter_ctx f, uint32_t action, int syscall, unsigned index, enum scmp_compare op, scmp_datum_t a,
                scmp_datum_t b) {
    struct scmp_arg_cmp cmp = {index, op, a, b};
    return seccomp_rule_add_array(f, action, syscall, 1, &cmp);
}

/* The runner's allowlist: everything else fails with EPERM (a student's fopen returns NULL,
 * their fork -1). `self` is the process's own pid where it is known (else 0: under a pid
 * namespace there is no one else to signal). */
static scmp_filter_ctx runner_filter(Profile profile, pid_t self) {
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!f) return NULL;
    /* clang-format off */
    static const int plain[] = {
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(close), SCMP_SYS(fstat),
        SCMP_SYS(newfstatat), SCMP_SYS(lseek), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap),
        SCMP_SYS(mprotect), SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(exit), SCMP_SYS(exit_group),
        SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(sigaltstack),
        SCMP_SYS(futex), SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep),
        SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday), SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getrandom),
        SCMP_SYS(arch_prctl), SCMP_SYS(set_tid_address), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
        SCMP_SYS(getrlimit), SCMP_SYS(uname), SCMP_SYS(sched_yield), SCMP_SYS(getuid), SCMP_SYS(geteuid),
        SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getppid),
        SCMP_SYS(wait4), SCMP_SYS(waitid), /* bubblewrap's init, which waits for the runner, runs under the filter too */
        SCMP_SYS(execve), /* once: the exec of the runner itself (the filter is installed before it) */
    };
    /* clang-format on */
    int rc = 0;
    for (size_t i = 0; i < sizeof plain / sizeof *plain && rc == 0; i++) rc = allow(f, plain[i]);
    /* limits may be read, never raised */
    if (rc == 0) rc = rule(f, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_CMP_EQ, 0, 0);
    /* signals to itself only (abort() raises SIGABRT with tgkill) */
    if (rc == 0 && self > 0) {
        rc = rule(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), 0, SCMP_CMP_EQ, (scmp_datum_t)self, 0);
        if (rc == 0) rc = rule(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 0, SCMP_CMP_EQ, (scmp_datum_t)self, 0);
        if (rc == 0) rc = rule(f, SCMP_ACT_ALLOW, SCMP_SYS(tkill), 0, SCMP_CMP_EQ, (scmp_datum_t)self, 0);
    } else if (rc == 0) {
        rc = allow(f, SCMP_SYS(kill));
        if (rc == 0) rc = allow(f, SCMP_SYS(tgkill));
        if (rc == 0) rc = allow(f, SCMP_SYS(tkill));
    }
    if (rc == 0 && profile == PROFILE_RUNNER_ASAN) {
        /* AddressSanitizer's runtime reads /proc/self/maps and the like, and the dynamic loader
         * its libraries: files may be opened for reading. Only where the file system is the
         * sandbox's own (namespaces) or hides the grader's files (uid). */
        /* clang-format off */
        static const int asan[] = {SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getdents64), SCMP_SYS(prctl),
                                   SCMP_SYS(sched_getaffinity), SCMP_SYS(getcwd), SCMP_SYS(mincore), SCMP_SYS(access),
                                   SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(statx), SCMP_SYS(getppid),
                                   SCMP_SYS(pread64), SCMP_SYS(ioctl), SCMP_SYS(fcntl), SCMP_SYS(dup),
                                   SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid)};
        /* clang-format on */
        for (size_t i = 0; i < sizeof asan / sizeof *asan && rc == 0; i++) rc = allow(f, asan[i]);
        const scmp_datum_t writes = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE;
        if (rc == 0) rc = rule(f, SCMP_ACT_ALLOW, SCMP_SYS(openat), 2, SCMP_CMP_MASKED_EQ, writes, 0);
        if (rc == 0) rc = rule(f, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_CMP_MASKED_EQ, writes, 0);
    }
    if (rc != 0) {
        seccomp_release(f);
        return NULL;
    }
    return f;
}

/* The compiler's denylist: a compiler needs files and processes, but not these. */
static scmp_filter_ctx compile_filter(void) {
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
    if (!f) return NULL;
    /* clang-format off */
    static const int denied[] = {
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(mount),
        SCMP_SYS(umount2), SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
        SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
        SCMP_SYS(userfaultfd), SCMP_SYS(kexec_load), SCMP_SYS(init_module), SCMP_SYS(finit_module),
        SCMP_SYS(delete_module), SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at), SCMP_SYS(iopl),
        SCMP_SYS(ioperm), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(reboot), SCMP_SYS(syslog),
        SCMP_SYS(acct), SCMP_SYS(quotactl), SCMP_SYS(fanotify_init), SCMP_SYS(settimeofday),
        SCMP_SYS(clock_settime), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(sendto), SCMP_SYS(sendmsg),
    };
    /* clang-format on */
    int rc = 0;
    for (size_t i = 0; i < sizeof denied / sizeof *denied && rc == 0; i++)
        rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), denied[i], 0);
    /* sockets of the local kind only (no network, whatever the namespaces) */
    if (rc == 0) rc = rule(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 0, SCMP_CMP_NE, (scmp_datum_t)AF_UNIX, 0);
    /* no typing into the grader's terminal */
    if (rc == 0) rc = rule(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, SCMP_CMP_EQ, TIOCSTI, 0);
    if (rc != 0) {
        seccomp_release(f);
        return NULL;
    }
    return f;
}

static scmp_filter_ctx profile_filter(Profile profile, pid_t self) {
    return profile == PROFILE_COMPILE ? compile_filter() : runner_filter(profile, self);
}

/* ==== the child: limits, identity, filter, exec ========================================== */

static void set_limit(int resource, long long value) {
    struct rlimit r = {(rlim_t)value, (rlim_t)value};
    if (setrlimit(resource, &r) != 0) fail("setrlimit(%d) failed: %s", resource, strerror(errno));
}

static void add_arg(char **argv, int *n, int max, const char *arg) {
    if (*n >= max - 1) fail("too many arguments");
    argv[(*n)++] = (char *)arg;
    argv[*n] = NULL;
}

/* Binds the system's directories read-only: /usr, and /bin, /lib, /lib64, /sbin as they are
 * here (links into /usr on a merged system, directories elsewhere). */
static void bind_system(char **argv, int *n, int max) {
    add_arg(argv, n, max, "--ro-bind");
    add_arg(argv, n, max, "/usr");
    add_arg(argv, n, max, "/usr");
    static const char *const tops[] = {"/bin", "/lib", "/lib64", "/sbin", "/lib32", "/libx32"};
    static char links[6][256];
    for (int i = 0; i < 6; i++) {
        struct stat st;
        if (lstat(tops[i], &st) != 0) continue;
        if (S_ISLNK(st.st_mode)) {
            ssize_t len = readlink(tops[i], links[i], sizeof links[i] - 1);
            if (len <= 0) continue;
            links[i][len] = '\0';
            add_arg(argv, n, max, "--symlink");
            add_arg(argv, n, max, links[i]);
            add_arg(argv, n, max, tops[i]);
        } else if (S_ISDIR(st.st_mode)) {
            add_arg(argv, n, max, "--ro-bind");
            add_arg(argv, n, max, tops[i]);
            add_arg(argv, n, max, tops[i]);
        }
    }
    /* cc is a link through /etc/alternatives on Debian; the loader reads ld.so.cache */
    static const char *const etc[] = {"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"};
    for (int i = 0; i < 4; i++) {
        add_arg(argv, n, max, "--ro-bind-try");
        add_arg(argv, n, max, etc[i]);
        add_arg(argv, n, max, etc[i]);
    }
}

static void exec_in_sandbox(Mode mode, const Options *o, int out_fd, int err_fd, pid_t relay) {
    /* descriptors: stdin /dev/null, stdout and stderr to the relay, the kept ones, nothing else */
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(EXIT_SANDBOX);
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the relay is killed: so is this */
    set_limit(RLIMIT_CORE, 0);
    set_limit(RLIMIT_CPU, o->seconds + 1);
    set_limit(RLIMIT_FSIZE, o->scratch_size);
    if (o->memory > 0) set_limit(RLIMIT_AS, o->memory);
    bool dropped = false;
    if (geteuid() == 0 && mode != MODE_NONE) {
        for (int i = 0; i < o->n_scratch && mode == MODE_UID; i++)
            if (chown(o->scratch[i], run_uid, run_uid) != 0)
                fail("cannot hand %s to user %u: %s", o->scratch[i], (unsigned)run_uid, strerror(errno));
        if (!drop_to_run_uid()) fail("cannot become user %u: %s", (unsigned)run_uid, strerror(errno));
        dropped = true;
        /* a change of user clears the death signal: set it again, and if the relay died in
         * between, go now */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != relay) _exit(EXIT_SANDBOX);
    }
    /* under uid the process count is capped (it counts every process of the run's user); a pid
     * namespace contains its processes by itself, and the kernel counts them differently there */
    if (dropped && mode == MODE_UID) set_limit(RLIMIT_NPROC, o->profile == PROFILE_COMPILE ? 256 : 16);
    if (o->chdir_to && mode != MODE_NAMESPACES && chdir(o->chdir_to) != 0)
        fail("cannot change to %s: %s", o->chdir_to, strerror(errno));
    /* close every descriptor but 0-2 and the kept ones */
    long max_fd = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max_fd > 0 && max_fd < 65536 ? max_fd : 4096); fd++) {
        bool keep = false;
        for (int k = 0; k < o->n_keep; k++) keep = keep || o->keep[k] == fd;
        if (!keep) close(fd);
    }
    static char *const env[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs: %s", strerror(errno));
    if (mode == MODE_NAMESPACES) {
        /* bubblewrap applies the filter right before it runs the program */
        int bpf[2];
        if (pipe(bpf) != 0) fail("pipe: %s", strerror(errno));
        scmp_filter_ctx f = profile_filter(o->profile, 0);
        if (!f || seccomp_export_bpf(f, bpf[1]) != 0) fail("cannot build the seccomp filter");
        close(bpf[1]);
        static char fdtext[16];
        snprintf(fdtext, sizeof fdtext, "%d", bpf[0]);
        char *argv[512];
        int n = 0;
        const int max = 512;
        add_arg(argv, &n, max, "bwrap");
        /* clang-format off */
        const char *fixed[] = {"--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--setenv", "PATH",
                               "/usr/bin:/bin", "--setenv", "LC_ALL", "C", "--uid", "65534", "--gid", "65534",
                               "--hostname", "sandbox", "--dev", "/dev"};
        /* clang-format on */
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) add_arg(argv, &n, max, fixed[i]);
        if (o->profile != PROFILE_RUNNER) {
            bind_system(argv, &n, max);
            add_arg(argv, &n, max, "--proc");
            add_arg(argv, &n, max, "/proc");
        }
        static char size[32];
        snprintf(size, sizeof size, "%lld", o->scratch_size);
        add_arg(argv, &n, max, "--size");
        add_arg(argv, &n, max, size);
        add_arg(argv, &n, max, "--tmpfs");
        add_arg(argv, &n, max, "/tmp");
        for (int i = 0; i < o->n_ro; i++) {
            add_arg(argv, &n, max, "--ro-bind");
            add_arg(argv, &n, max, o->ro[i]);
            add_arg(argv, &n, max, o->ro[i]);
        }
        for (int i = 0; i < o->n_scratch; i++) {
            add_arg(argv, &n, max, "--size");
            add_arg(argv, &n, max, size);
            add_arg(argv, &n, max, "--tmpfs");
            add_arg(argv, &n, max, o->scratch[i]);
        }
        if (o->chdir_to) {
            add_arg(argv, &n, max, "--chdir");
            add_arg(argv, &n, max, o->chdir_to);
        }
        add_arg(argv, &n, max, "--seccomp");
        add_arg(argv, &n, max, fdtext);
        add_arg(argv, &n, max, "--");
        for (char **p = o->program; *p; p++) add_arg(argv, &n, max, *p);
        execve(bwrap_path(), argv, env);
        fail("cannot run bubblewrap: %s", strerror(errno));
    }
    scmp_filter_ctx f = profile_filter(o->profile, getpid());
    if (!f) fail("cannot build the seccomp filter");
    if (seccomp_load(f) != 0) fail("cannot install the seccomp filter (is seccomp enabled in this kernel?)");
    execve(o->program[0], o->program, env);
    _exit(EXIT_SANDBOX); /* the filter is in place: no message can be written from here */
}

/* ==== the parent: relay, time, kill ======================================================= */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Kills what the program left: its session, and as root, every process of the run's user. */
static void sweep(Mode mode, pid_t child) {
    kill(-child, SIGKILL);
    kill(child, SIGKILL);
    if (mode == MODE_NONE || geteuid() != 0) return;
    pid_t reaper = fork();
    if (reaper == 0) {
        if (drop_to_run_uid()) kill(-1, SIGKILL); /* every process this user may signal: all of the run's */
        _exit(0);
    }
    exited_zero(reaper);
}

/* Set by SIGTERM, SIGINT and SIGHUP, and by the death of the relay's parent (the judge): the
 * relay stops relaying and sweeps, as at the time limit, so that nothing of the run outlives
 * it. (A SIGKILL cannot be caught: the runner's own death signal covers that, and the sweep of
 * a user's processes needs the relay alive.) */
static volatile sig_atomic_t stopping;
static void stop_relay(int sig) { (void)sig, stopping = 1; }

static int run(Mode mode, const Options *o) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) fail("pipe: %s", strerror(errno));
    struct sigaction stop = {.sa_handler = stop_relay}; /* no SA_RESTART: poll returns */
    sigemptyset(&stop.sa_mask);
    sigaction(SIGTERM, &stop, NULL), sigaction(SIGINT, &stop, NULL), sigaction(SIGHUP, &stop, NULL);
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) stopping = 1; /* the parent died before that */
    fflush(NULL);
    pid_t relay = getpid(), child = fork();
    if (child < 0) fail("fork: %s", strerror(errno));
    if (child == 0) {
        close(out[0]), close(err[0]);
        signal(SIGTERM, SIG_DFL), signal(SIGINT, SIG_DFL), signal(SIGHUP, SIG_DFL);
        exec_in_sandbox(mode, o, out[1], err[1], relay);
    }
    close(out[1]), close(err[1]);
    for (int k = 0; k < o->n_keep; k++) close(o->keep[k]); /* the program's now: its end of a pipe must see EOF */
    double deadline = now() + o->seconds;
    long long relayed = 0;
    bool over = false, timed_out = false, exited = false;
    int status = 0;
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while ((open_fds > 0 || !exited) && !stopping) {
        if (!exited) {
            pid_t r = waitpid(child, &status, WNOHANG);
            if (r == child) exited = true;
        }
        double left = deadline - now();
        if (left <= 0) {
            timed_out = !exited;
            break;
        }
        int wait_ms = exited ? 0 : (left < 0.05 ? (int)(left * 1000) + 1 : 50);
        int ready = poll(fds, 2, wait_ms);
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) {
            if (exited) break; /* the program is gone and nothing more is pending */
            continue;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[65536];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            long long room = o->output - relayed;
            ssize_t keep = got < room ? got : (ssize_t)(room > 0 ? room : 0);
            for (ssize_t done = 0; done < keep;) {
                ssize_t w = write(i == 0 ? 1 : 2, buf + done, (size_t)(keep - done));
                if (w <= 0) break;
                done += w;
            }
            relayed += got;
            if (relayed > o->output) over = true;
        }
        if (over) break;
    }
    sweep(mode, child);
    if (!exited)
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
    char line[96];
    int code;
    if (timed_out) {
        snprintf(line, sizeof line, "timeout\n");
        code = EXIT_TIMEOUT;
    } else if (over) {
        snprintf(line, sizeof line, "output\n");
        code = EXIT_OUTPUT;
    } else if (WIFSIGNALED(status)) {
        snprintf(line, sizeof line, "signal %d\n", WTERMSIG(status));
        code = 128 + WTERMSIG(status);
    } else {
        code = WEXITSTATUS(status);
        /* bubblewrap reports a program killed by signal N as exit 128 + N */
        if (mode == MODE_NAMESPACES && code > 128 && code < 128 + 65)
            snprintf(line, sizeof line, "signal %d\n", code - 128);
        else if (code == EXIT_SANDBOX) snprintf(line, sizeof line, "error the sandbox could not be made\n");
        else snprintf(line, sizeof line, "exit %d\n", code);
    }
    if (o->status_fd >= 0) {
        ssize_t w = write(o->status_fd, line, strlen(line));
        (void)w;
    }
    return code;
}

/* ==== describe ============================================================================= */

/* Can a program in the sandbox read path, or, for a directory, reach what is in it? Tried with
 * the compiler's profile, which opens files. */
static bool readable_inside(Mode mode, const char *path) {
    Options o = {.profile = PROFILE_COMPILE, .scratch_size = 1 << 20, .output = 4096, .seconds = 10, .status_fd = -1};
    char *program[] = {"/bin/sh", "-c",         "test -r \"$1\" || { test -d \"$1\" && test -x \"$1\"; }",
                       "sh",      (char *)path, NULL};
    o.program = program;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1), dup2(null, 2);
        _exit(run(mode, &o));
    }
    return exited_zero(pid);
}

/* Is the runner's filter in force here? A child installs it and tries to open a file. */
static bool seccomp_works(void) {
    pid_t pid = fork();
    if (pid == 0) {
        scmp_filter_ctx f = runner_filter(PROFILE_RUNNER, getpid());
        if (!f || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || seccomp_load(f) != 0) _exit(1);
        /* cppcheck-suppress leakReturnValNotUsed ; the probe: the child exits at once, which closes it */
        _exit(open("/dev/null", O_RDONLY) < 0 && errno == EPERM ? 0 : 1);
    }
    return exited_zero(pid);
}

static int describe(int argc, char **argv) {
    Mode mode = choose_mode();
    bool seccomp = seccomp_works();
    char missing[4096] = "";
    size_t used = 0;
    const char *forced = getenv("GRADE_SANDBOX");
    if (mode == MODE_NONE)
        used += (size_t)snprintf(missing + used, sizeof missing - used,
                                 "; NOT ISOLATED: %s, so the compiler can read "
                                 "whatever you can",
                                 forced && !strcmp(forced, "none") ? "GRADE_SANDBOX=none"
                                                                   : "no user namespaces and not root");
    if (!seccomp)
        used += (size_t)snprintf(missing + used, sizeof missing - used, "; NOT ISOLATED: seccomp is not available");
    for (int i = 0; i < argc && used < sizeof missing; i++) {
        if (strcmp(argv[i], "--hidden") != 0 || i + 1 >= argc) fail("describe takes --hidden PATH, got '%s'", argv[i]);
        const char *path = argv[++i];
        if (mode != MODE_NONE && readable_inside(mode, path))
            used += (size_t)snprintf(missing + used, sizeof missing - used,
                                     "; NOT ISOLATED: the sandbox can read %s "
                                     "(chmod o= it)",
                                     path);
    }
    const char *what = mode == MODE_NAMESPACES
                           ? "namespaces (bubblewrap: own file system, no network, own pids), uid 65534"
                       : mode == MODE_UID ? "uid of its own (no user namespaces here: the grader's files are hidden by "
                                            "their permissions only)"
                                          : "none";
    printf("sandbox: %s%s%s\n", what, seccomp ? ", seccomp allowlist" : "", missing);
    return missing[0] ? 3 : 0;
}

/* ==== main ================================================================================= */

static void usage(void) {
    fprintf(stderr,
            "usage: sandbox describe [--hidden PATH]...\n"
            "       sandbox run --profile compile|runner|runner-asan [--ro PATH] [--scratch PATH] [--scratch-size B]\n"
            "                   [--chdir DIR] [--time S] [--memory B] [--output B] [--keep-fd N] [--status-fd N]\n"
            "                   -- PROGRAM [ARG]...\n");
    exit(EXIT_SANDBOX);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    run_uid = pick_uid();
    if (!strcmp(argv[1], "describe")) return describe(argc - 2, argv + 2);
    if (strcmp(argv[1], "run") != 0) usage();
    Options o = {
        .profile = PROFILE_COMPILE, .scratch_size = 64LL << 20, .output = 1000000, .seconds = 60, .status_fd = -1};
    bool profile_given = false;
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *opt = argv[i];
        if (i + 1 >= argc) usage();
        const char *value = argv[++i];
        if (!strcmp(opt, "--profile")) {
            profile_given = true;
            if (!strcmp(value, "compile")) o.profile = PROFILE_COMPILE;
            else if (!strcmp(value, "runner")) o.profile = PROFILE_RUNNER;
            else if (!strcmp(value, "runner-asan")) o.profile = PROFILE_RUNNER_ASAN;
            else fail("--profile is compile, runner or runner-asan, got '%s'", value);
        } else if (!strcmp(opt, "--ro") || !strcmp(opt, "--scratch")) {
            if (value[0] != '/') fail("%s takes an absolute path, got '%s'", opt, value);
            const char **list = !strcmp(opt, "--ro") ? o.ro : o.scratch;
            int *n = !strcmp(opt, "--ro") ? &o.n_ro : &o.n_scratch;
            if (*n >= MAX_LIST) fail("too many %s", opt);
            list[(*n)++] = value;
        } else if (!strcmp(opt, "--scratch-size")) o.scratch_size = parse_number(opt, value);
        else if (!strcmp(opt, "--chdir")) o.chdir_to = value;
        else if (!strcmp(opt, "--time")) o.seconds = (int)parse_number(opt, value);
        else if (!strcmp(opt, "--memory")) o.memory = parse_number(opt, value);
        else if (!strcmp(opt, "--output")) o.output = parse_number(opt, value);
        else if (!strcmp(opt, "--keep-fd")) {
            if (o.n_keep >= MAX_LIST) fail("too many --keep-fd");
            o.keep[o.n_keep++] = (int)parse_number(opt, value);
        } else if (!strcmp(opt, "--status-fd")) o.status_fd = (int)parse_number(opt, value);
        else fail("unknown option '%s'", opt);
    }
    if (!profile_given || i + 1 >= argc) usage();
    o.program = argv + i + 1;
    if (o.program[0][0] != '/') fail("the program must be an absolute path, got '%s'", o.program[0]);
    if (o.seconds < 1) o.seconds = 1;
    signal(SIGPIPE, SIG_IGN);
    return run(choose_mode(), &o);
}
