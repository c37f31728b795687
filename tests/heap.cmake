# The malloc heap reserve (common/hugepage.c tpb_heap_reserve, tpb_heap_trim)
# and `tpb compile`'s use of it for large kernel texts.
tpb_add_test(test_heap_reserve "unit" ${CMAKE_CURRENT_LIST_DIR}/test_heap_reserve.c)
