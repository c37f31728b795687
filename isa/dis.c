/* dis.c - canonical instruction text and stream disassembly.
 * Everything is driven by isa_formats[] (fields.def); no layout knowledge. */
#include "dis.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ snprintf-like appender */
typedef struct {
    char *buf;
    size_t cap;
    size_t n;    /* length the full text needs so far */
} out_t;

static void outf(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(out_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r;
    if (o->n < o->cap)
        r = vsnprintf(o->buf + o->n, o->cap - o->n, fmt, ap);
    else
        r = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (r > 0)
        o->n += (size_t)r;
}

static void out_init(out_t *o, char *buf, size_t len)
{
    o->buf = buf;
    o->cap = len;
    o->n = 0;
    if (len)
        buf[0] = '\0';
}

/* outf(o, "%s", s) for n bytes of s, without the printf machinery (the
 * trace writes one line per executed instruction). */
static void out_put(out_t *o, const char *s, size_t n)
{
    if (o->n < o->cap) {
        size_t room = o->cap - o->n - 1;
        size_t k = n < room ? n : room;
        memcpy(o->buf + o->n, s, k);
        o->buf[o->n + k] = '\0';
    }
    o->n += n;
}

static void out_str(out_t *o, const char *s)
{
    out_put(o, s, strlen(s));
}

/* outf(o, "%u", v) */
static void out_u(out_t *o, uint32_t v)
{
    char tmp[10], *p = tmp + sizeof tmp;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    out_put(o, p, (size_t)(tmp + sizeof tmp - p));
}

/* outf(o, "%d", v) */
static void out_d(out_t *o, int32_t v)
{
    if (v < 0) {
        out_put(o, "-", 1);
        out_u(o, 0u - (uint32_t)v);
    } else {
        out_u(o, (uint32_t)v);
    }
}

/* outf(o, "0x%x", v) */
static void out_hex(out_t *o, uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[10], *p = tmp + sizeof tmp;
    do {
        *--p = digits[v & 15];
        v >>= 4;
    } while (v);
    *--p = 'x';
    *--p = '0';
    out_put(o, p, (size_t)(tmp + sizeof tmp - p));
}

/* ------------------------------------------------------- scalar values */
int isa_format_f32(float v, char *buf, size_t len)
{
    if (isnan(v)) {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        return snprintf(buf, len, "bits(0x%08x)", bits);
    }
    return snprintf(buf, len, "%.9g", (double)v);
}

static void put_scalar(out_t *o, const isa_field_t *f, uint32_t v)
{
    switch (f->type) {
    case ISA_FT_U:
        out_u(o, v);
        break;
    case ISA_FT_S:
        out_d(o, (int32_t)v);
        break;
    case ISA_FT_HEX:
        out_hex(o, v);
        break;
    case ISA_FT_F32: {
        float fv;
        char tmp[48];
        memcpy(&fv, &v, sizeof fv);
        isa_format_f32(fv, tmp, sizeof tmp);
        outf(o, "%s", tmp);
        break;
    }
    default: {
        const char *name = isa_enum_name(f->type, v);
        if (name)
            out_str(o, name);
        else
            out_u(o, v); /* not a member: only for invalid input */
        break;
    }
    }
}

/* --------------------------------------------------------- operands */
static const char *space_name(uint32_t s)
{
    const char *n = isa_enum_name(ISA_FT_SPACE, s);
    return n ? n : "?";
}

static const char *dtype_name(uint32_t d)
{
    const char *n = isa_enum_name(ISA_FT_DTYPE, d);
    return n ? n : "?";
}

static bool tap_is_empty(const isa_tap_t *t)
{
    static const isa_tap_t zero;
    return memcmp(t, &zero, sizeof zero) == 0;
}

static void put_tap(out_t *o, const char *name, const isa_tap_t *t)
{
    if (tap_is_empty(t))
        return;
    /* " %s=%s[%u:%u]@0x%x:%s" */
    out_put(o, " ", 1);
    out_str(o, name);
    out_put(o, "=", 1);
    out_str(o, space_name(t->space));
    out_put(o, "[", 1);
    out_u(o, t->start);
    out_put(o, ":", 1);
    out_u(o, (unsigned)(t->start + t->nparts));
    out_put(o, "]@", 2);
    out_hex(o, t->addr);
    out_put(o, ":", 1);
    out_str(o, dtype_name(t->dtype));
    unsigned nd = t->ndims > ISA_MAX_FREE_DIMS ? ISA_MAX_FREE_DIMS : t->ndims;
    if (!nd)
        return;
    out_put(o, "<", 1);
    for (unsigned d = 0; d < nd; d++) {
        /* "%s%dx%u" */
        if (d)
            out_put(o, ",", 1);
        out_d(o, t->step[d]);
        out_put(o, "x", 1);
        out_u(o, t->count[d]);
    }
    out_put(o, ">", 1);
}

static void put_ptr(out_t *o, const char *name, const isa_ptr_t *p)
{
    if (!p->addr && !p->dtype && !p->space)
        return;
    outf(o, " %s=%s@0x%x:%s", name, space_name(p->space), p->addr, dtype_name(p->dtype));
}

static void put_dap(out_t *o, const char *name, const isa_dap_t *d)
{
    static const isa_dap_t zero;
    if (memcmp(d, &zero, sizeof zero) == 0)
        return;
    outf(o, " %s=", name);
    if (d->core)
        outf(o, "nc%u:", d->core);
    if (d->space == ISA_SPACE_SBUF || d->space == ISA_SPACE_PSUM)
        outf(o, "%s[%u]@0x%x", space_name(d->space), d->addr / ISA_DMA_PARTITION_PITCH,
             d->addr % ISA_DMA_PARTITION_PITCH);
    else
        outf(o, "%s@0x%x", space_name(d->space), d->addr);
    outf(o, ":%s", dtype_name(d->dtype));
    unsigned nd = (d->step[1] || d->count[1]) ? 2 : (d->step[0] || d->count[0]) ? 1 : 0;
    if (!nd)
        return;
    outf(o, "<");
    for (unsigned k = 0; k < nd; k++)
        outf(o, "%s%dx%u", k ? "," : "", d->step[k], d->count[k]);
    outf(o, ">");
}

static void put_operand(out_t *o, const isa_inst_t *in, const isa_field_t *f)
{
    const uint8_t *body = (const uint8_t *)isa_inst_body_const(in);
    const void *p = body + f->offset; /* addr is the first member of each operand struct */
    if (f->opnd_kind == ISA_OPND_TAP)
        put_tap(o, f->operand, (const isa_tap_t *)p);
    else if (f->opnd_kind == ISA_OPND_PTR)
        put_ptr(o, f->operand, (const isa_ptr_t *)p);
    else
        put_dap(o, f->operand, (const isa_dap_t *)p);
}

/* ----------------------------------------------------------- header */
static const isa_field_t *hdr_field(const char *name)
{
    return isa_field_by_name(ISA_FMT_HDR, name);
}

static void put_raw(out_t *o, const char *name, uint32_t v)
{
    const isa_field_t *f = hdr_field(name);
    outf(o, " %s=", name);
    put_scalar(o, f, v);
}

static bool semop_takes_value(uint32_t op)
{
    return op == ISA_SEMOP_SEM_ADD_IMM || op == ISA_SEMOP_SEM_SUB_IMM || op == ISA_SEMOP_SEM_WR_IMM;
}

/* wait=S<sem>>=<val> and upd=[nc<core>:]S<sem>.<op>[(<val>)]@read|complete
 * cover the enabled conditions; any other non-zero header field is printed
 * raw by its table name so the text always re-encodes exactly. */
static void put_header(out_t *o, const isa_sync_t *s)
{
    if (s->wait_en) {
        /* " wait=S%u>=%u" */
        out_put(o, " wait=S", 7);
        out_u(o, s->wait_sem);
        out_put(o, ">=", 2);
        out_u(o, s->wait_val);
    } else {
        if (s->wait_sem)
            put_raw(o, "wait_sem", s->wait_sem);
        if (s->wait_val)
            put_raw(o, "wait_val", s->wait_val);
    }
    if (s->wait_reg)
        put_raw(o, "wait_reg", s->wait_reg);
    if (s->upd_en) {
        const char *op = isa_enum_name(ISA_FT_SEMOP, s->upd_op);
        out_put(o, " upd=", 5);
        if (s->upd_remote) {
            /* "nc%u:" */
            out_put(o, "nc", 2);
            out_u(o, s->upd_core);
            out_put(o, ":", 1);
        }
        /* "S%u.%s" */
        out_put(o, "S", 1);
        out_u(o, s->upd_sem);
        out_put(o, ".", 1);
        out_str(o, op ? op : "?");
        if (s->upd_val || semop_takes_value(s->upd_op)) {
            /* "(%u)" */
            out_put(o, "(", 1);
            out_u(o, s->upd_val);
            out_put(o, ")", 1);
        }
        out_put(o, "@", 1);
        out_str(o, s->upd_at_read ? "read" : "complete");
        if (!s->upd_remote && s->upd_core)
            put_raw(o, "upd_core", s->upd_core);
        return;
    }
    if (s->upd_at_read)
        put_raw(o, "upd_at_read", s->upd_at_read);
    if (s->upd_remote)
        put_raw(o, "upd_remote", s->upd_remote);
    if (s->upd_sem)
        put_raw(o, "upd_sem", s->upd_sem);
    if (s->upd_op)
        put_raw(o, "upd_op", s->upd_op);
    if (s->upd_core)
        put_raw(o, "upd_core", s->upd_core);
    if (s->upd_val)
        put_raw(o, "upd_val", s->upd_val);
}

/* -------------------------------------------------------- whole line */
static bool is_operand_start(const isa_field_t *f)
{
    return f->opnd_kind != ISA_OPND_NONE && strstr(f->name, ".addr") != NULL;
}

/* The operation selectors read best first: "op=add in0=... in1=...". */
static bool is_leading_field(const isa_field_t *f)
{
    return f->opnd_kind == ISA_OPND_NONE &&
           (strcmp(f->name, "op") == 0 || strcmp(f->name, "op0") == 0 ||
            strcmp(f->name, "op1") == 0 || strcmp(f->name, "func") == 0);
}

static void put_fields(out_t *o, const isa_inst_t *in)
{
    if ((unsigned)in->op >= ISA_OP_COUNT)
        return;
    const isa_fmtinfo_t *fi = &isa_formats[isa_ops[in->op].format];
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned i = 0; i < fi->nfields; i++) {
            const isa_field_t *f = &fi->fields[i];
            if (f->opnd_kind != ISA_OPND_NONE) {
                if (pass == 1 && is_operand_start(f))
                    put_operand(o, in, f);
                continue;
            }
            if (is_leading_field(f) != (pass == 0))
                continue;
            out_put(o, " ", 1);
            out_str(o, f->name);
            out_put(o, "=", 1);
            put_scalar(o, f, isa_field_get(in, f));
        }
    }
    put_header(o, &in->sync);
}

int isa_format_inst(const isa_inst_t *in, char *buf, size_t len)
{
    /* The longest line of the current table is well under 1 KiB. */
    char tmp[4096];
    out_t o;
    out_init(&o, tmp, sizeof tmp);
    put_fields(&o, in);
    /* snprintf(buf, len, "%s", text) without the printf machinery */
    const char *text = tmp[0] == ' ' ? tmp + 1 : tmp;
    size_t n = strlen(text);
    if (len) {
        size_t k = n < len - 1 ? n : len - 1;
        memcpy(buf, text, k);
        buf[k] = '\0';
    }
    return (int)n;
}

int isa_format_line(const isa_inst_t *in, char *buf, size_t len)
{
    out_t o;
    out_init(&o, buf, len);
    outf(&o, "%s", (unsigned)in->op < ISA_OP_COUNT ? isa_ops[in->op].mnemonic : "?");
    put_fields(&o, in);
    return (int)o.n;
}

int isa_format_bundle_data(const uint8_t b[ISA_BUNDLE_BYTES], char *buf, size_t len)
{
    out_t o;
    out_init(&o, buf, len);
    outf(&o, ".bundle");
    for (unsigned i = 0; i < ISA_BUNDLE_BYTES; i++)
        outf(&o, "%s%02x", i % 16 ? "" : " ", b[i]);
    return (int)o.n;
}

/* ------------------------------------------------------- text buffer */
void isa_text_free(isa_text_t *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

static void text_add(isa_text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(isa_text_t *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (r < 0)
        return;
    if (t->len + (size_t)r + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + (size_t)r + 1)
            cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->oom = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)r;
}

/* ------------------------------------------------- stream disassembly */
typedef struct {
    uint32_t target;     /* bundle index jumped to */
    uint32_t src;        /* bundle index of the Call/Jump/BranchCmp */
    isa_op_t op;
} branch_t;

typedef struct {
    const isa_dis_opts_t *opts;
    isa_text_t *out;
    isa_dis_report_t *rep;
    branch_t *br;        /* listing only: branches sorted by target */
    size_t nbr, cur;     /* cur: first entry with target >= the next pc */
    size_t nb;           /* whole bundles in the stream */
} dis_ctx_t;

static int cmp_branch(const void *a, const void *b)
{
    const branch_t *x = a, *y = b;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    return x->src < y->src ? -1 : x->src > y->src;
}

/* Collect the branches of the stream (listing mode marks their targets). */
static void collect_branches(dis_ctx_t *c, const uint8_t *buf, size_t nb)
{
    for (size_t i = 0; i < nb; i++) {
        isa_inst_t in;
        if (isa_decode(buf + i * ISA_BUNDLE_BYTES, 0, &in, NULL) != ISA_OK)
            continue;
        uint32_t target;
        if (in.op == ISA_OP_CALL || in.op == ISA_OP_JUMP)
            target = in.f.CALL.target;
        else if (in.op == ISA_OP_BRANCH_CMP)
            target = in.f.BR.target;
        else
            continue;
        if (c->nbr % 64 == 0) {
            branch_t *n = realloc(c->br, (c->nbr + 64) * sizeof *n);
            if (!n)
                return; /* marks are a convenience: print without them */
            c->br = n;
        }
        c->br[c->nbr++] = (branch_t){ target, (uint32_t)i, in.op };
    }
    if (c->nbr)
        qsort(c->br, c->nbr, sizeof *c->br, cmp_branch);
}

/* "# <- BranchCmp at 4, Call at 9" above a branch target (pcs come in order). */
static void emit_branch_sources(dis_ctx_t *c, size_t pc)
{
    while (c->cur < c->nbr && c->br[c->cur].target < pc)
        c->cur++;
    bool first = true;
    for (; c->cur < c->nbr && c->br[c->cur].target == pc; c->cur++) {
        text_add(c->out, "%s%s at %u", first ? "              # <- " : ", ",
                 isa_ops[c->br[c->cur].op].mnemonic, c->br[c->cur].src);
        first = false;
    }
    if (!first)
        text_add(c->out, "\n");
}

static void note_problem(dis_ctx_t *c, size_t off, const char *msg)
{
    if (c->rep->first_error[0])
        return;
    c->rep->first_error_offset = off;
    snprintf(c->rep->first_error, sizeof c->rep->first_error, "%s", msg);
}

static void emit_hex(dis_ctx_t *c, const uint8_t *b)
{
    for (unsigned r = 0; r < ISA_BUNDLE_BYTES; r += 16) {
        text_add(c->out, "              ");
        for (unsigned i = r; i < r + 16; i++)
            text_add(c->out, "%s%02x", i == r ? "" : (i == r + 8 ? "  " : " "), b[i]);
        text_add(c->out, "\n");
    }
}

/* One printed bundle: text (instruction or .bundle), optional comment. */
static void emit(dis_ctx_t *c, size_t pc, const uint8_t *b, const char *text, const char *comment)
{
    const char *note = pc < c->opts->nnotes && c->opts->notes ? c->opts->notes[pc] : NULL;
    if (!c->opts->canonical)
        emit_branch_sources(c, pc);
    if (note)
        text_add(c->out, "%s# %s\n", c->opts->canonical ? "" : "              ", note);
    if (c->opts->canonical) {
        if (comment)
            text_add(c->out, "# %s\n", comment);
        text_add(c->out, "%s\n", text);
    } else {
        text_add(c->out, "%5zu  %06zx:  %s\n", pc, pc * ISA_BUNDLE_BYTES, text);
        if (comment)
            text_add(c->out, "              # %s\n", comment);
        if (c->opts->hex)
            emit_hex(c, b);
    }
    c->rep->nbundles++;
}

static void emit_data(dis_ctx_t *c, size_t pc, const uint8_t *b, const char *why)
{
    char text[200], comment[400];
    isa_format_bundle_data(b, text, sizeof text);
    snprintf(comment, sizeof comment, "invalid at offset 0x%zx: %s", pc * ISA_BUNDLE_BYTES, why);
    c->rep->ninvalid++;
    note_problem(c, pc * ISA_BUNDLE_BYTES, why);
    emit(c, pc, b, text, comment);
}

static void emit_inst(dis_ctx_t *c, size_t pc, const uint8_t *b, const isa_inst_t *in)
{
    char text[2048], comment[200];
    const char *cm = NULL;
    isa_format_line(in, text, sizeof text);
    isa_engine_t e = c->opts->engine;
    if (e != ISA_ENG_UNASSIGNED && !(isa_ops[in->op].engines & (1u << e))) {
        snprintf(comment, sizeof comment, "error: %s is not legal on engine %s",
                 isa_ops[in->op].mnemonic, isa_engine_name(e));
        cm = comment;
        c->rep->nillegal++;
        note_problem(c, pc * ISA_BUNDLE_BYTES, comment + 7);
    } else if (!c->opts->canonical &&
               (in->op == ISA_OP_CALL || in->op == ISA_OP_JUMP || in->op == ISA_OP_BRANCH_CMP)) {
        /* listing only: a valid encoding, but most likely a mistake */
        uint32_t t = in->op == ISA_OP_BRANCH_CMP ? in->f.BR.target : in->f.CALL.target;
        if (t >= c->nb) {
            snprintf(comment, sizeof comment, "warning: target %u is past the end of the stream (%zu bundles)",
                     t, c->nb);
            cm = comment;
        }
    }
    emit(c, pc, b, text, cm);
}

static bool is_prefix_bundle(const uint8_t *b)
{
    isa_inst_t in;
    return isa_decode(b, 0, &in, NULL) == ISA_OK && isa_ops[in.op].cls == ISA_CLASS_PREFIX;
}

/* Bundles [i, j) are prefixes, j < nb the instruction they extend (or j ==
 * nb: dangling).  When the group decodes as a stream, print the prefixes as
 * their own lines and the instruction with the folded (3-4 dim) operands;
 * otherwise print the prefixes as data and let the caller handle bundle j. */
static size_t dis_group(dis_ctx_t *c, const uint8_t *buf, size_t i, size_t j, size_t nb)
{
    isa_stream_t s;
    isa_err_t err;
    memset(&err, 0, sizeof err);
    size_t n = (j < nb ? j + 1 : j) - i;
    isa_status_t st = isa_stream_decode(buf + i * ISA_BUNDLE_BYTES, n * ISA_BUNDLE_BYTES,
                                        ISA_ENG_UNASSIGNED, &s, &err);
    if (st == ISA_OK && s.count == 1) {
        for (size_t k = i; k < j; k++) {
            isa_inst_t p;
            isa_decode(buf + k * ISA_BUNDLE_BYTES, k * ISA_BUNDLE_BYTES, &p, NULL);
            emit_inst(c, k, buf + k * ISA_BUNDLE_BYTES, &p);
        }
        emit_inst(c, j, buf + j * ISA_BUNDLE_BYTES, &s.insts[0].inst);
        isa_stream_free(&s);
        return j + 1;
    }
    if (st == ISA_OK)
        isa_stream_free(&s);
    char why[300];
    snprintf(why, sizeof why, "%s (%s at offset 0x%zx)", err.msg, isa_strerror(err.status),
             i * ISA_BUNDLE_BYTES + err.offset);
    for (size_t k = i; k < j; k++)
        emit_data(c, k, buf + k * ISA_BUNDLE_BYTES, why);
    return j;
}

static void dis_single(dis_ctx_t *c, const uint8_t *buf, size_t i)
{
    const uint8_t *b = buf + i * ISA_BUNDLE_BYTES;
    isa_stream_t s;
    isa_err_t err;
    memset(&err, 0, sizeof err);
    if (isa_stream_decode(b, ISA_BUNDLE_BYTES, ISA_ENG_UNASSIGNED, &s, &err) != ISA_OK) {
        char why[300];
        snprintf(why, sizeof why, "%s (%s)", err.msg, isa_strerror(err.status));
        emit_data(c, i, b, why);
        return;
    }
    emit_inst(c, i, b, &s.insts[0].inst);
    isa_stream_free(&s);
}

int isa_disassemble(const uint8_t *buf, size_t len, const isa_dis_opts_t *opts,
                    isa_text_t *out, isa_dis_report_t *rep)
{
    size_t nb = len / ISA_BUNDLE_BYTES;
    dis_ctx_t c = { opts, out, rep, NULL, 0, 0, nb };
    memset(rep, 0, sizeof *rep);
    if (!opts->canonical)
        collect_branches(&c, buf, nb);
    size_t i = 0;
    while (i < nb) {
        size_t j = i;
        while (j < nb && is_prefix_bundle(buf + j * ISA_BUNDLE_BYTES))
            j++;
        if (j > i) {
            i = dis_group(&c, buf, i, j, nb);
            continue;
        }
        dis_single(&c, buf, i);
        i++;
    }
    rep->trailing = len % ISA_BUNDLE_BYTES;
    if (rep->trailing) {
        char msg[200];
        snprintf(msg, sizeof msg, "%zu trailing bytes at offset 0x%zx (size %zu is not a multiple of 64)",
                 rep->trailing, nb * ISA_BUNDLE_BYTES, len);
        note_problem(&c, nb * ISA_BUNDLE_BYTES, msg);
        text_add(out, "# error: %s\n", msg);
    }
    free(c.br);
    return out->oom ? -1 : 0;
}
