/* fj_fields.c - field readers of the JSON kernel front-end (see fj.h). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fj.h"
#include "strutil.h"

/* ---- per-object memo: (object, what) -> value ---- */


static size_t fj_memo_slot(const jx_t *j, const cJSON *obj, const void *what)
{
    uint64_t h = ((uint64_t)(uintptr_t)obj * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)(uintptr_t)what * 0xc2b2ae3d27d4eb4full);
    return (size_t)(h ^ h >> 29) & (j->memo_cap - 1);
}

const void *fj_memo_get(const jx_t *j, const cJSON *obj, const void *what)
{
    if (!j->memo_cap)
        return NULL;
    for (size_t i = fj_memo_slot(j, obj, what);; i = (i + 1) & (j->memo_cap - 1)) {
        const struct memo_entry *e = &j->memo[i];
        if (!e->obj)
            return NULL;
        if (e->obj == obj && e->what == what)
            return e->value;
    }
}

/* Best effort: when memory runs out the answer is simply not kept (false). */
bool fj_memo_put(jx_t *j, const cJSON *obj, const void *what, const void *value)
{
    if (!fj_memo_keeps(j))
        return false;
    if (2 * (j->memo_n + 1) > j->memo_cap) {
        size_t nc = j->memo_cap ? 2 * j->memo_cap : 256;
        struct memo_entry *old = j->memo, *nw = calloc(nc, sizeof *nw);
        if (!nw)
            return false;
        size_t oc = j->memo_cap;
        j->memo = nw;
        j->memo_cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (old[i].obj) {
                size_t k = fj_memo_slot(j, old[i].obj, old[i].what);
                while (nw[k].obj)
                    k = (k + 1) & (nc - 1);
                nw[k] = old[i];
            }
        free(old);
    }
    size_t k = fj_memo_slot(j, obj, what);
    while (j->memo[k].obj && !(j->memo[k].obj == obj && j->memo[k].what == what))
        k = (k + 1) & (j->memo_cap - 1);
    if (!j->memo[k].obj)
        j->memo_n++;
    j->memo[k] = (struct memo_entry){obj, what, value};
    return true;
}

/* Own p until the end of the run (fr frees it); false (p not owned) when
 * memory runs out. */
bool fj_keep(jx_t *j, void *p, void (*fr)(void *))
{
    if (j->nkeep == j->capkeep) {
        size_t nc = j->capkeep ? 2 * j->capkeep : 64;
        struct fj_kept *nk = realloc(j->keep, nc * sizeof *nk);
        if (!nk)
            return false;
        j->keep = nk;
        j->capkeep = nc;
    }
    j->keep[j->nkeep++] = (struct fj_kept){p, fr};
    return true;
}

void fj_cache_free(jx_t *j)
{
    for (size_t i = 0; i < j->nkeep; i++)
        j->keep[i].fr(j->keep[i].p);
    free(j->keep);
    j->keep = NULL;
    j->nkeep = j->capkeep = 0;
}

/* ---- errors ---- */

int fj_jfail(jx_t *j, const char *path, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

int fj_jfail(jx_t *j, const char *path, const char *field, const char *fmt, ...)
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

const char *fj_type_name(const cJSON *it)
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

/* The keys of a and b, in order, are the same. */
static bool same_keys(const cJSON *a, const cJSON *b)
{
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next)
        if (!x->string || !y->string || !su_eq(x->string, y->string))
            return false;
    return !x && !y;
}

static size_t fields_ok_slot(const char *const *allowed)
{
    return ((uintptr_t)allowed >> 4) % FJ_FIELDS_OK;
}

/* The FK_* index of a key or field name, -1 outside the table: a switch
 * on its first two bytes (which tell the table's names apart but for
 * dst/dst_reg and src/src_reg), then the rest of the name. */
#define KEY2(a, b) ((unsigned)(unsigned char)(a) << 8 | (unsigned char)(b))
int fj_key_index(const char *k)
{
    if (!k[0])
        return -1;
    const char *r = k + 2;   /* read only when k[1] is not the NUL */
    switch (KEY2(k[0], k[1])) {
    case KEY2('o', 'p'): return !*r ? FK_OP : -1;
    case KEY2('l', 'o'): return su_eq(r, "c") ? FK_LOC : -1;
    case KEY2('c', 'o'): return su_eq(r, "mment") ? FK_COMMENT : -1;
    case KEY2('n', 'a'): return su_eq(r, "me") ? FK_NAME : -1;
    case KEY2('e', 'n'): return su_eq(r, "gine") ? FK_ENGINE : -1;
    case KEY2('d', 'e'): return su_eq(r, "ps") ? FK_DEPS : -1;
    case KEY2('s', 'c'): return su_eq(r, "hedule") ? FK_SCHEDULE : -1;
    case KEY2('m', 'a'): return su_eq(r, "sk") ? FK_MASK : -1;
    case KEY2('d', 's'): return su_eq(r, "t") ? FK_DST : su_eq(r, "t_reg") ? FK_DST_REG : -1;
    case KEY2('s', 'r'): return su_eq(r, "c") ? FK_SRC : su_eq(r, "c_reg") ? FK_SRC_REG : -1;
    case KEY2('s', 'h'): return su_eq(r, "ape") ? FK_SHAPE : -1;
    case KEY2('d', 't'): return su_eq(r, "ype") ? FK_DTYPE : -1;
    case KEY2('b', 'u'): return su_eq(r, "ffer") ? FK_BUFFER : -1;
    case KEY2('d', 'g'): return su_eq(r, "e_mode") ? FK_DGE_MODE : -1;
    case KEY2('o', 'o'): return su_eq(r, "b_mode") ? FK_OOB_MODE : -1;
    case KEY2('d', 'm'): return su_eq(r, "a_qos") ? FK_DMA_QOS : -1;
    case KEY2('r', 'm'): return su_eq(r, "w_op") ? FK_RMW_OP : -1;
    case KEY2('o', 't'): return su_eq(r, "her") ? FK_OTHER : -1;
    default: return -1;
    }
}

/* key_index of a key string through the run's cache by its address (a
 * key's text never changes while the tree lives) */
static int key_index_at(jx_t *j, const char *k)
{
    if (!j)
        return fj_key_index(k);
    size_t h = (size_t)(((uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15ull) >> 59) % FJ_KIDX;
    if (j->kidx[h].k != k) {
        j->kidx[h].k = k;
        j->kidx[h].idx = fj_key_index(k);
    }
    return j->kidx[h].idx;
}

void fj_keys_scan(jx_t *j, const cJSON *obj, fj_keys_t *ks)
{
    ks->obj = obj;
    ks->present = 0;
    ks->other = false;
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (!c->string) {   /* fj_field's walk ends here: no table */
            ks->obj = NULL;
            return;
        }
        int k = key_index_at(j, c->string);
        if (k < 0 || ks->present >> k & 1) {   /* unknown, or a repeat (the first counts) */
            ks->other = true;
            continue;
        }
        ks->present |= 1u << k;
        ks->it[k] = c;
    }
}

const cJSON *fj_jfield(const jx_t *j, const cJSON *obj, const char *name)
{
    const fj_keys_t *ks = j->keys;
    if (!ks || ks->obj != obj || !obj || !name)
        return fj_field(obj, name);
    int k = fj_key_index(name);
    if (k >= 0)
        return ks->present >> k & 1 ? ks->it[k] : NULL;
    return ks->other ? fj_field(obj, name) : NULL;   /* every key is in the table: absent */
}

/* The FK_* bits of an allowed-field list and of the keys every object
 * may have (comment, loc), kept per list in the fields_ok slots. */
static unsigned keys_allowed(jx_t *j, const char *const *allowed, size_t h)
{
    if (j->keys_ok[h].allowed == allowed)
        return j->keys_ok[h].mask;
    unsigned m = 1u << FK_COMMENT | 1u << FK_LOC;
    for (int i = 0; allowed[i]; i++) {
        int k = fj_key_index(allowed[i]);
        m |= k >= 0 ? 1u << k : 0u;
    }
    j->keys_ok[h].allowed = allowed;
    j->keys_ok[h].mask = m;
    return m;
}

/* Reject fields outside `allowed` (NULL-terminated) and duplicate keys. */
int fj_check_fields(jx_t *j, const cJSON *obj, const char *path, const char *const *allowed)
{
    const fj_keys_t *ks = j->keys;
    if (ks && ks->obj == obj && !ks->other &&
        !(ks->present & ~keys_allowed(j, allowed, fields_ok_slot(allowed)))) {
        if (fj_memo_keeps(j))   /* as a full pass does (a flat body keeps nothing) */
            fj_memo_put(j, obj, allowed, obj);
        return 0;   /* every key known, allowed and given once */
    }
    if (fj_memo_get(j, obj, allowed))
        return 0;   /* this object passed this check before (an earlier iteration) */
    size_t h = fields_ok_slot(allowed);
    if (j->fields_ok[h].allowed == allowed && same_keys(obj, j->fields_ok[h].obj))
        return 0;   /* the keys of an object that passed: no unknown or repeated one */
    for (const cJSON *c = obj->child; c; c = c->next) {
        bool ok = su_eq(c->string, "comment") || su_eq(c->string, "loc");
        const char first = c->string[0];   /* per flat statement: one byte per allowed name */
        for (int i = 0; !ok && allowed[i]; i++)
            ok = allowed[i][0] == first && su_eq(c->string, allowed[i]);
        if (!ok) {
            char list[512];
            size_t o = 0;
            list[0] = 0;
            for (int i = 0; allowed[i] && o < sizeof list; i++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", allowed[i]);
            return fj_jfail(j, path, c->string, "unknown field (allowed: %s)", list);
        }
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (su_eq(d->string, c->string))
                return fj_jfail(j, path, c->string, "given twice");
    }
    fj_memo_put(j, obj, allowed, obj);
    j->fields_ok[h].allowed = allowed;
    j->fields_ok[h].obj = obj;
    return 0;
}

/* cJSON_GetObjectItemCaseSensitive (the first key equal to name; a child
 * without a key ends the search), comparing keys inline: this is the
 * front-end's most frequent call. */
const cJSON *fj_field(const cJSON *obj, const char *name)
{
    if (!obj || !name)
        return NULL;
    const char first = name[0];   /* most lookups are of absent fields: one byte per key */
    for (const cJSON *c = obj->child; c && c->string; c = c->next)
        if (c->string[0] == first && su_eq(c->string, name))
            return c;
    return NULL;
}

/* ---- scalar fields ---- */

/* d as an int64 when it is an integer in the range: in it, d is one
 * exactly when its truncation is d (no floor call: a tile's shape reads two
 * numbers); NaN fails both tests */
static inline bool int_value(double d, int64_t *out)
{
    if (d >= -9.2e18 && d <= 9.2e18 && (double)(int64_t)d == d) {
        *out = (int64_t)d;
        return true;
    }
    return false;
}

int fj_int_of_number(jx_t *j, double d, const char *path, const char *fname, int64_t *out)
{
    if (int_value(d, out))
        return 0;
    return fj_jfail(j, path, fname, "%g %s", d, d == floor(d) ?
                    "is outside the 64-bit integer range" : "is not an integer");
}

int fj_get_int_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                    int64_t *out, bool *dep)
{
    *out = 0;
    if (dep)
        *dep = false;
    if (fj_is_number(it))
        return fj_int_of_number(j, it->valuedouble, path, fname, out);
    if (cJSON_IsString(it)) {
        enc_val_t v;
        char msg[400];
        if (enc_expr_eval(it->valuestring, &j->env, &v, msg, sizeof msg))
            return fj_jfail(j, path, fname, "%s", msg);
        *out = v.v;
        if (dep)
            *dep = v.pid_dep;
        return 0;
    }
    return fj_jfail(j, path, fname, "expected an integer or an expression string, got %s",
                 fj_type_name(it));
}

int fj_get_int(jx_t *j, const cJSON *obj, const char *path, const char *fname, int64_t *out,
               int64_t dflt, bool required)
{
    const cJSON *it = fj_jfield(j, obj, fname);
    if (!it) {
        if (required)
            return fj_jfail(j, path, fname, "missing");
        *out = dflt;
        return 0;
    }
    return fj_get_int_item(j, it, path, fname, out, NULL);
}

int fj_get_int_range(jx_t *j, const cJSON *obj, const char *path, const char *fname, int *out,
                     int dflt, int64_t lo, int64_t hi)
{
    int64_t v;
    if (fj_get_int(j, obj, path, fname, &v, dflt, false))
        return -1;
    if (v < lo || v > hi)
        return fj_jfail(j, path, fname, "%lld out of range %lld..%lld", (long long)v, (long long)lo,
                     (long long)hi);
    *out = (int)v;
    return 0;
}

/* A numeric expression string, in the one expression grammar (expr.c):
 * "7 // 2" is the integer 3, "1/sqrt(d)" a float. */
int fj_eval_number(jx_t *j, const char *text, double *out, char *msg, size_t n)
{
    return enc_fexpr_eval(text, &j->env, out, msg, n);
}

int fj_get_num(jx_t *j, const cJSON *obj, const char *path, const char *fname, double *out,
               double dflt)
{
    const cJSON *it = fj_jfield(j, obj, fname);
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
        if (fj_eval_number(j, s, out, msg, sizeof msg) == 0)
            return 0;
        return fj_jfail(j, path, fname, "%s", msg);
    }
    return fj_jfail(j, path, fname, "expected a number, got %s", fj_type_name(it));
}

/* A boolean: true/false, or an integer expression string ("k > 0"; non-zero
 * is true).  JSON null or an absent field is "not given" (*given = false),
 * which NKI fields such as matmul `accumulate` read as None. */
int fj_get_bool3(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool *out,
                 bool *given)
{
    const cJSON *it = fj_jfield(j, obj, fname);
    *out = false;
    *given = false;
    if (!it || cJSON_IsNull(it))
        return 0;
    *given = true;
    if (cJSON_IsString(it)) {
        int64_t v;
        if (fj_get_int_item(j, it, path, fname, &v, NULL))
            return -1;
        *out = v != 0;
        return 0;
    }
    if (!cJSON_IsBool(it))
        return fj_jfail(j, path, fname, "expected true, false or an expression string, got %s",
                     fj_type_name(it));
    *out = cJSON_IsTrue(it);
    return 0;
}

int fj_get_bool(jx_t *j, const cJSON *obj, const char *path, const char *fname, bool *out)
{
    bool given;
    return fj_get_bool3(j, obj, path, fname, out, &given);
}

int fj_str_item_rest(jx_t *j, const cJSON *it, const char *path, const char *fname,
                     const char **out, bool required)
{
    *out = NULL;
    if (!it) {
        if (required)
            return fj_jfail(j, path, fname, "missing");
        return 0;
    }
    if (!fj_is_string(it))
        return fj_jfail(j, path, fname, "expected a string, got %s", fj_type_name(it));
    *out = it->valuestring;
    return 0;
}

int fj_get_str(jx_t *j, const cJSON *obj, const char *path, const char *fname,
               const char **out, bool required)
{
    return fj_str_item(j, fj_jfield(j, obj, fname), path, fname, out, required);
}

/* strip NKI module prefixes: "nl.add", "np.add", "nki.language.exp" */
const char *fj_strip_prefix(const char *s)
{
    static const char *const pre[] = {"nki.language.", "nki.isa.", "nl.", "np.", "nisa.",
                                      "numpy.", "oob_mode.", "dge_mode.", "engine.", NULL};
    if (!strchr(s, '.'))
        return s;   /* every prefix has a dot */
    for (int i = 0; pre[i]; i++)
        if (!strncmp(s, pre[i], strlen(pre[i])))
            return s + strlen(pre[i]);
    return s;
}


/* Decoded names, memoised per string item in loops: the memo's value
 * points into small_ints, its question names the type and alias table. */
static const int small_ints[64] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42,
    43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
static const char enum_tags[5][256];   /* [alias table][type]; [4][0]: engine, [4][1]: dtype */

static const void *enum_tag(isa_ftype_t type, const fj_alias_t *aliases)
{
    int a = !aliases ? 0 : aliases == fj_alu_aliases ? 1 : aliases == fj_act_aliases ? 2
            : aliases == fj_cmp_aliases ? 3 : -1;
    return a < 0 || (unsigned)type >= 256 ? NULL : &enum_tags[a][type];
}

static void enum_keep(jx_t *j, const cJSON *it, const void *tag, int v)
{
    if (tag && it && v >= 0 && v < 64)
        fj_memo_put(j, it, tag, &small_ints[v]);
}

int fj_get_enum(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                isa_ftype_t type, const fj_alias_t *aliases, int *out, int dflt)
{
    const char *s;
    const cJSON *it = fj_jfield(j, obj, fname);
    const void *tag = enum_tag(type, aliases);
    const int *known = it && tag ? fj_memo_get(j, it, tag) : NULL;
    if (known || !it) {   /* absent: the default, as fj_get_str gives NULL */
        *out = known ? *known : dflt;
        return 0;
    }
    if (fj_str_item(j, it, path, fname, &s, false))
        return -1;
    if (!s) {
        *out = dflt;
        return 0;
    }
    const char *n = fj_strip_prefix(s);
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
        return fj_jfail(j, path, fname, "unknown name '%s' (one of: %s)", s, list);
    }
    enum_keep(j, it, tag, v);
    *out = v;
    return 0;
}

const fj_alias_t fj_alu_aliases[] = {
    {"sub", "subtract"}, {"mul", "multiply"}, {"div", "divide"}, {"maximum", "max"},
    {"minimum", "min"}, {"greater", "is_gt"}, {"greater_equal", "is_ge"}, {"less", "is_lt"},
    {"less_equal", "is_le"}, {"pow", "power"}, {"invert", "bitwise_not"}, {"none", "bypass"},
    {NULL, NULL}};
const fj_alias_t fj_act_aliases[] = {
    {"identity", "copy"}, {"exponential", "exp"}, {"gelu_apprx_tanh", "gelu_apprx_tanh"},
    {NULL, NULL}};
const fj_alias_t fj_cmp_aliases[] = {
    {"equal", "eq"}, {"not_equal", "ne"}, {"greater_equal", "ge"}, {"greater", "gt"},
    {"less_equal", "le"}, {"less", "lt"}, {"is_equal", "eq"}, {"is_ge", "ge"}, {"is_gt", "gt"},
    {"is_le", "le"}, {"is_lt", "lt"}, {NULL, NULL}};

int fj_get_engine(jx_t *j, const cJSON *obj, const char *path, int *out)
{
    const char *s;
    *out = ISA_ENG_UNASSIGNED;
    const cJSON *it = fj_kfield(j, obj, FK_ENGINE, "engine");
    if (!it)   /* mostly: no engine given */
        return 0;
    const int *known = fj_memo_get(j, it, &enum_tags[4][0]);
    if (known) {
        *out = *known;
        return 0;
    }
    if (fj_str_item(j, it, path, "engine", &s, false))
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
    const char *n = fj_strip_prefix(s);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(n, names[i].n)) {
            *out = names[i].e;
            enum_keep(j, it, &enum_tags[4][0], *out);
            return 0;
        }
    return fj_jfail(j, path, "engine", "unknown engine '%s' (pe, act, pool, dve, sp, dma, auto)", s);
}

int fj_get_enum8(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                 isa_ftype_t type, const fj_alias_t *aliases, int8_t *out, int dflt)
{
    int v;
    if (fj_get_enum(j, obj, path, fname, type, aliases, &v, dflt))
        return -1;
    *out = (int8_t)v;
    return 0;
}

int fj_get_engine8(jx_t *j, const cJSON *obj, const char *path, int8_t *out)
{
    int v;
    if (fj_get_engine(j, obj, path, &v))
        return -1;
    *out = (int8_t)v;
    return 0;
}

int fj_rare_num(jx_t *j, const cJSON *obj, const char *path, const char *fname, tir_op_t *op,
                size_t off, double dflt)
{
    double v;
    if (fj_get_num(j, obj, path, fname, &v, dflt))
        return -1;
    enc_rare_put(&j->b, op, off, &v, sizeof v);
    return j->b.failed ? -1 : 0;
}

int fj_rare_enum(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                 isa_ftype_t type, const fj_alias_t *aliases, tir_op_t *op, size_t off, int dflt)
{
    int v;
    if (fj_get_enum(j, obj, path, fname, type, aliases, &v, dflt))
        return -1;
    enc_rare_put(&j->b, op, off, &v, sizeof v);
    return j->b.failed ? -1 : 0;
}

int fj_rare_int_range(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                      tir_op_t *op, size_t off, int dflt, int64_t lo, int64_t hi)
{
    int v;
    if (fj_get_int_range(j, obj, path, fname, &v, dflt, lo, hi))
        return -1;
    enc_rare_put(&j->b, op, off, &v, sizeof v);
    return j->b.failed ? -1 : 0;
}

int fj_get_dtype(jx_t *j, const cJSON *obj, const char *path, unsigned *out)
{
    const char *s;
    const cJSON *it = fj_kfield(j, obj, FK_DTYPE, "dtype");
    const int *known = it && j->memo_cap ? fj_memo_get(j, it, &enum_tags[4][1]) : NULL;
    if (known) {
        *out = (unsigned)*known;
        return 0;
    }
    if (fj_str_item(j, it, path, "dtype", &s, true))
        return -1;
    if (j->dt_text && !strcmp(s, j->dt_text)) {   /* the text decoded last (valid) */
        *out = j->dt_value;
        enum_keep(j, it, &enum_tags[4][1], (int)j->dt_value);
        return 0;
    }
    const char *n = fj_strip_prefix(s);
    int v;
    if (!strcmp(n, "bool") || !strcmp(n, "bool_"))
        v = ISA_DT_UINT8;
    else
        v = isa_dtype_by_name(n);
    if (v < 0)
        return fj_jfail(j, path, "dtype", "unknown dtype '%s' (float32 bfloat16 float16 "
                     "float8_e4m3fn float8_e4m3 float8_e5m2 int8 int16 int32 uint8 uint16 uint32 bool)", s);
    enum_keep(j, it, &enum_tags[4][1], v);
    *out = (unsigned)v;
    j->dt_text = s;
    j->dt_value = (unsigned)v;
    return 0;
}

int fj_get_shape(jx_t *j, const cJSON *obj, const char *path, const char *fname,
                 int64_t *shape, int *ndim, int maxd)
{
    return fj_shape_item(j, fj_jfield(j, obj, fname), path, fname, shape, ndim, maxd);
}

int fj_shape_item(jx_t *j, const cJSON *it, const char *path, const char *fname,
                  int64_t *shape, int *ndim, int maxd)
{
    if (!it)
        return fj_jfail(j, path, fname, "missing");
    if (!fj_is_array(it))
        return fj_jfail(j, path, fname, "expected an array of integers, got %s", fj_type_name(it));
    int n = 0;   /* cJSON_GetArraySize, inline */
    for (const cJSON *c = it->child; c; c = c->next)
        n++;
    if (n < 1 || n > maxd)
        return fj_jfail(j, path, fname, "%d dimensions (1..%d allowed)", n, maxd);
    int i = 0;
    for (const cJSON *c = it->child; c; c = c->next, i++) {
        /* an integral number inline (fj_int_of_number's answer; a tile
         * statement reads two), anything else through fj_get_int_item */
        if (!fj_is_number(c) || !int_value(c->valuedouble, &shape[i]))
            if (fj_get_int_item(j, c, path, fname, &shape[i], NULL))
                return -1;
    }
    *ndim = n;
    return 0;
}
