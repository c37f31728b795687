# libFuzzer harnesses (tests/fuzz/; docs/reliability.md): one per loader,
# built only with -DTPB_FUZZ=ON (clang).  scripts/fuzz generates their seed
# corpora from the tree's own files and runs them; the corpora are never
# committed.  The inputs a fuzzer once failed on are: tests/fuzz/regress/<h>/
# is replayed by CTest's fuzz_replay_<h> in every build (through libFuzzer
# in the fuzz build, through tests/fuzz/replay.c elsewhere).
set(TPB_FUZZ_HARNESSES npy dis asm sidecar kernel kernel_sim sim trace map)
if(TPB_FUZZ)
  foreach(h ${TPB_FUZZ_HARNESSES})
    add_executable(fuzz_${h} ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_${h}.c)
    target_link_libraries(fuzz_${h} PRIVATE tpb_viz tpb_encoder tpb_sim tpb_isa tpb_common)
    target_include_directories(fuzz_${h} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fuzz)
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
  endforeach()
endif()
foreach(h ${TPB_FUZZ_HARNESSES})
  set(regress ${CMAKE_CURRENT_LIST_DIR}/fuzz/regress/${h})
  file(GLOB regress_files CONFIGURE_DEPENDS ${regress}/*)
  if(NOT regress_files)
    continue()
  endif()
  if(TPB_FUZZ)
    add_test(NAME fuzz_replay_${h} COMMAND fuzz_${h} -runs=0 ${regress})
  else()
    add_executable(fuzz_replay_${h} ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_${h}.c
                   ${CMAKE_CURRENT_LIST_DIR}/fuzz/replay.c)
    target_link_libraries(fuzz_replay_${h} PRIVATE tpb_viz tpb_encoder tpb_sim tpb_isa tpb_common)
    target_include_directories(fuzz_replay_${h} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fuzz)
    add_test(NAME fuzz_replay_${h} COMMAND fuzz_replay_${h} ${regress})
  endif()
  set_tests_properties(fuzz_replay_${h} PROPERTIES LABELS "quick;fuzz")
endforeach()
