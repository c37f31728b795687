# Back-end (encoder/ lowering, allocation, scheduling, emission) tests.
tpb_add_test(test_back_lower "quick;unit;back" test_back_lower.c)
tpb_add_test(test_back_sched "quick;unit;back" test_back_sched.c)
tpb_add_test(test_back_emit "quick;unit;back" test_back_emit.c)
target_link_libraries(test_back_emit PRIVATE PkgConfig::CJSON)
