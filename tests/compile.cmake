# Compile-time work (encoder/jsonw.c, the Generator's encode cache, the
# copy-free enc_compile): byte-identity with the plain paths.
tpb_add_test(test_back_compile_speed "quick;unit;back" test_back_compile_speed.c)
target_link_libraries(test_back_compile_speed PRIVATE PkgConfig::CJSON)
tpb_add_test(test_back_textout "quick;unit;back" test_back_textout.c)
target_link_libraries(test_back_textout PRIVATE PkgConfig::CJSON)
# The sidecar writer's printf-free paths against what they replaced.
tpb_add_test(test_back_sidecar_speed "quick;unit;back" test_back_sidecar_speed.c)
target_link_libraries(test_back_sidecar_speed PRIVATE PkgConfig::CJSON)
tpb_add_test(test_back_sidecar_entries "quick;unit;back" test_back_sidecar_entries.c)
# Many live tiles: the synchroniser's HBM levels and the allocator's
# placement index against the plain scans, and their work bounded.
tpb_add_test(test_back_live_index "quick;unit;back" test_back_live_index.c)
# The synchroniser's logged vector clocks against dense copies.
tpb_add_test(test_back_sched_clock "quick;unit;back" test_back_sched_clock.c)
# The synchroniser's producer index: the memo of recent producers against
# list-by-list filing.
tpb_add_test(test_back_sched_pix "quick;unit;back" test_back_sched_pix.c)
# The synchroniser's table of overlap answers per pair of access sets.
tpb_add_test(test_back_sched_conflict "quick;unit;back" test_back_sched_conflict.c)
# enc_compile_release: the tile-IR ops given back during the lowering, the
# same artifact bytes as enc_compile.
tpb_add_test(test_back_release "quick;unit;back" test_back_release.c)
tpb_add_test(test_alloc_spares "quick;unit;back" test_alloc_spares.c)
# The allocator's liveness from the facts check_kernel gathers against its
# own pass over the ops.
tpb_add_test(test_back_alloc_live "quick;unit;back" test_back_alloc_live.c)
