/*
 * 5-gather.c - known-wrong answers to lesson 5's exercises: the grader and make test must fail
 * each the same way, with a message that names the mistake (tests/grading/test_agreement.sh
 * says how this file is read).
 */

/* wrong 5.1: grad_sum counts each row used once, however many times it was copied | expect: copy row 0 twice */
void ex5_1_gather_by_hand(GatherByHand *answer) {
    *answer = (GatherByHand){
        .out = {1, 2, 1, 2, 5, 6},
        .grad_sum = {1, 1, 0, 0, 1, 1},
        .grad_weighted = {4, 6, 0, 0, 5, 6},
        .grad_if_assigned = {3, 4, 0, 0, 5, 6},
    };
}

/* wrong 5.1: grad_weighted is w itself, the gradient with respect to out | expect: that is d loss / d out */
void ex5_1_gather_by_hand(GatherByHand *answer) {
    *answer = (GatherByHand){
        .out = {1, 2, 1, 2, 5, 6},
        .grad_sum = {2, 2, 0, 0, 1, 1},
        .grad_weighted = {1, 2, 3, 4, 5, 6},
        .grad_if_assigned = {3, 4, 0, 0, 5, 6},
    };
}

/* wrong 5.1: grad_if_assigned keeps the first write to row 0, not the last | expect: the last write to a row */
void ex5_1_gather_by_hand(GatherByHand *answer) {
    *answer = (GatherByHand){
        .out = {1, 2, 1, 2, 5, 6},
        .grad_sum = {2, 2, 0, 0, 1, 1},
        .grad_weighted = {4, 6, 0, 0, 5, 6},
        .grad_if_assigned = {1, 2, 0, 0, 5, 6},
    };
}

/* wrong 5.2: overwrites with = where it should add | expect: instead of overwriting it with = */
void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) gtable[indices[i] * d + j] = g[i * d + j];
}

/* wrong 5.2: zeroes each named row before adding, losing the gradients it held | expect: zeroing it first */
void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) gtable[indices[i] * d + j] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) gtable[indices[i] * d + j] += g[i * d + j];
}

/* wrong 5.2: finds row indices[i] at gtable[indices[i]], forgetting the row length d | expect: row r starts at gtable[r * d] */
void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) gtable[indices[i] + j] += g[i * d + j];
}

/* wrong 5.2: reads g at the table's row, indices[i], where output row i's gradient is row i | expect: read outside an input */
void ex5_2_scatter_add(const float *g, const int64_t *indices, int64_t n, int64_t d, float *gtable) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) gtable[indices[i] * d + j] += g[indices[i] * d + j];
}

/* wrong 5.3: the bound check uses > v, letting index v through | expect: reject index >= v */
int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n,
                              float *out, int64_t *bad_position) {
    for (int64_t i = 0; i < n; i++) {
        if (indices[i] < 0 || indices[i] > v) {
            *bad_position = i;
            return -1;
        }
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) out[i * d + j] = table[indices[i] * d + j];
    return 0;
}

/* wrong 5.3: checks each index as it copies, so the rows before a bad one are written | expect: check every index before copying anything */
int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n,
                              float *out, int64_t *bad_position) {
    for (int64_t i = 0; i < n; i++) {
        if (indices[i] < 0 || indices[i] >= v) {
            *bad_position = i;
            return -1;
        }
        for (int64_t j = 0; j < d; j++) out[i * d + j] = table[indices[i] * d + j];
    }
    return 0;
}

/* wrong 5.3: holds each index in an int, which keeps only its low 32 bits | expect: compare the whole int64_t */
int ex5_3_gather_rows_checked(const float *table, int64_t v, int64_t d, const int64_t *indices, int64_t n,
                              float *out, int64_t *bad_position) {
    for (int64_t i = 0; i < n; i++) {
        int index = (int)indices[i];
        if (index < 0 || index >= v) {
            *bad_position = i;
            return -1;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        int index = (int)indices[i];
        for (int64_t j = 0; j < d; j++) out[i * d + j] = table[index * d + j];
    }
    return 0;
}

/* wrong 5.4: sums the rows instead of averaging them | expect: that is the sum of the */
Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n) {
    return tensor_sum_axis(tensor_gather_rows(table, words, n), 0, false);
}

/* wrong 5.4: averages over axis 1, each word's own vector | expect: each word's own vector (axis 1) */
Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n) {
    return tensor_mean_axis(tensor_gather_rows(table, words, n), 1, false);
}

/* wrong 5.4: keeps the averaged axis, a (1, D) tensor | expect: as keepdim = true does */
Tensor *ex5_4_sentence_vector(Tensor *table, const int64_t *words, int64_t n) {
    return tensor_mean_axis(tensor_gather_rows(table, words, n), 0, true);
}
