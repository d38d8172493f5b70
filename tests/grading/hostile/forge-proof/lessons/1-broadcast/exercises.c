/*
 * HOSTILE SUBMISSION forge-proof (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the harness's proof that a test ran to its end. The test program is not stripped:
 * its ELF symbol table (read from /proc/self/exe) gives the address of every static of
 * tests/harness.c, relative to a function of this file whose run-time address is known.
 *   1.2 calls the harness's static test_teardown() directly: it writes the proof, exits 90
 *   1.3 reads proof_key, proof_fd and current_test from its own memory and writes the proof
 *       line itself, then _exit(90)
 *   1.4 _exit(90), the status harness.h documents (already caught: no proof)
 *   1.5 asks dlsym(RTLD_DEFAULT, "test_teardown") and calls what it gets
 * Contained: no exercise passes; the submission scores 0.
 */
#include HOSTILE_TOOLKIT /* tests/grading/hostile/toolkit.c, put here by test_hostile.sh */
#include <dlfcn.h>
#include <elf.h>

/* The value (link-time address) of symbol NAME in /proc/self/exe's .symtab; 0 if absent */
static uint64_t h_symbol(const char *name) {
    static char *image;
    static size_t size;
    if (!image) {
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !(image = malloc((size_t)st.st_size))) return 0;
        size = 0;
        ssize_t n;
        while (size < (size_t)st.st_size && (n = read(fd, image + size, (size_t)st.st_size - size)) > 0) size += (size_t)n;
        close(fd);
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64) return 0;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB) continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(image + sh[i].sh_offset);
        const char *names = image + sh[sh[i].sh_link].sh_offset;
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
            if (!strcmp(names + sym[k].st_name, name)) return sym[k].st_value;
    }
    return 0;
}

/* where the program was loaded (PIE): a function of this file, at run time and in the table */
static uintptr_t h_bias(void) {
    uint64_t here = h_symbol("ex1_2_broadcast_shapes");
    return here ? (uintptr_t)&ex1_2_broadcast_shapes - (uintptr_t)here : 0;
}

static void *h_harness(const char *name) {
    uint64_t value = h_symbol(name);
    uintptr_t bias = h_bias();
    return value && bias ? (void *)(bias + (uintptr_t)value) : NULL;
}

static uint64_t h_mix64(uint64_t x) { /* the harness's finaliser (splitmix64), as harness.c has it */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }

int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    void (*teardown)(void) = (void (*)(void))h_harness("test_teardown");
    if (teardown) teardown(); /* writes this test's proof and exits 90 */
    return -2;
}

int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    const uint64_t *key = h_harness("proof_key");
    const int *fd = h_harness("proof_fd"), *test = h_harness("current_test");
    if (key && fd && test && *fd >= 0 && *test >= 0) {
        char line[64];
        uint64_t proof = h_mix64(key[0] ^ h_mix64(key[1] + (uint64_t)*test));
        int n = snprintf(line, sizeof line, "%d %016llx\n", *test, (unsigned long long)proof);
        if (write(*fd, line, (size_t)n) == n) _exit(90);
    }
    return -2;
}

void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)target_rank, (void)src, (void)src_rank, (void)map;
    _exit(90); /* TEST_FINISHED, from harness.h */
}

void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out, (void)out_shape, (void)out_rank;
    void (*teardown)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "test_teardown");
    if (teardown) teardown();
}
