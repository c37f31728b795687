# Simulator core tests (scheduler, sync, DMA, trace, CLI).
tpb_add_test(test_sim_sync "quick;unit" test_sim_sync.c sim_testlib.c)
