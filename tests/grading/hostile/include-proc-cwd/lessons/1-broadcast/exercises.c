/*
 * HOSTILE SUBMISSION include-proc-cwd (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the grader's check of what the file includes. The compiler runs in the staging
 * directory (BUILD/grade/NAME/lesson1/src), so /proc/self/cwd/../../../../.. is the course's
 * checkout, and the path below opens the course's own solutions.c; written under /usr/include,
 * a grader that cannot resolve the path (its own /proc/self/cwd is elsewhere) takes it for a
 * system header. __has_include tries several depths, so a deeper BUILD still finds it.
 * (This is how the grader before the sandbox was beaten, when it compiled the file in
 * BUILD/grade/NAME/lesson1/src inside the checkout; the stage is now outside it, and these
 * paths must stay closed wherever it is. include-abs-path and include-ancestor-cwd are the
 * variants that would still reach the checkout without a sandbox.)
 * Contained: the lesson is rejected or does not compile (solutions.c is not there to read),
 * and the submission scores 0.
 */
#include <stdint.h>
#include <string.h>

#include "exercises.h"

#if __has_include("/usr/include/../../proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c")
#include "/usr/include/../../proc/self/cwd/../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c")
#include "/usr/include/../../proc/self/cwd/../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c")
#include "/usr/include/../../proc/self/cwd/../../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("/usr/include/../../proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c")
#include "/usr/include/../../proc/self/cwd/../../../../../../../../lessons/1-broadcast/solutions.c"
#else /* not found from here: the functions below, wrong on purpose */
#include HOSTILE_WRONG /* tests/grading/hostile/wrong.c, put here by test_hostile.sh */
#endif
