# libFuzzer harnesses (tests/fuzz/; docs/reliability.md): one per loader,
# built only with -DTPB_FUZZ=ON (clang).  scripts/fuzz generates their seed
# corpora from the tree's own files and runs them; the corpora are never
# committed.
if(TPB_FUZZ)
  foreach(h npy dis asm sidecar kernel sim trace)
    add_executable(fuzz_${h} ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_${h}.c)
    target_link_libraries(fuzz_${h} PRIVATE tpb_viz tpb_encoder tpb_sim tpb_isa tpb_common)
    target_include_directories(fuzz_${h} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fuzz)
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer)
  endforeach()
endif()
