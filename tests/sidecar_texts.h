/* sidecar_texts.h - one debug table in the compact and the full sidecar
 * form (docs/artifacts.md "Compact sidecars"), shared by test_sidecar_form.c
 * (tpb_sidecar_expand) and test_sim_load.c (the simulator's reader).
 *
 * pc 0 a sync wait; pc 2 an op; pc 3 its second instruction (a
 * continuation: no name); pc 4 halt.  test_sim_load.c's stream has main
 * bundles at pcs 0, 2, 3 and 4 (pc 1 is a prefix). */
#ifndef TPB_TEST_SIDECAR_TEXTS_H
#define TPB_TEST_SIDECAR_TEXTS_H

#define SIDECAR_ENTRIES                                                                    \
    "[{\"name\":\"wait_1\",\"src\":\"body[0]\",\"op\":\"sync\",\"op_index\":1},"            \
    "{\"pc\":2,\"name\":\"copy_2\",\"src\":\"body[1].body[0]\",\"op\":\"tensor_copy\","    \
    "\"op_index\":2,\"buf\":\"t#1/3\"},"                                                    \
    "{\"inst\":\"copy_2.1\"},"                                                              \
    "{\"name\":\"halt\",\"src\":\"\",\"op\":\"sync\"}]"

#define SIDECAR_COMPACT_TEXT                                                               \
    "{\"engine\":\"DVE\",\"debug_form\":\"compact\",\"debug\":" SIDECAR_ENTRIES "}"

/* the same with "debug_form" last */
#define SIDECAR_LATE_TEXT                                                                  \
    "{\"engine\":\"DVE\",\"debug\":" SIDECAR_ENTRIES ",\"debug_form\":\"compact\"}"

#define SIDECAR_FULL_TEXT                                                                  \
    "{\"engine\":\"DVE\",\"debug\":["                                                       \
    "{\"pc\":0,\"name\":\"wait_1\",\"inst\":\"wait_1\",\"src\":\"body[0]\",\"op\":\"sync\"," \
    "\"op_index\":1},"                                                                      \
    "{\"pc\":2,\"name\":\"copy_2\",\"inst\":\"copy_2\",\"src\":\"body[1].body[0]\","        \
    "\"op\":\"tensor_copy\",\"op_index\":2,\"buf\":\"t#1/3\"},"                             \
    "{\"pc\":3,\"name\":\"copy_2\",\"inst\":\"copy_2.1\",\"src\":\"body[1].body[0]\","      \
    "\"op\":\"tensor_copy\",\"op_index\":2,\"buf\":\"t#1/3\"},"                             \
    "{\"pc\":4,\"name\":\"halt\",\"inst\":\"halt\",\"src\":\"\",\"op\":\"sync\"}]}"

#endif
