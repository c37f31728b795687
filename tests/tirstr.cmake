# The tile IR strings (encoder/tir.c tir_add_tensor, tir_name).
tpb_add_test(test_front_tirstr "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_tirstr.c)
