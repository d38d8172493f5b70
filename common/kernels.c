/*
 * kernels.c - the table of kernels (kernels.h): which kernel each entry points at, for each
 * setting of COURSE_KERNELS. This is the one place that names both kinds of kernel.
 */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_fast.h"
#include "platform.h"

static Kernels table;
static KernelMode mode;
static bool avx512;
static const char *setting_used; /* NULL until the table is filled */

static void fill(KernelMode want) {
    /* reference: every op runs the chapter's loop */
    table = (Kernels){
        .copy = strided_copy_reference,
        .accumulate = strided_accumulate_reference,
        .binary = binary_reference,
        .binary_backward = binary_backward_reference,
        .softmax_rows = softmax_rows_reference,
        .softmax_backward = softmax_backward_reference,
        .cross_entropy = cross_entropy_reference,
        .cross_entropy_backward = cross_entropy_backward_reference,
        .gather_rows = gather_rows_reference,
        .matmul = matmul_reference,
        .linear = linear_reference,
        .gelu = gelu_reference,
        .gelu_backward = gelu_backward_reference,
        .layer_norm = layer_norm_reference,
        .layer_norm_backward = layer_norm_backward_reference,
        .attention = attention_reference,
        .attention_backward = attention_backward_reference,
        .adamw = adamw_reference,
    };
    mode = want == KERNELS_NATIVE && !platform_has_native() ? KERNELS_PORTABLE : want;
    if (mode == KERNELS_REFERENCE) return;
    /* portable and native: the fast kernels, written once in plain C and vector extensions;
     * under native, each runs its code compiled for this CPU's vector instructions
     * (kernels_mode() says which) */
    table.copy = strided_copy_fast;
    table.accumulate = strided_accumulate_fast;
    table.binary = binary_fast;
    table.binary_backward = binary_backward_fast;
    table.softmax_rows = softmax_rows_fast;
    table.softmax_backward = softmax_backward_fast;
    table.cross_entropy = cross_entropy_fast;
    table.cross_entropy_backward = cross_entropy_backward_fast;
    table.gather_rows = gather_rows_fast;
    table.matmul = matmul_fast;
    table.linear = linear_fast;
    table.gelu = gelu_fast;
    table.gelu_backward = gelu_backward_fast;
    table.layer_norm = layer_norm_fast;
    table.layer_norm_backward = layer_norm_backward_fast;
    table.attention = attention_fast;
    table.attention_backward = attention_backward_fast;
    table.adamw = adamw_fast;
}

const char *kernels_use(const char *setting) {
    static bool warned;
    bool native = !setting || !*setting || strcmp(setting, "native") == 0, capped = setting && strcmp(setting, "avx2") == 0;
    if (native || capped) {
        fill(KERNELS_NATIVE);
        setting_used = capped ? "avx2" : "native";
    } else if (strcmp(setting, "portable") == 0) {
        fill(KERNELS_PORTABLE);
        setting_used = "portable";
    } else {
        fill(KERNELS_REFERENCE);
        setting_used = "reference";
        if (strcmp(setting, "reference") != 0 && !warned) {
            warned = true;
            fprintf(stderr,
                    "COURSE_KERNELS=%s is not one of reference, portable, native, avx2: running the reference loops\n",
                    setting);
        }
    }
    avx512 = mode == KERNELS_NATIVE && native && platform_has_avx512();
    return kernels_name();
}

const char *kernels_setting(void) { return kernels(), setting_used; }

/* Read once: the table is filled before any thread of the program's can ask (the course's
 * programs start none), and kernels_use is for tests and benchmarks. */
const Kernels *kernels(void) {
    if (!setting_used) kernels_use(getenv("COURSE_KERNELS"));
    return &table;
}

KernelMode kernels_mode(void) { return kernels(), mode; }

bool kernels_avx512(void) { return kernels(), avx512; }

const char *kernels_name(void) {
    switch (kernels_mode()) {
    case KERNELS_REFERENCE: return "reference";
    case KERNELS_PORTABLE: return "portable";
    default: return avx512 ? "avx512" : "avx2";
    }
}
