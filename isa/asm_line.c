/* asm_line.c - the assembler's lexer and one-line instruction parser.  The
 * grammar is in docs/assembly.md; the field names, widths and types all come
 * from isa_formats[] (fields.def). */
#include "asm_lex.h"
#include "dis.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

unsigned asm_col_of(const lex_t *lx, const char *at)
{
    return (unsigned)(at - lx->line) + 1;
}

int asm_perr(lex_t *lx, const char *at, const char *field, const char *fmt, ...)
{
    isa_asm_diag_t *d = lx->diag;
    d->line = lx->lineno;
    d->col = at ? asm_col_of(lx, at) : 0;
    snprintf(d->field, sizeof d->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* --------------------------------------------------------------- lexing */
bool asm_at_end(const lex_t *lx)
{
    return lx->p >= lx->end || *lx->p == '#' || *lx->p == ';';
}

void asm_skip_ws(lex_t *lx)
{
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r'))
        lx->p++;
}

/* End of the current value token. */
bool asm_token_end(const lex_t *lx, const char *q)
{
    return q >= lx->end || *q == ' ' || *q == '\t' || *q == '\r' || *q == '#' || *q == ';';
}

bool asm_ident_char(char c, bool first)
{
    return isalpha((unsigned char)c) || c == '_' || c == '.' || (!first && isdigit((unsigned char)c));
}

/* Copy an identifier at the cursor into buf; returns its length (0 if none). */
size_t asm_take_ident(lex_t *lx, char *buf, size_t len)
{
    const char *s = lx->p;
    while (lx->p < lx->end && asm_ident_char(*lx->p, lx->p == s))
        lx->p++;
    size_t n = (size_t)(lx->p - s);
    size_t c = n < len - 1 ? n : len - 1;
    memcpy(buf, s, c);
    buf[c] = '\0';
    return n;
}

static bool expect(lex_t *lx, char c)
{
    if (lx->p < lx->end && *lx->p == c) {
        lx->p++;
        return true;
    }
    return false;
}

/* Integer: optional sign, then decimal digits, or 0x-prefixed hex when base
 * is 0 (no octal: "010" is ten). */
static int take_int(lex_t *lx, int base, long long *v, const char *field)
{
    const char *s = lx->p;
    bool neg = false;
    if (lx->p < lx->end && (*lx->p == '-' || *lx->p == '+')) {
        neg = *lx->p == '-';
        lx->p++;
    }
    if (lx->p >= lx->end || !isdigit((unsigned char)*lx->p))
        return asm_perr(lx, s, field, "field '%s': expected a number", field);
    int b = 10;
    if (base == 0 && lx->end - lx->p > 2 && lx->p[0] == '0' && (lx->p[1] == 'x' || lx->p[1] == 'X') &&
        isxdigit((unsigned char)lx->p[2])) {
        b = 16;
        lx->p += 2;
    }
    unsigned long long u = 0;
    bool big = false;
    while (lx->p < lx->end && (b == 16 ? isxdigit((unsigned char)*lx->p) : isdigit((unsigned char)*lx->p))) {
        char c = (char)tolower((unsigned char)*lx->p++);
        u = u * (unsigned)b + (unsigned)(isdigit((unsigned char)c) ? c - '0' : c - 'a' + 10);
        if (u > (1ull << 40))
            big = true;
    }
    if (big)
        return asm_perr(lx, s, field, "field '%s': number '%.*s' is too large", field, (int)(lx->p - s), s);
    *v = neg ? -(long long)u : (long long)u;
    return 0;
}

static int check_unsigned(lex_t *lx, const char *at, const char *field, long long v, unsigned width)
{
    unsigned long long max = width >= 32 ? 0xFFFFFFFFull : (1ull << width) - 1;
    if (v < 0 || (unsigned long long)v > max)
        return asm_perr(lx, at, field, "field '%s': value %lld out of range 0..%llu (%u bits)",
                    field, v, max, width);
    return 0;
}

static int check_signed(lex_t *lx, const char *at, const char *field, long long v, unsigned width)
{
    long long lo = -(1ll << (width - 1)), hi = (1ll << (width - 1)) - 1;
    if (v < lo || v > hi)
        return asm_perr(lx, at, field, "field '%s': value %lld out of range %lld..%lld (%u-bit signed)",
                    field, v, lo, hi, width);
    return 0;
}

static int take_uint(lex_t *lx, int base, unsigned width, const char *field, uint32_t *out)
{
    const char *s = lx->p;
    long long v;
    if (take_int(lx, base, &v, field) || check_unsigned(lx, s, field, v, width))
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int take_sint(lex_t *lx, int base, unsigned width, const char *field, int32_t *out)
{
    const char *s = lx->p;
    long long v;
    if (take_int(lx, base, &v, field) || check_signed(lx, s, field, v, width))
        return -1;
    *out = (int32_t)v;
    return 0;
}

static void list_enum(isa_ftype_t t, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    unsigned max = t == ISA_FT_DTYPE ? ISA_DT_COUNT : 64;
    for (unsigned v = 0; v < max && n + 1 < len; v++) {
        const char *name = isa_enum_name(t, v);
        if (name) {
            int r = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
            if (r < 0 || (size_t)r >= len - n)
                break;
            n += (size_t)r;
        }
    }
}

static int take_enum(lex_t *lx, isa_ftype_t t, const char *field, uint32_t *out)
{
    const char *s = lx->p;
    char name[48];
    if (t == ISA_FT_BOOL && lx->p < lx->end && isdigit((unsigned char)*lx->p)) {
        long long v;
        if (take_int(lx, 10, &v, field))
            return -1;
        if (v != 0 && v != 1)
            return asm_perr(lx, s, field, "field '%s': expected 0 or 1, got %lld", field, v);
        *out = (uint32_t)v;
        return 0;
    }
    asm_take_ident(lx, name, sizeof name);
    if (t == ISA_FT_BOOL && (!strcmp(name, "true") || !strcmp(name, "false"))) {
        *out = name[0] == 't';
        return 0;
    }
    int v = isa_enum_by_name(t, name);
    if (v < 0) {
        char names[600];
        list_enum(t, names, sizeof names);
        if (!name[0])
            return asm_perr(lx, s, field, "field '%s': expected a %s name (%s)", field,
                        t == ISA_FT_DTYPE ? "dtype" : isa_ftype_name(t), names);
        return asm_perr(lx, s, field, "field '%s': unknown %s '%s' (expected one of: %s)", field,
                    t == ISA_FT_DTYPE ? "dtype" : isa_ftype_name(t), name, names);
    }
    *out = (uint32_t)v;
    return 0;
}

/* F32: decimal or hex-float (strtof), inf/nan, or bits(0x7fc00001). */
static int take_f32(lex_t *lx, const char *field, uint32_t *out)
{
    const char *s = lx->p;
    if (lx->end - lx->p >= 5 && strncmp(lx->p, "bits(", 5) == 0) {
        lx->p += 5;
        if (take_uint(lx, 0, 32, field, out))
            return -1;
        if (!expect(lx, ')'))
            return asm_perr(lx, lx->p, field, "field '%s': expected ')' after bits(", field);
        return 0;
    }
    char tmp[64];
    size_t n = 0;
    while (!asm_token_end(lx, lx->p) && n < sizeof tmp - 1)
        tmp[n++] = *lx->p++;
    tmp[n] = '\0';
    char *e;
    float f = n ? strtof(tmp, &e) : 0.0f;
    if (!n || *e)
        return asm_perr(lx, s, field, "field '%s': expected a float (e.g. 1.5, -2e-3, 0x1p-4, inf, bits(0x7fc00000)), got '%s'",
                    field, tmp);
    memcpy(out, &f, sizeof f);
    return 0;
}

/* HEX fields also take f32(<float>) (its bits) for float immediates. */
static int take_hex(lex_t *lx, unsigned width, const char *field, uint32_t *out)
{
    if (lx->end - lx->p >= 4 && strncmp(lx->p, "f32(", 4) == 0) {
        lx->p += 4;
        const char *e = lx->p;
        while (e < lx->end && *e != ')')
            e++;
        if (e >= lx->end)
            return asm_perr(lx, lx->p, field, "field '%s': expected ')' after f32(", field);
        lex_t sub = *lx;
        sub.end = e;
        if (take_f32(&sub, field, out)) {
            return -1;
        }
        lx->p = e + 1;
        if (width < 32 && *out >> width)
            return asm_perr(lx, lx->p, field, "field '%s' has only %u bits", field, width);
        return 0;
    }
    return take_uint(lx, 0, width, field, out);
}

static int take_scalar(lex_t *lx, const isa_field_t *f, uint32_t *out)
{
    switch (f->type) {
    case ISA_FT_U:
        return take_uint(lx, 0, f->width, f->name, out);
    case ISA_FT_S: {
        int32_t v;
        if (take_sint(lx, 0, f->width, f->name, &v))
            return -1;
        *out = (uint32_t)v;
        return 0;
    }
    case ISA_FT_HEX:
        return take_hex(lx, f->width, f->name, out);
    case ISA_FT_F32:
        return take_f32(lx, f->name, out);
    default:
        return take_enum(lx, f->type, f->name, out);
    }
}

/* --------------------------------------------------------------- operands */
static int need(lex_t *lx, char c, const char *field, const char *what)
{
    if (expect(lx, c))
        return 0;
    return asm_perr(lx, lx->p, field, "operand '%s': expected '%c' %s", field, c, what);
}

/* <step x count, ...>: decimal steps and counts, dim 0 (innermost) first. */
static int take_dims(lex_t *lx, const char *field, unsigned maxdims, unsigned step_bits,
                     int32_t *step, uint32_t *count, unsigned *ndims)
{
    *ndims = 0;
    if (!expect(lx, '<'))
        return 0;
    asm_skip_ws(lx);
    if (expect(lx, '>'))
        return 0;
    for (;;) {
        const char *s = lx->p;
        if (*ndims >= maxdims)
            return asm_perr(lx, s, field, "operand '%s': at most %u free dims", field, maxdims);
        unsigned d = (*ndims)++;
        long long st, ct;
        if (take_int(lx, 10, &st, field) || check_signed(lx, s, field, st, step_bits))
            return -1;
        if (!expect(lx, 'x'))
            return asm_perr(lx, lx->p, field, "operand '%s': expected 'x' between step and count (<step x count>)", field);
        const char *cs = lx->p;
        if (take_int(lx, 10, &ct, field) || check_unsigned(lx, cs, field, ct, 16))
            return -1;
        step[d] = (int32_t)st;
        count[d] = (uint32_t)ct;
        asm_skip_ws(lx);
        if (expect(lx, '>'))
            return 0;
        if (!expect(lx, ','))
            return asm_perr(lx, lx->p, field, "operand '%s': expected ',' or '>' in the dims", field);
        asm_skip_ws(lx);
    }
}

static int take_space(lex_t *lx, const char *field, uint32_t *space)
{
    return take_enum(lx, ISA_FT_SPACE, field, space);
}

static int take_dtype(lex_t *lx, const char *field, uint32_t *dt)
{
    if (need(lx, ':', field, "before the dtype"))
        return -1;
    return take_enum(lx, ISA_FT_DTYPE, field, dt);
}

/* space[start:end]@addr:dtype<dims>  (end exclusive; [p] = one partition) */
static int take_tap(lex_t *lx, const char *field, isa_tap_t *t)
{
    memset(t, 0, sizeof *t);
    if (take_space(lx, field, &t->space) || need(lx, '[', field, "before the partition range"))
        return -1;
    const char *s = lx->p;
    uint32_t a, b;
    if (take_uint(lx, 10, 32, field, &a))
        return -1;
    if (expect(lx, ':')) {
        if (take_uint(lx, 10, 32, field, &b))
            return -1;
    } else {
        b = a + 1;
    }
    if (need(lx, ']', field, "after the partition range"))
        return -1;
    if (b <= a)
        return asm_perr(lx, s, field, "operand '%s': partition range [%u:%u] is empty", field, a, b);
    if (b > ISA_NUM_PARTITIONS)
        return asm_perr(lx, s, field, "operand '%s': partition range [%u:%u] exceeds the %u partitions",
                    field, a, b, ISA_NUM_PARTITIONS);
    t->start = a;
    t->nparts = b - a;
    if (need(lx, '@', field, "before the address") || take_uint(lx, 0, 24, field, &t->addr) ||
        take_dtype(lx, field, &t->dtype))
        return -1;
    const char *ds = lx->p;
    if (take_dims(lx, field, ISA_MAX_FREE_DIMS, 16, t->step, t->count, &t->ndims))
        return -1;
    for (unsigned d = 0; d < t->ndims; d++)
        if (t->count[d] == 0)
            return asm_perr(lx, ds, field, "operand '%s': count of dim %u is 0", field, d);
    return 0;
}

/* space@addr:dtype */
static int take_ptr(lex_t *lx, const char *field, isa_ptr_t *p)
{
    memset(p, 0, sizeof *p);
    if (take_space(lx, field, &p->space) || need(lx, '@', field, "before the address") ||
        take_uint(lx, 0, 24, field, &p->addr) || take_dtype(lx, field, &p->dtype))
        return -1;
    return 0;
}

/* [nc<core>:]hbm@addr:dtype<dims>  or  [nc<core>:]sbuf[p]@offset:dtype<dims> */
static int take_dap(lex_t *lx, const char *field, isa_dap_t *d)
{
    memset(d, 0, sizeof *d);
    if (lx->end - lx->p > 2 && strncmp(lx->p, "nc", 2) == 0 && isdigit((unsigned char)lx->p[2])) {
        lx->p += 2;
        if (take_uint(lx, 10, 3, field, &d->core) || need(lx, ':', field, "after the core"))
            return -1;
    }
    if (take_space(lx, field, &d->space))
        return -1;
    bool part = false;
    uint32_t p = 0;
    if (expect(lx, '[')) {
        part = true;
        if (take_uint(lx, 10, 32 - 18, field, &p) || need(lx, ']', field, "after the partition"))
            return -1;
    }
    if (need(lx, '@', field, "before the address"))
        return -1;
    if (take_uint(lx, 0, part ? 18 : 32, field, &d->addr))
        return -1;
    d->addr += p * ISA_DMA_PARTITION_PITCH;
    if (take_dtype(lx, field, &d->dtype))
        return -1;
    unsigned nd;
    return take_dims(lx, field, 2, 32, d->step, d->count, &nd);
}

/* ---------------------------------------------------------------- header */
/* wait=S<sem>>=<value> */
static int take_wait(lex_t *lx, isa_sync_t *s)
{
    if (!expect(lx, 'S'))
        return asm_perr(lx, lx->p, "wait", "field 'wait': expected S<semaphore>>=<value>, e.g. wait=S3>=5");
    if (take_uint(lx, 10, 8, "wait", &s->wait_sem))
        return -1;
    const char *op = lx->p;
    if (!expect(lx, '>') || !expect(lx, '='))
        return asm_perr(lx, op, "wait", "field 'wait': expected '>=' after the semaphore");
    if (take_uint(lx, 0, 32, "wait", &s->wait_val))
        return -1;
    s->wait_en = 1;
    return 0;
}

/* upd=[nc<core>:]S<sem>.<op>[(<value>)]@read|complete */
static int take_upd(lex_t *lx, isa_sync_t *s)
{
    if (lx->end - lx->p > 2 && strncmp(lx->p, "nc", 2) == 0) {
        lx->p += 2;
        if (take_uint(lx, 10, 3, "upd", &s->upd_core) || need(lx, ':', "upd", "after the core"))
            return -1;
        s->upd_remote = 1;
    }
    if (!expect(lx, 'S'))
        return asm_perr(lx, lx->p, "upd", "field 'upd': expected S<semaphore>.<op>@read|complete, e.g. upd=S4.sem_inc@complete");
    if (take_uint(lx, 10, 8, "upd", &s->upd_sem))
        return -1;
    if (!expect(lx, '.'))
        return asm_perr(lx, lx->p, "upd", "field 'upd': expected '.<op>' after the semaphore");
    if (take_enum(lx, ISA_FT_SEMOP, "upd", &s->upd_op))
        return -1;
    if (expect(lx, '(')) {
        if (take_uint(lx, 0, 16, "upd", &s->upd_val))
            return -1;
        if (!expect(lx, ')'))
            return asm_perr(lx, lx->p, "upd", "field 'upd': expected ')' after the value");
    }
    if (!expect(lx, '@'))
        return asm_perr(lx, lx->p, "upd", "field 'upd': expected '@read' or '@complete'");
    char when[16];
    const char *w = lx->p;
    asm_take_ident(lx, when, sizeof when);
    if (strcmp(when, "read") == 0)
        s->upd_at_read = 1;
    else if (strcmp(when, "complete") != 0)
        return asm_perr(lx, w, "upd", "field 'upd': expected '@read' or '@complete', got '@%s'", when);
    s->upd_en = 1;
    return 0;
}

/* --------------------------------------------------------- instruction */
static int mark_given(lex_t *lx, const char *name, const char *by, const char *at)
{
    for (unsigned i = 0; i < lx->ngiven; i++)
        if (strcmp(lx->given[i].name, name) == 0) {
            if (strcmp(lx->given[i].by, by) == 0)
                return asm_perr(lx, at, name, "field '%s' is given twice", by);
            return asm_perr(lx, at, name, "field '%s' is already set by '%s'", name, lx->given[i].by);
        }
    if (lx->ngiven < MAX_GIVEN)
        lx->given[lx->ngiven++] = (given_t){ name, by, asm_col_of(lx, at) };
    return 0;
}

static const char *const wait_fields[] = { "wait_en", "wait_sem", "wait_val", NULL };
/* upd_core belongs to upd= only with an nc<core>: prefix (see take_field) */
static const char *const upd_fields[] = { "upd_en", "upd_at_read", "upd_remote", "upd_sem",
                                          "upd_op", "upd_val", NULL };

/* The operand-start descriptor (".addr" subfield) of operand `name`. */
static const isa_field_t *operand_field(const isa_fmtinfo_t *fi, const char *name)
{
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        if (f->operand && strcmp(f->operand, name) == 0 && strstr(f->name, ".addr"))
            return f;
    }
    return NULL;
}

static void list_fields(const isa_fmtinfo_t *fi, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        const char *name = f->operand ? f->operand : f->name;
        if (f->operand && !strstr(f->name, ".addr"))
            continue;
        int r = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
        if (r < 0 || (size_t)r >= len - n)
            break;
        n += (size_t)r;
    }
    if (n < len)
        snprintf(buf + n, len - n, "%swait, upd", n ? ", " : "");
}

static bool is_target_field(const isa_field_t *f)
{
    return strcmp(f->name, "target") == 0;
}

static int take_field(lex_t *lx, const isa_opinfo_t *oi, isa_inst_t *in)
{
    const char *ks = lx->p;
    char key[48];
    if (!asm_take_ident(lx, key, sizeof key))
        return asm_perr(lx, ks, NULL, "expected a field name (name=value)");
    if (!expect(lx, '='))
        return asm_perr(lx, lx->p, key, "expected '=' after field name '%s'", key);
    const char *vs = lx->p;
    const isa_fmtinfo_t *fi = &isa_formats[oi->format];
    int rc;
    if (strcmp(key, "wait") == 0 || strcmp(key, "upd") == 0) {
        const char *const *names = key[0] == 'w' ? wait_fields : upd_fields;
        for (unsigned i = 0; names[i]; i++)
            if (mark_given(lx, names[i], key[0] == 'w' ? "wait" : "upd", ks))
                return -1;
        rc = key[0] == 'w' ? take_wait(lx, &in->sync) : take_upd(lx, &in->sync);
        if (!rc && key[0] == 'u' && in->sync.upd_remote && mark_given(lx, "upd_core", "upd", ks))
            return -1;
    } else if (operand_field(fi, key)) {
        const isa_field_t *f = operand_field(fi, key);
        if (mark_given(lx, f->operand, f->operand, ks))
            return -1;
        void *p = (uint8_t *)isa_inst_body(in) + f->offset;
        if (f->opnd_kind == ISA_OPND_TAP)
            rc = take_tap(lx, f->operand, p);
        else if (f->opnd_kind == ISA_OPND_PTR)
            rc = take_ptr(lx, f->operand, p);
        else
            rc = take_dap(lx, f->operand, p);
    } else {
        const isa_field_t *f = isa_field_by_name(oi->format, key);
        if (!f || f->operand) {
            char names[600];
            list_fields(fi, names, sizeof names);
            return asm_perr(lx, ks, key, "unknown field '%s' for %s (fields: %s)", key, oi->mnemonic, names);
        }
        if (mark_given(lx, f->name, f->name, ks))
            return -1;
        uint32_t v = 0;
        if (is_target_field(f) && lx->p < lx->end && asm_ident_char(*lx->p, true)) {
            const char *ls = lx->p;
            lx->label_col = asm_col_of(lx, ls);
            if (asm_take_ident(lx, lx->label_ref, sizeof lx->label_ref) >= MAX_LABEL)
                return asm_perr(lx, ls, "target", "label is longer than %d characters", MAX_LABEL - 1);
            rc = 0;
        } else {
            rc = take_scalar(lx, f, &v);
        }
        if (!rc)
            isa_field_set(in, f, v);
    }
    if (rc)
        return -1;
    if (!asm_token_end(lx, lx->p))
        return asm_perr(lx, lx->p, key, "field '%s': unexpected '%c' after the value '%.*s'", key, *lx->p,
                    (int)(lx->p - vs), vs);
    return 0;
}

static const isa_opinfo_t *lookup_mnemonic(lex_t *lx, const char *ms, const char *mn)
{
    const isa_opinfo_t *oi = isa_op_by_mnemonic(mn);
    if (oi)
        return oi;
    for (unsigned i = 0; i < ISA_OP_COUNT; i++)
        if (strcasecmp(isa_ops[i].mnemonic, mn) == 0) {
            asm_perr(lx, ms, "mnemonic", "unknown mnemonic '%s' (did you mean '%s'?)", mn, isa_ops[i].mnemonic);
            return NULL;
        }
    asm_perr(lx, ms, "mnemonic", "unknown mnemonic '%s' (see `tpb isa` for the list)", mn);
    return NULL;
}

/* Mnemonic and fields from the cursor to the end of the line. */
int asm_parse_inst_at(lex_t *lx, isa_inst_t *in)
{
    memset(in, 0, sizeof *in);
    const char *ms = lx->p;
    char mn[64];
    if (!asm_take_ident(lx, mn, sizeof mn))
        return asm_perr(lx, ms, "mnemonic", "expected a mnemonic");
    const isa_opinfo_t *oi = lookup_mnemonic(lx, ms, mn);
    if (!oi)
        return -1;
    if (!asm_token_end(lx, lx->p))
        return asm_perr(lx, lx->p, "mnemonic", "unexpected '%c' after mnemonic '%s'", *lx->p, mn);
    in->op = oi->op;
    in->l2 = oi->l2;
    for (;;) {
        asm_skip_ws(lx);
        if (asm_at_end(lx))
            return 0;
        if (take_field(lx, oi, in))
            return -1;
    }
}

int isa_parse_inst(const char *line, isa_inst_t *out, isa_asm_diag_t *diag)
{
    lex_t *lx = calloc(1, sizeof *lx);
    if (!lx) {
        memset(diag, 0, sizeof *diag);
        snprintf(diag->msg, sizeof diag->msg, "out of memory");
        return -1;
    }
    lx->line = lx->p = line;
    lx->end = line + strlen(line);
    lx->lineno = 1;
    lx->diag = diag;
    asm_skip_ws(lx);
    int rc = asm_parse_inst_at(lx, out);
    if (!rc && lx->label_ref[0])
        rc = asm_perr(lx, lx->line + lx->label_col - 1, "target",
                  "field 'target': label '%s' cannot be resolved in a single line", lx->label_ref);
    free(lx);
    return rc;
}

