# front-end (kernel JSON / C builder -> tile IR) tests
tpb_add_test(test_front_expr "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_expr.c)
tpb_add_test(test_front_json "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_json.c)
tpb_add_test(test_front_json_errors "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_json_errors.c)
tpb_add_test(test_front_builder "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_builder.c)
tpb_add_test(test_front_fuzz "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_fuzz.c)
tpb_add_test(test_front_docs "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_docs.c)
tpb_add_test(test_front_rng "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_rng.c)
tpb_add_test(test_front_loopcache "quick;unit" ${CMAKE_CURRENT_LIST_DIR}/test_front_loopcache.c)
