# The tile IR AP pool (encoder/tir.c tir_ap_intern).
tpb_add_test(test_front_tirpool "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_tirpool.c)
