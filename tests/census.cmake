# Malformed-input census (tests/census.py, docs/reliability.md): bad inputs
# through every loader and CLI, one CTest per group; each input asserts the
# exit status, the key words of the message and that nothing is left behind.
find_program(TPB_CENSUS_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(TPB_CENSUS_PYTHON)
  foreach(g npy artifact kernel asm dis check outputs cli)
    add_test(NAME census_${g}
             COMMAND ${TPB_CENSUS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/census.py $<TARGET_FILE:tpb>
                     ${PROJECT_SOURCE_DIR} --group ${g})
    set_tests_properties(census_${g} PROPERTIES LABELS "quick;census"
                         PASS_REGULAR_EXPRESSION "census: [0-9]+ malformed inputs, 0 failed")
  endforeach()
endif()
