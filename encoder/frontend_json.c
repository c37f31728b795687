/* frontend_json.c - the JSON kernel file (docs/kernel-format.md) -> tile IR.
 *
 * Walks the cJSON tree once for one program id, evaluating `for`/`let`/`if`
 * as it goes (loops unroll at compile time) and driving the C builder API,
 * so every op is validated by the same code as a C-built kernel.  Every
 * error carries "<file>: <path>: field '<field>'". */
#include "frontend.h"
#include "strutil.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "builder.h"
#include "expr.h"
#include "fileio.h"

#define MAX_LOOP_ITERATIONS_FACTOR 4   /* total iterations <= factor * max_ops */

typedef struct {
    enc_builder_t b;
    enc_env_t env;
    char base_dir[1024];
    int depth;                   /* for/if nesting */
    int64_t iterations;          /* loop iterations executed so far */
    int64_t max_ops;
    bool note_added;             /* loop-variable note appended to the error */
    int grid_ndim;               /* 0: grid object / absent */
    int64_t grid_dims[3];
    /* results that depend on a statement object only, not on loop
     * variables, so a statement unrolled N times is checked once */
    struct memo_entry *memo;
    size_t memo_cap, memo_n;
} jx_t;

/* ---- per-object memo: (object, what) -> value ---- */

struct memo_entry {
    const cJSON *obj;
    const void *what;            /* the question: an allowed-field list, a table */
    const void *value;
};

static size_t memo_slot(const jx_t *j, const cJSON *obj, const void *what)
{
    uint64_t h = ((uint64_t)(uintptr_t)obj * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)(uintptr_t)what * 0xc2b2ae3d27d4eb4full);
    return (size_t)(h ^ h >> 29) & (j->memo_cap - 1);
}

static const void *memo_get(const jx_t *j, const cJSON *obj, const void *what)
{
    if (!j->memo_cap)
        return NULL;
    for (size_t i = memo_slot(j, obj, what);; i = (i + 1) & (j->memo_cap - 1)) {
        const struct memo_entry *e = &j->memo[i];
        if (!e->obj)
            return NULL;
        if (e->obj == obj && e->what == what)
            return e->value;
    }
}

/* Best effort: when memory runs out the answer is simply not kept. */
static void memo_put(jx_t *j, const cJSON *obj, const void *what, const void *value)
{
    if (2 * (j->memo_n + 1) > j->memo_cap) {
        size_t nc = j->memo_cap ? 2 * j->memo_cap : 256;
        struct memo_entry *old = j->memo, *nw = calloc(nc, sizeof *nw);
        if (!nw)
            return;
        size_t oc = j->memo_cap;
        j->memo = nw;
        j->memo_cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (old[i].obj) {
                size_t k = memo_slot(j, old[i].obj, old[i].what);
                while (nw[k].obj)
                    k = (k + 1) & (nc - 1);
                nw[k] = old[i];
            }
        free(old);
    }
    size_t k = memo_slot(j, obj, what);
    while (j->memo[k].obj && !(j->memo[k].obj == obj && j->memo[k].what == what))
        k = (k + 1) & (j->memo_cap - 1);
    if (!j->memo[k].obj)
        j->memo_n++;
    j->memo[k] = (struct memo_entry){obj, what, value};
}

/* ---- errors ---- */

static int jfail(jx_t *j, const char *path, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int jfail(jx_t *j, const char *path, const char *field, const char *fmt, ...)
{
    char tmp[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (field)
        return enc_fail(&j->b, "%s: field '%s': %s", path, field, tmp);
    return enc_fail(&j->b, "%s: %s", path, tmp);
}

static const char *type_name(const cJSON *it)
{
    if (!it)
        return "nothing";
    if (cJSON_IsString(it))
        return "a string";
    if (cJSON_IsNumber(it))
        return "a number";
    if (cJSON_IsBool(it))
        return "a boolean";
    if (cJSON_IsNull(it))
        return "null";
    if (cJSON_IsArray(it))
        return "an array";
    return "an object";
}

/* Reject fields outside `allowed` (NULL-terminated) and duplicate keys. */
static int check_fields(jx_t *j, const cJSON *obj, const char *path, const char *const *allowed)
{
    if (memo_get(j, obj, allowed))
        return 0;   /* this object passed this check before (an earlier iteration) */
    for (const cJSON *c = obj->child; c; c = c->next) {
        bool ok = !strcmp(c->string, "comment");
        for (int i = 0; !ok && allowed[i]; i++)
            ok = !strcmp(c->string, allowed[i]);
        if (!ok) {
            char list[512];
            size_t o = 0;
            list[0] = 0;
            for (int i = 0; allowed[i] && o < sizeof list; i++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", allowed[i]);
            return jfail(j, path, c->string, "unknown field (allowed: %s)", list);
        }
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (!strcmp(d->string, c->string))
                return jfail(j, path, c->string, "given twice");
    }
    memo_put(j, obj, allowed, obj);
    return 0;
}

static const cJSON *field(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

/* ---- scalar fields ---- */

static int get_int_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                        int64_t *out, bool *dep)
{
    *out = 0;
    if (dep)
        *dep = false;
    if (cJSON_IsNumber(it)) {
        double d = it->valuedouble;
        if (!(d == floor(d)) || d < -9.2e18 || d > 9.2e18)
            return jfail(j, path, fname, "%g is not an integer", d);
        *out = (int64_t)d;
        return 0;
    }
    if (cJSON_IsString(it)) {
        enc_val_t v;
        char msg[400];
        if (enc_expr_eval(it->valuestring, &j->env, &v, msg, sizeof msg))
            return jfail(j, path, fname, "%s", msg);
        *out = v.v;
        if (dep)
            *dep = v.pid_dep;
        return 0;
    }
    return jfail(j, path, fname, "expected an integer or an expression string, got %s",
                 type_name(it));
}

static int get_int(jx_t *j, const cJSON *obj, const char *path, const char *fname, int64_t *out,
                   int64_t dflt, bool required)
{
    const cJSON *it = field(obj, fname);
    if (!it) {
        if (required)
            return jfail(j, path, fname, "missing");
        *out = dflt;
        return 0;
    }
    return get_int_item(j, it, path, fname, out, NULL);
}

static int get_int_range(jx_t *j, const cJSON *obj, const char *path, const char *fname, int *out,
                         int dflt, int64_t lo, int64_t hi)
{
    int64_t v;
    if (get_int(j, obj, path, fname, &v, dflt, false))
        return -1;
    if (v < lo || v > hi)
        return jfail(j, path, fname, "%lld out of range %lld..%lld", (long long)v, (long long)lo,
                     (long long)hi);
    *out = (int)v;
    return 0;
}

/* A numeric expression string: the integer grammar first ("7 // 2" is 3),
 * else a floating-point constant expression ("1/sqrt(d)"); the message of
 * the latter on failure. */
static int eval_number(jx_t *j, const char *text, double *out, char *msg, size_t n)
{
    enc_val_t iv;
    if (enc_expr_eval(text, &j->env, &iv, msg, n) == 0) {
        *out = (double)iv.v;
        return 0;
    }
    return enc_fexpr_eval(text, &j->env, out, msg, n);
}

static int get_num(jx_t *j, const cJSON *obj, const char *path, const char *fname, double *out,
                   double dflt)
{
    const cJSON *it = field(obj, fname);
    if (!it) {
        *out = dflt;
        return 0;
    }
    if (cJSON_IsNumber(it)) {
        *out = it->valuedouble;
        return 0;
    }
    if (cJSON_IsString(it)) {
        const char *s = it->valuestring;
        if (!strcmp(s, "inf") || !strcmp(s, "+inf")) { *out = INFINITY; return 0; }
        if (!strcmp(s, "-inf")) { *out = -INFINITY; return 0; }
        if (!strcmp(s, "nan")) { *out = NAN; return 0; }
        char msg[400];
        if (eval_number(j, s, out, msg, sizeof msg) == 0)
            return 0;
        return jfail(j, path, fname, "%s", msg);
    }
    return jfail(j, path, fname, "expected a number, got %s", type_name(it));
}

static int get_bool(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool *out)
{
    const cJSON *it = field(obj, fname);
    *out = false;
    if (!it)
        return 0;
    if (!cJSON_IsBool(it))
        return jfail(j, path, fname, "expected true or false, got %s", type_name(it));
    *out = cJSON_IsTrue(it);
    return 0;
}

static int get_str(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                   const char **out, bool required)
{
    const cJSON *it = field(obj, fname);
    *out = NULL;
    if (!it) {
        if (required)
            return jfail(j, path, fname, "missing");
        return 0;
    }
    if (!cJSON_IsString(it))
        return jfail(j, path, fname, "expected a string, got %s", type_name(it));
    *out = it->valuestring;
    return 0;
}

/* strip NKI module prefixes: "nl.add", "np.add", "nki.language.exp" */
static const char *strip_prefix(const char *s)
{
    static const char *const pre[] = {"nki.language.", "nki.isa.", "nl.", "np.", "nisa.",
                                      "numpy.", "oob_mode.", "dge_mode.", "engine.", NULL};
    for (int i = 0; pre[i]; i++)
        if (!strncmp(s, pre[i], strlen(pre[i])))
            return s + strlen(pre[i]);
    return s;
}

typedef struct {
    const char *alias, *name;
} alias_t;

static int get_enum(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                    isa_ftype_t type, const alias_t *aliases, int *out, int dflt)
{
    const char *s;
    if (get_str(j, obj, path, fname, &s, false))
        return -1;
    if (!s) {
        *out = dflt;
        return 0;
    }
    const char *n = strip_prefix(s);
    for (int i = 0; aliases && aliases[i].alias; i++)
        if (!strcmp(n, aliases[i].alias))
            n = aliases[i].name;
    int v = isa_enum_by_name(type, n);
    if (v < 0) {
        char list[700];
        size_t o = 0;
        list[0] = 0;
        for (unsigned k = 0; k < 64 && o < sizeof list; k++) {
            const char *nm = isa_enum_name(type, k);
            if (nm)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? " " : "", nm);
        }
        return jfail(j, path, fname, "unknown name '%s' (one of: %s)", s, list);
    }
    *out = v;
    return 0;
}

static const alias_t alu_aliases[] = {
    {"sub", "subtract"}, {"mul", "multiply"}, {"div", "divide"}, {"maximum", "max"},
    {"minimum", "min"}, {"greater", "is_gt"}, {"greater_equal", "is_ge"}, {"less", "is_lt"},
    {"less_equal", "is_le"}, {"pow", "power"}, {"invert", "bitwise_not"}, {"none", "bypass"},
    {NULL, NULL}};
static const alias_t act_aliases[] = {
    {"identity", "copy"}, {"exponential", "exp"}, {"gelu_apprx_tanh", "gelu_apprx_tanh"},
    {NULL, NULL}};
static const alias_t cmp_aliases[] = {
    {"equal", "eq"}, {"not_equal", "ne"}, {"greater_equal", "ge"}, {"greater", "gt"},
    {"less_equal", "le"}, {"less", "lt"}, {"is_equal", "eq"}, {"is_ge", "ge"}, {"is_gt", "gt"},
    {"is_le", "le"}, {"is_lt", "lt"}, {NULL, NULL}};

static int get_engine(jx_t *j, const cJSON *obj, const char *path, int *out)
{
    const char *s;
    *out = ISA_ENG_UNASSIGNED;
    if (get_str(j, obj, path, "engine", &s, false))
        return -1;
    if (!s)
        return 0;
    static const struct { const char *n; int e; } names[] = {
        {"pe", ISA_ENG_PE}, {"tensor", ISA_ENG_PE}, {"act", ISA_ENG_ACT},
        {"activation", ISA_ENG_ACT}, {"scalar", ISA_ENG_ACT}, {"pool", ISA_ENG_POOL},
        {"gpsimd", ISA_ENG_POOL}, {"dve", ISA_ENG_DVE}, {"vector", ISA_ENG_DVE},
        {"sp", ISA_ENG_SP}, {"sync", ISA_ENG_SP}, {"dma", ISA_ENG_DMA},
        {"unknown", ISA_ENG_UNASSIGNED}, {"auto", ISA_ENG_UNASSIGNED},
    };
    const char *n = strip_prefix(s);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(n, names[i].n)) {
            *out = names[i].e;
            return 0;
        }
    return jfail(j, path, "engine", "unknown engine '%s' (pe, act, pool, dve, sp, dma, auto)", s);
}

static int get_dtype(jx_t *j, const cJSON *obj, const char *path, unsigned *out)
{
    const char *s;
    if (get_str(j, obj, path, "dtype", &s, true))
        return -1;
    const char *n = strip_prefix(s);
    int v;
    if (!strcmp(n, "bool") || !strcmp(n, "bool_"))
        v = ISA_DT_UINT8;
    else if (!strcmp(n, "float8_e4m3"))
        v = ISA_DT_FP8E4M3;
    else
        v = isa_dtype_by_name(n);
    if (v < 0)
        return jfail(j, path, "dtype", "unknown dtype '%s' (float32 bfloat16 float16 "
                     "float8_e4m3fn float8_e5m2 int8 int16 int32 uint8 uint16 uint32 bool)", s);
    *out = (unsigned)v;
    return 0;
}

static int get_shape(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                     int64_t *shape, int *ndim, int maxd)
{
    const cJSON *it = field(obj, fname);
    if (!it)
        return jfail(j, path, fname, "missing");
    if (!cJSON_IsArray(it))
        return jfail(j, path, fname, "expected an array of integers, got %s", type_name(it));
    int n = cJSON_GetArraySize(it);
    if (n < 1 || n > maxd)
        return jfail(j, path, fname, "%d dimensions (1..%d allowed)", n, maxd);
    int i = 0;
    for (const cJSON *c = it->child; c; c = c->next, i++)
        if (get_int_item(j, c, path, fname, &shape[i], NULL))
            return -1;
    *ndim = n;
    return 0;
}

/* ---- operands ---- */

static int lookup(jx_t *j, const char *name, const char *path, const char *fname)
{
    int t = enc_find_tensor(&j->b, name);
    if (t < 0) {
        /* a tile that existed but went out of scope gets a precise message */
        for (int i = j->b.k->ntensors - 1; i >= 0; i--) {
            const char *tn = j->b.k->tensors[i].name;
            size_t n = strlen(name);
            if (!strncmp(tn, name, n) && (tn[n] == 0 || tn[n] == '#'))
                return jfail(j, path, fname, "tile '%s' is out of scope here (declared at %s)",
                             name, j->b.k->tensors[i].path);
        }
        return jfail(j, path, fname, "unknown tensor or tile '%s'", name);
    }
    return t;
}

static int parse_slice_ap(jx_t *j, const char *text, const char *path, const char *fname,
                          tir_ap_t *out, int *tensor, enc_slice_t *sl, int *ns)
{
    char name[TIR_NAME_LEN], msg[400];
    bool dep;
    if (enc_parse_slice_operand(text, &j->env, name, sizeof name, sl, ns, &dep, msg, sizeof msg))
        return jfail(j, path, fname, "%s", msg);
    int t = lookup(j, name, path, fname);
    if (t < 0)
        return -1;
    *tensor = t;
    if (out) {
        *out = enc_ap(&j->b, t, *ns, sl, fname);
        if (j->b.failed)
            return -1;
    }
    return 0;
}

static int parse_raw_ap(jx_t *j, const cJSON *it, const char *path, const char *fname,
                        tir_ap_t *out)
{
    static const char *const allowed[] = {"tensor", "offset", "ap", NULL};
    char sub[ENC_PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s.%s", path, fname);
    if (check_fields(j, it, sub, allowed))
        return -1;
    const char *tn;
    if (get_str(j, it, sub, "tensor", &tn, true))
        return -1;
    int t = lookup(j, tn, path, fname);
    if (t < 0)
        return -1;
    int64_t off;
    if (get_int(j, it, sub, "offset", &off, 0, false))
        return -1;
    const cJSON *ap = field(it, "ap");
    if (!cJSON_IsArray(ap))
        return jfail(j, sub, "ap", "expected [[step, count], ...], got %s", type_name(ap));
    int n = cJSON_GetArraySize(ap);
    if (n < 1 || n > TIR_MAX_DIMS)
        return jfail(j, sub, "ap", "%d [step, count] pairs (1..%d)", n, TIR_MAX_DIMS);
    int64_t pairs[TIR_MAX_DIMS][2];
    int i = 0;
    for (const cJSON *c = ap->child; c; c = c->next, i++) {
        if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 2)
            return jfail(j, sub, "ap", "entry %d must be [step, count]", i);
        if (get_int_item(j, c->child, sub, "ap", &pairs[i][0], NULL) ||
            get_int_item(j, c->child->next, sub, "ap", &pairs[i][1], NULL))
            return -1;
    }
    *out = enc_ap_raw(&j->b, t, off, n, (const int64_t(*)[2])pairs, fname);
    return j->b.failed ? -1 : 0;
}

typedef struct {
    tir_ap_t ap;
    tir_ap_t index;              /* tensor -1: direct */
    int64_t bound;
} jop_t;

/* An indirect operand {"tensor": "table[...]", "index": "idx[...]",
 * "rows": "a:b", "cols": "c:d"}: dim 0 of the table is the indirect dim. */
static int parse_indirect(jx_t *j, const cJSON *it, const char *path, const char *fname,
                          jop_t *out)
{
    static const char *const allowed[] = {"tensor", "index", "rows", "cols", NULL};
    char sub[ENC_PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s.%s", path, fname);
    if (check_fields(j, it, sub, allowed))
        return -1;
    const char *tn, *ix, *rows, *cols;
    if (get_str(j, it, sub, "tensor", &tn, true) || get_str(j, it, sub, "index", &ix, true) ||
        get_str(j, it, sub, "rows", &rows, false) || get_str(j, it, sub, "cols", &cols, false))
        return -1;
    enc_slice_t sl[ENC_MAX_SLICES];
    int ns = 0, t = -1;
    if (parse_slice_ap(j, tn, sub, "tensor", NULL, &t, sl, &ns))
        return -1;
    char msg[400];
    bool dep;
    const char *over[2] = {rows, cols};
    for (int d = 0; d < 2; d++) {
        if (!over[d])
            continue;
        enc_slice_t one[ENC_MAX_SLICES];
        int n1;
        if (enc_parse_slices(over[d], &j->env, one, &n1, &dep, msg, sizeof msg))
            return jfail(j, sub, d ? "cols" : "rows", "%s", msg);
        if (n1 != 1)
            return jfail(j, sub, d ? "cols" : "rows", "expected one slice");
        while (ns <= d)
            sl[ns++] = ENC_ALL;
        sl[d] = one[0];
    }
    if (ns > 0 && sl[0].kind == ENC_SL_INDEX)
        return jfail(j, sub, "tensor", "the indirect dimension (0) must be a slice, not an index");
    out->ap = enc_ap(&j->b, t, ns, sl, fname);
    if (j->b.failed)
        return -1;
    int it_t = -1;
    enc_slice_t isl[ENC_MAX_SLICES];
    int ins = 0;
    if (parse_slice_ap(j, ix, sub, "index", &out->index, &it_t, isl, &ins))
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
static int get_operand(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                       bool required, bool allow_indirect, jop_t *out)
{
    out->ap = enc_ap_none();
    out->index = enc_ap_none();
    out->bound = 0;
    const cJSON *it = field(obj, fname);
    if (!it) {
        if (required)
            return jfail(j, path, fname, "missing");
        return 0;
    }
    if (cJSON_IsString(it)) {
        int t = -1, ns = 0;
        enc_slice_t sl[ENC_MAX_SLICES];
        return parse_slice_ap(j, it->valuestring, path, fname, &out->ap, &t, sl, &ns);
    }
    if (cJSON_IsObject(it)) {
        if (field(it, "index")) {
            if (!allow_indirect)
                return jfail(j, path, fname, "an indirect access is not allowed here");
            return parse_indirect(j, it, path, fname, out);
        }
        return parse_raw_ap(j, it, path, fname, &out->ap);
    }
    return jfail(j, path, fname, "expected an operand (\"t[0:128, :]\" or {\"tensor\", \"ap\"}), "
                 "got %s", type_name(it));
}

static int get_ap(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool required,
                  tir_ap_t *out)
{
    jop_t o;
    if (get_operand(j, obj, path, fname, required, false, &o))
        return -1;
    *out = o.ap;
    return 0;
}

/* The identifier text starts with ("" when it starts otherwise); returns
 * the text after it, spaces skipped. */
static const char *leading_name(const char *text, char *name, size_t n)
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
static int get_scalar(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                      tir_scalar_t *out, double dflt)
{
    const cJSON *it = field(obj, fname);
    *out = enc_imm(dflt);
    if (!it)
        return 0;
    if (cJSON_IsNumber(it)) {
        *out = enc_imm(it->valuedouble);
        return 0;
    }
    if (cJSON_IsString(it) && (!strcmp(it->valuestring, "inf") || !strcmp(it->valuestring, "-inf"))) {
        *out = enc_imm(it->valuestring[0] == '-' ? -INFINITY : INFINITY);
        return 0;
    }
    /* A string that does not start with a tensor or tile name may be a
     * constant expression ("1/sqrt(128)"); its errors are reported when it
     * starts like one (a number, '(', '-', a variable, a call or pi).
     * Anything else is a [P,1] access, with the access's errors. */
    if (cJSON_IsString(it)) {
        char name[ENC_VAR_NAME], msg[400];
        const char *after = leading_name(it->valuestring, name, sizeof name);
        if (!name[0] || enc_find_tensor(&j->b, name) < 0) {
            double v;
            if (eval_number(j, it->valuestring, &v, msg, sizeof msg) == 0) {
                *out = enc_imm(v);
                return 0;
            }
            bool expr_like = !name[0] || *after == '(' || enc_env_find(&j->env, name) ||
                             !strcmp(name, "pi");
            if (expr_like)
                return jfail(j, path, fname, "%s", msg);
        }
    }
    tir_ap_t ap;
    if (get_ap(j, obj, path, fname, true, &ap))
        return -1;
    *out = enc_scalar_ap(ap);
    return 0;
}

/* ---- op handlers ---- */

typedef int (*op_fn)(jx_t *j, const cJSON *o, const char *path, tir_op_t *op);

#define F_COMMON "op", "name", "engine"

static int dma_opts(jx_t *j, const cJSON *o, const char *path, tir_op_t *op, int *rmw)
{
    *rmw = ISA_ALU_BYPASS;
    if (get_enum(j, o, path, "dge_mode", ISA_FT_DGE, NULL, &op->dge_mode, ISA_DGE_NONE) ||
        get_enum(j, o, path, "oob_mode", ISA_FT_OOB, NULL, &op->oob_mode, ISA_OOB_ERROR) ||
        get_int_range(j, o, path, "dma_qos", &op->qos, 0, -1000000, 1000000) ||
        get_enum(j, o, path, "rmw_op", ISA_FT_ALU, alu_aliases, rmw, ISA_ALU_BYPASS))
        return -1;
    return 0;
}

/* load/store/dma_copy/indirect_*: the NKI fork on indirect operands */
static int h_dma(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int rmw;
    if (dma_opts(j, o, path, op, &rmw))
        return -1;
    jop_t dst, src;
    if (get_operand(j, o, path, "dst", true, true, &dst) ||
        get_operand(j, o, path, "src", true, true, &src))
        return -1;
    if (op->kind == TIR_INDIRECT_LOAD && src.index.tensor < 0)
        return jfail(j, path, "src", "indirect_load needs an indirect source "
                     "({\"tensor\", \"index\"})");
    if (op->kind == TIR_INDIRECT_SAVE && dst.index.tensor < 0)
        return jfail(j, path, "dst", "indirect_save needs an indirect destination "
                     "({\"tensor\", \"index\"})");
    if (op->kind == TIR_LOAD && rmw != ISA_ALU_BYPASS)
        return jfail(j, path, "rmw_op", "load has no rmw_op");
    bool indirect = src.index.tensor >= 0 || dst.index.tensor >= 0;
    if (op->kind == TIR_LOAD || op->kind == TIR_STORE) {
        if (!indirect) {
            op->dst = dst.ap;
            op->src[0] = src.ap;
            op->nsrc = 1;
            if (op->oob_mode == ISA_OOB_SKIP)
                op->flags |= TIR_F_OOB_SKIP;
            if (rmw == ISA_ALU_ADD)
                op->flags |= TIR_F_RMW_ADD;
            else if (rmw != ISA_ALU_BYPASS)
                return jfail(j, path, "rmw_op", "only add is supported");
            return 1;   /* emit op */
        }
    }
    enc_dma_operand_t d = {dst.ap, dst.index, dst.bound}, s = {src.ap, src.index, src.bound};
    return enc_dma_copy_ex(&j->b, &d, &s, op->dge_mode, op->oob_mode, rmw, op->qos) < 0 ? -1 : 0;
}

static int h_dma_transpose(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int rmw;
    if (dma_opts(j, o, path, op, &rmw))
        return -1;
    if (rmw != ISA_ALU_BYPASS)
        return jfail(j, path, "rmw_op", "dma_transpose has no rmw_op");
    jop_t src;
    if (get_ap(j, o, path, "dst", true, &op->dst) ||
        get_operand(j, o, path, "src", true, true, &src))
        return -1;
    op->src[0] = src.ap;
    op->nsrc = 1;
    op->index = src.index;
    op->index_bound = src.bound;
    if (op->oob_mode == ISA_OOB_SKIP)
        op->flags |= TIR_F_OOB_SKIP;
    const cJSON *ax = field(o, "axes");
    if (!ax) {   /* default: the supported permutation for the rank */
        static const int def[5][4] = {{0}, {0}, {1, 0}, {2, 1, 0}, {3, 1, 2, 0}};
        int n = src.ap.ndim;
        op->n_transpose_axes = n >= 2 && n <= 4 ? n : 0;
        for (int i = 0; i < op->n_transpose_axes; i++)
            op->transpose_axes[i] = def[n][i];
        return 1;
    }
    if (!cJSON_IsArray(ax))
        return jfail(j, path, "axes", "expected an array of integers, got %s", type_name(ax));
    int n = cJSON_GetArraySize(ax);
    if (n > 4)
        return jfail(j, path, "axes", "%d axes (at most 4)", n);
    int i = 0;
    for (const cJSON *c = ax->child; c; c = c->next, i++) {
        int64_t v;
        if (get_int_item(j, c, path, "axes", &v, NULL))
            return -1;
        if (v < 0 || v > 7)
            return jfail(j, path, "axes", "axis %lld out of range", (long long)v);
        op->transpose_axes[i] = (int)v;
    }
    op->n_transpose_axes = n;
    return 1;
}

static int h_local_gather(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const char *srcname = field(o, "src_buffer") ? "src_buffer" : "src";
    if (get_ap(j, o, path, "dst", true, &op->dst) ||
        get_ap(j, o, path, srcname, true, &op->src[0]) ||
        get_ap(j, o, path, "index", true, &op->index) ||
        get_int_range(j, o, path, "num_elem_per_idx", &op->num_elem_per_idx, 1, -1000000, 1000000) ||
        get_int_range(j, o, path, "num_valid_indices", &op->num_valid, 0, -1000000, 1000000000))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int h_gather_flattened(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "data", true, &op->src[0]) ||
        get_ap(j, o, path, "indices", true, &op->index))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int h_memset(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool rnd;
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_num(j, o, path, "value", &op->value, 0) ||
        get_bool(j, o, path, "random", &rnd))
        return -1;
    if (!field(o, "value") && !rnd)
        return jfail(j, path, "value", "missing");
    if (rnd)
        op->flags |= TIR_F_RANDOM;
    return 1;
}

static int h_stream_shuffle(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    const cJSON *m = field(o, "shuffle_mask");
    if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) != 32)
        return jfail(j, path, "shuffle_mask", "expected 32 integers (255 = keep)");
    int i = 0;
    for (const cJSON *c = m->child; c; c = c->next, i++) {
        int64_t v;
        if (get_int_item(j, c, path, "shuffle_mask", &v, NULL))
            return -1;
        if (v < 0 || v > 255)
            return jfail(j, path, "shuffle_mask", "entry %d is %lld (0..31 or 255)", i, (long long)v);
        op->shuffle_mask[i] = (uint8_t)v;
    }
    return 1;
}

static int h_ltr(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_int_range(j, o, path, "reg", &op->reg, -1, 0, ISA_NUM_REGS - 1))
        return -1;
    if (!field(o, "reg"))
        return jfail(j, path, "reg", "missing");
    op->nsrc = 1;
    return 1;
}

static int h_dst_src(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int get_pair(jx_t *j, const cJSON *o, const char *path, const char *fname, int out[2])
{
    const cJSON *it = field(o, fname);
    out[0] = out[1] = 0;
    if (!it)
        return 0;
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
        return jfail(j, path, fname, "expected [row, col]");
    int64_t a, b;
    if (get_int_item(j, it->child, path, fname, &a, NULL) ||
        get_int_item(j, it->child->next, path, fname, &b, NULL))
        return -1;
    if (a < 0 || a > 128 || b < 0 || b > 128)
        return jfail(j, path, fname, "[%lld, %lld] outside 0..128", (long long)a, (long long)b);
    out[0] = (int)a;
    out[1] = (int)b;
    return 0;
}

static int h_matmul(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool acc, tr, oz_w, oz_m;
    const char *perf;
    if (get_ap(j, o, path, "dst", true, &op->dst) ||
        get_ap(j, o, path, "stationary", true, &op->src[0]) ||
        get_ap(j, o, path, "moving", true, &op->src[1]) ||
        get_bool(j, o, path, "accumulate", &acc) || get_bool(j, o, path, "transpose", &tr) ||
        get_bool(j, o, path, "is_stationary_onezero", &oz_w) ||
        get_bool(j, o, path, "is_moving_onezero", &oz_m) ||
        get_pair(j, o, path, "tile_position", op->tile_pos) ||
        get_pair(j, o, path, "tile_size", op->tile_size) ||
        get_str(j, o, path, "perf_mode", &perf, false))
        return -1;
    op->nsrc = 2;
    op->flags |= (acc ? TIR_F_ACCUMULATE : 0) | (tr ? TIR_F_TRANSPOSE : 0) |
                 (oz_w ? TIR_F_ONEZERO_W : 0) | (oz_m ? TIR_F_ONEZERO_M : 0);
    if (perf) {
        int pm = isa_enum_by_name(ISA_FT_PERF, strip_prefix(perf));
        if (pm < 0)
            return jfail(j, path, "perf_mode", "unknown '%s' (normal, double_row)", perf);
        if (pm == ISA_PERF_DOUBLE_ROW)
            op->flags |= TIR_F_DOUBLE_ROW;
    }
    if (op->kind == TIR_MATMUL_MX) {
        if (get_ap(j, o, path, "stationary_scale", true, &op->src[2]) ||
            get_ap(j, o, path, "moving_scale", true, &op->src[3]))
            return -1;
        op->nsrc = 4;
    }
    if (op->kind == TIR_MATMUL_SPARSE) {
        int cr;
        if (get_ap(j, o, path, "tags", true, &op->src[2]) ||
            get_int_range(j, o, path, "compress_ratio", &cr, 2, 0, 64))
            return -1;
        op->compress_ratio = (unsigned)cr;
        op->nsrc = 3;
    }
    return 1;
}

static int reduce_opts(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_enum(j, o, path, "reduce_op", ISA_FT_ALU, alu_aliases, &op->reduce_op, ISA_ALU_BYPASS) ||
        get_ap(j, o, path, "reduce_res", false, &op->dst2) ||
        get_enum(j, o, path, "reduce_cmd", ISA_FT_REDCMD, NULL, &op->reduce_cmd,
                 op->reduce_op != ISA_ALU_BYPASS ? ISA_REDCMD_RESET_REDUCE : ISA_REDCMD_IDLE))
        return -1;
    return 0;
}

static int h_activation(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool acc;
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_enum(j, o, path, "func", ISA_FT_ACTFN, act_aliases, &op->func, -1) ||
        get_scalar(j, o, path, "scale", &op->s0, 1.0) || get_ap(j, o, path, "bias", false, &op->bias) ||
        reduce_opts(j, o, path, op) || get_bool(j, o, path, "accumulate", &acc))
        return -1;
    if (op->func < 0)
        return jfail(j, path, "func", "missing");
    op->nsrc = 1;
    if (acc)
        op->flags |= TIR_F_ACCUMULATE;
    return 1;
}

static int h_activate2(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_enum(j, o, path, "op0", ISA_FT_ALU, alu_aliases, &op->op0, ISA_ALU_BYPASS) ||
        get_scalar(j, o, path, "imm0", &op->s0, 0) ||
        get_enum(j, o, path, "op1", ISA_FT_ALU, alu_aliases, &op->op1, ISA_ALU_BYPASS) ||
        get_scalar(j, o, path, "imm1", &op->s1, 0) ||
        get_enum(j, o, path, "func", ISA_FT_ACTFN, act_aliases, &op->func, ISA_ACTFN_COPY) ||
        get_ap(j, o, path, "bias", false, &op->bias) || reduce_opts(j, o, path, op))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int h_tensor_tensor(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "in0", true, &op->src[0]) ||
        get_ap(j, o, path, "in1", true, &op->src[1]) ||
        get_enum(j, o, path, "operator", ISA_FT_ALU, alu_aliases, &op->op0, -1))
        return -1;
    if (op->op0 < 0)
        return jfail(j, path, "operator", "missing");
    op->nsrc = 2;
    return 1;
}

static int h_tensor_scalar(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool r0, r1;
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_enum(j, o, path, "op0", ISA_FT_ALU, alu_aliases, &op->op0, -1) ||
        get_scalar(j, o, path, "operand0", &op->s0, 0) || get_bool(j, o, path, "reverse0", &r0) ||
        get_enum(j, o, path, "op1", ISA_FT_ALU, alu_aliases, &op->op1, ISA_ALU_BYPASS) ||
        get_scalar(j, o, path, "operand1", &op->s1, 0) || get_bool(j, o, path, "reverse1", &r1))
        return -1;
    if (op->op0 < 0)
        return jfail(j, path, "op0", "missing");
    if (!field(o, "operand0"))
        return jfail(j, path, "operand0", "missing");
    if (op->op1 != ISA_ALU_BYPASS && !field(o, "operand1"))
        return jfail(j, path, "operand1", "missing (op1 is given)");
    op->nsrc = 1;
    op->flags |= (r0 ? TIR_F_REV0 : 0) | (r1 ? TIR_F_REV1 : 0);
    return 1;
}

static int h_stt(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "in0", true, &op->src[0]) ||
        get_ap(j, o, path, "in1", true, &op->src[1]) ||
        get_enum(j, o, path, "op0", ISA_FT_ALU, alu_aliases, &op->op0, -1) ||
        get_enum(j, o, path, "op1", ISA_FT_ALU, alu_aliases, &op->op1, -1) ||
        get_scalar(j, o, path, "scalar", &op->s0, 0))
        return -1;
    if (op->op0 < 0 || op->op1 < 0)
        return jfail(j, path, op->op0 < 0 ? "op0" : "op1", "missing");
    if (!field(o, "scalar"))
        return jfail(j, path, "scalar", "missing");
    op->nsrc = 2;
    return 1;
}

static int h_tensor_reduce(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool neg, keep;
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_enum(j, o, path, "operator", ISA_FT_ALU, alu_aliases, &op->reduce_op, -1) ||
        get_bool(j, o, path, "negate", &neg) || get_bool(j, o, path, "keepdims", &keep))
        return -1;
    if (op->reduce_op < 0)
        return jfail(j, path, "operator", "missing");
    op->nsrc = 1;
    op->flags |= (neg ? TIR_F_NEGATE : 0) | (keep ? TIR_F_KEEPDIMS : 0);
    const cJSON *ax = field(o, "axis");
    int nfree = op->src[0].ndim - 1;
    if (!ax)
        return jfail(j, path, "axis", "missing");
    const cJSON *one = ax;
    int n = cJSON_IsArray(ax) ? cJSON_GetArraySize(ax) : 1;
    if (cJSON_IsArray(ax))
        one = ax->child;
    if (n < 1)
        return jfail(j, path, "axis", "empty");
    for (int i = 0; i < n && one; i++, one = one->next) {
        int64_t a;
        if (get_int_item(j, one, path, "axis", &a, NULL))
            return -1;
        if (a < 1 || a > nfree)
            return jfail(j, path, "axis", "axis %lld is not a free axis of 'src' (1..%d; NKI "
                         "numbering, 0 is the partition axis)", (long long)a, nfree);
        op->axes |= 1u << (nfree - a);
    }
    return 1;
}

static int h_partition_reduce(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_enum(j, o, path, "operator", ISA_FT_ALU, alu_aliases, &op->reduce_op, -1))
        return -1;
    if (op->reduce_op < 0)
        return jfail(j, path, "operator", "missing");
    op->nsrc = 1;
    return 1;
}

static int h_scan(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "in0", true, &op->src[0]) ||
        get_ap(j, o, path, "in1", true, &op->src[1]) || get_scalar(j, o, path, "initial", &op->s0, 0) ||
        get_enum(j, o, path, "op0", ISA_FT_ALU, alu_aliases, &op->op0, -1) ||
        get_enum(j, o, path, "op1", ISA_FT_ALU, alu_aliases, &op->op1, -1))
        return -1;
    if (op->op0 < 0 || op->op1 < 0)
        return jfail(j, path, op->op0 < 0 ? "op0" : "op1", "missing");
    op->nsrc = 2;
    return 1;
}

static int get_pattern(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int64_t off, cm;
    if (get_int(j, o, path, "offset", &off, 0, false) ||
        get_int(j, o, path, "channel_multiplier", &cm, 0, false))
        return -1;
    op->pat_offset = off;
    op->pat_cm = cm;
    const cJSON *p = field(o, "pattern");
    if (!p)
        return jfail(j, path, "pattern", "missing");
    if (!cJSON_IsArray(p))
        return jfail(j, path, "pattern", "expected [[step, count], ...], got %s", type_name(p));
    int n = cJSON_GetArraySize(p);
    if (n > 4)
        return jfail(j, path, "pattern", "%d dims (at most 4)", n);
    int i = 0;
    int64_t total = 1;
    for (const cJSON *c = p->child; c; c = c->next, i++) {
        int64_t st, cnt;
        if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 2)
            return jfail(j, path, "pattern", "entry %d must be [step, count]", i);
        if (get_int_item(j, c->child, path, "pattern", &st, NULL) ||
            get_int_item(j, c->child->next, path, "pattern", &cnt, NULL))
            return -1;
        if (cnt < 1 || i + 1 >= op->dst.ndim || cnt != op->dst.count[i + 1])
            return jfail(j, path, "pattern", "entry %d count %lld does not match dst free dim %d",
                         i, (long long)cnt, i + 1);
        total *= cnt;
        op->pat_step[i] = st;
    }
    op->pat_ndim = n;
    (void)total;
    return 0;
}

static int h_iota(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_pattern(j, o, path, op))
        return -1;
    return 1;
}

static int h_affine_select(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "on_true", true, &op->src[0]) ||
        get_pattern(j, o, path, op) ||
        get_enum(j, o, path, "cmp_op", ISA_FT_CMP, cmp_aliases, &op->cmp, ISA_CMP_GE) ||
        get_num(j, o, path, "on_false_value", &op->fill, 0))
        return -1;
    if (!field(o, "on_false_value"))
        return jfail(j, path, "on_false_value", "missing");
    op->nsrc = 1;
    return 1;
}

static int h_find_index8(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_ap(j, o, path, "vals", true, &op->src[1]))
        return -1;
    op->nsrc = 2;
    if (op->kind == TIR_MATCH_REPLACE8) {
        if (get_num(j, o, path, "imm", &op->value, 0) || get_ap(j, o, path, "dst_idx", false, &op->dst2))
            return -1;
        if (!field(o, "imm"))
            return jfail(j, path, "imm", "missing");
    }
    return 1;
}

static int h_select(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "pred", true, &op->src[0]) ||
        get_ap(j, o, path, "on_true", true, &op->src[1]))
        return -1;
    op->nsrc = 2;
    const cJSON *f = field(o, "on_false");
    if (!f)
        return jfail(j, path, "on_false", "missing");
    if (cJSON_IsNumber(f)) {
        op->fill = f->valuedouble;
        return 1;
    }
    if (get_ap(j, o, path, "on_false", true, &op->src[2]))
        return -1;
    op->nsrc = 3;
    return 1;
}

static int h_dropout(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_scalar(j, o, path, "prob", &op->s0, 0))
        return -1;
    if (!field(o, "prob"))
        return jfail(j, path, "prob", "missing");
    op->prob = op->s0.is_ap ? 0 : op->s0.imm;
    op->nsrc = 1;
    return 1;
}

static int h_quantize_mx(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_ap(j, o, path, "scale", true, &op->dst2))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int h_core_barrier(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const cJSON *c = field(o, "cores");
    if (!c)
        return jfail(j, path, "cores", "missing");
    if (!cJSON_IsArray(c))
        return jfail(j, path, "cores", "expected an array of core ids");
    for (const cJSON *x = c->child; x; x = x->next) {
        int64_t v;
        if (get_int_item(j, x, path, "cores", &v, NULL))
            return -1;
        if (v < 0 || v >= 32)
            return jfail(j, path, "cores", "core %lld out of range", (long long)v);
        op->barrier_cores |= 1u << v;
    }
    if (get_ap(j, o, path, "data", false, &op->src[0]))
        return -1;
    op->nsrc = op->src[0].tensor >= 0 ? 1 : 0;
    return 1;
}

static int h_sendrecv(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (get_ap(j, o, path, "dst", true, &op->dst) || get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_int_range(j, o, path, "peer", &op->peer, -1, 0, 1 << 20))
        return -1;
    if (!field(o, "peer"))
        return jfail(j, path, "peer", "missing");
    op->nsrc = 1;
    return 1;
}

typedef struct {
    const char *name;
    tir_opkind_t kind;
    op_fn fn;
    const char *fields[24];
} opdef_t;

static const opdef_t opdefs[] = {
    {"load", TIR_LOAD, h_dma, {F_COMMON, "dst", "src", "dge_mode", "oob_mode", "dma_qos", NULL}},
    {"store", TIR_STORE, h_dma, {F_COMMON, "dst", "src", "rmw_op", "dge_mode", "oob_mode", "dma_qos", NULL}},
    {"dma_copy", TIR_DMA_COPY, h_dma, {F_COMMON, "dst", "src", "rmw_op", "dge_mode", "oob_mode", "dma_qos", NULL}},
    {"dma_transpose", TIR_DMA_TRANSPOSE, h_dma_transpose, {F_COMMON, "dst", "src", "axes", "dge_mode", "oob_mode", "dma_qos", NULL}},
    {"indirect_load", TIR_INDIRECT_LOAD, h_dma, {F_COMMON, "dst", "src", "dge_mode", "oob_mode", "dma_qos", NULL}},
    {"indirect_save", TIR_INDIRECT_SAVE, h_dma, {F_COMMON, "dst", "src", "rmw_op", "dge_mode", "oob_mode", "dma_qos", NULL}},
    {"local_gather", TIR_LOCAL_GATHER, h_local_gather, {F_COMMON, "dst", "src", "src_buffer", "index", "num_elem_per_idx", "num_valid_indices", NULL}},
    {"gather_flattened", TIR_GATHER_FLATTENED, h_gather_flattened, {F_COMMON, "dst", "data", "indices", NULL}},
    {"memset", TIR_MEMSET, h_memset, {F_COMMON, "dst", "value", "random", NULL}},
    {"stream_shuffle", TIR_STREAM_SHUFFLE, h_stream_shuffle, {F_COMMON, "dst", "src", "shuffle_mask", NULL}},
    {"load_tensor_to_register", TIR_LOAD_TENSOR_TO_REGISTER, h_ltr, {F_COMMON, "src", "reg", NULL}},
    {"broadcast_partition", TIR_BROADCAST_PARTITION, h_dst_src, {F_COMMON, "dst", "src", NULL}},
    {"matmul", TIR_MATMUL, h_matmul, {F_COMMON, "dst", "stationary", "moving", "accumulate", "transpose", "is_stationary_onezero", "is_moving_onezero", "tile_position", "tile_size", "perf_mode", NULL}},
    {"matmul_mx", TIR_MATMUL_MX, h_matmul, {F_COMMON, "dst", "stationary", "moving", "stationary_scale", "moving_scale", "accumulate", "tile_position", "tile_size", NULL}},
    {"matmul_sparse", TIR_MATMUL_SPARSE, h_matmul, {F_COMMON, "dst", "stationary", "moving", "tags", "compress_ratio", "accumulate", "tile_position", "tile_size", NULL}},
    {"transpose", TIR_TRANSPOSE, h_dst_src, {F_COMMON, "dst", "src", NULL}},
    {"activation", TIR_ACTIVATION, h_activation, {F_COMMON, "dst", "src", "func", "scale", "bias", "reduce_op", "reduce_res", "reduce_cmd", "accumulate", NULL}},
    {"activate2", TIR_ACTIVATE2, h_activate2, {F_COMMON, "dst", "src", "op0", "imm0", "op1", "imm1", "func", "bias", "reduce_op", "reduce_res", "reduce_cmd", NULL}},
    {"tensor_tensor", TIR_TENSOR_TENSOR, h_tensor_tensor, {F_COMMON, "dst", "in0", "in1", "operator", NULL}},
    {"tensor_scalar", TIR_TENSOR_SCALAR, h_tensor_scalar, {F_COMMON, "dst", "src", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1", NULL}},
    {"scalar_tensor_tensor", TIR_SCALAR_TENSOR_TENSOR, h_stt, {F_COMMON, "dst", "in0", "op0", "scalar", "op1", "in1", NULL}},
    {"tensor_reduce", TIR_TENSOR_REDUCE, h_tensor_reduce, {F_COMMON, "dst", "src", "operator", "axis", "negate", "keepdims", NULL}},
    {"tensor_partition_reduce", TIR_TENSOR_PARTITION_REDUCE, h_partition_reduce, {F_COMMON, "dst", "src", "operator", NULL}},
    {"tensor_copy", TIR_TENSOR_COPY, h_dst_src, {F_COMMON, "dst", "src", NULL}},
    {"tensor_tensor_scan", TIR_TENSOR_TENSOR_SCAN, h_scan, {F_COMMON, "dst", "in0", "in1", "initial", "op0", "op1", NULL}},
    {"iota", TIR_IOTA, h_iota, {F_COMMON, "dst", "pattern", "offset", "channel_multiplier", NULL}},
    {"affine_select", TIR_AFFINE_SELECT, h_affine_select, {F_COMMON, "dst", "on_true", "pattern", "offset", "channel_multiplier", "cmp_op", "on_false_value", NULL}},
    {"max8", TIR_MAX8, h_dst_src, {F_COMMON, "dst", "src", NULL}},
    {"find_index8", TIR_FIND_INDEX8, h_find_index8, {F_COMMON, "dst", "src", "vals", NULL}},
    {"match_replace8", TIR_MATCH_REPLACE8, h_find_index8, {F_COMMON, "dst", "src", "vals", "imm", "dst_idx", NULL}},
    {"select", TIR_SELECT, h_select, {F_COMMON, "dst", "pred", "on_true", "on_false", NULL}},
    {"dropout", TIR_DROPOUT, h_dropout, {F_COMMON, "dst", "src", "prob", NULL}},
    {"quantize_mx", TIR_QUANTIZE_MX, h_quantize_mx, {F_COMMON, "dst", "src", "scale", NULL}},
    {"core_barrier", TIR_CORE_BARRIER, h_core_barrier, {F_COMMON, "cores", "data", NULL}},
    {"sendrecv", TIR_SENDRECV, h_sendrecv, {F_COMMON, "dst", "src", "peer", NULL}},
};

static const opdef_t *find_opdef(const char *name)
{
    /* nki.isa spellings */
    static const alias_t op_aliases[] = {
        {"nc_matmul", "matmul"}, {"nc_matmul_mx", "matmul_mx"}, {"nc_transpose", "transpose"},
        {"nc_find_index8", "find_index8"}, {"nc_match_replace8", "match_replace8"},
        {"nc_stream_shuffle", "stream_shuffle"}, {"activation_reduce", "activation"},
        {NULL, NULL}};
    for (int i = 0; op_aliases[i].alias; i++)
        if (!strcmp(name, op_aliases[i].alias))
            name = op_aliases[i].name;
    for (size_t i = 0; i < sizeof opdefs / sizeof opdefs[0]; i++)
        if (!strcmp(opdefs[i].name, name))
            return &opdefs[i];
    return NULL;
}

static int exec_compute_op(jx_t *j, const cJSON *o, const char *path, const opdef_t *d)
{
    if (check_fields(j, o, path, d->fields))
        return -1;
    tir_op_t op;
    tir_op_init(&op, d->kind);
    const char *nm;
    if (get_str(j, o, path, "name", &nm, false) || get_engine(j, o, path, &op.engine))
        return -1;
    if (nm)
        snprintf(op.name, sizeof op.name, "%s", nm);
    enc_set_path(&j->b, path);
    int rc = d->fn(j, o, path, &op);
    if (rc < 0)
        return -1;
    if (rc == 0)   /* the handler emitted through a typed builder */
        return 0;
    return enc_emit(&j->b, &op) < 0 ? -1 : 0;
}

/* ---- statements ---- */

static int exec_block(jx_t *j, const cJSON *body, const char *path);

static int valid_ident(const char *s)
{
    if (!s || !*s || strlen(s) >= ENC_VAR_NAME)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (p != s && *p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

static int exec_tile(jx_t *j, const cJSON *o, const char *path)
{
    static const char *const allowed[] = {"op", "name", "shape", "dtype", "buffer", NULL};
    if (check_fields(j, o, path, allowed))
        return -1;
    const char *name, *buf;
    unsigned dt;
    int64_t shape[TIR_MAX_DIMS];
    int nd;
    if (get_str(j, o, path, "name", &name, true) || get_dtype(j, o, path, &dt) ||
        get_shape(j, o, path, "shape", shape, &nd, 1 + ISA_MAX_FREE_DIMS) ||
        get_str(j, o, path, "buffer", &buf, false))
        return -1;
    tir_tensor_kind_t kind = TIR_T_SBUF;
    if (buf && !strcmp(strip_prefix(buf), "psum"))
        kind = TIR_T_PSUM;
    else if (buf && strcmp(strip_prefix(buf), "sbuf"))
        return jfail(j, path, "buffer", "unknown buffer '%s' (sbuf, psum)", buf);
    enc_set_path(&j->b, path);
    int id = enc_tile(&j->b, name, kind, dt, nd, shape);
    return id < 0 ? -1 : 0;
}

static int exec_let(jx_t *j, const cJSON *o, const char *path)
{
    static const char *const allowed[] = {"op", "var", "value", NULL};
    if (check_fields(j, o, path, allowed))
        return -1;
    const char *var;
    if (get_str(j, o, path, "var", &var, true))
        return -1;
    if (!valid_ident(var) || !strcmp(var, "pid") || !strcmp(var, "num_programs"))
        return jfail(j, path, "var", "'%s' is not a usable variable name", var);
    const cJSON *v = field(o, "value");
    if (!v)
        return jfail(j, path, "value", "missing");
    int64_t val;
    bool dep;
    if (get_int_item(j, v, path, "value", &val, &dep))
        return -1;
    if (enc_env_push(&j->env, var, val, dep))
        return jfail(j, path, NULL, "out of memory");
    return 0;
}

/* Static estimate of the ops a block unrolls to (saturating).  Nested loop
 * trip counts are evaluated where the environment allows, else taken as 1. */
static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int range_of(jx_t *j, const cJSON *o, const char *path, int64_t r[3], bool *dep,
                    bool quiet);

static int64_t estimate_block(jx_t *j, const cJSON *body, int depth)
{
    if (!cJSON_IsArray(body) || depth > ENC_MAX_NESTING)
        return 0;
    int64_t total = 0;
    for (const cJSON *s = body->child; s; s = s->next) {
        const cJSON *opn = cJSON_IsObject(s) ? field(s, "op") : NULL;
        const char *n = cJSON_IsString(opn) ? opn->valuestring : "";
        if (!strcmp(n, "for")) {
            int64_t r[3];
            bool dep;
            int64_t trips = 1;
            if (!range_of(j, s, "", r, &dep, true) && r[2] > 0 && r[1] > r[0])
                trips = (r[1] - r[0] + r[2] - 1) / r[2];
            total = sat_add(total, sat_mul(trips, estimate_block(j, field(s, "body"), depth + 1)));
        } else if (!strcmp(n, "if")) {
            int64_t a = estimate_block(j, field(s, "body"), depth + 1);
            int64_t b = estimate_block(j, field(s, "else"), depth + 1);
            total = sat_add(total, a > b ? a : b);
        } else if (strcmp(n, "let") && strcmp(n, "tile")) {
            total = sat_add(total, 1);
        }
    }
    return total;
}

static int range_of(jx_t *j, const cJSON *o, const char *path, int64_t r[3], bool *dep,
                    bool quiet)
{
    const cJSON *rg = field(o, "range");
    *dep = false;
    if (!cJSON_IsArray(rg) || cJSON_GetArraySize(rg) < 1 || cJSON_GetArraySize(rg) > 3)
        return quiet ? -1 : jfail(j, path, "range", "expected [stop], [start, stop] or "
                                  "[start, stop, step], got %s", type_name(rg));
    int64_t v[3] = { 0, 0, 0 };
    int n = 0;
    for (const cJSON *c = rg->child; c; c = c->next) {
        bool d = false;
        if (quiet) {
            if (cJSON_IsNumber(c) && c->valuedouble == floor(c->valuedouble) &&
                fabs(c->valuedouble) < 9e18) {
                v[n++] = (int64_t)c->valuedouble;
                continue;
            }
            enc_val_t ev;
            char msg[64];
            if (!cJSON_IsString(c) || enc_expr_eval(c->valuestring, &j->env, &ev, msg, sizeof msg))
                return -1;
            v[n++] = ev.v;
            continue;
        }
        if (get_int_item(j, c, path, "range", &v[n++], &d))
            return -1;
        *dep |= d;
    }
    r[0] = n == 1 ? 0 : v[0];
    r[1] = n == 1 ? v[0] : v[1];
    r[2] = n == 3 ? v[2] : 1;
    return 0;
}

static void add_loop_note(jx_t *j)
{
    if (j->note_added || !j->b.failed || !j->b.err)
        return;
    j->note_added = true;
    /* name the loop variables' values where the error happened */
    char note[256];
    size_t o = 0;
    note[0] = 0;
    for (int i = 0; i < j->env.n && o < sizeof note; i++) {
        const enc_var_t *v = &j->env.vars[i];
        if (!strcmp(v->name, "pid") || !strcmp(v->name, "num_programs"))
            continue;
        o += (size_t)snprintf(note + o, sizeof note - o, "%s%s=%lld", o ? ", " : "", v->name,
                              (long long)v->value);
    }
    if (note[0]) {
        size_t len = strlen(j->b.err->msg);
        snprintf(j->b.err->msg + len, sizeof j->b.err->msg - len, " (at %s)", note);
    }
}

static int exec_for(jx_t *j, const cJSON *o, const char *path)
{
    static const char *const allowed[] = {"op", "var", "range", "body", NULL};
    if (check_fields(j, o, path, allowed))
        return -1;
    const char *var;
    if (get_str(j, o, path, "var", &var, true))
        return -1;
    if (!valid_ident(var) || !strcmp(var, "pid") || !strcmp(var, "num_programs"))
        return jfail(j, path, "var", "'%s' is not a usable variable name", var);
    const cJSON *body = field(o, "body");
    if (!cJSON_IsArray(body))
        return jfail(j, path, "body", "expected an array of ops, got %s", type_name(body));
    int64_t r[3];
    bool dep;
    if (range_of(j, o, path, r, &dep, false))
        return -1;
    if (dep)
        return jfail(j, path, "range", "control flow may not depend on 'pid' (every program "
                     "must unroll to the same ops)");
    if (r[2] == 0)
        return jfail(j, path, "range", "step is 0");
    int64_t trips = 0;
    if (r[2] > 0 && r[1] > r[0])
        trips = (r[1] - r[0] - 1) / r[2] + 1;
    else if (r[2] < 0 && r[1] < r[0])
        trips = (r[0] - r[1] - 1) / (-r[2]) + 1;
    int64_t iter_cap = sat_mul(j->max_ops, MAX_LOOP_ITERATIONS_FACTOR);
    if (trips > iter_cap || sat_add(j->iterations, trips) > iter_cap)
        return jfail(j, path, "range", "%lld iterations: the kernel would run more than %lld "
                     "loop iterations (runaway loop?)", (long long)trips, (long long)iter_cap);
    int64_t est = sat_mul(trips, estimate_block(j, body, j->depth + 1));
    if (sat_add(est, j->b.k->nops) > j->max_ops)
        return jfail(j, path, "range", "the loop unrolls to about %lld ops, more than the limit "
                     "of %lld", (long long)est, (long long)j->max_ops);
    j->iterations += trips;
    char sub[ENC_PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s.body", path);
    int mark = j->env.n;
    for (int64_t it = 0; it < trips; it++) {
        if (enc_env_push(&j->env, var, r[0] + it * r[2], false))
            return jfail(j, path, NULL, "out of memory");
        enc_scope_begin(&j->b);
        int rc = exec_block(j, body, sub);
        if (rc)
            add_loop_note(j);
        enc_scope_end(&j->b);
        enc_env_pop_to(&j->env, mark);
        if (rc)
            return -1;
    }
    return 0;
}

static int exec_if(jx_t *j, const cJSON *o, const char *path)
{
    static const char *const allowed[] = {"op", "cond", "body", "else", NULL};
    if (check_fields(j, o, path, allowed))
        return -1;
    const cJSON *c = field(o, "cond");
    if (!c)
        return jfail(j, path, "cond", "missing");
    int64_t v;
    bool dep;
    if (get_int_item(j, c, path, "cond", &v, &dep))
        return -1;
    if (dep)
        return jfail(j, path, "cond", "control flow may not depend on 'pid' (every program "
                     "must unroll to the same ops)");
    const char *which = v ? "body" : "else";
    const cJSON *body = field(o, which);
    if (!body)
        return v ? jfail(j, path, "body", "missing") : 0;
    if (!cJSON_IsArray(body))
        return jfail(j, path, which, "expected an array of ops, got %s", type_name(body));
    if (field(o, "else") && !cJSON_IsArray(field(o, "else")))
        return jfail(j, path, "else", "expected an array of ops");
    char sub[ENC_PATH_MAX + 16];
    snprintf(sub, sizeof sub, "%s.%s", path, which);
    int mark = j->env.n;
    enc_scope_begin(&j->b);
    int rc = exec_block(j, body, sub);
    enc_scope_end(&j->b);
    enc_env_pop_to(&j->env, mark);
    return rc;
}

static int exec_stmt(jx_t *j, const cJSON *o, const char *path)
{
    if (!cJSON_IsObject(o))
        return jfail(j, path, NULL, "expected an op object, got %s", type_name(o));
    const char *name;
    if (get_str(j, o, path, "op", &name, true))
        return -1;
    if (!strcmp(name, "tile"))
        return exec_tile(j, o, path);
    if (!strcmp(name, "let"))
        return exec_let(j, o, path);
    const char *nn = strip_prefix(name);
    if (!strcmp(nn, "affine_range") || !strcmp(nn, "sequential_range") ||
        !strcmp(nn, "static_range") || !strcmp(nn, "range"))
        name = "for";
    if (!strcmp(name, "for") || !strcmp(name, "if")) {
        if (++j->depth > ENC_MAX_NESTING)
            return jfail(j, path, NULL, "loops/conditionals nested more than %d deep",
                         ENC_MAX_NESTING);
        int rc = name[0] == 'f' ? exec_for(j, o, path) : exec_if(j, o, path);
        j->depth--;
        return rc;
    }
    const opdef_t *d = memo_get(j, o, opdefs);
    if (!d && (d = find_opdef(strip_prefix(name))))
        memo_put(j, o, opdefs, d);
    if (!d)
        return jfail(j, path, "op", "unknown op '%s' (see docs/kernel-format.md)", name);
    return exec_compute_op(j, o, path, d);
}

static int exec_block(jx_t *j, const cJSON *body, const char *path)
{
    int i = 0;
    for (const cJSON *s = body->child; s; s = s->next, i++) {
        char p[ENC_PATH_MAX];
        size_t n = su_join_int(p, sizeof p, path, -1, '[', i, ']');
        if (n >= sizeof p)
            return jfail(j, path, NULL, "op path too long (nesting too deep)");
        if (exec_stmt(j, s, p))
            return -1;
    }
    return 0;
}

/* ---- tensors and constants ---- */

static int decl_tensors(jx_t *j, const cJSON *root, const char *key, tir_tensor_kind_t kind)
{
    const cJSON *arr = field(root, key);
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return jfail(j, key, NULL, "expected an array of {name, shape, dtype}, got %s",
                     type_name(arr));
    static const char *const allowed[] = {"name", "shape", "dtype", NULL};
    int i = 0;
    for (const cJSON *t = arr->child; t; t = t->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "%s[%d]", key, i);
        if (!cJSON_IsObject(t))
            return jfail(j, path, NULL, "expected an object, got %s", type_name(t));
        if (check_fields(j, t, path, allowed))
            return -1;
        const char *name;
        unsigned dt;
        int64_t shape[TIR_MAX_DIMS];
        int nd;
        if (get_str(j, t, path, "name", &name, true) || get_dtype(j, t, path, &dt) ||
            get_shape(j, t, path, "shape", shape, &nd, TIR_MAX_DIMS))
            return -1;
        enc_set_path(&j->b, path);
        int id = kind == TIR_T_INPUT ? enc_input(&j->b, name, dt, nd, shape)
               : kind == TIR_T_OUTPUT ? enc_output(&j->b, name, dt, nd, shape)
                                      : enc_scratch(&j->b, name, dt, nd, shape);
        if (id < 0)
            return -1;
    }
    return 0;
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1);   /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static uint16_t f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t exp = (u >> 23) & 0xffu;
    uint32_t man = u & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {   /* subnormal or zero */
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;   /* may carry into the exponent: still correct (up to inf) */
    return (uint16_t)(sign | h);
}

static int store_value(jx_t *j, const char *path, void *p, unsigned dt, double v)
{
    switch (dt) {
    case ISA_DT_FP32: { float f = (float)v; memcpy(p, &f, 4); return 0; }
    case ISA_DT_BF16: { uint16_t h = f32_to_bf16((float)v); memcpy(p, &h, 2); return 0; }
    case ISA_DT_FP16: { uint16_t h = f32_to_f16((float)v); memcpy(p, &h, 2); return 0; }
    case ISA_DT_FP8E4M3: case ISA_DT_FP8E5M2:
        return jfail(j, path, "value", "inline float8 constants are not supported; give a .npy "
                     "`file` instead");
    default: break;
    }
    if (v != floor(v))
        return jfail(j, path, "value", "%g is not an integer (dtype %s)", v, isa_dtype_numpy_name(dt));
    double lo, hi;
    switch (dt) {
    case ISA_DT_INT8: lo = -128; hi = 127; break;
    case ISA_DT_INT16: lo = -32768; hi = 32767; break;
    case ISA_DT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case ISA_DT_UINT8: lo = 0; hi = 255; break;
    case ISA_DT_UINT16: lo = 0; hi = 65535; break;
    default: lo = 0; hi = 4294967295.0; break;
    }
    if (v < lo || v > hi)
        return jfail(j, path, "value", "%g out of range for %s", v, isa_dtype_numpy_name(dt));
    int64_t iv = (int64_t)v;
    unsigned sz = isa_dtype_size(dt);
    memcpy(p, &iv, sz);   /* little-endian host */
    return 0;
}

/* Infer the shape of nested lists (rectangular). */
static int value_shape(jx_t *j, const char *path, const cJSON *v, int64_t *shape, int *nd)
{
    *nd = 0;
    const cJSON *c = v;
    while (cJSON_IsArray(c)) {
        if (*nd == TIR_MAX_DIMS)
            return jfail(j, path, "value", "more than %d nested levels", TIR_MAX_DIMS);
        int n = cJSON_GetArraySize(c);
        if (n < 1)
            return jfail(j, path, "value", "empty list");
        shape[(*nd)++] = n;
        c = c->child;
    }
    if (*nd == 0)
        return jfail(j, path, "value", "expected nested lists of numbers");
    return 0;
}

static int fill_values(jx_t *j, const char *path, const cJSON *v, const int64_t *shape, int nd,
                       int d, uint8_t *data, unsigned dt, int64_t *idx)
{
    if (d == nd) {
        if (!cJSON_IsNumber(v) && !cJSON_IsBool(v))
            return jfail(j, path, "value", "expected a number, got %s", type_name(v));
        double x = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
        return store_value(j, path, data + (size_t)(*idx)++ * isa_dtype_size(dt), dt, x);
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != shape[d])
        return jfail(j, path, "value", "not a rectangular [%s] array matching the shape at "
                     "level %d", "...", d);
    for (const cJSON *c = v->child; c; c = c->next)
        if (fill_values(j, path, c, shape, nd, d + 1, data, dt, idx))
            return -1;
    return 0;
}

static int decl_constants(jx_t *j, const cJSON *root)
{
    const cJSON *arr = field(root, "constants");
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return jfail(j, "constants", NULL, "expected an array, got %s", type_name(arr));
    static const char *const allowed[] = {"name", "shape", "dtype", "file", "value", "identity", NULL};
    int i = 0;
    for (const cJSON *t = arr->child; t; t = t->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "constants[%d]", i);
        if (!cJSON_IsObject(t))
            return jfail(j, path, NULL, "expected an object, got %s", type_name(t));
        if (check_fields(j, t, path, allowed))
            return -1;
        const char *name, *file;
        unsigned dt;
        if (get_str(j, t, path, "name", &name, true) || get_dtype(j, t, path, &dt) ||
            get_str(j, t, path, "file", &file, false))
            return -1;
        const cJSON *val = field(t, "value"), *idn = field(t, "identity");
        int kinds = (file != NULL) + (val != NULL) + (idn != NULL);
        if (kinds != 1)
            return jfail(j, path, NULL, "give exactly one of 'file', 'value' or 'identity'");
        enc_set_path(&j->b, path);
        if (idn) {
            int64_t n;
            if (get_int_item(j, idn, path, "identity", &n, NULL))
                return -1;
            if (field(t, "shape"))
                return jfail(j, path, "shape", "not used with 'identity' (the shape is n x n)");
            if (enc_shared_identity_matrix(&j->b, name, n, dt) < 0)
                return -1;
            continue;
        }
        int64_t shape[TIR_MAX_DIMS];
        int nd;
        if (file) {
            if (get_shape(j, t, path, "shape", shape, &nd, TIR_MAX_DIMS))
                return -1;
            char full[1024];
            if (file[0] == '/')
                snprintf(full, sizeof full, "%s", file);
            else if (snprintf(full, sizeof full, "%s/%s", j->base_dir, file) >= (int)sizeof full)
                return jfail(j, path, "file", "path too long");
            if (enc_shared_constant_file(&j->b, name, dt, nd, shape, full) < 0)
                return -1;
            continue;
        }
        if (value_shape(j, path, val, shape, &nd))
            return -1;
        if (field(t, "shape")) {
            int64_t s2[TIR_MAX_DIMS];
            int n2;
            if (get_shape(j, t, path, "shape", s2, &n2, TIR_MAX_DIMS))
                return -1;
            if (n2 != nd || memcmp(s2, shape, (size_t)nd * sizeof *shape))
                return jfail(j, path, "shape", "does not match the nested 'value' lists");
        }
        int id = enc_shared_constant(&j->b, name, dt, nd, shape, NULL);
        if (id < 0)
            return -1;
        int64_t idx = 0;
        if (fill_values(j, path, val, shape, nd, 0, j->b.k->tensors[id].const_data, dt, &idx))
            return -1;
    }
    return 0;
}

/* ---- grid ---- */

static int parse_grid(jx_t *j, const cJSON *root, int program_id, int *nprog, int *ncores,
                      int *core)
{
    const cJSON *g = field(root, "grid");
    int64_t n = 1, nc = 0;
    bool interleaved = false;
    if (g) {
        if (cJSON_IsArray(g)) {
            /* [n] or a multi-dimensional NKI grid [g0, g1, ...]: program ids
             * are row-major; pid0, pid1, ... are the per-axis ids */
            int nd = cJSON_GetArraySize(g);
            if (nd < 1 || nd > 3)
                return jfail(j, "grid", NULL, "%d grid dimensions (1..3)", nd);
            n = 1;
            int d = 0;
            for (const cJSON *c = g->child; c; c = c->next, d++) {
                if (get_int_item(j, c, "grid", "grid", &j->grid_dims[d], NULL))
                    return -1;
                if (j->grid_dims[d] < 1 || j->grid_dims[d] > 64)
                    return jfail(j, "grid", NULL, "dimension %d is %lld (1..64)", d,
                                 (long long)j->grid_dims[d]);
                n *= j->grid_dims[d];
            }
            j->grid_ndim = nd;
        } else if (cJSON_IsObject(g)) {
            static const char *const allowed[] = {"n", "nc", "mapping", NULL};
            const char *m;
            if (check_fields(j, g, "grid", allowed) || get_int(j, g, "grid", "n", &n, 1, true) ||
                get_int(j, g, "grid", "nc", &nc, 0, false) ||
                get_str(j, g, "grid", "mapping", &m, false))
                return -1;
            if (m && !strcmp(m, "interleaved"))
                interleaved = true;
            else if (m && strcmp(m, "blocked"))
                return jfail(j, "grid", "mapping", "unknown mapping '%s' (blocked, interleaved)", m);
        } else {
            return jfail(j, "grid", NULL, "expected [n] or {\"n\", \"nc\", \"mapping\"}, got %s",
                         type_name(g));
        }
    }
    if (n < 1 || n > 64)
        return jfail(j, "grid", "n", "%lld programs (1..64)", (long long)n);
    if (nc == 0)
        nc = n;
    if (nc < 1 || nc > n || n % nc)
        return jfail(j, "grid", "nc", "%lld cores for %lld programs (must divide n)",
                     (long long)nc, (long long)n);
    if (program_id < 0 || program_id >= n)
        return jfail(j, "grid", NULL, "program id %d out of range 0..%lld", program_id,
                     (long long)n - 1);
    *nprog = (int)n;
    *ncores = (int)nc;
    *core = interleaved ? (int)(program_id % nc) : (int)(program_id / (n / nc));
    return 0;
}

/* ---- entry points ---- */

static void line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int run(jx_t *j, const cJSON *root, const enc_front_opts_t *opts)
{
    static const char *const allowed[] = {"kernel", "target", "grid", "inputs", "outputs",
                                          "scratch", "constants", "body", "description", NULL};
    if (!cJSON_IsObject(root))
        return jfail(j, "(top level)", NULL, "expected a JSON object, got %s", type_name(root));
    if (check_fields(j, root, "(top level)", allowed))
        return -1;
    const char *kname, *target;
    if (get_str(j, root, "(top level)", "kernel", &kname, false) ||
        get_str(j, root, "(top level)", "target", &target, false))
        return -1;
    if (opts->target_override)
        target = opts->target_override;
    const tpb_target_t *tg = tpb_target_get(target ? target : "trn2");
    if (!tg)
        return jfail(j, "(top level)", "target", "unknown target '%s' (known: %s)", target,
                     tpb_target_names());
    j->b.target = tg;
    snprintf(j->b.k->target, sizeof j->b.k->target, "%s", tg->name);
    if (kname)
        snprintf(j->b.k->name, sizeof j->b.k->name, "%s", kname);
    int nprog = 1, ncores = 1, core = 0;
    if (parse_grid(j, root, opts->program_id, &nprog, &ncores, &core))
        return -1;
    j->b.k->program_id = opts->program_id;
    j->b.k->num_programs = nprog;
    j->b.k->num_cores = ncores;
    j->b.program_id = opts->program_id;
    j->b.core = core;
    if (enc_env_push(&j->env, "pid", opts->program_id, true) ||
        enc_env_push(&j->env, "num_programs", nprog, false))
        return jfail(j, "(top level)", NULL, "out of memory");
    int64_t rest = opts->program_id;
    for (int d = j->grid_ndim - 1; d >= 0; d--) {   /* row-major per-axis ids */
        char pn[16], nn[24];
        snprintf(pn, sizeof pn, "pid%d", d);
        snprintf(nn, sizeof nn, "num_programs%d", d);
        if (enc_env_push(&j->env, pn, rest % j->grid_dims[d], true) ||
            enc_env_push(&j->env, nn, j->grid_dims[d], false))
            return jfail(j, "(top level)", NULL, "out of memory");
        rest /= j->grid_dims[d];
    }
    if (decl_tensors(j, root, "inputs", TIR_T_INPUT) || decl_tensors(j, root, "outputs", TIR_T_OUTPUT) ||
        decl_tensors(j, root, "scratch", TIR_T_SCRATCH) || decl_constants(j, root))
        return -1;
    const cJSON *body = field(root, "body");
    if (!body)
        return jfail(j, "(top level)", "body", "missing");
    if (!cJSON_IsArray(body))
        return jfail(j, "(top level)", "body", "expected an array of ops, got %s", type_name(body));
    return exec_block(j, body, "body");
}

int enc_parse_kernel_json_opts(const char *text, size_t len, const char *source_name,
                               const char *base_dir, const enc_front_opts_t *opts,
                               tir_kernel_t *out, tpb_err_t *err)
{
    jx_t *j = calloc(1, sizeof *j);
    const char *src = source_name ? source_name : "<kernel>";
    if (!j) {
        tir_kernel_init(out);
        return tpb_errf(err, "%s: out of memory", src);
    }
    tpb_err_t scratch;
    if (!err)
        err = &scratch;
    enc_builder_init(&j->b, out, "kernel", NULL, err);
    snprintf(out->source, sizeof out->source, "%s", src);
    snprintf(j->b.msg_prefix, sizeof j->b.msg_prefix, "%s: ", src);
    snprintf(j->base_dir, sizeof j->base_dir, "%s", base_dir && *base_dir ? base_dir : ".");
    j->max_ops = opts && opts->max_ops > 0 ? opts->max_ops : ENC_DEFAULT_MAX_OPS;
    j->b.max_ops = j->max_ops;
    enc_env_init(&j->env);
    enc_front_opts_t dflt = {NULL, 0, 0};
    int rc;
    const char *end = NULL;
    cJSON *root = text ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
    if (root && end) {   /* only blanks may follow the value */
        while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
            end++;
        if (end < text + len && *end) {
            int line, col;
            line_col(text, end, &line, &col);
            rc = tpb_errf(err, "%s:%d:%d: invalid JSON: unexpected text after the top-level value",
                          src, line, col);
            cJSON_Delete(root);
            goto done;
        }
    }
    if (!root) {
        int line = 0, col = 0;
        if (text && end && end >= text && end <= text + len)
            line_col(text, end, &line, &col);
        rc = tpb_errf(err, "%s:%d:%d: invalid JSON near here", src, line, col);
    } else {
        rc = run(j, root, opts ? opts : &dflt) ? -1 : 0;
        if (!rc && enc_builder_complete(&j->b))
            rc = -1;
        if (!rc && j->b.failed)
            rc = -1;
        cJSON_Delete(root);
    }
done:
    free(j->memo);
    enc_env_free(&j->env);
    enc_builder_free(&j->b);
    free(j);
    return rc;
}

int enc_parse_kernel_json(const char *text, size_t len, const char *source_name,
                          const char *base_dir, const char *target_override, int program_id,
                          tir_kernel_t *out, tpb_err_t *err)
{
    enc_front_opts_t o = {target_override, program_id, 0};
    return enc_parse_kernel_json_opts(text, len, source_name, base_dir, &o, out, err);
}

int enc_parse_kernel_file_opts(const char *path, const enc_front_opts_t *opts, tir_kernel_t *out,
                               tpb_err_t *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    if (fio_read_all(path, &buf, &len, err)) {
        tir_kernel_init(out);
        return -1;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    int rc = enc_parse_kernel_json_opts((const char *)buf, len, path, dir, opts, out, err);
    free(buf);
    return rc;
}

int enc_parse_kernel_file(const char *path, const char *target_override, int program_id,
                          tir_kernel_t *out, tpb_err_t *err)
{
    enc_front_opts_t o = {target_override, program_id, 0};
    return enc_parse_kernel_file_opts(path, &o, out, err);
}
