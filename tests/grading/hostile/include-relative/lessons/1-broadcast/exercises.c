/*
 * HOSTILE SUBMISSION include-relative (graded by tests/grading/test_hostile.sh; deserves 0 points).
 * Attacks: the include check, with a path relative to this file (__FILE__'s directory, which
 * is where "..." includes are looked for first): the staged copy is at
 * BUILD/grade/NAME/lesson1/src/lessons/1-broadcast/exercises.c, seven levels below the
 * checkout. __has_include tries several depths.
 * (This is how the grader before the sandbox was beaten, when it compiled the file in
 * BUILD/grade/NAME/lesson1/src inside the checkout; the stage is now outside it, and these
 * paths must stay closed wherever it is. include-abs-path and include-ancestor-cwd are the
 * variants that would still reach the checkout without a sandbox.)
 * Contained: the lesson is rejected or does not compile, and the submission scores 0.
 */
#include <stdint.h>
#include <string.h>

#include "exercises.h"

#if __has_include("../../../../../../../lessons/1-broadcast/solutions.c")
#include "../../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("../../../../../../../../lessons/1-broadcast/solutions.c")
#include "../../../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("../../../../../../../../../lessons/1-broadcast/solutions.c")
#include "../../../../../../../../../lessons/1-broadcast/solutions.c"
#elif __has_include("../../../../../../../../../../lessons/1-broadcast/solutions.c")
#include "../../../../../../../../../../lessons/1-broadcast/solutions.c"
#else /* not found from here: the functions below, wrong on purpose */
#include HOSTILE_WRONG /* tests/grading/hostile/wrong.c, put here by test_hostile.sh */
#endif
