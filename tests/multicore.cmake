# Multi-core split / link / emission (issue #5).  The golden multi-core cases
# (golden/mc_*) are registered by tests/golden.cmake with the "multicore" label.
tpb_add_test(test_lnc_link "quick;unit;multicore" test_lnc_link.c)
tpb_add_test(test_lnc_split "quick;unit;multicore" test_lnc_split.c)
tpb_add_test(test_lnc_instance "quick;unit;multicore" test_lnc_instance.c)
tpb_add_test(test_lnc_names "quick;unit;multicore" test_lnc_names.c)

# The barrier of golden/mc_reduce_exchange matters: without it core 1 reads
# the shared scratch before core 0 wrote it, and the check must fail.
add_test(NAME mc_no_barrier_run
         COMMAND $<TARGET_FILE:tpb> run ${PROJECT_SOURCE_DIR}/tests/data/mc_reduce_no_barrier.json
                 --inputs ${PROJECT_SOURCE_DIR}/golden/mc_reduce_exchange/inputs
                 -o ${PROJECT_BINARY_DIR}/mc-no-barrier --no-trace -q)
set_tests_properties(mc_no_barrier_run PROPERTIES LABELS "quick;multicore"
                     FIXTURES_SETUP mc_no_barrier)
add_test(NAME mc_no_barrier_races
         COMMAND $<TARGET_FILE:tpb> check ${PROJECT_BINARY_DIR}/mc-no-barrier
                 ${PROJECT_SOURCE_DIR}/golden/mc_reduce_exchange)
set_tests_properties(mc_no_barrier_races PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_no_barrier WILL_FAIL TRUE)
# Programs may branch on pid (golden/mc_pid_control), but a kernel whose
# programs do not meet at the same barriers is rejected with a clear error.
add_test(NAME mc_cli_divergent_pid
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/tests/data/mc_divergent.json
                 -o ${PROJECT_BINARY_DIR}/mc-divergent)
set_tests_properties(mc_cli_divergent_pid PROPERTIES LABELS "quick;multicore"
                     PASS_REGULAR_EXPRESSION "control flow diverges on the program id: exchange 0")
# LNC=1 through the same link machinery (tpb compile --link): a one-call
# dispatcher, and the program still computes golden/tensor_add.
add_test(NAME mc_lnc1_link_compile
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/golden/tensor_add/kernel.json
                 --link -o ${PROJECT_BINARY_DIR}/mc-lnc1/artifacts)
set_tests_properties(mc_lnc1_link_compile PROPERTIES LABELS "quick;multicore"
                     FIXTURES_SETUP mc_lnc1_art)
add_test(NAME mc_lnc1_link_dispatcher
         COMMAND ${CMAKE_COMMAND} -E cat ${PROJECT_BINARY_DIR}/mc-lnc1/artifacts/sgLnk/link.json)
set_tests_properties(mc_lnc1_link_dispatcher PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_lnc1_art
                     PASS_REGULAR_EXPRESSION "\"call_def_0_instance_0\"")
add_test(NAME mc_lnc1_link_sim
         COMMAND $<TARGET_FILE:tpb> sim ${PROJECT_BINARY_DIR}/mc-lnc1/artifacts
                 --inputs ${PROJECT_SOURCE_DIR}/golden/tensor_add/inputs
                 -o ${PROJECT_BINARY_DIR}/mc-lnc1/out)
set_tests_properties(mc_lnc1_link_sim PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_lnc1_art FIXTURES_SETUP mc_lnc1_out)
add_test(NAME mc_lnc1_link_check
         COMMAND $<TARGET_FILE:tpb> check ${PROJECT_BINARY_DIR}/mc-lnc1/out
                 ${PROJECT_SOURCE_DIR}/golden/tensor_add)
set_tests_properties(mc_lnc1_link_check PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_lnc1_out PASS_REGULAR_EXPRESSION "overall: PASS")
# A collective with a missing participant (core 1 skips the all_reduce's
# ready barrier): the simulator reports a deadlock naming both cores'
# blocked barriers and the collective they belong to.
add_test(NAME mc_collective_deadlock
         COMMAND ${CMAKE_COMMAND} -DTPB=$<TARGET_FILE:tpb> -DSRC=${PROJECT_SOURCE_DIR}
                 -DOUT=${PROJECT_BINARY_DIR}/mc-deadlock -P ${PROJECT_SOURCE_DIR}/tests/data/mc_deadlock.cmake)
set_tests_properties(mc_collective_deadlock PROPERTIES LABELS "quick;multicore" TIMEOUT 120)
# The linker's report in sgLnk/link.json (encoder/lnc_report.c): its log lines
# (module definitions and instances: both cores run one body, so one
# definition with two instances) and PostLinkMmtReport -- the PE
# transpose of a [128, 96] tile is one matmul of K=128 rows x M=96 columns,
# 75% of the array.
add_test(NAME mc_link_report_compile
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/golden/mc_pe_transpose/kernel.json
                 -o ${PROJECT_BINARY_DIR}/mc-report)
set_tests_properties(mc_link_report_compile PROPERTIES LABELS "quick;multicore"
                     FIXTURES_SETUP mc_report_art)
add_test(NAME mc_link_report
         COMMAND ${CMAKE_COMMAND} -E cat ${PROJECT_BINARY_DIR}/mc-report/sgLnk/link.json)
set_tests_properties(mc_link_report PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_report_art
                     PASS_REGULAR_EXPRESSION "\"runModuleDefPasses numModules 2\".*\"Num Module Definitions 1\".*\"Module Instance 1 DefID 0\".*\"instances\":[ \t]*2,.*\"matmuls\":[ \t]*1,.*\"macs\":[ \t]*1572864,.*\"array_utilisation\":[ \t]*0.75")
# Descriptor reuse (tpb compile --dma-desc-reuse): the two instances of
# golden/mc_tensor_add's one module definition share its descriptors, the
# dispatcher passes each its HBM offset in a register, and the program
# still computes the NumPy result.
add_test(NAME mc_desc_reuse_compile
         COMMAND $<TARGET_FILE:tpb> compile ${PROJECT_SOURCE_DIR}/golden/mc_tensor_add/kernel.json
                 --dma-desc-reuse -o ${PROJECT_BINARY_DIR}/mc-reuse/artifacts)
set_tests_properties(mc_desc_reuse_compile PROPERTIES LABELS "quick;multicore"
                     FIXTURES_SETUP mc_reuse_art)
add_test(NAME mc_desc_reuse_log
         COMMAND ${CMAKE_COMMAND} -E cat ${PROJECT_BINARY_DIR}/mc-reuse/artifacts/sgLnk/link.json)
set_tests_properties(mc_desc_reuse_log PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_reuse_art
                     PASS_REGULAR_EXPRESSION "\"DMA Descriptor ReUse Enabled\".*\"Num Module Definitions 1\".*\"shared_descriptors\":[ \t]*6")
add_test(NAME mc_desc_reuse_sim
         COMMAND $<TARGET_FILE:tpb> sim ${PROJECT_BINARY_DIR}/mc-reuse/artifacts
                 --inputs ${PROJECT_SOURCE_DIR}/golden/mc_tensor_add/inputs
                 -o ${PROJECT_BINARY_DIR}/mc-reuse/out)
set_tests_properties(mc_desc_reuse_sim PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_reuse_art FIXTURES_SETUP mc_reuse_out)
add_test(NAME mc_desc_reuse_check
         COMMAND $<TARGET_FILE:tpb> check ${PROJECT_BINARY_DIR}/mc-reuse/out
                 ${PROJECT_SOURCE_DIR}/golden/mc_tensor_add)
set_tests_properties(mc_desc_reuse_check PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_reuse_out PASS_REGULAR_EXPRESSION "overall: PASS")
# The back-end passes as registered with the pass manager (encoder/lnc_passes.c):
# bir_linker is the core-parallel pass between the per-core main pipeline and
# the whole-program passes.
add_test(NAME mc_pass_registry
         COMMAND ${CMAKE_COMMAND} -E cat ${PROJECT_BINARY_DIR}/mc-report/sgLnk/bir_link.json)
set_tests_properties(mc_pass_registry PROPERTIES LABELS "quick;multicore"
                     FIXTURES_REQUIRED mc_report_art
                     PASS_REGULAR_EXPRESSION "\"main_pipeline\",[ \t\n]*\"kind\":[ \t]*\"per_core\".*\"bir_linker\",[ \t\n]*\"kind\":[ \t]*\"core_parallel\".*\"alloc_semaphores\",[ \t\n]*\"kind\":[ \t]*\"whole_program\"")
