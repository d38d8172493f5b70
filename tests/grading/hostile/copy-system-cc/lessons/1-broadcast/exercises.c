/*
 * HOSTILE SUBMISSION copy-system-cc (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: what a test may run. At run time it finds the course's checkout (/proc/self/cwd,
 * /proc/self/exe, its ancestors' cwd, $PWD...), compiles lessons/1-broadcast/solutions.c with
 * system("cc -shared ...") into hostile-marker-solutions.so (in its working directory, or
 * /tmp), dlopens it and answers every exercise with the course's own solutions.
 * Contained: the submission scores 0 (no compiler, no solutions.c, or no place to write the
 * library where it could be loaded), and no hostile-marker-* file is left outside its scratch
 * space.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */
#include <dlfcn.h>

static void *h_solutions(void) {
    static void *handle;
    if (handle) return handle;
    char course[PATH_MAX], library[PATH_MAX + 64], command[4 * PATH_MAX];
    if (!h_course(course, sizeof course)) return NULL;
    const char *dirs[] = {".", "/tmp"};
    for (int i = 0; i < 2 && !handle; i++) {
        char dir[PATH_MAX];
        if (!realpath(dirs[i], dir)) continue;
        snprintf(library, sizeof library, "%s/hostile-marker-solutions.so", dir);
        if (!h_exists(library)) {
            snprintf(command, sizeof command,
                     "cc -shared -fPIC -O1 -Wl,-Bsymbolic -I'%s/tests' -I'%s/common' -o '%s' '%s/lessons/1-broadcast/solutions.c'"
                     " >/dev/null 2>&1 </dev/null",
                     course, course, library, course);
            if (system(command) != 0) continue;
        }
        handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    }
    return handle;
}

static void *h_function(const char *name) {
    void *handle = h_solutions();
    return handle ? dlsym(handle, name) : NULL;
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    void (*f)(BroadcastByHand *) = (void (*)(BroadcastByHand *))h_function("ex1_1_broadcast_by_hand");
    if (f) f(answer);
    else memset(answer, 0, sizeof *answer);
}

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    int (*f)(const int64_t *, int, const int64_t *, int, int64_t *, int *) =
        (int (*)(const int64_t *, int, const int64_t *, int, int64_t *, int *))h_function("ex1_2_broadcast_shapes");
    return f ? f(a, a_rank, b, b_rank, out, out_rank) : -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    int (*f)(const int64_t *, int, const int64_t *, const int64_t *, int, int64_t *) =
        (int (*)(const int64_t *, int, const int64_t *, const int64_t *, int, int64_t *))h_function("ex1_3_broadcast_strides");
    return f ? f(src, src_rank, src_strides, target, target_rank, out_strides) : -2;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    void (*f)(const int64_t *, int, const int64_t *, int, int64_t *) =
        (void (*)(const int64_t *, int, const int64_t *, int, int64_t *))h_function("ex1_4_broadcast_map");
    if (f) f(target, target_rank, src, src_rank, map);
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    void (*f)(const float *, const int64_t *, int, float *, const int64_t *, int) =
        (void (*)(const float *, const int64_t *, int, float *, const int64_t *, int))h_function("ex1_5_sum_to_shape");
    if (f) f(grad, shape, rank, out, out_shape, out_rank);
}
