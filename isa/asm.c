/* asm.c - assembly text to bundles.  The grammar is in docs/assembly.md; the
 * field names, widths and types all come from isa_formats[] (fields.def). */
#include "asm.h"
#include "dis.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_GIVEN 64
#define MAX_LABEL 64

/* A field set on the line: where, so encode errors can point at it. */
typedef struct {
    const char *name;     /* table name: "in0", "wait_sem", "op" ... */
    const char *by;       /* the key written on the line ("wait" for wait_sem) */
    unsigned col;
} given_t;

typedef struct {
    const char *line;     /* start of the line (not NUL-terminated) */
    const char *end;      /* end of the line */
    const char *p;        /* cursor */
    unsigned lineno;
    isa_asm_diag_t *diag;
    given_t given[MAX_GIVEN];
    unsigned ngiven;
    char label_ref[MAX_LABEL]; /* target=<label> */
    unsigned label_col;
} lex_t;

static unsigned col_of(const lex_t *lx, const char *at)
{
    return (unsigned)(at - lx->line) + 1;
}

static int perr(lex_t *lx, const char *at, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int perr(lex_t *lx, const char *at, const char *field, const char *fmt, ...)
{
    isa_asm_diag_t *d = lx->diag;
    d->line = lx->lineno;
    d->col = at ? col_of(lx, at) : 0;
    snprintf(d->field, sizeof d->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* --------------------------------------------------------------- lexing */
static bool at_end(const lex_t *lx)
{
    return lx->p >= lx->end || *lx->p == '#' || *lx->p == ';';
}

static void skip_ws(lex_t *lx)
{
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r'))
        lx->p++;
}

/* End of the current value token. */
static bool token_end(const lex_t *lx, const char *q)
{
    return q >= lx->end || *q == ' ' || *q == '\t' || *q == '\r' || *q == '#' || *q == ';';
}

static bool ident_char(char c, bool first)
{
    return isalpha((unsigned char)c) || c == '_' || c == '.' || (!first && isdigit((unsigned char)c));
}

/* Copy an identifier at the cursor into buf; returns its length (0 if none). */
static size_t take_ident(lex_t *lx, char *buf, size_t len)
{
    const char *s = lx->p;
    while (lx->p < lx->end && ident_char(*lx->p, lx->p == s))
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
        return perr(lx, s, field, "field '%s': expected a number", field);
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
        return perr(lx, s, field, "field '%s': number '%.*s' is too large", field, (int)(lx->p - s), s);
    *v = neg ? -(long long)u : (long long)u;
    return 0;
}

static int check_unsigned(lex_t *lx, const char *at, const char *field, long long v, unsigned width)
{
    unsigned long long max = width >= 32 ? 0xFFFFFFFFull : (1ull << width) - 1;
    if (v < 0 || (unsigned long long)v > max)
        return perr(lx, at, field, "field '%s': value %lld out of range 0..%llu (%u bits)",
                    field, v, max, width);
    return 0;
}

static int check_signed(lex_t *lx, const char *at, const char *field, long long v, unsigned width)
{
    long long lo = -(1ll << (width - 1)), hi = (1ll << (width - 1)) - 1;
    if (v < lo || v > hi)
        return perr(lx, at, field, "field '%s': value %lld out of range %lld..%lld (%u-bit signed)",
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
            return perr(lx, s, field, "field '%s': expected 0 or 1, got %lld", field, v);
        *out = (uint32_t)v;
        return 0;
    }
    take_ident(lx, name, sizeof name);
    if (t == ISA_FT_BOOL && (!strcmp(name, "true") || !strcmp(name, "false"))) {
        *out = name[0] == 't';
        return 0;
    }
    int v = isa_enum_by_name(t, name);
    if (v < 0) {
        char names[600];
        list_enum(t, names, sizeof names);
        if (!name[0])
            return perr(lx, s, field, "field '%s': expected a %s name (%s)", field,
                        t == ISA_FT_DTYPE ? "dtype" : isa_ftype_name(t), names);
        return perr(lx, s, field, "field '%s': unknown %s '%s' (expected one of: %s)", field,
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
            return perr(lx, lx->p, field, "field '%s': expected ')' after bits(", field);
        return 0;
    }
    char tmp[64];
    size_t n = 0;
    while (!token_end(lx, lx->p) && n < sizeof tmp - 1)
        tmp[n++] = *lx->p++;
    tmp[n] = '\0';
    char *e;
    float f = n ? strtof(tmp, &e) : 0.0f;
    if (!n || *e)
        return perr(lx, s, field, "field '%s': expected a float (e.g. 1.5, -2e-3, 0x1p-4, inf, bits(0x7fc00000)), got '%s'",
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
            return perr(lx, lx->p, field, "field '%s': expected ')' after f32(", field);
        lex_t sub = *lx;
        sub.end = e;
        if (take_f32(&sub, field, out)) {
            return -1;
        }
        lx->p = e + 1;
        if (width < 32 && *out >> width)
            return perr(lx, lx->p, field, "field '%s' has only %u bits", field, width);
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
    return perr(lx, lx->p, field, "operand '%s': expected '%c' %s", field, c, what);
}

/* <step x count, ...>: decimal steps and counts, dim 0 (innermost) first. */
static int take_dims(lex_t *lx, const char *field, unsigned maxdims, unsigned step_bits,
                     int32_t *step, uint32_t *count, unsigned *ndims)
{
    *ndims = 0;
    if (!expect(lx, '<'))
        return 0;
    skip_ws(lx);
    if (expect(lx, '>'))
        return 0;
    for (;;) {
        const char *s = lx->p;
        if (*ndims >= maxdims)
            return perr(lx, s, field, "operand '%s': at most %u free dims", field, maxdims);
        unsigned d = (*ndims)++;
        long long st, ct;
        if (take_int(lx, 10, &st, field) || check_signed(lx, s, field, st, step_bits))
            return -1;
        if (!expect(lx, 'x'))
            return perr(lx, lx->p, field, "operand '%s': expected 'x' between step and count (<step x count>)", field);
        const char *cs = lx->p;
        if (take_int(lx, 10, &ct, field) || check_unsigned(lx, cs, field, ct, 16))
            return -1;
        step[d] = (int32_t)st;
        count[d] = (uint32_t)ct;
        skip_ws(lx);
        if (expect(lx, '>'))
            return 0;
        if (!expect(lx, ','))
            return perr(lx, lx->p, field, "operand '%s': expected ',' or '>' in the dims", field);
        skip_ws(lx);
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
        return perr(lx, s, field, "operand '%s': partition range [%u:%u] is empty", field, a, b);
    if (b > ISA_NUM_PARTITIONS)
        return perr(lx, s, field, "operand '%s': partition range [%u:%u] exceeds the %u partitions",
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
            return perr(lx, ds, field, "operand '%s': count of dim %u is 0", field, d);
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
        return perr(lx, lx->p, "wait", "field 'wait': expected S<semaphore>>=<value>, e.g. wait=S3>=5");
    if (take_uint(lx, 10, 8, "wait", &s->wait_sem))
        return -1;
    const char *op = lx->p;
    if (!expect(lx, '>') || !expect(lx, '='))
        return perr(lx, op, "wait", "field 'wait': expected '>=' after the semaphore");
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
        return perr(lx, lx->p, "upd", "field 'upd': expected S<semaphore>.<op>@read|complete, e.g. upd=S4.sem_inc@complete");
    if (take_uint(lx, 10, 8, "upd", &s->upd_sem))
        return -1;
    if (!expect(lx, '.'))
        return perr(lx, lx->p, "upd", "field 'upd': expected '.<op>' after the semaphore");
    if (take_enum(lx, ISA_FT_SEMOP, "upd", &s->upd_op))
        return -1;
    if (expect(lx, '(')) {
        if (take_uint(lx, 0, 16, "upd", &s->upd_val))
            return -1;
        if (!expect(lx, ')'))
            return perr(lx, lx->p, "upd", "field 'upd': expected ')' after the value");
    }
    if (!expect(lx, '@'))
        return perr(lx, lx->p, "upd", "field 'upd': expected '@read' or '@complete'");
    char when[16];
    const char *w = lx->p;
    take_ident(lx, when, sizeof when);
    if (strcmp(when, "read") == 0)
        s->upd_at_read = 1;
    else if (strcmp(when, "complete") != 0)
        return perr(lx, w, "upd", "field 'upd': expected '@read' or '@complete', got '@%s'", when);
    s->upd_en = 1;
    return 0;
}

/* --------------------------------------------------------- instruction */
static int mark_given(lex_t *lx, const char *name, const char *by, const char *at)
{
    for (unsigned i = 0; i < lx->ngiven; i++)
        if (strcmp(lx->given[i].name, name) == 0) {
            if (strcmp(lx->given[i].by, by) == 0)
                return perr(lx, at, name, "field '%s' is given twice", by);
            return perr(lx, at, name, "field '%s' is already set by '%s'", name, lx->given[i].by);
        }
    if (lx->ngiven < MAX_GIVEN)
        lx->given[lx->ngiven++] = (given_t){ name, by, col_of(lx, at) };
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
    if (!take_ident(lx, key, sizeof key))
        return perr(lx, ks, NULL, "expected a field name (name=value)");
    if (!expect(lx, '='))
        return perr(lx, lx->p, key, "expected '=' after field name '%s'", key);
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
            return perr(lx, ks, key, "unknown field '%s' for %s (fields: %s)", key, oi->mnemonic, names);
        }
        if (mark_given(lx, f->name, f->name, ks))
            return -1;
        uint32_t v = 0;
        if (is_target_field(f) && lx->p < lx->end && ident_char(*lx->p, true)) {
            const char *ls = lx->p;
            lx->label_col = col_of(lx, ls);
            if (take_ident(lx, lx->label_ref, sizeof lx->label_ref) >= MAX_LABEL)
                return perr(lx, ls, "target", "label is longer than %d characters", MAX_LABEL - 1);
            rc = 0;
        } else {
            rc = take_scalar(lx, f, &v);
        }
        if (!rc)
            isa_field_set(in, f, v);
    }
    if (rc)
        return -1;
    if (!token_end(lx, lx->p))
        return perr(lx, lx->p, key, "field '%s': unexpected '%c' after the value '%.*s'", key, *lx->p,
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
            perr(lx, ms, "mnemonic", "unknown mnemonic '%s' (did you mean '%s'?)", mn, isa_ops[i].mnemonic);
            return NULL;
        }
    perr(lx, ms, "mnemonic", "unknown mnemonic '%s' (see `tpb isa` for the list)", mn);
    return NULL;
}

/* Mnemonic and fields from the cursor to the end of the line. */
static int parse_inst_at(lex_t *lx, isa_inst_t *in)
{
    memset(in, 0, sizeof *in);
    const char *ms = lx->p;
    char mn[64];
    if (!take_ident(lx, mn, sizeof mn))
        return perr(lx, ms, "mnemonic", "expected a mnemonic");
    const isa_opinfo_t *oi = lookup_mnemonic(lx, ms, mn);
    if (!oi)
        return -1;
    if (!token_end(lx, lx->p))
        return perr(lx, lx->p, "mnemonic", "unexpected '%c' after mnemonic '%s'", *lx->p, mn);
    in->op = oi->op;
    in->l2 = oi->l2;
    for (;;) {
        skip_ws(lx);
        if (at_end(lx))
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
    skip_ws(lx);
    int rc = parse_inst_at(lx, out);
    if (!rc && lx->label_ref[0])
        rc = perr(lx, lx->line + lx->label_col - 1, "target",
                  "field 'target': label '%s' cannot be resolved in a single line", lx->label_ref);
    free(lx);
    return rc;
}

/* ============================================================ assembler */
typedef enum { ITEM_INST, ITEM_DATA } item_kind_t;

typedef struct {
    item_kind_t kind;
    unsigned line;
    unsigned mn_col;
    union {
        isa_inst_t inst;                /* ITEM_INST */
        uint8_t data[ISA_BUNDLE_BYTES]; /* ITEM_DATA */
    };
    given_t *given;       /* malloc'ed, ngiven entries (error columns) */
    unsigned ngiven;
    char label_ref[MAX_LABEL];
    unsigned label_col;
    uint32_t pc;          /* first bundle of this item */
    unsigned nbundles;    /* 2 when an ApExt is emitted automatically */
    bool has_explicit_ext; /* consumes the explicit ApExt item just before */
    bool bad;             /* the line had an error: not encoded */
    size_t ext_item;      /* index of that item */
} item_t;

typedef struct {
    char name[MAX_LABEL];
    uint32_t pc;
    unsigned line;
} label_t;

typedef struct {
    const isa_asm_opts_t *opts;
    isa_asm_result_t *res;
    item_t *items;
    size_t nitems, cap;
    label_t *labels;
    size_t nlabels, lcap;
    uint32_t pc;
    /* prefix lines waiting for the instruction they extend */
    bool pend_ext, pend_pred;
    size_t ext_item, pred_item;
} asm_t;

static void add_diag(asm_t *a, const isa_asm_diag_t *d)
{
    a->res->nerrors++;
    if (a->res->ndiags < ISA_ASM_MAX_DIAGS)
        a->res->diags[a->res->ndiags++] = *d;
}

static void diag_at(asm_t *a, unsigned line, unsigned col, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void diag_at(asm_t *a, unsigned line, unsigned col, const char *field, const char *fmt, ...)
{
    isa_asm_diag_t d;
    memset(&d, 0, sizeof d);
    d.line = line;
    d.col = col;
    snprintf(d.field, sizeof d.field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.msg, sizeof d.msg, fmt, ap);
    va_end(ap);
    add_diag(a, &d);
}

static item_t *new_item(asm_t *a)
{
    if (a->nitems == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        item_t *n = realloc(a->items, cap * sizeof *n);
        if (!n)
            return NULL;
        a->items = n;
        a->cap = cap;
    }
    item_t *it = &a->items[a->nitems++];
    memset(it, 0, sizeof *it);
    return it;
}

static int add_label(asm_t *a, lex_t *lx, const char *at, const char *name)
{
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].name, name) == 0)
            return perr(lx, at, "label", "label '%s' is already defined on line %u", name, a->labels[i].line);
    if (a->nlabels == a->lcap) {
        size_t cap = a->lcap ? a->lcap * 2 : 32;
        label_t *n = realloc(a->labels, cap * sizeof *n);
        if (!n)
            return perr(lx, at, "label", "out of memory");
        a->labels = n;
        a->lcap = cap;
    }
    label_t *l = &a->labels[a->nlabels++];
    snprintf(l->name, sizeof l->name, "%s", name);
    l->pc = a->pc;
    l->line = lx->lineno;
    return 0;
}

/* .bundle <128 hex digits, whitespace allowed> */
static int parse_bundle_directive(lex_t *lx, uint8_t *out)
{
    unsigned n = 0;
    skip_ws(lx);
    const char *s = lx->p;
    for (;;) {
        skip_ws(lx);
        if (at_end(lx))
            break;
        char c = *lx->p;
        if (!isxdigit((unsigned char)c))
            return perr(lx, lx->p, "bundle", ".bundle: '%c' is not a hex digit", c);
        if (n >= 2 * ISA_BUNDLE_BYTES)
            return perr(lx, lx->p, "bundle", ".bundle: more than 64 bytes");
        unsigned v = (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
        out[n / 2] = (uint8_t)(n % 2 ? (out[n / 2] | v) : (v << 4));
        n++;
        lx->p++;
    }
    if (n != 2 * ISA_BUNDLE_BYTES)
        return perr(lx, s, "bundle", ".bundle: expected 128 hex digits (64 bytes), got %u", n);
    return 0;
}

static bool inst_needs_ext(const isa_inst_t *in)
{
    const isa_fmtinfo_t *fi = &isa_formats[isa_ops[in->op].format];
    const uint8_t *body = (const uint8_t *)isa_inst_body_const(in);
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        if (f->opnd_kind == ISA_OPND_TAP && strstr(f->name, ".addr") &&
            ((const isa_tap_t *)(body + f->offset))->ndims > 2)
            return true;
    }
    return false;
}

static int check_engine(asm_t *a, lex_t *lx, const char *at, const isa_inst_t *in)
{
    isa_engine_t e = a->opts ? a->opts->engine : ISA_ENG_UNASSIGNED;
    const isa_opinfo_t *oi = &isa_ops[in->op];
    if (e == ISA_ENG_UNASSIGNED || (oi->engines & (1u << e)))
        return 0;
    char legal[120];
    size_t n = 0;
    legal[0] = '\0';
    for (int k = 0; k < 5; k++)
        if (oi->engines & (1u << isa_tpb_engines[k]))
            n += (size_t)snprintf(legal + n, sizeof legal - n, "%s%s", n ? ", " : "",
                                  isa_engine_name(isa_tpb_engines[k]));
    return perr(lx, at, "mnemonic", "%s is not legal on engine %s (legal on: %s)", oi->mnemonic,
                isa_engine_name(e), legal);
}

/* Track explicit ApExt / PredExt lines and attach them to the next instruction. */
static int place_inst(asm_t *a, lex_t *lx, const char *ms, item_t *it)
{
    isa_op_t op = it->inst.op;
    if (op == ISA_OP_AP_EXT || op == ISA_OP_PRED_EXT) {
        bool *pend = op == ISA_OP_AP_EXT ? &a->pend_ext : &a->pend_pred;
        if (*pend)
            return perr(lx, ms, "prefix", "two %s prefixes in a row", isa_ops[op].mnemonic);
        *pend = true;
        *(op == ISA_OP_AP_EXT ? &a->ext_item : &a->pred_item) = a->nitems - 1;
        it->nbundles = 1;
        return 0;
    }
    if (a->pend_pred && op != ISA_OP_TENSOR_SCALAR_PTR)
        return perr(lx, ms, "PredExt", "PredExt (line %u) must be followed by TensorScalarPtr, not %s",
                    a->items[a->pred_item].line, isa_ops[op].mnemonic);
    bool need = inst_needs_ext(&it->inst);
    if (a->pend_ext && !need)
        return perr(lx, ms, "ApExt", "ApExt (line %u) is not used: no operand of %s has more than 2 free dims",
                    a->items[a->ext_item].line, isa_ops[op].mnemonic);
    it->has_explicit_ext = a->pend_ext;
    it->ext_item = a->ext_item;
    it->nbundles = (need && !a->pend_ext) ? 2 : 1;
    a->pend_ext = a->pend_pred = false;
    return 0;
}

/* One source line: labels, then an instruction, a .bundle or nothing. */
static int assemble_line(asm_t *a, lex_t *lx)
{
    for (;;) {
        skip_ws(lx);
        if (at_end(lx))
            return 0;
        const char *s = lx->p, *q = lx->p;
        while (q < lx->end && ident_char(*q, q == s))
            q++;
        if (q > s && q < lx->end && *q == ':' && token_end(lx, q + 1)) {
            char name[MAX_LABEL];
            if (take_ident(lx, name, sizeof name) >= MAX_LABEL)
                return perr(lx, s, "label", "label is longer than %d characters", MAX_LABEL - 1);
            lx->p++;
            if (add_label(a, lx, s, name))
                return -1;
            continue;
        }
        break;
    }
    const char *ms = lx->p;
    item_t *it = new_item(a);
    if (!it)
        return perr(lx, ms, NULL, "out of memory");
    it->line = lx->lineno;
    it->mn_col = col_of(lx, ms);
    if (lx->end - lx->p >= 7 && strncmp(lx->p, ".bundle", 7) == 0 && token_end(lx, lx->p + 7)) {
        lx->p += 7;
        if (a->pend_ext || a->pend_pred)
            return perr(lx, ms, "prefix", "a prefix line must be followed by an instruction, not .bundle "
                                          "(write the prefix as .bundle too)");
        it->kind = ITEM_DATA;
        it->nbundles = 1;
        if (parse_bundle_directive(lx, it->data))
            return -1;
    } else {
        it->kind = ITEM_INST;
        if (parse_inst_at(lx, &it->inst) || check_engine(a, lx, ms, &it->inst) ||
            place_inst(a, lx, ms, it))
            return -1;
        if (lx->ngiven) {
            it->given = malloc(lx->ngiven * sizeof *it->given);
            if (!it->given)
                return perr(lx, ms, NULL, "out of memory");
            memcpy(it->given, lx->given, lx->ngiven * sizeof *it->given);
            it->ngiven = lx->ngiven;
        }
        memcpy(it->label_ref, lx->label_ref, sizeof it->label_ref);
        it->label_col = lx->label_col;
    }
    it->pc = a->pc;
    a->pc += it->nbundles;
    return 0;
}

/* Column of the field an encoder error names ("in0.nparts" -> in0). */
static unsigned field_col(const item_t *it, const char *field)
{
    if (!field)
        return it->mn_col;
    size_t n = strcspn(field, ".");
    for (unsigned i = 0; i < it->ngiven; i++)
        if (strlen(it->given[i].name) == n && strncmp(it->given[i].name, field, n) == 0)
            return it->given[i].col;
    return it->mn_col;
}

static int resolve_label(asm_t *a, item_t *it)
{
    if (!it->label_ref[0])
        return 0;
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].name, it->label_ref) == 0) {
            const isa_field_t *f = isa_field_by_name(isa_ops[it->inst.op].format, "target");
            isa_field_set(&it->inst, f, a->labels[i].pc);
            return 0;
        }
    diag_at(a, it->line, it->label_col, "target", "field 'target': undefined label '%s'", it->label_ref);
    return -1;
}

/* Encode one instruction item into out (1 or 2 bundles). */
static int encode_item(asm_t *a, item_t *it, uint8_t *out)
{
    uint8_t b[2][ISA_BUNDLE_BYTES];
    unsigned nb = 0;
    isa_err_t err;
    memset(&err, 0, sizeof err);
    if (isa_encode_with_prefixes(&it->inst, b, &nb, &err) != ISA_OK) {
        diag_at(a, it->line, field_col(it, err.field), err.field, "%s", err.msg);
        return -1;
    }
    if (it->has_explicit_ext) {
        const item_t *x = &a->items[it->ext_item];
        uint8_t xb[ISA_BUNDLE_BYTES];
        isa_encode(&x->inst, xb, NULL);
        if (nb != 2 || memcmp(xb, b[0], ISA_BUNDLE_BYTES) != 0) {
            char want[600];
            isa_inst_t wi;
            isa_decode(b[0], 0, &wi, NULL);
            isa_format_line(&wi, want, sizeof want);
            diag_at(a, x->line, x->mn_col, "ApExt",
                    "ApExt does not match the outer dims of the %s on line %u (expected: %s)",
                    isa_ops[it->inst.op].mnemonic, it->line, want);
            return -1;
        }
        memcpy(out, b[1], ISA_BUNDLE_BYTES);
        return 0;
    }
    memcpy(out, b[0], (size_t)nb * ISA_BUNDLE_BYTES);
    return 0;
}

static int finish(asm_t *a)
{
    if (a->pend_ext || a->pend_pred) {
        const item_t *x = &a->items[a->pend_ext ? a->ext_item : a->pred_item];
        diag_at(a, x->line, x->mn_col, "prefix", "%s at the end of the file extends no instruction",
                isa_ops[x->inst.op].mnemonic);
    }
    /* encode even after errors, so every bad line of a file is reported */
    size_t len = (size_t)a->pc * ISA_BUNDLE_BYTES;
    uint8_t *bytes = calloc(len ? len : 1, 1);
    if (!bytes) {
        diag_at(a, 0, 0, NULL, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < a->nitems; i++) {
        item_t *it = &a->items[i];
        if (it->bad || (it->has_explicit_ext && a->items[it->ext_item].bad))
            continue;
        uint8_t *out = bytes + (size_t)it->pc * ISA_BUNDLE_BYTES;
        if (it->kind == ITEM_DATA) {
            memcpy(out, it->data, ISA_BUNDLE_BYTES);
            continue;
        }
        if (resolve_label(a, it))
            continue;
        if (it->inst.op == ISA_OP_AP_EXT) {
            isa_err_t err;
            memset(&err, 0, sizeof err);
            if (isa_encode(&it->inst, out, &err) != ISA_OK)
                diag_at(a, it->line, field_col(it, err.field), err.field, "%s", err.msg);
            continue;
        }
        encode_item(a, it, out);
    }
    if (a->res->nerrors) {
        free(bytes);
        return -1;
    }
    a->res->bytes = bytes;
    a->res->len = len;
    return 0;
}

int isa_assemble(const char *src, size_t len, const isa_asm_opts_t *opts, isa_asm_result_t *res)
{
    memset(res, 0, sizeof *res);
    asm_t a;
    memset(&a, 0, sizeof a);
    a.opts = opts;
    a.res = res;
    lex_t *lx = malloc(sizeof *lx);
    if (!lx) {
        diag_at(&a, 0, 0, NULL, "out of memory");
        return -1;
    }
    const char *p = src, *end = src + len;
    unsigned lineno = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        memset(lx, 0, sizeof *lx);
        isa_asm_diag_t d;
        memset(&d, 0, sizeof d);
        lx->line = lx->p = p;
        lx->end = le;
        lx->lineno = ++lineno;
        lx->diag = &d;
        if (memchr(p, '\0', (size_t)(le - p)))
            diag_at(&a, lineno, 0, NULL, "NUL byte in the source line");
        else if (assemble_line(&a, lx)) {
            add_diag(&a, &d);
            if (a.nitems && a.items[a.nitems - 1].line == lineno)
                a.items[a.nitems - 1].bad = true;
            a.pend_ext = a.pend_pred = false; /* don't cascade onto the next line */
        }
        p = nl ? nl + 1 : end;
    }
    free(lx);
    int rc = finish(&a);
    for (size_t i = 0; i < a.nitems; i++)
        free(a.items[i].given);
    free(a.items);
    free(a.labels);
    return rc;
}

void isa_asm_result_free(isa_asm_result_t *res)
{
    free(res->bytes);
    memset(res, 0, sizeof *res);
}
