# simops: dtype conversions and compute-op semantics/cost unit tests.
tpb_add_test(test_numeric "quick;unit" test_numeric.c)
tpb_add_test(test_ops_dve "quick;unit" test_ops_dve.c)
tpb_add_test(test_ops_dve_more "quick;unit" test_ops_dve_more.c)
tpb_add_test(test_ops_act "quick;unit" test_ops_act.c)
tpb_add_test(test_ops_pe "quick;unit" test_ops_pe.c)
tpb_add_test(test_pe_mac "quick;unit" test_pe_mac.c)
tpb_add_test(test_vmath "quick;unit" test_vmath.c)
tpb_add_test(test_vmath_fn "quick;unit" test_vmath_fn.c)
tpb_add_test(test_ops_pool "quick;unit" test_ops_pool.c)
tpb_add_test(test_ops_rng "quick;unit" test_ops_rng.c)
tpb_add_test(test_ops_fuzz "quick;unit" test_ops_fuzz.c)
tpb_add_test(test_ops_operands "quick;unit" test_ops_operands.c)

# End to end through tpb as + tpb sim: the user-visible error messages.
set(SIMOPS_RUN sh ${CMAKE_CURRENT_SOURCE_DIR}/simops/run_asm.sh $<TARGET_FILE:tpb>)
add_test(NAME simops_cli_uninit
         COMMAND ${SIMOPS_RUN} ${PROJECT_BINARY_DIR}/simops-e2e/uninit DVE
                 ${CMAKE_CURRENT_SOURCE_DIR}/simops/uninit.s --check-uninit -q)
set_tests_properties(simops_cli_uninit PROPERTIES LABELS "quick" PASS_REGULAR_EXPRESSION
  "core 0 DVE instruction 1 \\(pc 1\\) TensorTensor: in1: read of uninitialised sbuf byte at partition 0 address 0x20")
add_test(NAME simops_cli_uninit_off
         COMMAND ${SIMOPS_RUN} ${PROJECT_BINARY_DIR}/simops-e2e/uninit_off DVE
                 ${CMAKE_CURRENT_SOURCE_DIR}/simops/uninit.s -q)
set_tests_properties(simops_cli_uninit_off PROPERTIES LABELS "quick")
add_test(NAME simops_cli_sbuf_oob
         COMMAND ${SIMOPS_RUN} ${PROJECT_BINARY_DIR}/simops-e2e/sbuf_oob DVE
                 ${CMAKE_CURRENT_SOURCE_DIR}/simops/sbuf_oob.s -q)
set_tests_properties(simops_cli_sbuf_oob PROPERTIES LABELS "quick" PASS_REGULAR_EXPRESSION
  "Memset: out: partition 0 bytes \\[229360, 229392\\) outside sbuf \\(229376 bytes per partition")
add_test(NAME simops_cli_pool_psum
         COMMAND ${SIMOPS_RUN} ${PROJECT_BINARY_DIR}/simops-e2e/pool_psum Pool
                 ${CMAKE_CURRENT_SOURCE_DIR}/simops/pool_psum.s -q)
set_tests_properties(simops_cli_pool_psum PROPERTIES LABELS "quick" PASS_REGULAR_EXPRESSION
  "Pool instruction 0 \\(pc 0\\) Iota: out: the Pool engine cannot access psum")
# per-element speed of the vectorised activation functions (not a test)
add_executable(bench_vmath bench_vmath.c)
target_link_libraries(bench_vmath PRIVATE tpb_sim tpb_isa tpb_common)
