# viz: trace reader, layout, app state (SDL-free, always built) and the SDL
# renderer / window / large-trace tests (TPB_WITH_VIEWER=ON only).
tpb_add_test(test_viz_trace "quick;unit" test_viz_trace.c)
tpb_add_test(test_viz_layout "quick;unit" test_viz_layout.c)
tpb_add_test(test_viz_app "quick;unit" test_viz_app.c)
if(TPB_WITH_VIEWER)
  tpb_add_test(test_viz_render "quick;unit" test_viz_render.c)
  target_link_libraries(test_viz_render PRIVATE PkgConfig::SDL2) # SDL calls of its own
endif()
if(TPB_WITH_VIEWER)
  tpb_add_test(test_viz_large "unit" test_viz_large.c)
  target_link_libraries(test_viz_large PRIVATE PkgConfig::SDL2)
endif()
if(TPB_WITH_VIEWER)
  # The window: skips (cmocka skip) when no display can be opened; when
  # xvfb-run is installed (scripts/setup installs it) it also runs under a
  # virtual X server, and so does the CLI's interactive path.
  tpb_add_test(test_viz_window "unit" test_viz_window.c)
  target_link_libraries(test_viz_window PRIVATE PkgConfig::SDL2)
  find_program(TPB_XVFB_RUN xvfb-run)
  if(TPB_XVFB_RUN)
    add_test(NAME test_viz_window_xvfb COMMAND ${TPB_XVFB_RUN} -a $<TARGET_FILE:test_viz_window>
             WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    set_tests_properties(test_viz_window_xvfb PROPERTIES LABELS "unit" TIMEOUT 120)
    add_test(NAME cli_view_window_xvfb
             COMMAND ${TPB_XVFB_RUN} -a $<TARGET_FILE:tpb> view --exit-after 5 --width 640 --height 360
                     ${PROJECT_SOURCE_DIR}/tests/data/traces/matmul.json)
    set_tests_properties(cli_view_window_xvfb PROPERTIES LABELS "unit" TIMEOUT 120)
    if(TPB_SANITIZE OR TPB_FUZZ)   # both build with AddressSanitizer
      # libdbus and the dynamically loaded X/GL drivers keep allocations
      # past exit that LeakSanitizer cannot attribute (<unknown module>);
      # our own code's leaks are covered by the headless tests.
      set_tests_properties(test_viz_window_xvfb cli_view_window_xvfb PROPERTIES
                           ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
    endif()
  endif()
endif()

# CLI contract: help, unknown options, malformed traces, run directories
add_test(NAME cli_view_help COMMAND $<TARGET_FILE:tpb> view --help)
set_tests_properties(cli_view_help PROPERTIES LABELS "quick" PASS_REGULAR_EXPRESSION "--screenshot FILE")
add_test(NAME cli_view_unknown_option COMMAND $<TARGET_FILE:tpb> view --frobnicate x.json)
set_tests_properties(cli_view_unknown_option PROPERTIES LABELS "quick" WILL_FAIL TRUE)
add_test(NAME cli_view_bad_trace
         COMMAND $<TARGET_FILE:tpb> view --summary ${PROJECT_SOURCE_DIR}/tests/data/traces/bad/wrong_type.json)
set_tests_properties(cli_view_bad_trace PROPERTIES LABELS "quick" WILL_FAIL TRUE)
add_test(NAME cli_view_bad_trace_message
         COMMAND sh -c "$<TARGET_FILE:tpb> view --summary \"$1\" 2>&1; test $? -eq 1" sh
                 ${PROJECT_SOURCE_DIR}/tests/data/traces/bad/wrong_type.json)
set_tests_properties(cli_view_bad_trace_message PROPERTIES LABELS "quick"
                     PASS_REGULAR_EXPRESSION "wrong_type.json: traceEvents\\[1\\]: field 'pid'")
add_test(NAME cli_view_summary
         COMMAND $<TARGET_FILE:tpb> view --summary ${PROJECT_SOURCE_DIR}/tests/data/traces/small.json)
set_tests_properties(cli_view_summary PROPERTIES LABELS "quick"
                     PASS_REGULAR_EXPRESSION "total_cycles 1000 .*core0 Activation +events +1 +busy +20.0%  stall 400")
if(TPB_WITH_VIEWER)
  # no display: a clear error and exit 1, never a window nobody can close
  add_test(NAME cli_view_no_display
           COMMAND sh -c "$<TARGET_FILE:tpb> view \"$1\" 2>&1; test $? -eq 1" sh
                   ${PROJECT_SOURCE_DIR}/tests/data/traces/small.json)
  set_tests_properties(cli_view_no_display PROPERTIES LABELS "quick"
                       ENVIRONMENT "DISPLAY=;WAYLAND_DISPLAY=;SDL_VIDEODRIVER="
                       PASS_REGULAR_EXPRESSION "display.*--screenshot" TIMEOUT 60)
endif()
