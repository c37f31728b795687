# Simulator core tests (scheduler, sync, DMA, trace, CLI).
tpb_add_test(test_sim_sync "quick;unit" test_sim_sync.c sim_testlib.c)
tpb_add_test(test_sim_dma "quick;unit" test_sim_dma.c sim_testlib.c)
tpb_add_test(test_sim_timing "quick;unit" test_sim_timing.c)
tpb_add_test(test_sim_trace "quick;unit" test_sim_trace.c sim_testlib.c)
tpb_add_test(test_sim_cli "quick;unit" test_sim_cli.c sim_testlib.c)
add_dependencies(test_sim_cli tpb)
tpb_add_test(test_sim_fuzz "quick;unit" test_sim_fuzz.c sim_testlib.c)
tpb_add_test(test_sim_memo "quick;unit" test_sim_memo.c sim_testlib.c)
