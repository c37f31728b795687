# The compiler's own tensors never take a kernel's name (the shared
# identity, spill slots, front-end tiles, device_print buffers, the
# multi-core split's tile copies).
tpb_add_test(test_own_names "quick;unit" test_own_names.c)
