/* fj_operands.c - operands of the JSON kernel front-end (see fj.h): slice
 * strings and their compiled form in loop bodies, reshape views, raw and
 * indirect access patterns, scalars; split from fj_fields.c. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fj.h"
#include "strutil.h"

/* ---- compiled operand strings ----
 *
 * A loop body's operand string ("a[(i%2)*128:(i%2)*128+128, :]") is parsed
 * once into the expression grammar's programs (enc_slice_operand_compile);
 * later iterations only evaluate them and resolve the tensor name (a tile
 * declared in the body is a new tensor every iteration).  Any failure of
 * the compiled path falls back to parsing the text, which reports the
 * error exactly as before.  Keyed by the string's cJSON item, which lives
 * as long as the kernel file's tree. */
struct fj_cop {
    char name[TIR_NAME_LEN];
    enc_slice_prog_t *prog;
    enc_ap_memo_t apm;   /* the access patterns it gave last (enc_ap_memo) */
    int entry;           /* name's entry in the builder (enc_find_tensor_at) */
};

static const char cop_tag = 0;   /* the memo question "compiled operand" */

static void cop_free(void *p)
{
    struct fj_cop *c = p;
    enc_slice_prog_free(c->prog);
    free(c);
}

/* Parse text (no reshape) and, in a loop, keep its compiled form for key. */
static int parse_keep(jx_t *j, const cJSON *key, const char *text, char *name, size_t nlen,
                      enc_slice_t *sl, int *ns, char *msg, size_t n)
{
    bool dep;
    if (!key || !fj_memo_keeps(j))
        return enc_parse_slice_operand(text, &j->env, name, nlen, sl, ns, &dep, msg, n);
    enc_slice_prog_t *prog;
    if (enc_slice_operand_compile(text, &j->env, name, nlen, sl, ns, &dep, msg, n, &prog))
        return -1;
    struct fj_cop *c = prog ? calloc(1, sizeof *c) : NULL;
    if (!c || strlen(name) >= sizeof c->name || !fj_keep(j, c, cop_free)) {
        enc_slice_prog_free(prog);
        free(c);
        return 0;
    }
    memcpy(c->name, name, strlen(name) + 1);
    c->prog = prog;
    fj_memo_put(j, key, &cop_tag, c);   /* not kept: c is still freed at the end */
    return 0;
}

/* ---- operands ---- */

/* An operand's text without its reshape, at most this long (split_reshape's
 * buffer; enc_quick_slice_operand's bound too, so both take the same texts). */
enum { FJ_PLAIN_MAX = 1024 };

/* lookup_at's failure: a tile that existed but went out of scope gets a
 * precise message */
static int lookup_fail(jx_t *j, const char *name, const char *path, const char *fname)
{
    for (int i = j->b.k->ntensors - 1; i >= 0; i--) {
        const char *tn = j->b.k->tensors[i].name;
        size_t n = strlen(name);
        if (!strncmp(tn, name, n) && (tn[n] == 0 || tn[n] == '#'))
            return fj_jfail(j, path, fname, "tile '%s' is out of scope here (declared at %s)",
                         name, j->b.k->tensors[i].path);
    }
    return fj_jfail(j, path, fname, "unknown tensor or tile '%s'", name);
}

/* fj_lookup with a cached name entry (enc_find_tensor_at; slot NULL: none);
 * inline, its failure apart: called from three places in fj_intern_ap_str
 * it was no longer inlined (compile-tiny: +25 instructions an operand). */
static inline int lookup_at(jx_t *j, const char *name, const char *path, const char *fname,
                            int *slot)
{
    int t = slot ? enc_find_tensor_at(&j->b, name, slot) : enc_find_tensor(&j->b, name);
    return t < 0 ? lookup_fail(j, name, path, fname) : t;
}

int fj_lookup(jx_t *j, const char *name, const char *path, const char *fname)
{
    return lookup_at(j, name, path, fname, NULL);
}

/* NKI tensor.reshape in an operand: "name.reshape(d0, d1, ...)" (or a
 * tuple / list of dims) before the optional slices.  *opnd: the operand
 * without it (text itself when there is none, else written to rest); the
 * view's dims go to shape (*nd = 0: no reshape). */
static int split_reshape(jx_t *j, const char *text, const char *path, const char *fname,
                         char *rest, size_t n, const char **opnd, int *nd, int64_t *shape)
{
    *nd = 0;
    *opnd = rest;
    const char *r = strchr(text, '.') ? strstr(text, ".reshape(") : NULL;
    if (!r) {
        if (strlen(text) < n)   /* else cut as before */
            *opnd = text;
        else
            su_copy(rest, n, text);
        return 0;
    }
    const char *p = r + strlen(".reshape("), *q = p;
    for (int depth = 1; *q && (depth > 1 || *q != ')'); q++)
        depth += (*q == '(' || *q == '[') - (*q == ')' || *q == ']');
    if (*q != ')')
        return fj_jfail(j, path, fname, "'%s': unclosed reshape(", text);
    char dims[256];
    size_t len = (size_t)(q - p);
    if (len >= sizeof dims)
        return fj_jfail(j, path, fname, "reshape dims too long");
    memcpy(dims, p, len);
    dims[len] = 0;
    char *d = dims, *e = dims + len;
    while (d < e && *d == ' ')
        d++;
    if (d < e && (*d == '(' || *d == '[')) {   /* a tuple or list of dims */
        d++;
        while (e > d && (e[-1] == ' ' || e[-1] == ')' || e[-1] == ']'))
            *--e = 0;
    }
    for (char *tok = d; tok && *tok;) {
        char *comma = tok;
        for (int depth = 0; *comma && (depth || *comma != ','); comma++)
            depth += (*comma == '(') - (*comma == ')');
        char save = *comma;
        *comma = 0;
        if (*nd == TIR_MAX_DIMS)
            return fj_jfail(j, path, fname, "reshape to more than %d dimensions", TIR_MAX_DIMS);
        enc_val_t v;
        char msg[300];
        if (enc_expr_eval(tok, &j->env, &v, msg, sizeof msg))
            return fj_jfail(j, path, fname, "reshape dimension %d: %s", *nd, msg);
        shape[(*nd)++] = v.v;
        tok = save ? comma + 1 : NULL;
    }
    if (*nd == 0)
        return fj_jfail(j, path, fname, "reshape() needs the new shape");
    snprintf(rest, n, "%.*s%s", (int)(r - text), text, q + 1);
    return 0;
}

/* key's compiled operand in the memo (NULL: none yet), through the run's
 * small cache of the last ones found (an answer, once there, never
 * changes): 64 sets of FJ_COPS_WAYS by the key's address, a new one
 * in front of its set (the oldest leaves).  With two ways a set, three of
 * a loop body's ~10 operands sharing one evicted each other every
 * iteration, and whether they did hung on where the tree's nodes landed
 * (mixed: 80 000 finds sent on to the memo after jx_t grew 16 bytes). */
static __attribute__((noinline)) struct fj_cop *cop_find_kept(jx_t *j, const cJSON *key)
{
    enum { SETS = FJ_COPS / FJ_COPS_WAYS };
    size_t set = (size_t)(((uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull) >> 58) % SETS;
    struct fj_cop_slot *w = &j->cops[set * FJ_COPS_WAYS];
    for (int i = 0; i < FJ_COPS_WAYS; i++)
        if (w[i].key == key)
            return w[i].cop;
    struct fj_cop *c = (struct fj_cop *)fj_memo_get(j, key, &cop_tag);
    if (c) {
        memmove(w + 1, w, (FJ_COPS_WAYS - 1) * sizeof *w);
        w[0].key = key;
        w[0].cop = c;
    }
    return c;
}

/* cop_find_kept when anything is kept: a flat body's operand (nothing
 * kept) pays no call (compile-live: 15 instructions an operand, the
 * call's register saves) */
static inline struct fj_cop *cop_find(jx_t *j, const cJSON *key)
{
    return j->memo_n ? cop_find_kept(j, key) : NULL;
}

/* fj_parse_view_ap of a string item (key) or of any text (key NULL) */
/* The operand text's tensor and slices (or reshape view): through key's
 * compiled form in a loop body (*cop, else NULL). */
static int view_resolve_cop(jx_t *j, struct fj_cop *c, const cJSON *key, const char *text,
                            const char *path, const char *fname, int *tensor, enc_slice_t *sl,
                            int *ns, int *vnd, int64_t *vshape)
{
    char name[TIR_NAME_LEN], msg[400], plain[FJ_PLAIN_MAX];
    const char *nm = name;
    bool dep;
    if (c && !enc_slice_prog_run(c->prog, &j->env, sl, ns, &dep)) {
        *vnd = 0;
        nm = c->name;
    } else if (!c && (!key || !fj_memo_keeps(j)) &&
               enc_quick_slice_operand(text, name, sizeof name, sl, ns, sizeof plain)) {
        *vnd = 0;   /* what the parse below gives: no reshape (no '.'), not cut */
    } else {
        const char *opnd;
        if (split_reshape(j, text, path, fname, plain, sizeof plain, &opnd, vnd, vshape))
            return -1;
        if (c || *vnd ? enc_parse_slice_operand(opnd, &j->env, name, sizeof name, sl, ns, &dep,
                                                msg, sizeof msg)
                      : parse_keep(j, key, opnd, name, sizeof name, sl, ns, msg, sizeof msg))
            return fj_jfail(j, path, fname, "%s", msg);
    }
    int t = lookup_at(j, nm, path, fname, c && nm == c->name ? &c->entry : NULL);
    if (t < 0)
        return -1;
    *tensor = t;
    return 0;
}

/* view_resolve_cop through key's compiled form found here (*cop) */
static int view_resolve(jx_t *j, const cJSON *key, const char *text, const char *path,
                        const char *fname, struct fj_cop **cop, int *tensor, enc_slice_t *sl,
                        int *ns, int *vnd, int64_t *vshape)
{
    *cop = key ? cop_find(j, key) : NULL;
    return view_resolve_cop(j, *cop, key, text, path, fname, tensor, sl, ns, vnd, vshape);
}

static int view_ap(jx_t *j, const cJSON *key, const char *text, const char *path,
                   const char *fname, tir_ap_t *out, int *tensor, enc_slice_t *sl, int *ns,
                   int *vnd, int64_t *vshape)
{
    struct fj_cop *c;
    if (view_resolve(j, key, text, path, fname, &c, tensor, sl, ns, vnd, vshape))
        return -1;
    if (out) {
        if (*vnd)
            *out = enc_ap_view(&j->b, *tensor, *vnd, vshape, *ns, sl, fname);
        else
            enc_ap_memo(&j->b, c ? &c->apm : NULL, *tensor, *ns, sl, fname, out);
        if (j->b.failed)
            return -1;
    }
    return 0;
}

int fj_parse_view_ap(jx_t *j, const char *text, const char *path, const char *fname,
                     tir_ap_t *out, int *tensor, enc_slice_t *sl, int *ns, int *vnd,
                     int64_t *vshape)
{
    return view_ap(j, NULL, text, path, fname, out, tensor, sl, ns, vnd, vshape);
}

int fj_parse_slice_ap(jx_t *j, const char *text, const char *path, const char *fname,
                      tir_ap_t *out, int *tensor, enc_slice_t *sl, int *ns)
{
    int vnd;
    int64_t vshape[TIR_MAX_DIMS];
    return fj_parse_view_ap(j, text, path, fname, out, tensor, sl, ns, &vnd, vshape);
}

int fj_parse_raw_ap(jx_t *j, const cJSON *it, const char *path, const char *fname,
                    tir_ap_t *out)
{
    static const char *const allowed[] = {"tensor", "offset", "ap", "dtype", NULL};
    char sub[ENC_PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s.%s", path, fname);
    if (fj_check_fields(j, it, sub, allowed))
        return -1;
    const char *tn;
    if (fj_get_str(j, it, sub, "tensor", &tn, true))
        return -1;
    int t = fj_lookup(j, tn, path, fname);
    if (t < 0)
        return -1;
    int64_t off;
    if (fj_get_int(j, it, sub, "offset", &off, 0, false))
        return -1;
    const cJSON *ap = fj_field(it, "ap");
    if (!cJSON_IsArray(ap))
        return fj_jfail(j, sub, "ap", "expected [[step, count], ...], got %s", fj_type_name(ap));
    int n = cJSON_GetArraySize(ap);
    if (n < 1 || n > TIR_MAX_DIMS)
        return fj_jfail(j, sub, "ap", "%d [step, count] pairs (1..%d)", n, TIR_MAX_DIMS);
    int64_t pairs[TIR_MAX_DIMS][2];
    int i = 0;
    for (const cJSON *c = ap->child; c; c = c->next, i++) {
        if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 2)
            return fj_jfail(j, sub, "ap", "entry %d must be [step, count]", i);
        if (fj_get_int_item(j, c->child, sub, "ap", &pairs[i][0], NULL) ||
            fj_get_int_item(j, c->child->next, sub, "ap", &pairs[i][1], NULL))
            return -1;
    }
    unsigned view = 0;
    if (fj_field(it, "dtype")) {   /* a dtype view (NKI .ap(dtype=), tensor.view(dtype)) */
        unsigned dt;
        if (fj_get_dtype(j, it, sub, &dt))
            return -1;
        if (dt != j->b.k->tensors[t].dtype)
            view = dt + 1;
    }
    *out = enc_ap_raw_view(&j->b, t, view, off, n, (const int64_t(*)[2])pairs, fname);
    return j->b.failed ? -1 : 0;
}


/* The AP moved so that its dim `ad` (the indirect dim) comes first, the
 * others keeping their order: the lowering's indirect dims (the seed's
 * generic_dims) always read dim 0 as the indexed one. */
static void indirect_first(tir_ap_t *a, int ad)
{
    int64_t st = a->step[ad], ct = a->count[ad];
    for (int d = ad; d > 0; d--) {
        a->step[d] = a->step[d - 1];
        a->count[d] = a->count[d - 1];
    }
    a->step[0] = st;
    a->count[0] = ct;
}

/* An indirect operand {"tensor": "table[...]", "index": "idx[...]",
 * "rows": "a:b", "cols": "c:d", "indirect_dim": d}: dim d (default 0, NKI's
 * `.ap(indirect_dim=)`) of the table is the indirect dim. */
int fj_parse_indirect(jx_t *j, const cJSON *it, const char *path, const char *fname,
                      fj_operand_t *out)
{
    static const char *const allowed[] = {"tensor", "index", "rows", "cols", "indirect_dim", NULL};
    char sub[ENC_PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s.%s", path, fname);
    if (fj_check_fields(j, it, sub, allowed))
        return -1;
    const char *tn, *ix, *rows, *cols;
    int idim;
    if (fj_get_str(j, it, sub, "tensor", &tn, true) || fj_get_str(j, it, sub, "index", &ix, true) ||
        fj_get_str(j, it, sub, "rows", &rows, false) || fj_get_str(j, it, sub, "cols", &cols, false) ||
        fj_get_int_range(j, it, sub, "indirect_dim", &idim, 0, 0, TIR_MAX_DIMS - 1))
        return -1;
    if (idim && cols)
        return fj_jfail(j, sub, "cols", "applies with indirect_dim 0 only; slice the tensor "
                        "instead");
    enc_slice_t sl[ENC_MAX_SLICES];
    int ns = 0, t = -1, vnd;
    int64_t vshape[TIR_MAX_DIMS];
    if (fj_parse_view_ap(j, tn, sub, "tensor", NULL, &t, sl, &ns, &vnd, vshape))
        return -1;
    char msg[400];
    bool dep;
    const char *over[2] = {rows, cols};
    int tnd = vnd ? vnd : j->b.k->tensors[t].ndim;
    if (idim >= tnd)
        return fj_jfail(j, sub, "indirect_dim", "%d is not a dimension of a %d-D tensor", idim,
                        tnd);
    for (int d = 0; d < 2; d++) {
        if (!over[d])
            continue;
        enc_slice_t one[ENC_MAX_SLICES];
        int n1, at = d ? 1 : idim;   /* rows: the indirect dim; cols: dim 1 */
        if (enc_parse_slices(over[d], &j->env, one, &n1, &dep, msg, sizeof msg))
            return fj_jfail(j, sub, d ? "cols" : "rows", "%s", msg);
        if (n1 != 1)
            return fj_jfail(j, sub, d ? "cols" : "rows", "expected one slice");
        while (ns <= at)
            sl[ns++] = ENC_ALL;
        sl[at] = one[0];
    }
    if (ns > idim && sl[idim].kind == ENC_SL_INDEX)
        return fj_jfail(j, sub, "tensor", "the indirect dimension (%d) must be a slice, not an "
                        "index", idim);
    int ad = idim;   /* its dim in the AP: integer-indexed dims before it are dropped */
    for (int d = 0; d < idim && d < ns; d++)
        ad -= sl[d].kind == ENC_SL_INDEX;
    out->ap = vnd ? enc_ap_view(&j->b, t, vnd, vshape, ns, sl, fname)
                  : enc_ap(&j->b, t, ns, sl, fname);
    if (j->b.failed)
        return -1;
    if (ad > 0 && ad < out->ap.ndim)
        indirect_first(&out->ap, ad);
    int it_t = -1;
    enc_slice_t isl[ENC_MAX_SLICES];
    int ins = 0;
    if (fj_parse_slice_ap(j, ix, sub, "index", &out->index, &it_t, isl, &ins))
        return -1;
    out->bound = out->ap.count[0];
    int64_t n = 1;
    for (int d = 0; d < out->index.ndim; d++)
        n *= out->index.count[d];
    out->ap.count[0] = n;    /* one row per index value */
    return 0;
}

/* Any operand: slice string, raw AP object, or (when allow_indirect) an
 * indirect object.  required=false leaves tensor -1 when absent. */
int fj_get_operand(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                   bool required, bool allow_indirect, fj_operand_t *out)
{
    const cJSON *it = fj_field(obj, fname);
    if (!it) {   /* (fj_operand_item sets out otherwise) */
        out->ap = enc_ap_none();
        out->index = enc_ap_none();
        out->bound = 0;
        if (required)
            return fj_jfail(j, path, fname, "missing");
        return 0;
    }
    return fj_operand_item(j, it, path, fname, allow_indirect, out);
}

/* One operand value (a field's value or a list item). */
int fj_operand_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                    bool allow_indirect, fj_operand_t *out)
{
    out->ap = enc_ap_none();
    out->index = enc_ap_none();
    out->bound = 0;
    if (cJSON_IsString(it)) {
        int t = -1, ns = 0, vnd;
        enc_slice_t sl[ENC_MAX_SLICES];
        int64_t vshape[TIR_MAX_DIMS];
        return view_ap(j, it, it->valuestring, path, fname, &out->ap, &t, sl, &ns, &vnd, vshape);
    }
    if (cJSON_IsObject(it)) {
        if (fj_field(it, "index")) {
            if (!allow_indirect)
                return fj_jfail(j, path, fname, "an indirect access is not allowed here");
            return fj_parse_indirect(j, it, path, fname, out);
        }
        return fj_parse_raw_ap(j, it, path, fname, &out->ap);
    }
    return fj_jfail(j, path, fname, "expected an operand (\"t[0:128, :]\" or {\"tensor\", \"ap\"}), "
                 "got %s", fj_type_name(it));
}

int fj_get_ap_str(jx_t *j, const cJSON *it, const char *path, const char *fname,
                  tir_ap_t *out)
{
    int t = -1, ns = 0, vnd;
    enc_slice_t sl[ENC_MAX_SLICES];
    int64_t vshape[TIR_MAX_DIMS];
    /* written in place: after an error (-1, the run fails) *out is not used */
    return view_ap(j, it, it->valuestring, path, fname, out, &t, sl, &ns, &vnd, vshape) ? -1 : 0;
}

int fj_get_ap_value(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool required,
                    tir_ap_t *out)
{
    if (j->mask_redirect && !strcmp(fname, "dst")) {   /* a masked op's scratch (fj_mask.c) */
        *out = j->mask_dst;
        return 0;
    }
    const cJSON *it = fj_field(obj, fname);
    if (cJSON_IsString(it))   /* the common case, without the operand's index and bound */
        return fj_get_ap_str(j, it, path, fname, out);
    fj_operand_t o;
    if (fj_get_operand(j, obj, path, fname, required, false, &o))
        return -1;
    *out = o.ap;
    return 0;
}

int fj_get_ap(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool required,
              const tir_ap_t **slot)
{
    tir_ap_t ap;
    if (fj_get_ap_value(j, obj, path, fname, required, &ap))
        return -1;
    return fj_intern_ap(j, path, fname, &ap, slot);
}

/* enc_ap_memo_interned's record for the tensor's slices into *slot */
static int intern_sliced(jx_t *j, struct fj_cop *c, int t, int ns, const enc_slice_t *sl,
                         const char *path, const char *fname, const tir_ap_t **slot)
{
    const tir_ap_t *r = enc_ap_memo_interned(&j->b, c ? &c->apm : NULL, t, ns, sl, fname);
    if (!r)
        return j->b.failed ? -1 : fj_jfail(j, path, fname, "out of memory");
    *slot = r;
    return 0;
}

/* An operand not compiled (cop_find: none) outside a loop body, plain:
 * view_resolve_cop's quick branch, without its frame (compile-live: every
 * operand; sixteenth session, second round).  1: not a plain operand (the
 * caller goes on).  Not inlined: a loop body's operands (compile-tiny)
 * would pay for its frame. */
static __attribute__((noinline)) int intern_flat(jx_t *j, const cJSON *it, const char *path,
                                                 const char *fname, const tir_ap_t **slot)
{
    char name[TIR_NAME_LEN];
    enc_slice_t sl[ENC_MAX_SLICES];
    int ns = 0;
    if (!enc_quick_slice_operand(it->valuestring, name, sizeof name, sl, &ns, FJ_PLAIN_MAX))
        return 1;
    int t = lookup_at(j, name, path, fname, NULL);
    if (t < 0)
        return -1;
    /* a whole tensor: its record interned once (a tile's store after its
     * load), else what enc_ap_memo_interned does without a memo, without
     * its memo's steps (live: every operand) */
    const tir_ap_t *r = ns ? NULL : enc_ap_full_interned(&j->b, t);
    if (!r)
        r = enc_ap_interned(&j->b, t, ns, sl, fname);
    if (!r)
        return j->b.failed ? -1 : fj_jfail(j, path, fname, "out of memory");
    *slot = r;
    return 0;
}

int fj_intern_ap_str(jx_t *j, const cJSON *it, const char *path, const char *fname,
                     const tir_ap_t **slot)
{
    int t = -1, ns = 0, vnd;
    enc_slice_t sl[ENC_MAX_SLICES];
    int64_t vshape[TIR_MAX_DIMS];
    struct fj_cop *c = cop_find(j, it);
    /* a bare name compiled before (no slices, no reshape): what
     * view_resolve gives, its tensor and no slices, found directly, and the
     * tensor's whole pattern once interned (enc_ap_memo_interned's answer) */
    if (c && !j->b.failed && enc_slice_prog_count(c->prog) == 0) {
        if ((t = lookup_at(j, c->name, path, fname, &c->entry)) < 0)
            return -1;
        const tir_ap_t *r = enc_ap_full_interned(&j->b, t);
        if (!r && !(r = enc_ap_memo_interned(&j->b, &c->apm, t, 0, sl, fname)))
            return j->b.failed ? -1 : fj_jfail(j, path, fname, "out of memory");
        *slot = r;
        return 0;
    }
    int rc;
    if (!c && !fj_memo_keeps(j) && (rc = intern_flat(j, it, path, fname, slot)) <= 0)
        return rc;
    if (view_resolve_cop(j, c, it, it->valuestring, path, fname, &t, sl, &ns, &vnd, vshape))
        return -1;
    if (!vnd)   /* the record interned last time for these slices (enc_ap_memo_interned) */
        return intern_sliced(j, c, t, ns, sl, path, fname, slot);
    tir_ap_t ap = enc_ap_view(&j->b, t, vnd, vshape, ns, sl, fname);
    if (j->b.failed)
        return -1;
    return fj_intern_ap(j, path, fname, &ap, slot);
}

int fj_intern_ap(jx_t *j, const char *path, const char *fname, const tir_ap_t *ap,
                 const tir_ap_t **slot)
{
    const tir_ap_t *r = tir_ap_intern(j->b.k, ap);
    if (!r)
        return fj_jfail(j, path, fname, "out of memory");
    *slot = r;
    return 0;
}

/* The identifier text starts with ("" when it starts otherwise); returns
 * the text after it, spaces skipped. */
const char *fj_leading_name(const char *text, char *name, size_t n)
{
    size_t k = 0;
    while (*text == ' ')
        text++;
    while ((isalnum((unsigned char)text[k]) || text[k] == '_') && k + 1 < n) {
        name[k] = text[k];
        k++;
    }
    name[k] = 0;
    if (k && isdigit((unsigned char)name[0]))
        name[0] = 0;
    text += name[0] ? k : 0;
    while (*text == ' ')
        text++;
    return text;
}

/* number or constant expression -> immediate; string/object -> [P,1] tile
 * access */
int fj_get_scalar(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                  tir_scalar_t *out, double dflt)
{
    const cJSON *it = fj_field(obj, fname);
    *out = tir_scalar_imm(dflt);
    if (!it)
        return 0;
    if (cJSON_IsNumber(it)) {
        *out = tir_scalar_imm(it->valuedouble);
        return 0;
    }
    if (cJSON_IsString(it) && (!strcmp(it->valuestring, "inf") || !strcmp(it->valuestring, "-inf"))) {
        *out = tir_scalar_imm(it->valuestring[0] == '-' ? -INFINITY : INFINITY);
        return 0;
    }
    /* A string that does not start with a tensor or tile name may be a
     * constant expression ("1/sqrt(128)"); its errors are reported when it
     * starts like one (a number, '(', '-', a variable, a call or pi).
     * Anything else is a [P,1] access, with the access's errors. */
    if (cJSON_IsString(it)) {
        char name[ENC_VAR_NAME], msg[400];
        const char *after = fj_leading_name(it->valuestring, name, sizeof name);
        if (!name[0] || enc_find_tensor(&j->b, name) < 0) {
            double v;
            if (fj_eval_number(j, it->valuestring, &v, msg, sizeof msg) == 0) {
                *out = tir_scalar_imm(v);
                return 0;
            }
            bool expr_like = !name[0] || *after == '(' || enc_env_find(&j->env, name) ||
                             !strcmp(name, "pi");
            if (expr_like)
                return fj_jfail(j, path, fname, "%s", msg);
        }
    }
    tir_ap_t ap;
    if (fj_get_ap_value(j, obj, path, fname, true, &ap))
        return -1;
    out->is_ap = true;
    out->imm = 0;
    return fj_intern_ap(j, path, fname, &ap, &out->ap);
    return 0;
}
