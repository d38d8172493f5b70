/*
 * HOSTILE SUBMISSION include-abs-proc (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the include check, with an absolute path through the compiler's own working
 * directory: /proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c (no /usr/include
 * in front), at several depths.
 * (This is how the grader before the sandbox was beaten, when it compiled the file in
 * BUILD/grade/NAME/lesson1/src inside the checkout; the stage is now outside it, and these
 * paths must stay closed wherever it is. include-abs-path and include-ancestor-cwd are the
 * variants that would still reach the checkout without a sandbox.)
 * Contained: the lesson is rejected or does not compile, and the submission scores 0.
 */
#include <stdint.h>
#include <string.h>

#include "exercises.h"

#if __has_include("/proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c")
#include "/proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c")
#include "/proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c")
#include "/proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c")
#include "/proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c"
#else /* not found from here: the functions below, wrong on purpose */
#include HOSTILE_WRONG /* tests/grading/hostile/wrong.c, put here by test_hostile.sh */
#endif
