# viz: trace reader, layout, app state (SDL-free, always built) and the SDL
# renderer / window / large-trace tests (TPB_WITH_VIEWER=ON only).
tpb_add_test(test_viz_trace "quick;unit" test_viz_trace.c)
tpb_add_test(test_viz_layout "quick;unit" test_viz_layout.c)
