# Start-up / write-back fast paths of the simulator (issue #16)
tpb_add_test(test_sim_startup "quick;unit" test_sim_startup.c sim_testlib.c)
