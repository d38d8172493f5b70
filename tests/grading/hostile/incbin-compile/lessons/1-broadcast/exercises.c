/*
 * HOSTILE SUBMISSION incbin-compile (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: what the compiler may read. The assembler's .incbin pulls the course's solutions.c
 * into the object at compile time (the -MD list of included files never names it), through
 * the compiler's working directory (/proc/self/cwd/../../../../.., at several depths). At run
 * time each exercise hands a 500-byte slice of that text back as its failure message.
 * Contained: no line of any solutions.c appears in results.json, summary.tsv or the report
 * (the file was not there to embed, or the lesson was rejected), and the submission scores 0.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */

#if __has_include("/usr/include/../../proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c")
#define H_SOLUTIONS "/usr/include/../../proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c")
#define H_SOLUTIONS "/usr/include/../../proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c")
#define H_SOLUTIONS "/usr/include/../../proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c")
#define H_SOLUTIONS "/usr/include/../../proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c"
#endif

#ifdef H_SOLUTIONS
__asm__(".pushsection .rodata\n"
        ".local h_solutions_text\n"
        ".type h_solutions_text, @object\n"
        "h_solutions_text:\n"
        ".incbin \"" H_SOLUTIONS "\"\n"
        ".byte 0\n"
        ".popsection\n");
extern const char h_solutions_text[];
#else
static const char h_solutions_text[] = "";
#endif

static void h_leak_slice(int k) {
    size_t n = strlen(h_solutions_text), at = (size_t)k * 500;
    if (n == 0) return; /* nothing was embedded: fail as a plain wrong answer */
    char slice[512];
    snprintf(slice, sizeof slice, "%.500s", at < n ? h_solutions_text + at : "");
    h_leak("incbin", slice);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) {
    memset(answer, 0, sizeof *answer);
    h_leak_slice(0);
}

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    h_leak_slice(1);
    return -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    h_leak_slice(2);
    return -2;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map;
    h_leak_slice(3);
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank;
    h_leak_slice(4);
}
