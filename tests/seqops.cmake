# The accumulator and sequence op family (tensor_scalar_cumulative,
# tensor_scalar_reduce, sequence_bounds, nonzero_with_count, topk): bad input.
tpb_add_test(test_front_seq "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_seq.c)
# ... and their simulator side (hand-made bundles: accumulator chaining, errors)
tpb_add_test(test_ops_seq "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_ops_seq.c)
