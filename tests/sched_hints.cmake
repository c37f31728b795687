# Scheduling hints of a kernel file (seed 004 `schedule`, NKI with_schedule / no_reorder).
tpb_add_test(test_front_sched "quick;unit;front" test_front_sched.c)
