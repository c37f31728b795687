# Seed-003 rows of issue #15 beyond the link pipeline (docs/seed-coverage-003.md):
# shared DRAM colouring (encoder/lnc_color.c).
tpb_add_test(test_lnc_color "quick;unit;multicore" test_lnc_color.c)
