/* Assembler / disassembler round trips over every opcode with seeded random
 * field values, and rejection of bad bundles, streams and lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "asm.h"
#include "dis.h"
#include "isa.h"
#include "xorshift.h"

/* ------------------------------------------------------------ random */
typedef struct { uint64_t s; } rng_t;

static uint32_t rnd(rng_t *r)
{
    return (uint32_t)(xorshift64(&r->s) >> 11);
}

static uint32_t rnd_below(rng_t *r, uint32_t n) { return n ? rnd(r) % n : 0; }

/* Random value of `width` bits, biased towards the edges (0, 1, max). */
static uint32_t rnd_bits(rng_t *r, unsigned width)
{
    uint32_t mask = width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1;
    switch (rnd_below(r, 6)) {
    case 0: return 0;
    case 1: return 1 & mask;
    case 2: return mask;
    default: return rnd(r) & mask;
    }
}

static int32_t rnd_signed(rng_t *r, unsigned width)
{
    uint32_t v = rnd_bits(r, width);
    if (width < 32 && (v >> (width - 1)) & 1)
        v |= ~((1u << width) - 1); /* sign-extend */
    return (int32_t)v;
}

static uint32_t rnd_enum(rng_t *r, isa_ftype_t t)
{
    for (;;) {
        uint32_t v = rnd_below(r, t == ISA_FT_DTYPE ? ISA_DT_COUNT : 32);
        if (isa_enum_name(t, v))
            return v;
    }
}

/* Whether TAP operand `operand` of op takes dtype v: a packed MX quad or
 * an E8M0 scale only where the decoder takes one. */
static bool dtype_fits(isa_op_t op, const char *operand, uint32_t v)
{
    isa_dtype_kind_t k = isa_dtype_kind(v);
    return (k != ISA_DK_X || isa_packed_operand(op, operand)) &&
           (k != ISA_DK_S || isa_scale_operand(op, operand));
}

/* A named dtype that the operand takes; an MX-only one half the time
 * where it takes one. */
static uint32_t rnd_dtype(rng_t *r, isa_op_t op, const char *operand)
{
    bool mx_ok = isa_packed_operand(op, operand) || isa_scale_operand(op, operand);
    for (;;) {
        uint32_t v = rnd_enum(r, ISA_FT_DTYPE);
        if (dtype_fits(op, operand, v) &&
            (!mx_ok || isa_dtype_mx_only(v) == (rnd_below(r, 2) == 0)))
            return v;
    }
}

static void rnd_tap(rng_t *r, isa_tap_t *t, bool allow_absent, isa_op_t op, const char *operand)
{
    memset(t, 0, sizeof *t);
    if (allow_absent && rnd_below(r, 5) == 0)
        return; /* space none: absent operand */
    t->space = rnd_below(r, 2) ? ISA_SPACE_SBUF : ISA_SPACE_PSUM;
    t->start = rnd_below(r, ISA_NUM_PARTITIONS);
    t->nparts = 1 + rnd_below(r, ISA_NUM_PARTITIONS - t->start);
    t->addr = rnd_bits(r, 24);
    t->dtype = rnd_dtype(r, op, operand);
    t->ndims = rnd_below(r, ISA_MAX_FREE_DIMS + 1);
    for (unsigned d = 0; d < t->ndims; d++) {
        t->step[d] = rnd_signed(r, 16);
        t->count[d] = 1 + rnd_below(r, 0xFFFF);
    }
}

static void rnd_ptr(rng_t *r, isa_ptr_t *p)
{
    memset(p, 0, sizeof *p);
    if (rnd_below(r, 4) == 0)
        return;
    p->space = rnd_below(r, 2) ? ISA_SPACE_SBUF : ISA_SPACE_PSUM;
    p->addr = rnd_bits(r, 24);
    do   /* a pointer reads one number: no MX-only dtype */
        p->dtype = rnd_enum(r, ISA_FT_DTYPE);
    while (isa_dtype_mx_only(p->dtype));
}

static void rnd_dap(rng_t *r, isa_dap_t *d)
{
    memset(d, 0, sizeof *d);
    if (rnd_below(r, 8) == 0)
        return;
    d->space = rnd_below(r, 4); /* none..hbm: the codec allows any */
    d->addr = rnd_bits(r, 32);
    d->dtype = rnd_enum(r, ISA_FT_DTYPE);
    d->core = rnd_bits(r, 3);
    for (int k = 0; k < 2; k++) {
        d->step[k] = rnd_signed(r, 32);
        d->count[k] = rnd_bits(r, 16);
    }
}

static uint32_t rnd_scalar(rng_t *r, const isa_field_t *f)
{
    if (!strcmp(f->name, "reg"))
        return rnd_below(r, ISA_NUM_REGS);
    if (!strcmp(f->name, "src_reg") || !strcmp(f->name, "dst_reg"))
        return rnd_below(r, 3) ? rnd_below(r, ISA_NUM_REGS) : ISA_REG_NONE;
    switch (f->type) {
    case ISA_FT_U:
    case ISA_FT_HEX:
    case ISA_FT_F32: /* any bits, NaNs included */
        return rnd_bits(r, f->width);
    case ISA_FT_S:
        return (uint32_t)rnd_signed(r, f->width);
    default:
        return rnd_enum(r, f->type);
    }
}

static void rnd_sync(rng_t *r, isa_sync_t *s)
{
    const isa_fmtinfo_t *h = &isa_formats[ISA_FMT_HDR];
    isa_inst_t tmp;
    memset(&tmp, 0, sizeof tmp);
    if (rnd_below(r, 3) == 0) {
        memset(s, 0, sizeof *s);
        return;
    }
    for (unsigned i = 0; i < h->nfields; i++)
        isa_field_set(&tmp, &h->fields[i], rnd_scalar(r, &h->fields[i]));
    *s = tmp.sync;
}

/* A random valid instruction of opcode op (prefix dims folded in). */
static void rnd_inst(rng_t *r, isa_op_t op, isa_inst_t *in)
{
    memset(in, 0, sizeof *in);
    in->op = op;
    in->l2 = isa_ops[op].l2;
    if (isa_ops[op].cls != ISA_CLASS_PREFIX)
        rnd_sync(r, &in->sync);
    const isa_fmtinfo_t *fi = &isa_formats[isa_ops[op].format];
    uint8_t *body = isa_inst_body(in);
    bool first_tap = true;
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        if (f->opnd_kind == ISA_OPND_NONE) {
            isa_field_set(in, f, rnd_scalar(r, f));
            continue;
        }
        if (!strstr(f->name, ".addr"))
            continue;
        if (f->opnd_kind == ISA_OPND_TAP)
            rnd_tap(r, (isa_tap_t *)(body + f->offset), !first_tap, op, f->operand);
        else if (f->opnd_kind == ISA_OPND_PTR)
            rnd_ptr(r, (isa_ptr_t *)(body + f->offset));
        else
            rnd_dap(r, (isa_dap_t *)(body + f->offset));
        if (f->opnd_kind == ISA_OPND_TAP)
            first_tap = false;
    }
}

/* ------------------------------------------------------------ helpers */
static void report_failure(const char *what, const char *text, const char *detail)
{
    print_error("%s\n  text: %s\n  detail: %s\n", what, text, detail);
    fail();
}

/* encode -> stream decode -> same struct; format -> parse -> same struct;
 * assemble(format) -> same bytes; disassemble(bytes) -> same text. */
static void check_round_trip(const isa_inst_t *in)
{
    uint8_t b[2][ISA_BUNDLE_BYTES];
    unsigned nb = 0;
    isa_err_t err;
    memset(&err, 0, sizeof err);
    char line[4096];
    isa_format_line(in, line, sizeof line);
    if (isa_encode_with_prefixes(in, b, &nb, &err) != ISA_OK)
        report_failure("encode failed", line, err.msg);

    isa_stream_t s;
    if (isa_stream_decode(&b[0][0], nb * ISA_BUNDLE_BYTES, ISA_ENG_UNASSIGNED, &s, &err) != ISA_OK)
        report_failure("stream decode failed", line, err.msg);
    assert_int_equal(s.count, 1);
    if (memcmp(&s.insts[0].inst, in, sizeof *in) != 0)
        report_failure("decode(encode(x)) != x", line, "");
    isa_stream_free(&s);

    isa_inst_t parsed;
    isa_asm_diag_t d;
    if (isa_parse_inst(line, &parsed, &d) != 0)
        report_failure("parse failed", line, d.msg);
    if (memcmp(&parsed, in, sizeof *in) != 0)
        report_failure("parse(format(x)) != x", line, "");

    isa_asm_result_t res;
    if (isa_assemble(line, strlen(line), NULL, &res) != 0)
        report_failure("assemble failed", line, res.diags[0].msg);
    assert_int_equal(res.len, nb * ISA_BUNDLE_BYTES);
    assert_memory_equal(res.bytes, b, res.len);
    isa_asm_result_free(&res);

    isa_dis_opts_t o = { .canonical = true };
    isa_text_t t = { 0 };
    isa_dis_report_t rep;
    assert_int_equal(isa_disassemble(&b[0][0], nb * ISA_BUNDLE_BYTES, &o, &t, &rep), 0);
    assert_int_equal(rep.ninvalid, 0);
    const char *last = t.s;
    if (nb == 2) {
        assert_memory_equal(t.s, "ApExt ", 6);
        last = strchr(t.s, '\n') + 1;
    }
    char want[4100];
    snprintf(want, sizeof want, "%s\n", line);
    if (strcmp(last, want) != 0)
        report_failure("dis(encode(x)) != format(x)", line, last);
    /* and the disassembly (with the ApExt line) assembles back */
    assert_int_equal(isa_assemble(t.s, t.len, NULL, &res), 0);
    assert_memory_equal(res.bytes, b, res.len);
    isa_asm_result_free(&res);
    isa_text_free(&t);
}

static void test_random_round_trip_every_opcode(void **state)
{
    (void)state;
    rng_t r = { 0x9E3779B97F4A7C15ull };
    for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
        if (isa_ops[op].cls == ISA_CLASS_PREFIX)
            continue; /* covered through the TAP dims and PredExt below */
        for (int it = 0; it < 150; it++) {
            isa_inst_t in;
            rnd_inst(&r, (isa_op_t)op, &in);
            check_round_trip(&in);
        }
    }
}


/* Make the operand that field f belongs to present (space sbuf/psum). */
static void make_present(rng_t *r, isa_inst_t *in, const isa_field_t *f)
{
    char name[64];
    isa_format_t fmt = isa_ops[in->op].format;
    snprintf(name, sizeof name, "%s.addr", f->operand);
    const isa_field_t *start = isa_field_by_name(fmt, name);
    uint8_t *p = (uint8_t *)isa_inst_body(in) + start->offset;
    if (f->opnd_kind == ISA_OPND_TAP && ((isa_tap_t *)p)->space == ISA_SPACE_NONE)
        rnd_tap(r, (isa_tap_t *)p, false, in->op, f->operand);
    else if (f->opnd_kind == ISA_OPND_PTR && ((isa_ptr_t *)p)->space == ISA_SPACE_NONE)
        ((isa_ptr_t *)p)->space = ISA_SPACE_SBUF;
}

/* Exhaustive sweep of every enum/dtype/bool field of every opcode over all
 * the values its width can hold: members round-trip through bytes and text,
 * non-members are rejected by the encoder and the decoder, naming the field. */
static void test_enum_fields_exhaustive(void **state)
{
    (void)state;
    rng_t r = { 99 };
    unsigned checked = 0;
    for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
        const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[isa_ops[op].format] };
        for (int k = 0; k < 2; k++) {
            for (unsigned i = 0; i < parts[k]->nfields; i++) {
                const isa_field_t *f = &parts[k]->fields[i];
                bool is_enum = f->type == ISA_FT_BOOL || f->type == ISA_FT_DTYPE || f->type >= ISA_FT_SPACE;
                if (!is_enum || f->type == ISA_FT_SPACE)
                    continue; /* space changes operand presence: covered by the random tests */
                for (uint32_t v = 0; v < (1u << f->width); v++) {
                    isa_inst_t in;
                    rnd_inst(&r, (isa_op_t)op, &in);
                    if (f->operand)
                        make_present(&r, &in, f);
                    if (isa_ops[op].cls == ISA_CLASS_PREFIX && k == 0)
                        break; /* prefixes carry no header */
                    isa_field_set(&in, f, v);
                    uint8_t b[2][ISA_BUNDLE_BYTES];
                    unsigned nb;
                    isa_err_t err;
                    memset(&err, 0, sizeof err);
                    isa_status_t st = isa_encode_with_prefixes(&in, b, &nb, &err);
                    bool misplaced_mx = f->type == ISA_FT_DTYPE && f->operand &&
                                        isa_dtype_mx_only(v) &&
                                        (f->opnd_kind == ISA_OPND_PTR ||
                                         (f->opnd_kind == ISA_OPND_TAP &&
                                          !dtype_fits((isa_op_t)op, f->operand, v)));
                    if (misplaced_mx) {
                        /* a packed MX quad or an E8M0 scale outside its MX operands: refused */
                        if (st == ISA_OK || !strstr(err.msg, isa_dtype_kind(v) == ISA_DK_X ?
                                                                 "packed MX dtype" : "MX scale dtype"))
                            report_failure("misplaced MX dtype accepted", f->name, err.msg);
                    } else if (isa_enum_name(f->type, v)) {
                        if (st != ISA_OK)
                            report_failure("valid enum value rejected", f->name, err.msg);
                        if (isa_ops[op].cls != ISA_CLASS_PREFIX) {
                            check_round_trip(&in);
                        } else { /* a prefix alone is no valid stream: bundle + text */
                            isa_inst_t out, parsed;
                            isa_asm_diag_t d;
                            char line[1024];
                            assert_int_equal(isa_decode(b[0], 0, &out, NULL), ISA_OK);
                            assert_memory_equal(&out, &in, sizeof in);
                            isa_format_line(&in, line, sizeof line);
                            assert_int_equal(isa_parse_inst(line, &parsed, &d), 0);
                            assert_memory_equal(&parsed, &in, sizeof in);
                        }
                    } else {
                        assert_int_equal(st, ISA_E_RANGE);
                        assert_non_null(err.field);
                        assert_string_equal(err.field, f->name);
                        /* the same value planted in valid bytes is rejected on decode */
                        isa_field_set(&in, f, 0);
                        uint8_t ok[2][ISA_BUNDLE_BYTES];
                        if (isa_encode_with_prefixes(&in, ok, &nb, NULL) != ISA_OK)
                            continue;
                        uint8_t *last = ok[nb - 1];
                        for (unsigned bit = 0; bit < f->width; bit++)
                            if ((v >> bit) & 1)
                                last[(f->bitpos + bit) / 8] |= (uint8_t)(1u << ((f->bitpos + bit) % 8));
                        isa_inst_t out;
                        memset(&err, 0, sizeof err);
                        assert_int_equal(isa_decode(last, 0, &out, &err), ISA_E_RANGE);
                        assert_string_equal(err.field, f->name);
                    }
                    checked++;
                }
            }
        }
    }
    assert_true(checked > 1000);
}

/* PredExt + TensorScalarPtr (+ ApExt): the stream text re-assembles. */
static void test_predext_round_trip(void **state)
{
    (void)state;
    rng_t r = { 12345 };
    for (int it = 0; it < 200; it++) {
        isa_inst_t p, t;
        rnd_inst(&r, ISA_OP_PRED_EXT, &p);
        rnd_inst(&r, ISA_OP_TENSOR_SCALAR_PTR, &t);
        uint8_t buf[3 * ISA_BUNDLE_BYTES];
        uint8_t b2[2][ISA_BUNDLE_BYTES];
        unsigned nb;
        assert_int_equal(isa_encode(&p, buf, NULL), ISA_OK);
        assert_int_equal(isa_encode_with_prefixes(&t, b2, &nb, NULL), ISA_OK);
        memcpy(buf + ISA_BUNDLE_BYTES, b2, nb * ISA_BUNDLE_BYTES);
        size_t len = (1 + nb) * ISA_BUNDLE_BYTES;
        isa_stream_t s;
        assert_int_equal(isa_stream_decode(buf, len, ISA_ENG_DVE, &s, NULL), ISA_OK);
        assert_int_equal(s.count, 1);
        assert_true(s.insts[0].has_pred);
        assert_memory_equal(&s.insts[0].pred, &p.f.PREDEXT, sizeof p.f.PREDEXT);
        isa_stream_free(&s);

        isa_dis_opts_t o = { .canonical = true };
        isa_text_t txt = { 0 };
        isa_dis_report_t rep;
        isa_disassemble(buf, len, &o, &txt, &rep);
        assert_int_equal(rep.ninvalid, 0);
        assert_memory_equal(txt.s, "PredExt ", 8);
        isa_asm_result_t res;
        if (isa_assemble(txt.s, txt.len, NULL, &res) != 0)
            report_failure("PredExt text does not assemble", txt.s, res.diags[0].msg);
        assert_int_equal(res.len, len);
        assert_memory_equal(res.bytes, buf, len);
        isa_asm_result_free(&res);
        isa_text_free(&txt);
    }
}

static void test_f32_text_is_exact(void **state)
{
    (void)state;
    static const uint32_t bits[] = { 0x00000000, 0x80000000, 0x3f800000, 0x00000001, 0x807fffff,
                                     0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001,
                                     0xffffffff, 0x3eaaaaab, 0x33d6bf95 };
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        float f;
        memcpy(&f, &bits[i], 4);
        char line[200], txt[64];
        isa_format_f32(f, txt, sizeof txt);
        snprintf(line, sizeof line, "Dropout prob=%s", txt);
        isa_inst_t in;
        isa_asm_diag_t d;
        assert_int_equal(isa_parse_inst(line, &in, &d), 0);
        uint32_t got;
        memcpy(&got, &in.f.DROP.prob, 4);
        assert_int_equal(got, bits[i]);
    }
    /* hex floats are accepted as input too */
    isa_inst_t in;
    isa_asm_diag_t d;
    assert_int_equal(isa_parse_inst("Dropout prob=0x1p-2", &in, &d), 0);
    assert_true(in.f.DROP.prob == 0.25f);
}

/* -------------------------------------------------- invalid bundles */
static void encode_ok(const char *line, uint8_t *out, size_t *len)
{
    isa_asm_result_t res;
    if (isa_assemble(line, strlen(line), NULL, &res) != 0)
        report_failure("assemble failed", line, res.diags[0].msg);
    memcpy(out, res.bytes, res.len);
    *len = res.len;
    isa_asm_result_free(&res);
}

/* Disassembling buf must flag a problem whose message contains `want`, print
 * .bundle data for the bad bundles, and the text must re-assemble to buf. */
static void expect_dis_problem(const uint8_t *buf, size_t len, const char *want)
{
    isa_dis_opts_t o = { .hex = true };
    isa_text_t t = { 0 };
    isa_dis_report_t rep;
    assert_int_equal(isa_disassemble(buf, len, &o, &t, &rep), 0);
    assert_true(rep.ninvalid + rep.nillegal + (rep.trailing ? 1 : 0) > 0);
    if (!strstr(rep.first_error, want))
        report_failure("unexpected error", rep.first_error, want);
    isa_text_free(&t);
    if (rep.trailing)
        return;
    o.canonical = true;
    o.hex = false;
    isa_disassemble(buf, len, &o, &t, &rep);
    isa_asm_result_t res;
    if (isa_assemble(t.s, t.len, NULL, &res) != 0)
        report_failure("canonical text of an invalid stream does not assemble", t.s, res.diags[0].msg);
    assert_int_equal(res.len, len);
    assert_memory_equal(res.bytes, buf, len);
    isa_asm_result_free(&res);
    isa_text_free(&t);
}

static void set_field(uint8_t *b, isa_format_t fmt, const char *name, uint32_t v)
{
    const isa_field_t *f = isa_field_by_name(fmt, name);
    assert_non_null(f);
    for (unsigned i = 0; i < f->width; i++) {
        unsigned p = f->bitpos + i;
        b[p / 8] = (uint8_t)((b[p / 8] & ~(1u << (p % 8))) | (((v >> i) & 1u) << (p % 8)));
    }
}

#define TT_LINE "TensorTensor op=add in0=sbuf[0:128]@0x0:fp32<1x64> in1=sbuf[0:128]@0x100:fp32<1x64> out=sbuf[0:128]@0x200:fp32<1x64>"

static void test_invalid_bundles_are_reported(void **state)
{
    (void)state;
    uint8_t b[4 * ISA_BUNDLE_BYTES];
    size_t len;

    encode_ok(TT_LINE, b, &len);
    b[0] = 0x3F; /* no such opcode */
    expect_dis_problem(b, len, "field 'opcode': unknown opcode 0x3f");

    encode_ok(TT_LINE, b, &len);
    b[1] = 0x11;
    expect_dis_problem(b, len, "field 'header': byte 1 is 0x11");

    encode_ok(TT_LINE, b, &len);
    b[60] = 0x04;
    expect_dis_problem(b, len, "reserved bit 2 of byte 60");

    encode_ok(TT_LINE, b, &len);
    set_field(b, ISA_FMT_TT, "op", 200);
    expect_dis_problem(b, len, "field 'op' has invalid ALU value 200");

    encode_ok(TT_LINE, b, &len);
    set_field(b, ISA_FMT_TT, "in1.dtype", ISA_DT_FP8E8M0);   /* an E8M0 scale read as a number */
    expect_dis_problem(b, len, "operand 'in1': MX scale dtype fp8e8m0 is taken only by the scale "
                               "of QuantizeMX, LdWeightsMX and MatmulMX");

    encode_ok(TT_LINE, b, &len);   /* a packed MX quad where a number is read */
    set_field(b, ISA_FMT_TT, "in1.dtype", ISA_DT_FP8E4M3X4);
    expect_dis_problem(b, len, "operand 'in1': packed MX dtype fp8e4m3x4 is taken only by "
                               "QuantizeMX out, LdWeightsMX src and MatmulMX moving");

    encode_ok(TT_LINE, b, &len);
    set_field(b, ISA_FMT_TT, "out.nparts", 129);
    expect_dis_problem(b, len, "operand 'out': nparts 129 not in 1..128");

    encode_ok(TT_LINE, b, &len);
    set_field(b, ISA_FMT_TT, "in0.start", 100);
    expect_dis_problem(b, len, "operand 'in0': partitions 100..227 exceed 128");

    encode_ok("RegSet reg=3 imm=-1", b, &len);
    set_field(b, ISA_FMT_REG, "reg", 64);
    expect_dis_problem(b, len, "field 'reg': register 64 not in 0..63");

    /* a TAP claiming 3 dims with no ApExt in front */
    encode_ok("TensorCopy in=sbuf[0:1]@0x0:fp32<1x2,2x2> out=sbuf[0:1]@0x0:fp32<1x4>", b, &len);
    set_field(b, ISA_FMT_COPY, "in.ndims", 3);
    expect_dis_problem(b, len, "no ApExt prefix");

    /* dangling prefix at the end of the stream */
    uint8_t tmp[4 * ISA_BUNDLE_BYTES];
    encode_ok("ApExt o0_step2=1 o0_count2=2\n"
              "TensorCopy in=sbuf[0:1]@0x0:fp32<1x1,1x1,1x2> out=sbuf[0:1]@0x0:fp32<1x2>", tmp, &len);
    encode_ok("Halt", b, &len);
    memcpy(b + ISA_BUNDLE_BYTES, tmp, ISA_BUNDLE_BYTES);
    len = 2 * ISA_BUNDLE_BYTES;
    expect_dis_problem(b, len, "extends no instruction");

    /* ApExt in front of an instruction without 3-4 dim operands */
    encode_ok("Halt", b + ISA_BUNDLE_BYTES, &len);
    memcpy(b, tmp, ISA_BUNDLE_BYTES);
    len = 2 * ISA_BUNDLE_BYTES;
    expect_dis_problem(b, len, "ApExt slot 0 is set but operand slot 0 of Halt");

    /* PredExt in front of something other than TensorScalarPtr */
    encode_ok(".bundle f1100000000000000000000000000000 00000000000000000000000000000000 "
              "00000000000000000000000000000000 00000000000000000000000000000000\nNop", b, &len);
    expect_dis_problem(b, len, "only TensorScalarPtr takes it");

    /* a prefix carrying semaphore fields */
    memcpy(b, tmp, 2 * ISA_BUNDLE_BYTES);
    len = 2 * ISA_BUNDLE_BYTES;
    set_field(b, ISA_FMT_APEXT, "wait_en", 1);
    expect_dis_problem(b, len, "a prefix carries no semaphore fields");

    /* size not a multiple of 64 */
    encode_ok("Halt", b, &len);
    expect_dis_problem(b, len + 5, "5 trailing bytes at offset 0x40");

    /* an out-of-range op in the struct is rejected, not read past the table */
    isa_inst_t bad;
    memset(&bad, 0, sizeof bad);
    bad.op = ISA_OP_COUNT;
    uint8_t two[2][ISA_BUNDLE_BYTES];
    unsigned nbb = 9;
    isa_err_t e2;
    assert_int_equal(isa_encode_with_prefixes(&bad, two, &nbb, &e2), ISA_E_OPCODE);
    assert_int_equal(nbb, 0);
    char txt[64];
    assert_int_equal(isa_format_inst(&bad, txt, sizeof txt), 0);

    /* opcode not legal on the engine */
    encode_ok("Matmul", b, &len);
    isa_dis_opts_t o = { .engine = ISA_ENG_DVE };
    isa_text_t t = { 0 };
    isa_dis_report_t rep;
    isa_disassemble(b, len, &o, &t, &rep);
    assert_int_equal(rep.nillegal, 1);
    assert_non_null(strstr(t.s, "Matmul is not legal on engine DVE"));
    isa_text_free(&t);
}

/* Garbage never crashes the disassembler, and its canonical text always
 * re-assembles to the same bytes. */
static void test_random_garbage_round_trips(void **state)
{
    (void)state;
    rng_t r = { 777 };
    for (int it = 0; it < 300; it++) {
        uint8_t buf[4 * ISA_BUNDLE_BYTES];
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (uint8_t)rnd(&r);
        for (int k = 0; k < 4; k++) { /* mostly plausible headers */
            if (rnd_below(&r, 4))
                buf[k * 64 + 1] = ISA_HEADER_BYTE1;
            if (rnd_below(&r, 2))
                buf[k * 64] = isa_ops[rnd_below(&r, ISA_OP_COUNT)].l2;
        }
        isa_dis_opts_t o = { .canonical = true };
        isa_text_t t = { 0 };
        isa_dis_report_t rep;
        assert_int_equal(isa_disassemble(buf, sizeof buf, &o, &t, &rep), 0);
        isa_asm_result_t res;
        if (isa_assemble(t.s, t.len, NULL, &res) != 0)
            report_failure("garbage text does not assemble", t.s, res.diags[0].msg);
        assert_int_equal(res.len, sizeof buf);
        assert_memory_equal(res.bytes, buf, sizeof buf);
        isa_asm_result_free(&res);
        isa_text_free(&t);
    }
}


/* Mutated assembly text never crashes the assembler; whatever it accepts
 * disassembles to text that assembles to the same bytes. */
static void test_mutated_text_never_crashes(void **state)
{
    (void)state;
    rng_t r = { 4242 };
    static const char alphabet[] = "=:@[]<>,x()#;.- \t0123456789abcdefSsbufpsmnc_";
    for (int it = 0; it < 3000; it++) {
        isa_inst_t in;
        rnd_inst(&r, (isa_op_t)rnd_below(&r, ISA_OP_COUNT), &in);
        char line[4096];
        int n = isa_format_line(&in, line, sizeof line - 8);
        if (n <= 0 || n >= (int)sizeof line - 8)
            continue;
        for (int m = 1 + (int)rnd_below(&r, 3); m > 0; m--) {
            size_t len = strlen(line);
            size_t at = rnd_below(&r, (uint32_t)len + 1);
            char c = alphabet[rnd_below(&r, sizeof alphabet - 1)];
            switch (rnd_below(&r, 4)) {
            case 0: /* replace */
                if (at < len)
                    line[at] = c;
                break;
            case 1: /* insert */
                if (len + 2 < sizeof line) {
                    memmove(line + at + 1, line + at, len - at + 1);
                    line[at] = c;
                }
                break;
            case 2: /* delete */
                if (at < len)
                    memmove(line + at, line + at + 1, len - at);
                break;
            default: /* truncate */
                line[at] = '\0';
                break;
            }
        }
        isa_asm_result_t res;
        if (isa_assemble(line, strlen(line), NULL, &res) != 0) {
            assert_true(res.ndiags >= 1);
            assert_true(res.diags[0].msg[0] != '\0');
            isa_asm_result_free(&res);
            continue;
        }
        isa_dis_opts_t o = { .canonical = true };
        isa_text_t t = { 0 };
        isa_dis_report_t rep;
        isa_disassemble(res.bytes, res.len, &o, &t, &rep);
        isa_asm_result_t again;
        if (isa_assemble(t.s ? t.s : "", t.len, NULL, &again) != 0)
            report_failure("accepted text does not round-trip", line, again.diags[0].msg);
        assert_int_equal(again.len, res.len);
        assert_memory_equal(again.bytes, res.bytes, res.len);
        isa_asm_result_free(&again);
        isa_asm_result_free(&res);
        isa_text_free(&t);
    }
}

/* --------------------------------------------------- assembler errors */
static void expect_asm_error(const char *src, unsigned line, unsigned col, const char *want)
{
    isa_asm_result_t res;
    assert_int_equal(isa_assemble(src, strlen(src), NULL, &res), -1);
    assert_null(res.bytes);
    assert_true(res.ndiags >= 1);
    if (!strstr(res.diags[0].msg, want))
        report_failure("unexpected assembler error", res.diags[0].msg, want);
    if (res.diags[0].line != line || res.diags[0].col != col) {
        print_error("%s: got %u:%u, want %u:%u\n", src, res.diags[0].line, res.diags[0].col, line, col);
        fail();
    }
    isa_asm_result_free(&res);
}

static void test_assembler_errors(void **state)
{
    (void)state;
    expect_asm_error("Halt\nFoo x=1", 2, 1, "unknown mnemonic 'Foo'");
    expect_asm_error("tensortensor", 1, 1, "did you mean 'TensorTensor'");
    expect_asm_error("TensorTensor op=add op=max", 1, 21, "field 'op' is given twice");
    expect_asm_error("TensorTensor bogus=1", 1, 14, "unknown field 'bogus' for TensorTensor");
    expect_asm_error("TensorTensor in0=sbuf[0:129]@0x0:fp32", 1, 23, "exceeds the 128 partitions");
    expect_asm_error("TensorTensor in0=sbuf[0:8]@0x1000000:fp32", 1, 28, "field 'in0': value 16777216 out of range");
    expect_asm_error("TensorTensor in0=sbuf[0:8]@0x0:fp64", 1, 32, "unknown dtype 'fp64'");
    expect_asm_error("TensorTensor in0=sbuf[0:8]@0x0:fp32<1x0>", 1, 36, "count of dim 0 is 0");
    expect_asm_error("TensorTensor in0=sbuf[0:8]@0x0:fp32<1x1,1x1,1x1,1x1,1x1>", 1, 53, "at most 4 free dims");
    expect_asm_error("TensorTensor in0=hbm[0:8]@0x0:fp32", 1, 14, "compute engines cannot address hbm");
    expect_asm_error("RegSet reg=64", 1, 8, "register 64 not in 0..63");
    expect_asm_error("RegSet imm=2147483648", 1, 12, "out of range -2147483648..2147483647");
    expect_asm_error("Nop wait=S1>5", 1, 12, "expected '>=' after the semaphore");
    expect_asm_error("Nop upd=S1.sem_foo@read", 1, 12, "unknown SEMOP 'sem_foo'");
    expect_asm_error("Nop wait=S1>=1 wait_sem=3", 1, 16, "already set by 'wait'");
    expect_asm_error("Jump target=nowhere", 1, 13, "undefined label 'nowhere'");
    expect_asm_error("ApExt o0_step2=1 o0_count2=2\nNop", 2, 1, "ApExt (line 1) is not used");
    expect_asm_error("PredExt\nNop", 2, 1, "must be followed by TensorScalarPtr");
    expect_asm_error("Nop\nApExt o0_step2=1 o0_count2=2", 2, 1, "extends no instruction");
    expect_asm_error("ApExt o0_step2=1 o0_count2=2\n" TT_LINE, 2, 1, "is not used");
    expect_asm_error("ApExt o0_step2=1 o0_count2=3\n"
                     "TensorCopy in=sbuf[0:1]@0x0:fp32<1x1,1x1,1x2> out=sbuf[0:1]@0x0:fp32<1x2>",
                     1, 1, "ApExt does not match the outer dims");
    expect_asm_error(".bundle 00", 1, 9, "expected 128 hex digits");
    expect_asm_error("x: Nop\nx: Halt", 2, 1, "label 'x' is already defined on line 1");
    expect_asm_error("Dropout prob=abc", 1, 14, "expected a float");
    expect_asm_error("Activation func=exp scale=1.0x", 1, 27, "expected a float");
    expect_asm_error("TensorTensor op=add,", 1, 20, "unexpected ','");
}

static void test_assembler_engine_check(void **state)
{
    (void)state;
    isa_asm_opts_t o = { ISA_ENG_DVE };
    isa_asm_result_t res;
    const char *src = "Nop\n  Matmul";
    assert_int_equal(isa_assemble(src, strlen(src), &o, &res), -1);
    assert_int_equal(res.diags[0].line, 2);
    assert_int_equal(res.diags[0].col, 3);
    assert_non_null(strstr(res.diags[0].msg, "Matmul is not legal on engine DVE (legal on: PE)"));
    isa_asm_result_free(&res);
}

static void test_every_error_of_a_file_is_reported(void **state)
{
    (void)state;
    const char *src = "Nop\nFoo\nRegSet reg=99\nHalt\nTensorTensor in0=sbuf[0:0]@0x0:fp32\n";
    isa_asm_result_t res;
    assert_int_equal(isa_assemble(src, strlen(src), NULL, &res), -1);
    assert_int_equal(res.nerrors, 3);
    assert_int_equal(res.diags[0].line, 2);
    assert_int_equal(res.diags[1].line, 5);
    assert_int_equal(res.diags[2].line, 3); /* range checks run at encode time */
    isa_asm_result_free(&res);
}

static void test_labels_and_comments(void **state)
{
    (void)state;
    const char *src =
        "; a loop\n"
        "start:  RegSet reg=1 imm=3      # counter\n"
        "loop:   RegAdd reg=1 imm=-1\n"
        "        TensorCopy in=sbuf[0:1]@0x0:fp32<1x1,1x1,1x2> out=sbuf[0:1]@0x0:fp32<1x2>\n"
        "        BranchCmp reg=1 cmp=gt imm=0 target=loop\n"
        "        Call target=fn\n"
        "        Halt\n"
        "fn:     Return\n";
    isa_asm_result_t res;
    assert_int_equal(isa_assemble(src, strlen(src), NULL, &res), 0);
    assert_int_equal(res.len, 8 * ISA_BUNDLE_BYTES); /* TensorCopy took an ApExt */
    isa_stream_t s;
    assert_int_equal(isa_stream_decode(res.bytes, res.len, ISA_ENG_POOL, &s, NULL), ISA_OK);
    assert_int_equal(s.count, 7);
    assert_int_equal(s.insts[3].inst.op, ISA_OP_BRANCH_CMP);
    assert_int_equal(s.insts[3].inst.f.BR.target, 1);
    assert_int_equal(s.insts[4].inst.f.CALL.target, 7);
    isa_stream_free(&s);
    isa_asm_result_free(&res);
}

static void test_format_inst_fields_only(void **state)
{
    (void)state;
    isa_inst_t in;
    isa_asm_diag_t d;
    assert_int_equal(isa_parse_inst(TT_LINE " wait=S3>=5 upd=nc1:S4.sem_add_imm(16)@read", &in, &d), 0);
    char buf[512];
    int n = isa_format_inst(&in, buf, sizeof buf);
    assert_string_equal(buf, "op=add in0=sbuf[0:128]@0x0:fp32<1x64> in1=sbuf[0:128]@0x100:fp32<1x64> "
                             "out=sbuf[0:128]@0x200:fp32<1x64> wait=S3>=5 upd=nc1:S4.sem_add_imm(16)@read");
    assert_int_equal(n, (int)strlen(buf));
    /* snprintf semantics when truncated */
    char small[10];
    assert_int_equal(isa_format_inst(&in, small, sizeof small), n);
    assert_int_equal(strlen(small), 9);
    assert_true(in.sync.upd_remote && in.sync.upd_core == 1 && in.sync.upd_at_read);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_round_trip_every_opcode),
        cmocka_unit_test(test_enum_fields_exhaustive),
        cmocka_unit_test(test_predext_round_trip),
        cmocka_unit_test(test_f32_text_is_exact),
        cmocka_unit_test(test_invalid_bundles_are_reported),
        cmocka_unit_test(test_random_garbage_round_trips),
        cmocka_unit_test(test_mutated_text_never_crashes),
        cmocka_unit_test(test_assembler_errors),
        cmocka_unit_test(test_assembler_engine_check),
        cmocka_unit_test(test_every_error_of_a_file_is_reported),
        cmocka_unit_test(test_labels_and_comments),
        cmocka_unit_test(test_format_inst_fields_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
