# Scheduling hints of a kernel file (seed 004 `schedule`, NKI with_schedule / no_reorder).
tpb_add_test(test_front_sched "quick;unit;front" test_front_sched.c)
# Several affine predicates per instruction (seed 001-51; NKI mask=(i_p < n) & (i_f < m)).
tpb_add_test(test_mask_preds "quick;unit;front" test_mask_preds.c)
