# the compile-and-simulate oracle (tests/oracle.h, docs/reliability.md):
# every sweep kernel that compiles simulates without a field refusal
tpb_add_test(test_oracle_sweep "unit" ${CMAKE_CURRENT_LIST_DIR}/test_oracle_sweep.c)
# about 30 s on an idle core (11 000 kernels compiled and simulated)
set_tests_properties(test_oracle_sweep PROPERTIES TIMEOUT 900)
