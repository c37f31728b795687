# Simulator start-up: sidecar scanner vs cJSON, decode plans vs isa_decode.
tpb_add_test(test_sim_load "quick;unit" test_sim_load.c)
