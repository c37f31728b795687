# The front-end's growing arrays across the huge-page threshold (encoder/tir.c
# tir_array_reserve, the loop marks, encoder/frontend_read.c).
tpb_add_test(test_tir_reserve "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_tir_reserve.c)
