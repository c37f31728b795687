# perf: the row-at-a-time fast path of the compute ops (sim/rows.c).
tpb_add_test(test_ops_rows "quick;unit" test_ops_rows.c)

# Timing fidelity (docs/fidelity.md): the committed tutorial kernels are the
# generator's output, and the scaled (--quick) run compiles and simulates
# every stage.  Sanity only: no simulated/published ratio is asserted.
if(EXISTS /usr/bin/python3)
  add_test(NAME fidelity_kernels
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/fidelity --check-kernels)
  add_test(NAME fidelity_quick
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/fidelity --quick
                   --tpb $<TARGET_FILE:tpb> --work ${CMAKE_CURRENT_BINARY_DIR}/fidelity-quick)
  set_tests_properties(fidelity_kernels fidelity_quick PROPERTIES LABELS "quick")
endif()
