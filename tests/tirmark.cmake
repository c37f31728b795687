# The tile IR's element bitmap of an AP (encoder/tir.c tir_ap_mark_bits).
tpb_add_test(test_front_tirmark "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_tirmark.c)
