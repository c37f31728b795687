# Rolled loops (docs/compiler.md "Rolled loops"): kernels compiled with and
# without --loops / "roll" simulate to identical values and cycles within
# 1 %; the optimised trn1 and trn2 tutorial matmuls roll to < 5000 bundles.
find_program(TPB_LOOPS_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(TPB_LOOPS_PYTHON)
  add_test(NAME test_rolled_loops
           COMMAND ${TPB_LOOPS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_rolled_loops.py
                   $<TARGET_FILE:tpb> ${PROJECT_BINARY_DIR}/rolled_loops)
  set_tests_properties(test_rolled_loops PROPERTIES LABELS "quick;loops"
                       PASS_REGULAR_EXPRESSION "rolled loops: ok")
  add_test(NAME test_rolled_loops_tutorial
           COMMAND ${TPB_LOOPS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_rolled_loops.py
                   $<TARGET_FILE:tpb> ${PROJECT_BINARY_DIR}/rolled_loops_tutorial --tutorial
                   ${PROJECT_SOURCE_DIR}/examples/kernels/mm_tutorial_optimized_trn2.json)
  set_tests_properties(test_rolled_loops_tutorial PROPERTIES LABELS "loops;full"
                       PASS_REGULAR_EXPRESSION "rolled tutorial: ok")
  # trn1 (bf16): its tiles rotate (modulo placement, docs/compiler.md
  # "Rotating buffers"), the k loop rolls two iterations at a time
  add_test(NAME test_rolled_loops_tutorial_trn1
           COMMAND ${TPB_LOOPS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_rolled_loops.py
                   $<TARGET_FILE:tpb> ${PROJECT_BINARY_DIR}/rolled_loops_tutorial_trn1 --tutorial
                   ${PROJECT_SOURCE_DIR}/examples/kernels/mm_tutorial_optimized_trn1.json)
  set_tests_properties(test_rolled_loops_tutorial_trn1 PROPERTIES LABELS "loops;full"
                       PASS_REGULAR_EXPRESSION "rolled tutorial: ok")
endif()

# dynamic_range / fori_loop with a register trip count (docs/compiler.md
# "Dynamic loops"): one artifact, trip counts 0, 1, below and above the
# compile-time guess, against NumPy and the unrolled loop; the refusals.
if(TPB_LOOPS_PYTHON)
  add_test(NAME test_dynamic_loops
           COMMAND ${TPB_LOOPS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_dynamic_loops.py
                   $<TARGET_FILE:tpb> ${PROJECT_BINARY_DIR}/dynamic_loops)
  set_tests_properties(test_dynamic_loops PROPERTIES LABELS "quick;loops"
                       PASS_REGULAR_EXPRESSION "dynamic loops: ok")
endif()
