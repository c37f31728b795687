# Golden regression suite (issue #6): the checker's unit tests, the lowp.py
# self-check, CLI tests of `tpb check` / `tpb run`, and one CTest per golden
# case (`tpb run golden/<case> -o <build>/golden-out/<case>`), labelled
# "golden" plus the case's tags (quick / full / multicore).

tpb_add_test(test_check "quick;unit;golden" test_check.c)

find_program(TPB_SYSTEM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(TPB_SYSTEM_PYTHON)
  add_test(NAME golden_lowp_selfcheck
           COMMAND ${TPB_SYSTEM_PYTHON} ${PROJECT_SOURCE_DIR}/golden/lowp.py)
  set_tests_properties(golden_lowp_selfcheck PROPERTIES LABELS "quick;unit;golden")
  # every case has its data, references parse and configs are valid
  add_test(NAME golden_cases_consistent
           COMMAND ${TPB_SYSTEM_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/golden.py --verify)
  set_tests_properties(golden_cases_consistent PROPERTIES LABELS "quick;golden")
endif()

# ---- CLI behaviour ----------------------------------------------------------
add_test(NAME cli_check_help COMMAND $<TARGET_FILE:tpb> check --help)
set_tests_properties(cli_check_help PROPERTIES LABELS "quick;golden"
                     PASS_REGULAR_EXPRESSION "--rtol")
add_test(NAME cli_check_unknown_option COMMAND $<TARGET_FILE:tpb> check --bogus a b)
set_tests_properties(cli_check_unknown_option PROPERTIES LABELS "quick;golden" WILL_FAIL TRUE)
add_test(NAME cli_check_missing_dir
         COMMAND $<TARGET_FILE:tpb> check ${PROJECT_BINARY_DIR}/no-such-out
                 ${PROJECT_SOURCE_DIR}/golden/tensor_add)
set_tests_properties(cli_check_missing_dir PROPERTIES LABELS "quick;golden" WILL_FAIL TRUE)
# expected vs itself: every output matches
add_test(NAME cli_check_self
         COMMAND $<TARGET_FILE:tpb> check ${PROJECT_SOURCE_DIR}/golden/tensor_add/expected
                 ${PROJECT_SOURCE_DIR}/golden/tensor_add)
set_tests_properties(cli_check_self PROPERTIES LABELS "quick;golden"
                     PASS_REGULAR_EXPRESSION "overall: PASS")
# inputs are not the expected outputs: must fail with a diff
add_test(NAME cli_check_detects_mismatch
         COMMAND $<TARGET_FILE:tpb> check ${PROJECT_SOURCE_DIR}/golden/tensor_add/inputs/a.npy
                 ${PROJECT_SOURCE_DIR}/golden/tensor_add/expected/out.npy)
set_tests_properties(cli_check_detects_mismatch PROPERTIES LABELS "quick;golden" WILL_FAIL TRUE)
add_test(NAME cli_run_help COMMAND $<TARGET_FILE:tpb> run --help)
set_tests_properties(cli_run_help PROPERTIES LABELS "quick;golden"
                     PASS_REGULAR_EXPRESSION "--max-cycles")
add_test(NAME cli_run_unknown_option COMMAND $<TARGET_FILE:tpb> run --bogus golden/tensor_add)
set_tests_properties(cli_run_unknown_option PROPERTIES LABELS "quick;golden" WILL_FAIL TRUE)

# ---- one test per golden case -------------------------------------------------
file(GLOB TPB_GOLDEN_CASE_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/golden/*/case.json)
list(SORT TPB_GOLDEN_CASE_FILES)
foreach(cfg ${TPB_GOLDEN_CASE_FILES})
  get_filename_component(case_dir ${cfg} DIRECTORY)
  get_filename_component(case_name ${case_dir} NAME)
  file(READ ${cfg} case_json)
  set(labels "golden")
  string(JSON ntags ERROR_VARIABLE json_err LENGTH "${case_json}" tags)
  if(NOT json_err)
    math(EXPR last "${ntags} - 1")
    if(ntags GREATER 0)
      foreach(i RANGE ${last})
        string(JSON tag GET "${case_json}" tags ${i})
        list(APPEND labels ${tag})
      endforeach()
    endif()
  endif()
  add_test(NAME golden_${case_name}
           COMMAND $<TARGET_FILE:tpb> run ${case_dir} -o ${PROJECT_BINARY_DIR}/golden-out/${case_name})
  set_tests_properties(golden_${case_name} PROPERTIES LABELS "${labels}" TIMEOUT 300)
endforeach()

# tpb run failure reporting, independent of how far the stack has landed:
# a kernel the compiler rejects fails the run (exit 1) ...
add_test(NAME cli_run_reports_compile_failure
         COMMAND $<TARGET_FILE:tpb> run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/bad_kernel
                 -o ${PROJECT_BINARY_DIR}/golden-out/bad_kernel)
set_tests_properties(cli_run_reports_compile_failure PROPERTIES LABELS "quick;golden" WILL_FAIL TRUE)
# ... and is reported as XFAIL (exit 0) when case.json expects the failure
add_test(NAME cli_run_reports_xfail
         COMMAND $<TARGET_FILE:tpb> run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/bad_kernel_xfail
                 -o ${PROJECT_BINARY_DIR}/golden-out/bad_kernel_xfail)
set_tests_properties(cli_run_reports_xfail PROPERTIES LABELS "quick;golden"
                     PASS_REGULAR_EXPRESSION "XFAIL \\(deliberately invalid kernel\\)")
add_test(NAME cli_run_missing_case
         COMMAND $<TARGET_FILE:tpb> run ${PROJECT_BINARY_DIR}/no-such-case)
set_tests_properties(cli_run_missing_case PROPERTIES LABELS "quick;golden" WILL_FAIL TRUE)
# a bare kernel.json (no inputs/, no expected/): inputs are generated, the
# run compiles and simulates and says there is nothing to check
add_test(NAME cli_run_bare_kernel
         COMMAND $<TARGET_FILE:tpb> run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/copy_kernel.json
                 -o ${PROJECT_BINARY_DIR}/golden-out/copy_kernel --seed 3)
set_tests_properties(cli_run_bare_kernel PROPERTIES LABELS "quick;golden"
                     PASS_REGULAR_EXPRESSION "copy_kernel: no golden to check")

# verdict logic on tiny DMA-only cases (tests/golden-data/*): exit status and
# message both checked by expect_run.sh
set(TPB_EXPECT_RUN ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/expect_run.sh)
add_test(NAME cli_run_xpass_fails
         COMMAND ${TPB_EXPECT_RUN} $<TARGET_FILE:tpb> 1 "XPASS: passed although"
                 run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/xpass_copy -o ${PROJECT_BINARY_DIR}/golden-out/xpass_copy)
add_test(NAME cli_run_cycles_out_of_range
         COMMAND ${TPB_EXPECT_RUN} $<TARGET_FILE:tpb> 1 "OUTSIDE expected range \\[1, 2\\].*|FAIL \\(cycles\\)"
                 run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/cycles_out_of_range -o ${PROJECT_BINARY_DIR}/golden-out/cycles_out_of_range)
add_test(NAME cli_run_values_mismatch
         COMMAND ${TPB_EXPECT_RUN} $<TARGET_FILE:tpb> 1 "\\[10, 2\\] +[0-9]+ vs [0-9]+"
                 run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/values_mismatch -o ${PROJECT_BINARY_DIR}/golden-out/values_mismatch)
add_test(NAME cli_run_ignore_cycles
         COMMAND ${TPB_EXPECT_RUN} $<TARGET_FILE:tpb> 0 "cycles_out_of_range: PASS"
                 run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/cycles_out_of_range --ignore-cycles --no-trace
                 -o ${PROJECT_BINARY_DIR}/golden-out/cycles_ignored)
set_tests_properties(cli_run_xpass_fails cli_run_cycles_out_of_range cli_run_values_mismatch
                     cli_run_ignore_cycles PROPERTIES LABELS "quick;golden")
add_test(NAME cli_run_timing_only
         COMMAND ${TPB_EXPECT_RUN} $<TARGET_FILE:tpb> 0 "values: not checked \\(--timing-only\\)"
                 run ${CMAKE_CURRENT_SOURCE_DIR}/golden-data/cycles_out_of_range --timing-only --ignore-cycles
                 -o ${PROJECT_BINARY_DIR}/golden-out/timing_only)
set_tests_properties(cli_run_timing_only PROPERTIES LABELS "quick;golden")

# tpb run -q prints only failures and the verdict: no sub-command lines, no
# compile or simulation summary (both regexes must hold)
add_test(NAME cli_run_quiet
         COMMAND $<TARGET_FILE:tpb> run ${PROJECT_SOURCE_DIR}/golden/tensor_add -q
                 -o ${PROJECT_BINARY_DIR}/golden-out/tensor_add_quiet)
set_tests_properties(cli_run_quiet PROPERTIES LABELS "quick;golden"
                     PASS_REGULAR_EXPRESSION "^overall: PASS \\(1 output\\)\ntpb run: tensor_add: PASS\n$"
                     FAIL_REGULAR_EXPRESSION "== tpb|total:|cycles:")
