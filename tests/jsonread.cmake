# common/jsonread: the arena variants against the cJSON ones, and the
# simulator's loader (tensor-map.json, def.json, sidecars) through them.
tpb_add_test(test_jsonread "quick;unit" test_jsonread.c sim_testlib.c)
