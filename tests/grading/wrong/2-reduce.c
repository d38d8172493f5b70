/*
 * 2-reduce.c - known-wrong answers to lesson 2's exercises: the grader and make test must fail
 * each the same way, with a message that names the mistake (tests/grading/test_agreement.sh
 * says how this file is read).
 */

/* wrong 2.1: divides the row sums by the number of rows | expect: the size of the last dim */
Tensor *ex2_1_row_mean(Tensor *x) {
    if (!x || x->rank == 0) return tensor_sum_last_dim(x);
    return tensor_mul_scalar(tensor_sum_last_dim(x), 1.0f / (float)x->shape[0]);
}

/* wrong 2.1: averages a copy of x's values, which is not on x's tape | expect: so no gradient can reach x */
Tensor *ex2_1_row_mean(Tensor *x) {
    if (!x || x->rank == 0) return tensor_sum_last_dim(x);
    Tensor *rows = tensor_from(x->ctx, x->shape, x->rank, tensor_data(x), tensor_numel(x));
    return tensor_mul_scalar(tensor_sum_last_dim(rows), 1.0f / (float)x->shape[x->rank - 1]);
}

/* wrong 2.2: overwrites gx instead of adding into it | expect: add it to what gx already holds */
void ex2_2_sum_last_dim_backward(const float *g, int64_t rows, int64_t d, float *gx) {
    for (int64_t p = 0; p < rows; p++)
        for (int64_t j = 0; j < d; j++) gx[p * d + j] = g[p];
}

/* wrong 2.2: reads g by the column, not by the row | expect: every element of row p gets g[p] */
void ex2_2_sum_last_dim_backward(const float *g, int64_t rows, int64_t d, float *gx) {
    for (int64_t p = 0; p < rows; p++)
        for (int64_t j = 0; j < d; j++) gx[p * d + j] += g[j < rows ? j : rows - 1];
}

/* wrong 2.3: starts each sum from the axis's first element, which an empty axis does not have | expect: read outside an input */
void ex2_3_sum_axis(const float *x, const int64_t *shape, int rank, int axis, float *out) {
    int64_t outer = 1, n = shape[axis], inner = 1;
    for (int k = 0; k < axis; k++) outer *= shape[k];
    for (int k = axis + 1; k < rank; k++) inner *= shape[k];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            float sum = x[o * n * inner + i];
            for (int64_t k = 1; k < n; k++) sum += x[(o * n + k) * inner + i];
            out[o * inner + i] = sum;
        }
}

/* wrong 2.3: writes each value with = where it should add | expect: instead of writing it with = */
void ex2_3_sum_axis(const float *x, const int64_t *shape, int rank, int axis, float *out) {
    int64_t outer = 1, n = shape[axis], inner = 1;
    for (int k = 0; k < axis; k++) outer *= shape[k];
    for (int k = axis + 1; k < rank; k++) inner *= shape[k];
    memset(out, 0, (size_t)(outer * inner) * sizeof(float));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < n; k++)
            for (int64_t i = 0; i < inner; i++) out[o * inner + i] = x[(o * n + k) * inner + i];
}

/* wrong 2.4: the sum of the squares, never divided by N | expect: should come from tensor_mul_scalar */
Tensor *ex2_4_mse_loss(Tensor *pred, Tensor *target) {
    return tensor_sum(tensor_pow_scalar(tensor_sub(pred, target), 2.0f));
}

/* wrong 2.4: divides by N - 1 | expect: where the mean divides by N */
Tensor *ex2_4_mse_loss(Tensor *pred, Tensor *target) {
    Tensor *squared = tensor_pow_scalar(tensor_sub(pred, target), 2.0f);
    float n = pred ? (float)tensor_numel(pred) : 1.0f;
    return tensor_mul_scalar(tensor_sum(squared), 1.0f / (n - 1.0f));
}
