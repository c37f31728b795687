# engine of ops that name none (encoder/sched_engine.c)
tpb_add_test(test_back_engine_choice "quick;unit;back" test_back_engine_choice.c)
