# simops: dtype conversions and compute-op semantics/cost unit tests.
tpb_add_test(test_numeric "quick;unit" test_numeric.c)
tpb_add_test(test_ops_dve "quick;unit" test_ops_dve.c)
tpb_add_test(test_ops_act "quick;unit" test_ops_act.c)
tpb_add_test(test_ops_pe "quick;unit" test_ops_pe.c)
tpb_add_test(test_ops_pool "quick;unit" test_ops_pool.c)
tpb_add_test(test_ops_fuzz "quick;unit" test_ops_fuzz.c)
