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
  # trn1 (bf16): its tiles rotate (modulo placement, docs/compiler.md
  # "Rotating buffers"), the k loop rolls two iterations at a time
  foreach(tgt trn2 trn1)
    set(tname test_rolled_loops_tutorial)
    if(tgt STREQUAL "trn1")
      set(tname test_rolled_loops_tutorial_trn1)
    endif()
    add_test(NAME ${tname}
             COMMAND ${TPB_LOOPS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_rolled_loops.py
                     $<TARGET_FILE:tpb> ${PROJECT_BINARY_DIR}/rolled_loops_tutorial_${tgt}
                     --tutorial ${PROJECT_SOURCE_DIR}/examples/kernels/mm_tutorial_optimized_${tgt}.json)
    set_tests_properties(${tname} PROPERTIES LABELS "loops;full"
                         PASS_REGULAR_EXPRESSION "rolled tutorial: ok")
  endforeach()
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
