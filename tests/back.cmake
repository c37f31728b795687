# Back-end (encoder/ lowering, allocation, scheduling, emission) tests.
tpb_add_test(test_back_lower "quick;unit;back" test_back_lower.c)
tpb_add_test(test_back_lowmemo "quick;unit;back" test_back_lowmemo.c)
tpb_add_test(test_back_dmamemo "quick;unit;back" test_back_dmamemo.c)
tpb_add_test(test_back_lower_dma "quick;unit;back" test_back_lower_dma.c)
tpb_add_test(test_back_sched "quick;unit;back" test_back_sched.c)
tpb_add_test(test_back_alloc "quick;unit;back" test_back_alloc.c)
tpb_add_test(test_back_emit "quick;unit;back" test_back_emit.c)
target_link_libraries(test_back_emit PRIVATE PkgConfig::CJSON)
tpb_add_test(test_back_robust "quick;unit;back" test_back_robust.c)
tpb_add_test(test_back_examples "quick;back" test_back_examples.c)
target_link_libraries(test_back_examples PRIVATE PkgConfig::CJSON)

# ---- tpb compile CLI ----
add_test(NAME cli_compile_help COMMAND $<TARGET_FILE:tpb> compile --help)
set_tests_properties(cli_compile_help PROPERTIES LABELS "quick;back"
                     PASS_REGULAR_EXPRESSION "--dump-bin-per-inst")
add_test(NAME cli_compile_unknown_option COMMAND $<TARGET_FILE:tpb> compile --bogus k.json)
set_tests_properties(cli_compile_unknown_option PROPERTIES LABELS "quick;back" WILL_FAIL TRUE)
add_test(NAME cli_compile_bad_mode
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/examples/kernels/tensor_add.json
                 --mode 7 -o ${PROJECT_BINARY_DIR}/cli_compile_bad_mode)
set_tests_properties(cli_compile_bad_mode PROPERTIES LABELS "quick;back" WILL_FAIL TRUE)
add_test(NAME cli_compile_bad_mode_message
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/examples/kernels/tensor_add.json
                 --mode 7 -o ${PROJECT_BINARY_DIR}/cli_compile_bad_mode)
set_tests_properties(cli_compile_bad_mode_message PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "Wrong CodeGenMode. It must be one of GENERATE_ISACODE, RUN_ISA_CHECKS, or COLLECT_OPCODES")
add_test(NAME cli_compile_missing_file
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_BINARY_DIR}/no-such-kernel.json
                 -o ${PROJECT_BINARY_DIR}/cli_compile_missing)
set_tests_properties(cli_compile_missing_file PROPERTIES LABELS "quick;back" WILL_FAIL TRUE)
add_test(NAME cli_compile_example
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/examples/kernels/matmul.json
                 -o ${PROJECT_BINARY_DIR}/cli_compile_example --stats)
set_tests_properties(cli_compile_example PROPERTIES LABELS "quick;back"
                     PASS_REGULAR_EXPRESSION "LdWeights")
add_test(NAME cli_compile_collect
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/examples/kernels/softmax.json
                 --mode collect-opcodes)
set_tests_properties(cli_compile_collect PROPERTIES LABELS "quick;back"
                     PASS_REGULAR_EXPRESSION "DVE +.*TensorReduce")
add_test(NAME cli_compile_trailing_slash
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/examples/kernels/matmul.json
                 -o ${PROJECT_BINARY_DIR}/cli_compile_slash/)
set_tests_properties(cli_compile_trailing_slash PROPERTIES LABELS "quick;back")

# --buffers: a bad value is a usage error naming the option; --buffers 1
# compiles with plain first fit (the --stats line reports it).
add_test(NAME cli_compile_bad_buffers
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/examples/kernels/tensor_add.json
                 --buffers 0 -o ${PROJECT_BINARY_DIR}/cli_compile_bad_buffers)
set_tests_properties(cli_compile_bad_buffers PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "--buffers 0: expected an integer 1..64")
add_test(NAME cli_compile_buffers_off
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/examples/kernels/tensor_add.json
                 --buffers 1 --stats -o ${PROJECT_BINARY_DIR}/cli_compile_buffers_off)
set_tests_properties(cli_compile_buffers_off PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "rotating buffers: SBUF 1, PSUM 1")
# LowerDVE's table (seed 000): the simulator enforces DVE.json's dve_table.
# Emptying it makes the TensorTensor on DVE an error at load time.
add_test(NAME cli_sim_dve_table_enforced
         COMMAND sh -c "set -e; d=\"$2\"; rm -rf \"$d\"; \"$1\" compile \"$3\" -o \"$d\";
                        sed 's/\"dve_table\":[^]]*]/\"dve_table\": []/' \"$d/nc0/sg0/DVE.json\" > \"$d/x\";
                        mv \"$d/x\" \"$d/nc0/sg0/DVE.json\";
                        \"$1\" sim \"$d\" --timing-only -q 2>&1 || true" sh $<TARGET_FILE:tpb>
                 ${PROJECT_BINARY_DIR}/cli_sim_dve_table ${PROJECT_SOURCE_DIR}/examples/kernels/tensor_add.json)
set_tests_properties(cli_sim_dve_table_enforced PROPERTIES LABELS "quick;back"
  PASS_REGULAR_EXPRESSION "DVE.json: dve_table: opcode 0x41 \\(TensorTensor\\) of the instruction at pc 1 is not in the engine's DVE table")

# BIR mode flags: is_activate2 / is_stt pick the ISA opcode (seed rows 001-41, 001-46)
tpb_add_test(test_bir_modes "quick;unit;back" test_bir_modes.c)
# fixed placement ("addr"): front-end checks, allocator, scheduler order
tpb_add_test(test_back_fixed "quick;unit;back" test_back_fixed.c)
