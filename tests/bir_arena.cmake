# The backend's arena: instruction names and rare parts (common/arena.h, encoder/bir.h).
tpb_add_test(test_bir_arena "quick;unit;back" test_bir_arena.c)
