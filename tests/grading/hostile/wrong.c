/* wrong.c - exercise functions that are wrong on purpose, for the hostile submissions whose
 * attack comes before them (a hostile submission must deserve 0 points): test_hostile.sh puts
 * them in place of "#include HOSTILE_WRONG". */
void ex1_1_broadcast_by_hand(BroadcastByHand *answer) { memset(answer, 0, sizeof *answer); }
int ex1_2_broadcast_shapes(const int64_t *a, int a_rank, const int64_t *b, int b_rank, int64_t *out, int *out_rank) {
    (void)a, (void)a_rank, (void)b, (void)b_rank, (void)out, (void)out_rank;
    return -2;
}
int ex1_3_broadcast_strides(const int64_t *src, int src_rank, const int64_t *src_strides, const int64_t *target,
                            int target_rank, int64_t *out_strides) {
    (void)src, (void)src_rank, (void)src_strides, (void)target, (void)target_rank, (void)out_strides;
    return -2;
}
void ex1_4_broadcast_map(const int64_t *target, int target_rank, const int64_t *src, int src_rank, int64_t *map) {
    (void)target, (void)src, (void)src_rank;
    for (int d = 0; d < target_rank; d++) map[d] = -1;
}
void ex1_5_sum_to_shape(const float *grad, const int64_t *shape, int rank, float *out, const int64_t *out_shape,
                        int out_rank) {
    (void)grad, (void)shape, (void)rank, (void)out_shape;
    for (int d = 0; d < out_rank; d++) out[d] = -1;
}
