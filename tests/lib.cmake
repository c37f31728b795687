# libtpb (lib/): the C API through the shared library, and its exports
# (only tpb_v1_* symbols, with version TPB_1).
add_executable(test_lib test_lib.c)
target_link_libraries(test_lib PRIVATE tpb_shared PkgConfig::CMOCKA)
add_test(NAME test_lib COMMAND test_lib WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
set_tests_properties(test_lib PROPERTIES LABELS "quick;unit")
add_test(NAME lib_exports
         COMMAND sh -c "nm -D --defined-only \"$0\" | grep -v -e ' tpb_v1_[a-z0-9_]*@@TPB_1$' -e ' TPB_1$' && exit 1 || exit 0"
                 $<TARGET_FILE:tpb_shared>)
set_tests_properties(lib_exports PROPERTIES LABELS "quick;unit")
