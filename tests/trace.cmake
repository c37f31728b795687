# Trace writing: the fast formatters must match the printf conversions.
tpb_add_test(test_sim_jsonbuf "quick;unit" test_sim_jsonbuf.c)
tpb_add_test(test_sim_tracecache "quick;unit" test_sim_tracecache.c sim_testlib.c)
