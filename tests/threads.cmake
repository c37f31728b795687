# tpb sim --threads (sim/threads.c; docs/simulator.md "Threads")
tpb_add_test(test_sim_threads "quick;unit;sim" test_sim_threads.c)
set_tests_properties(test_sim_threads PROPERTIES TIMEOUT 120)
# elementwise instructions split by partitions: the same bytes as one thread
tpb_add_test(test_sim_split "quick;unit;sim" test_sim_split.c)
# every golden matmul case and an unevenly splitting shape give the same
# outputs, cycles and trace with --threads 1, 2, 3 and 7
add_test(NAME sim_threads_identical
         COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/check_threads.py
                 $<TARGET_FILE:tpb> ${PROJECT_SOURCE_DIR}/golden
                 ${PROJECT_BINARY_DIR}/sim_threads_identical)
set_tests_properties(sim_threads_identical PROPERTIES LABELS "quick;golden;sim" TIMEOUT 300)
# time of one elementwise instruction on 1 and 2 threads by width: where
# splitting by partitions pays (SIM_ROWS_SPLIT; not a test)
add_executable(bench_split bench_split.c)
target_link_libraries(bench_split PRIVATE tpb_sim tpb_isa tpb_common)
