/* fj_ops_asm.c - inline assembly in a kernel file (seed 001 §7.5):
 *   inline_asm        structured: an ISA opcode, its operands bound to
 *                     tile accesses (the first num_inputs read, the rest
 *                     written) and its other fields by name (asm_attrs)
 *   inline_asm_bytes  raw: one 64-byte bundle given as hex, opaque to the
 *                     compiler, with its sync type and latency estimate
 * docs/kernel-format.md, "Inline assembly". */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fj.h"

static int asm_opcode(jx_t *j, const cJSON *o, const char *path, const isa_opinfo_t **out)
{
    const char *mn;
    if (fj_get_str(j, o, path, "opcode", &mn, true))
        return -1;
    const isa_opinfo_t *oi = isa_op_by_mnemonic(mn);
    if (!oi)
        return fj_jfail(j, path, "opcode", "unknown instruction '%s' (docs/isa.md)", mn);
    if (oi->cls > ISA_CLASS_POOL)
        return fj_jfail(j, path, "opcode", "%s is a %s instruction; inline assembly takes "
                        "compute instructions (matmul, act, vector, pool classes)", mn,
                        isa_class_name(oi->cls));
    *out = oi;
    return 0;
}

/* One operand [field, access]: the field names a TAP or PTR operand of the
 * format; returns the index of its ".addr" field. */
static int asm_operand(jx_t *j, const cJSON *it, const char *path, isa_format_t fmt, int n,
                       const tir_ap_t **ap)
{
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 || !cJSON_IsString(it->child))
        return fj_jfail(j, path, "operands", "entry %d must be [\"operand field\", access]", n);
    char full[80];
    snprintf(full, sizeof full, "%s.addr", it->child->valuestring);
    const isa_field_t *f = isa_field_by_name(fmt, full);
    if (!f || (f->opnd_kind != ISA_OPND_TAP && f->opnd_kind != ISA_OPND_PTR))
        return fj_jfail(j, path, "operands", "entry %d: '%s' is not a tile operand of format %s",
                        n, it->child->valuestring, isa_formats[fmt].name);
    fj_operand_t opnd;
    if (fj_operand_item(j, it->child->next, path, "operands", false, &opnd))
        return -1;
    if (fj_intern_ap(j, path, "operands", &opnd.ap, ap))
        return -1;
    return (int)(f - isa_formats[fmt].fields);
}

static int asm_attr(jx_t *j, const cJSON *a, const char *path, isa_format_t fmt, tir_asm_t *r)
{
    const isa_field_t *f = isa_field_by_name(fmt, a->string);
    if (!f || f->operand)
        return fj_jfail(j, path, "asm_attrs", "'%s' is not a field of format %s (operands go in "
                        "'operands')", a->string, isa_formats[fmt].name);
    if (r->n_asm_attrs >= 12)
        return fj_jfail(j, path, "asm_attrs", "more than 12 fields");
    uint32_t v;
    if (cJSON_IsBool(a)) {
        v = cJSON_IsTrue(a);
    } else if (cJSON_IsString(a)) {
        int e = f->type == ISA_FT_DTYPE ? isa_dtype_by_name(a->valuestring)
                                        : isa_enum_by_name(f->type, fj_strip_prefix(a->valuestring));
        if (e < 0)
            return fj_jfail(j, path, "asm_attrs", "%s: unknown %s value '%s'", a->string,
                            isa_ftype_name(f->type), a->valuestring);
        v = (uint32_t)e;
    } else if (cJSON_IsNumber(a)) {
        double d = a->valuedouble;
        if (f->type == ISA_FT_F32) {
            float x = (float)d;
            memcpy(&v, &x, sizeof v);
        } else if (d != floor(d) || d < -2147483648.0 || d > 4294967295.0) {
            return fj_jfail(j, path, "asm_attrs", "%s: %g is not a 32-bit integer", a->string, d);
        } else {
            v = d < 0 ? (uint32_t)(int32_t)d : (uint32_t)d;
        }
    } else {
        return fj_jfail(j, path, "asm_attrs", "%s: expected a number, boolean or enum name",
                        a->string);
    }
    r->asm_attr_field[r->n_asm_attrs] = (int16_t)(f - isa_formats[fmt].fields);
    r->asm_attr_val[r->n_asm_attrs++] = v;
    return 0;
}

int fj_h_inline_asm(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const isa_opinfo_t *oi = NULL;
    int nin;
    tir_asm_t *r = tir_new_asm(j->b.k);
    ENC_RARE_SET(&j->b, op, inl, r);
    if (!r)
        return fj_jfail(j, path, NULL, "out of memory");
    if (asm_opcode(j, o, path, &oi) ||
        fj_get_int_range(j, o, path, "num_inputs", &nin, 0, 0, 4))
        return -1;
    r->asm_op = (int)oi->op;
    const cJSON *ops = fj_field(o, "operands");
    if (!ops || !cJSON_IsArray(ops))
        return fj_jfail(j, path, "operands", "expected [[\"operand field\", access], ...]");
    int n = 0, nout = 0;
    for (const cJSON *it = ops->child; it; it = it->next, n++) {
        bool in = n < nin;
        if (!in && nout == 2)
            return fj_jfail(j, path, "operands", "at most 2 outputs (after %d inputs)", nin);
        const tir_ap_t **ap = in ? &op->src[n] : nout == 0 ? &op->dst : &op->dst2;
        int fi = asm_operand(j, it, path, oi->format, n, ap);
        if (fi < 0)
            return -1;
        for (int k = 0; k < 6; k++)
            if (r->asm_opnd[k] == fi)
                return fj_jfail(j, path, "operands", "entry %d binds '%s' twice", n,
                                it->child->valuestring);
        r->asm_opnd[in ? n : 4 + nout++] = (int16_t)fi;
    }
    if (n < nin)
        return fj_jfail(j, path, "num_inputs", "%d but only %d operands", nin, n);
    op->nsrc = nin;
    const cJSON *attrs = fj_field(o, "asm_attrs");
    if (attrs && !cJSON_IsObject(attrs))
        return fj_jfail(j, path, "asm_attrs", "expected an object {field: value}");
    for (const cJSON *a = attrs ? attrs->child : NULL; a; a = a->next)
        if (asm_attr(j, a, path, oi->format, r))
            return -1;
    return 1;
}

int fj_h_inline_asm_bytes(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const char *hex, *sync;
    tir_asm_t *r = tir_new_asm(j->b.k);
    ENC_RARE_SET(&j->b, op, inl, r);
    if (!r)
        return fj_jfail(j, path, NULL, "out of memory");
    if (fj_get_str(j, o, path, "asm_bytes", &hex, true) ||
        fj_get_str(j, o, path, "sync_type", &sync, false) ||
        fj_get_int_range(j, o, path, "latency_estimate", &r->latency_estimate, 0, 0, 1 << 30))
        return -1;
    size_t n = 0;
    for (const char *p = hex; *p; p++) {
        if (isspace((unsigned char)*p))
            continue;
        if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) || n == 64)
            return fj_jfail(j, path, "asm_bytes", "expected 64 bytes as hex digit pairs");
        char b[3] = {p[0], p[1], 0};
        r->asm_bytes[n++] = (uint8_t)strtoul(b, NULL, 16);
        p++;
    }
    if (n != 64)
        return fj_jfail(j, path, "asm_bytes", "%zu bytes; a bundle is 64", n);
    if (!sync || !strcmp(sync, "none"))
        r->sync_type = 0;
    else if (!strcmp(sync, "barrier"))
        r->sync_type = 1;
    else
        return fj_jfail(j, path, "sync_type", "unknown '%s' (none, barrier)", sync);
    return 1;
}
