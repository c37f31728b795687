/* tir_dump.c - human-readable tile IR, one line per tensor and per op, for
 * `tpb compile --dump-tir`-style debugging and for diffing front-end output.
 * Only fields that differ from tir_op_init() are printed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;
} sb_t;

static void sb_printf(sb_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sb_t *s, const char *fmt, ...)
{
    if (s->oom)
        return;
    if (!s->buf) {
        s->cap = 256;
        if (!(s->buf = malloc(s->cap))) {
            s->oom = true;
            return;
        }
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            s->oom = true;
            return;
        }
        if ((size_t)n < s->cap - s->len) {
            s->len += (size_t)n;
            return;
        }
        size_t nc = s->cap * 2 + (size_t)n + 256;
        char *p = realloc(s->buf, nc);
        if (!p) {
            s->oom = true;
            return;
        }
        s->buf = p;
        s->cap = nc;
    }
}

static const char *kind_name(tir_tensor_kind_t k)
{
    static const char *const n[] = {"input", "output", "constant", "scratch", "sbuf", "psum"};
    return (unsigned)k < 6 ? n[k] : "?";
}

static void ap_str(sb_t *s, const tir_kernel_t *k, const char *label, const tir_ap_t *a)
{
    if (a->tensor < 0)
        return;
    const char *name = a->tensor < k->ntensors ? k->tensors[a->tensor].name : "?";
    sb_printf(s, " %s=%s%s%s{+%lld", label, name, a->view ? ":" : "",
              a->view ? isa_dtype_numpy_name(a->view - 1u) : "", (long long)a->offset);
    for (int d = 0; d < a->ndim && d < TIR_MAX_DIMS; d++)
        sb_printf(s, "%s%lldx%lld", d ? " " : "; ", (long long)a->count[d], (long long)a->step[d]);
    sb_printf(s, "}");
}

static void scalar_str(sb_t *s, const tir_kernel_t *k, const char *label, const tir_scalar_t *v,
                       const tir_scalar_t *dflt)
{
    if (v->is_ap)
        ap_str(s, k, label, v->ap);
    else if (v->imm != dflt->imm)
        sb_printf(s, " %s=%g", label, v->imm);
}

static const char *alu(int v)
{
    const char *n = isa_enum_name(ISA_FT_ALU, (unsigned)v);
    return n ? n : "?";
}

static void op_line(sb_t *s, const tir_kernel_t *k, int i)
{
    const tir_op_t *o = &k->ops[i];
    tir_op_t d;
    tir_op_init(&d, o->kind);
    sb_printf(s, "  #%d %s %s @%s", i, tir_op_name(o->kind), o->name, o->path);
    if (o->engine != ISA_ENG_UNASSIGNED)
        sb_printf(s, " engine=%s", isa_engine_name((isa_engine_t)o->engine));
    if (o->core)
        sb_printf(s, " core=%d", o->core);
    ap_str(s, k, "dst", o->dst);
    ap_str(s, k, "dst2", o->dst2);
    for (int j = 0; j < o->nsrc && j < 4; j++) {
        char l[16];
        snprintf(l, sizeof l, "src%d", j);
        ap_str(s, k, l, o->src[j]);
    }
    ap_str(s, k, "index", o->index);
    ap_str(s, k, "bias", o->bias);
    scalar_str(s, k, "s0", &o->s0, &d.s0);
    scalar_str(s, k, "s1", &o->s1, &d.s1);
    if (o->op0 != d.op0)
        sb_printf(s, " op0=%s", alu(o->op0));
    if (o->op1 != d.op1)
        sb_printf(s, " op1=%s", alu(o->op1));
    if (o->reduce_op != d.reduce_op)
        sb_printf(s, " reduce_op=%s", alu(o->reduce_op));
    if (o->rare->reduce_cmd != d.rare->reduce_cmd)
        sb_printf(s, " reduce_cmd=%d", o->rare->reduce_cmd);
    if (o->func != d.func)
        sb_printf(s, " func=%s", isa_enum_name(ISA_FT_ACTFN, (unsigned)o->func)
                                     ? isa_enum_name(ISA_FT_ACTFN, (unsigned)o->func) : "?");
    if (o->flags)
        sb_printf(s, " flags=0x%x", o->flags);
    if (o->rare->axes)
        sb_printf(s, " axes=0x%x", o->rare->axes);
    if (o->kind == TIR_IOTA || o->kind == TIR_AFFINE_SELECT) {
        sb_printf(s, " pattern=%lld+%lld*p", (long long)o->rare->pat_offset,
                  (long long)o->rare->pat_cm);
        for (int j = 0; j < o->rare->pat_ndim && j < 4; j++)
            sb_printf(s, "+%lld*i%d", (long long)o->rare->pat_step[j], j);
    }
    if (o->cmp != d.cmp)
        sb_printf(s, " cmp=%d", o->cmp);
    if (o->rare->cmp1 != d.rare->cmp1)
        sb_printf(s, " cmp1=%d", o->rare->cmp1);
    if (o->kind == TIR_RANGE_SELECT && o->rare->pat_offset)
        sb_printf(s, " range_start=%lld", (long long)o->rare->pat_offset);
    if (o->rare->fill != d.rare->fill)
        sb_printf(s, " fill=%g", o->rare->fill);
    if (o->rare->value != d.rare->value)
        sb_printf(s, " value=%g", o->rare->value);
    if (o->rare->tile_pos[0] || o->rare->tile_pos[1] || o->rare->tile_size[0] || o->rare->tile_size[1])
        sb_printf(s, " tile=[%d,%d]+[%d,%d]", o->rare->tile_pos[0], o->rare->tile_pos[1], o->rare->tile_size[0],
                  o->rare->tile_size[1]);
    if (o->rare->compress_ratio)
        sb_printf(s, " compress_ratio=%u", o->rare->compress_ratio);
    if (o->rare->quant_offset)
        sb_printf(s, " ifmap_quant_offset=%d", o->rare->quant_offset);
    if (o->rare->dge_mode)
        sb_printf(s, " dge_mode=%d", o->rare->dge_mode);
    if (o->rare->oob_mode)
        sb_printf(s, " oob_mode=%d", o->rare->oob_mode);
    if (o->rare->qos)
        sb_printf(s, " qos=%d", o->rare->qos);
    if (o->rare->n_transpose_axes) {
        sb_printf(s, " axes=(");
        for (int j = 0; j < o->rare->n_transpose_axes && j < 4; j++)
            sb_printf(s, "%s%d", j ? "," : "", o->rare->transpose_axes[j]);
        sb_printf(s, ")");
    }
    if (o->rare->index_bound)
        sb_printf(s, " index_bound=%lld", (long long)o->rare->index_bound);
    if (o->rare->prob != d.rare->prob)
        sb_printf(s, " prob=%g", o->rare->prob);
    if (o->rare->num_elem_per_idx || o->rare->num_valid)
        sb_printf(s, " num_elem_per_idx=%d num_valid=%d", o->rare->num_elem_per_idx, o->rare->num_valid);
    if (memcmp(o->rare->shuffle_mask, d.rare->shuffle_mask, 32)) {
        sb_printf(s, " shuffle_mask=");
        for (int j = 0; j < 32; j++)
            sb_printf(s, "%s%u", j ? "," : "", o->rare->shuffle_mask[j]);
    }
    if (o->kind == TIR_LOAD_TENSOR_TO_REGISTER)
        sb_printf(s, " reg=%d", o->rare->reg);
    if (o->rare->barrier_cores)
        sb_printf(s, " cores=0x%x", o->rare->barrier_cores);
    if (o->rare->peer != d.rare->peer)
        sb_printf(s, " peer=%d", o->rare->peer);
    sb_printf(s, "\n");
}

int enc_tir_format(const tir_kernel_t *k, char **text, size_t *len, tpb_err_t *err)
{
    sb_t s = {NULL, 0, 0, false};
    sb_printf(&s, "kernel %s target %s program %d/%d cores %d (%d tensors, %d ops)\n", k->name,
              k->target, k->program_id, k->num_programs, k->num_cores, k->ntensors, k->nops);
    for (int i = 0; i < k->ntensors; i++) {
        const tir_tensor_t *t = &k->tensors[i];
        sb_printf(&s, "  %%%d %s %s %s [", i, t->name, kind_name(t->kind), isa_dtype_numpy_name(t->dtype));
        for (int d = 0; d < t->ndim && d < TIR_MAX_DIMS; d++)
            sb_printf(&s, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        sb_printf(&s, "]");
        if (t->path[0])
            sb_printf(&s, " @%s", t->path);
        if (t->const_path && t->const_path[0])
            sb_printf(&s, " file=%s", t->const_path);
        else if (t->const_data)
            sb_printf(&s, " inline");
        sb_printf(&s, "\n");
    }
    for (int i = 0; i < k->nops; i++)
        op_line(&s, k, i);
    if (s.oom) {
        free(s.buf);
        return tpb_errf(err, "out of memory formatting the tile IR");
    }
    *text = s.buf;
    if (len)
        *len = s.len;
    return 0;
}
