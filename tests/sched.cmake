# The scheduler's own tests added in this fragment (tests/CMakeLists.txt).
tpb_add_test(test_back_sched_name "quick;unit;back" test_back_sched_name.c)
