/*
 * kernels.c - the table of kernels (kernels.h), the one place that knows which CPU it runs on:
 * each entry gets the reference or the build that COURSE_KERNELS and the CPU choose.
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILD_NAME(topic, build) #build,
static const char *const builds[KERNELS_BUILDS] = {KERNELS_EACH_BUILD(BUILD_NAME, unused)};

bool kernels_cpu_runs(const char *build) {
    if (!build) return false;
    if (strcmp(build, "portable") == 0) return true; /* the family's baseline */
#if defined(__x86_64__)
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(build, "avx2") == 0) return avx2;
    if (strcmp(build, "avx512") == 0) return avx2 && __builtin_cpu_supports("avx512f");
#endif
    return false;
}

/* ==== the lessons' entries ================================================================= */

enum { MAX_LESSONS = 16 };
static const KernelsLesson *lessons[MAX_LESSONS];
static int n_lessons;

void kernels_register(const KernelsLesson *lesson) {
    if (lesson && n_lessons < MAX_LESSONS) lessons[n_lessons++] = lesson;
    else if (lesson)
        fprintf(stderr, "kernels_register: more than %d lessons; raise MAX_LESSONS in kernels.c\n", MAX_LESSONS);
}

/* Every entry that `from` sets, set in `to`: one line for each entry of Kernels (kernels.h). */
static void take(Kernels *to, const Kernels *from) {
#define TAKE(entry) \
    if (from->entry) to->entry = from->entry
    TAKE(copy);
    TAKE(accumulate);
    TAKE(binary);
    TAKE(binary_backward);
    TAKE(exp);
    TAKE(softmax_rows);
    TAKE(softmax_backward);
    TAKE(cross_entropy);
    TAKE(cross_entropy_backward);
    TAKE(gather_rows);
    TAKE(matmul);
    TAKE(linear);
    TAKE(gelu);
    TAKE(gelu_backward);
    TAKE(layer_norm);
    TAKE(layer_norm_backward);
    TAKE(attention);
    TAKE(attention_backward);
    TAKE(adamw);
#undef TAKE
}

/* ==== filling the table ==================================================================== */

static Kernels table;
static int build_used;           /* an index into builds, or -1: the reference */
static const char *setting_used; /* NULL until the table is filled */

/* Every lesson's reference kernels, then, for a build, its fast ones over them. */
static void fill(int build) {
    table = (Kernels){0};
    for (int i = 0; i < n_lessons; i++) take(&table, &lessons[i]->reference);
    for (int i = 0; i < n_lessons && build >= 0; i++) take(&table, lessons[i]->fast[build]);
    build_used = build;
}

/* The index of the build of that name, where this CPU runs it; else that of the fallback. */
static int build_if_runs(const char *name, int fallback) {
    for (int b = 0; b < KERNELS_BUILDS; b++)
        if (strcmp(builds[b], name) == 0 && kernels_cpu_runs(name)) return b;
    return fallback;
}

const char *kernels_use(const char *setting) {
    static bool warned;
    if (!setting || !*setting || strcmp(setting, "native") == 0) {
        fill(build_if_runs("avx512", build_if_runs("avx2", 0)));
        setting_used = "native";
    } else if (strcmp(setting, "avx2") == 0 || strcmp(setting, "avx512") == 0) {
        fill(build_if_runs(setting, 0));
        setting_used = strcmp(setting, "avx2") == 0 ? "avx2" : "avx512";
    } else if (strcmp(setting, "portable") == 0) {
        fill(0);
        setting_used = "portable";
    } else {
        fill(-1);
        setting_used = "reference";
        if (strcmp(setting, "reference") != 0 && !warned) {
            warned = true;
            fprintf(
                stderr,
                "COURSE_KERNELS=%s is not one of reference, portable, native, avx2, avx512: running the reference loops\n",
                setting);
        }
    }
    return kernels_name();
}

const char *kernels_setting(void) {
    kernels();
    return setting_used;
}

/* Read once, before any thread can ask (the course's programs start none). */
const Kernels *kernels(void) {
    if (!setting_used) kernels_use(getenv("COURSE_KERNELS"));
    return &table;
}

const char *kernels_name(void) {
    kernels();
    return build_used < 0 ? "reference" : builds[build_used];
}

const char *kernels_instructions(void) {
    const char *name = kernels_name();
    if (strcmp(name, "avx2") == 0) return "AVX2 and FMA, 8 floats a vector";
    if (strcmp(name, "avx512") == 0) return "AVX-512F, 16 floats a vector";
    if (strcmp(name, "portable") != 0) return "plain C loops";
#if defined(__aarch64__)
    return "NEON, 4 floats a vector";
#elif defined(__x86_64__)
    return "SSE2, 4 floats a vector";
#else
    return "the compiler's generic vectors, 4 floats each";
#endif
}
