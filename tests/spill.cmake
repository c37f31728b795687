tpb_add_test(test_spill "quick;unit" test_spill.c)
