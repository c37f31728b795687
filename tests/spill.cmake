tpb_add_test(test_spill "quick;unit" test_spill.c)
tpb_add_test(test_spill_fast "quick;unit" test_spill_fast.c)
