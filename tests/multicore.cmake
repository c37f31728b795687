# Multi-core split / link / emission (issue #5).  The golden multi-core cases
# (golden/mc_*) are registered by tests/golden.cmake with the "multicore" label.
tpb_add_test(test_lnc_link "quick;unit;multicore" test_lnc_link.c)
tpb_add_test(test_lnc_split "quick;unit;multicore" test_lnc_split.c)
