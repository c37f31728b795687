# Trace writing: the fast formatters must match the printf conversions.
tpb_add_test(test_sim_jsonbuf "quick;unit" test_sim_jsonbuf.c)
tpb_add_test(test_sim_tracecache "quick;unit" test_sim_tracecache.c sim_testlib.c)
# Rotating buffers: a loop kernel compiled with --buffers 2 / 3 names each
# instruction's buffer in args.buf, cycling 0..N-1 (docs/trace-format.md).
find_program(TPB_TRACE_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(TPB_TRACE_PYTHON)
  add_test(NAME trace_rotating_buffers
           COMMAND ${TPB_TRACE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/check_trace_buffers.py
                   $<TARGET_FILE:tpb> ${CMAKE_CURRENT_LIST_DIR}/data/rotate_loop.json
                   ${PROJECT_BINARY_DIR}/trace_rotating_buffers)
  set_tests_properties(trace_rotating_buffers PROPERTIES LABELS "quick;trace"
                       PASS_REGULAR_EXPRESSION "rotating buffers in trace args: ok")
endif()
