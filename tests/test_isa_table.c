/* The instruction table checks itself: unique opcodes and mnemonics, the
 * values pinned by the reverse-engineering notes, fields that fit the
 * bundle and do not overlap, enums that fit their fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "isa.h"

static void test_opcodes_unique(void **state)
{
    (void)state;
    for (unsigned i = 0; i < ISA_OP_COUNT; i++) {
        assert_int_equal(isa_ops[i].op, i);
        assert_non_null(isa_ops[i].mnemonic);
        assert_true(isa_ops[i].engines != 0);
        assert_int_equal(isa_ops[i].engines & ~E_TPB_ALL, 0);
        for (unsigned j = i + 1; j < ISA_OP_COUNT; j++) {
            assert_int_not_equal(isa_ops[i].l2, isa_ops[j].l2);
            assert_string_not_equal(isa_ops[i].mnemonic, isa_ops[j].mnemonic);
        }
        assert_ptr_equal(isa_op_by_l2(isa_ops[i].l2), &isa_ops[i]);
        assert_ptr_equal(isa_op_by_mnemonic(isa_ops[i].mnemonic), &isa_ops[i]);
    }
}

static void test_pinned_opcodes(void **state)
{
    (void)state;
    assert_int_equal(isa_ops[ISA_OP_LDWEIGHTS].l2, 1);
    assert_int_equal(isa_ops[ISA_OP_MATMUL].l2, 2);
    assert_int_equal(isa_ops[ISA_OP_LDWEIGHTS_MX].l2, 9);
    assert_int_equal(isa_ops[ISA_OP_MATMUL_MX].l2, 10);
    assert_int_equal(isa_ops[ISA_OP_TENSOR_TENSOR].l2, 65);
    assert_int_equal(isa_ops[ISA_OP_TENSOR_TENSOR_BITVEC].l2, 81);
    assert_int_equal(isa_ops[ISA_OP_HALT].l2, 0xA1);
    assert_int_equal(isa_ops[ISA_OP_DMA_TRIGGER].l2, 0xC1);
    assert_int_equal(isa_ops[ISA_OP_DMA_DIRECT2D].l2, 0xD4);
    assert_string_equal(isa_ops[ISA_OP_DMA_DIRECT2D].mnemonic, "PseudoDmaDirect2d");
    assert_int_equal(isa_ops[ISA_OP_QUANTIZE_MX].l2, 0xE3);
    assert_int_equal(isa_ops[ISA_OP_MATMUL].engines, E_PE);
}

static void test_engines(void **state)
{
    (void)state;
    assert_int_equal(ISA_ENG_UNASSIGNED, 0);
    assert_int_equal(ISA_ENG_PE, 1);
    assert_int_equal(ISA_ENG_ACT, 2);
    assert_int_equal(ISA_ENG_POOL, 3);
    assert_int_equal(ISA_ENG_DMA, 4);
    assert_int_equal(ISA_ENG_DVE, 5);
    assert_int_equal(ISA_ENG_SP, 6);
    assert_false(isa_engine_is_tpb(ISA_ENG_DMA));
    assert_false(isa_engine_is_tpb(ISA_ENG_ALL));
    assert_false(isa_engine_is_tpb(ISA_ENG_UNASSIGNED));
    for (int i = 0; i < 5; i++)
        assert_true(isa_engine_is_tpb(isa_tpb_engines[i]));
    assert_int_equal(isa_engine_by_name("Activation"), ISA_ENG_ACT);
}

/* No two fields of a format (header included) share a bit; all fit. */
static void test_fields_fit_and_do_not_overlap(void **state)
{
    (void)state;
    for (unsigned f = 0; f < ISA_FMT_COUNT; f++) {
        uint8_t used[ISA_BUNDLE_BYTES * 8];
        memset(used, 0, sizeof used);
        for (unsigned b = 0; b < 16; b++)
            used[b] = 1; /* opcode + 0x10 */
        const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[f] };
        for (int k = (f == ISA_FMT_HDR); k < 2; k++) {
            for (unsigned i = 0; i < parts[k]->nfields; i++) {
                const isa_field_t *fd = &parts[k]->fields[i];
                assert_true(fd->width >= 1 && fd->width <= 32);
                assert_true(fd->bitpos + fd->width <= ISA_BUNDLE_BYTES * 8);
                if (f != ISA_FMT_HDR || k == 0) {
                    assert_true(fd->offset + 4u <= (k == 0 ? sizeof(isa_sync_t) : parts[k]->struct_size));
                }
                for (unsigned b = fd->bitpos; b < fd->bitpos + fd->width; b++) {
                    if (used[b])
                        fail_msg("format %s: field %s overlaps at bit %u", parts[k]->name, fd->name, b);
                    used[b] = 1;
                }
                /* every enum value must fit the field */
                for (unsigned v = 0; v < 256; v++)
                    if (fd->type != ISA_FT_U && fd->type != ISA_FT_S && fd->type != ISA_FT_HEX &&
                        fd->type != ISA_FT_F32 && isa_enum_name(fd->type, v) && fd->width < 32)
                        assert_true(v < (1u << fd->width));
            }
        }
        /* body fields never touch the header */
        for (unsigned i = 0; f != ISA_FMT_HDR && i < isa_formats[f].nfields; i++)
            assert_true(isa_formats[f].fields[i].bitpos >= 12 * 8);
    }
}

static void test_every_op_has_format(void **state)
{
    (void)state;
    for (unsigned i = 0; i < ISA_OP_COUNT; i++) {
        assert_true(isa_ops[i].format < ISA_FMT_COUNT);
        assert_int_not_equal(isa_ops[i].format, ISA_FMT_HDR);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opcodes_unique),
        cmocka_unit_test(test_pinned_opcodes),
        cmocka_unit_test(test_engines),
        cmocka_unit_test(test_fields_fit_and_do_not_overlap),
        cmocka_unit_test(test_every_op_has_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
