# the compile-and-simulate oracle (tests/oracle.h, docs/reliability.md):
# every sweep kernel that compiles simulates without a field refusal
tpb_add_test(test_oracle_sweep "unit" ${CMAKE_CURRENT_LIST_DIR}/test_oracle_sweep.c)
