/*
 * exercise.h - what an exercise stub needs.
 *
 * Every stub starts out calling EXERCISE_TODO(). The tests report an exercise whose function
 * still reaches that line as TODO (not attempted) rather than as wrong. Delete the line when
 * you start the exercise.
 */
#ifndef EXERCISE_H
#define EXERCISE_H

#define EXERCISE_TODO() exercise_todo(__func__)

void exercise_todo(const char *function);

#endif /* EXERCISE_H */
