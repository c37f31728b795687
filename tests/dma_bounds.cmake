# The DmaTrigger register bounds (oob_mode of a register-offset DMA).
tpb_add_test(test_sim_dma_bounds "quick;unit" test_sim_dma_bounds.c sim_testlib.c)
