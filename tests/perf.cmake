# perf: the row-at-a-time fast path of the compute ops (sim/rows.c).
tpb_add_test(test_ops_rows "quick;unit" test_ops_rows.c)
