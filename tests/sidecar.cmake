# Compact <Engine>.json sidecars (common/sidecar_form.h, docs/artifacts.md):
# the writer's compact layout, the expansion rules in every reader, and the
# end-to-end round trip and size per entry through tpb compile/sim/dis.
tpb_add_test(test_sidecar_form "quick;unit" test_sidecar_form.c)
find_program(TPB_SIDECAR_PY NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(TPB_SIDECAR_PY)
  add_test(NAME sidecar_compact
           COMMAND ${TPB_SIDECAR_PY} ${CMAKE_CURRENT_LIST_DIR}/sidecar_compact.py $<TARGET_FILE:tpb>)
  set_tests_properties(sidecar_compact PROPERTIES LABELS "quick")
endif()
