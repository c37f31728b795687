/* builder.c - the C builder API (see builder.h). */
#include "builder.h"
#include "hugepage.h"
#include "strutil.h"
#include "validate_int.h"   /* enc_direct_dma, enc_validate_op_full */

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- state and errors ---- */

int enc_fail(enc_builder_t *b, const char *fmt, ...)
{
    if (b->failed)
        return -1;
    b->failed = true;
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    tpb_errf(b->err, "%s%s", b->msg_prefix, tmp);
    return -1;
}

int enc_builder_init(enc_builder_t *b, tir_kernel_t *k, const char *kernel_name,
                     const char *target, tpb_err_t *err)
{
    memset(b, 0, sizeof *b);
    b->k = k;
    b->err = err;
    b->max_ops = 10000000LL;
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "%s", kernel_name ? kernel_name : "kernel");
    b->target = target ? tpb_target_get(target) : tpb_target_default();
    if (!b->target)
        return enc_fail(b, "unknown target '%s' (known: %s)", target, tpb_target_names());
    snprintf(k->target, sizeof k->target, "%s", b->target->name);
    return 0;
}

void enc_builder_free(enc_builder_t *b)
{
    tir_array_free(b->names, b->cap_names, sizeof *b->names);
    free(b->hash);
    tir_array_free(b->tinfo, b->cap_tensor_info, sizeof *b->tinfo);
    if (b->check_memo)
        free(b->check_memo->whole);
    free(b->check_memo);
    b->check_memo = NULL;
    free(b->scope_start);
    b->names = NULL;
    b->hash = NULL;
    b->tinfo = NULL;
    b->scope_start = NULL;
    b->nnames = b->cap_names = b->cap_hash = b->cap_tensor_info = b->cap_scope = 0;
    b->depth = 0;
    enc_acc_free(b);
}

int enc_builder_complete(enc_builder_t *b)
{
    if (b->failed || !b->oversize)
        return b->failed ? -1 : 0;
    tpb_err_t e;
    if (enc_reload_oversize(b->k, b->target, &e))
        return enc_fail(b, "%s", e.msg);
    b->oversize = 0;
    return 0;
}

int enc_builder_finish(enc_builder_t *b)
{
    enc_builder_complete(b);
    int rc = b->failed ? -1 : 0;
    enc_builder_free(b);
    return rc;
}

void enc_set_path(enc_builder_t *b, const char *path)
{
    su_copy(b->path, sizeof b->path, path ? path : "");
    b->path_slot = NULL;
}

void enc_set_path_slot(enc_builder_t *b, const char **slot)
{
    b->path_slot = slot;
}


void enc_set_name(enc_builder_t *b, const char *name)
{
    su_copy(b->next_name, sizeof b->next_name, name ? name : "");
}

/* Copy an op path into a TIR_PATH_LEN field, keeping the innermost part
 * ("...body[3].body[1]") when it is too long. */
static void copy_path(char dst[TIR_PATH_LEN], const char *src)
{
    size_t n = strlen(src);
    if (n < TIR_PATH_LEN) {
        memcpy(dst, src, n + 1);
        return;
    }
    memcpy(dst, "...", 3);
    memcpy(dst + 3, src + n - (TIR_PATH_LEN - 4), TIR_PATH_LEN - 4);
    dst[TIR_PATH_LEN - 1] = 0;
}

/* The kernel's copy of the current path (kept whole: shorter than
 * TIR_PATH_LEN) for the caller's slot (enc_set_path_slot): an exact-length
 * copy in its name arena, not interned.  The slot's statement meets its path
 * again through the slot, and a flat body's statements have paths all
 * different (the 6 000-op live kernel hashed 9 000 of them into the string
 * set for no sharing); only ops and tiles of one loc share one by string.
 * NULL when out of memory. */
static const char *slot_copy(enc_builder_t *b, size_t len)
{
    return tpb_arena_strndup(&b->k->names, b->path, len);
}

/* ---- tensors ---- */

/* enc_fail with the current path in front ("inputs[0]: ..."). */
static int tfail(enc_builder_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int tfail(enc_builder_t *b, const char *fmt, ...)
{
    char tmp[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return enc_fail(b, "%s%s%s", b->path, b->path[0] ? ": " : "", tmp);
}

/* 1..TIR_NAME_LEN - 9 bytes of [A-Za-z_][A-Za-z0-9_]*, in one pass (no
 * strlen first; a letter by one range test on its lower case: a tile per
 * statement of a flat body) */
static bool valid_name(const char *s)
{
    if (!s || !*s)
        return false;
    for (size_t i = 0; s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        bool ok = (unsigned)((c | 32u) - 'a') < 26u || c == '_' ||
                  (i > 0 && (unsigned)(c - '0') < 10u);
        if (!ok || i + 1 >= TIR_NAME_LEN - 8)
            return false;
    }
    return true;
}

static const char *kind_word(tir_tensor_kind_t kind)
{
    switch (kind) {
    case TIR_T_INPUT: return "input";
    case TIR_T_OUTPUT: return "output";
    case TIR_T_CONSTANT: return "constant";
    case TIR_T_SCRATCH: return "scratch";
    case TIR_T_SBUF: return "sbuf tile";
    case TIR_T_PSUM: return "psum tile";
    }
    return "?";
}

static bool is_tile(tir_tensor_kind_t kind)
{
    return kind == TIR_T_SBUF || kind == TIR_T_PSUM;
}

void enc_builder_reserve(enc_builder_t *b, int64_t ops, int64_t tensors)
{
    tir_reserve_hint(b->k, ops, tensors);
    int64_t n = b->k->ntensors + (tensors > 0 ? tensors : 0);
    b->tinfo = tir_array_hint(b->tinfo, &b->cap_tensor_info, n, sizeof *b->tinfo);
}

int enc_grow_tensor_info(enc_builder_t *b, int n)
{
    struct enc_tensor_info *p =
        tir_array_reserve(b->tinfo, &b->cap_tensor_info, n + 1, sizeof *p, 64, true);
    if (!p)
        return -1;
    b->tinfo = p;
    return 0;
}

/* eslot (NULL: none): the caller's cache of name's entry + 1 (0: not
 * known), kept for one name: a name that had an entry passed its checks. */
/* The decimal number ending s (len bytes, after a '#') plus one, in
 * place; false when it gains a digit (9 -> 10: s is left to be rebuilt). */
static bool bump_decimal(char *s, int len)
{
    int i = len - 1;
    while (i >= 0 && s[i] == '9')
        s[i--] = '0';
    if (i < 0 || s[i] < '0' || s[i] > '8')
        return false;
    s[i]++;
    return true;
}

/* "name#inst" into out (cut to TIR_NAME_LEN - 1 bytes, as su_join_int
 * cuts it): the previous instance's name "name#(inst-1)" (the entry's
 * inst_str, kept when an instance is added: count - 1 is its number) with
 * its number bumped, else formatted. */
static size_t inst_name(enc_builder_t *b, const struct enc_name_entry *e, const char *name,
                        int inst, char out[TIR_NAME_LEN])
{
    if (e->inst_str) {
        memcpy(out, e->inst_str, (size_t)e->inst_len + 1);
        if (bump_decimal(out, e->inst_len)) {
            b->names_bumped++;
            return (size_t)e->inst_len;
        }
    }
    return su_join_int(out, TIR_NAME_LEN, name, -1, '#', inst, 0);   /* uncut length */
}

/* The common instance name (the previous one's last digit 0..8 raised by
 * one: no carry, the same length) written straight into the kernel's name
 * arena, so the tensor keeps it without a second copy; NULL otherwise
 * (inst_name builds it as before) or when out of memory. */
static const char *inst_name_owned(enc_builder_t *b, const struct enc_name_entry *e)
{
    if (!e->inst_str || e->inst_len < 1)
        return NULL;
    size_t n = (size_t)e->inst_len;
    char last = e->inst_str[n - 1];
    if (last < '0' || last > '8')
        return NULL;
    char *s = tpb_arena_copy(&b->k->names, e->inst_str, n + 1, 1);
    if (!s)
        return NULL;
    s[n - 1] = (char)(last + 1);
    b->names_bumped++;
    b->names_owned++;
    return s;
}

/* own: a tensor the compiler adds on its own (enc_own_tile, enc_own_output):
 * counted among its name's declarations ("name#N" naming) but never the
 * one the name finds, and a tile of an HBM tensor's name is let be. */
static int add_tensor(enc_builder_t *b, const char *name, tir_tensor_kind_t kind,
                      unsigned dtype, int ndim, const int64_t *shape, int *eslot, bool own)
{
    if (b->failed)
        return -1;
    const char *what = kind_word(kind);
    bool known = eslot && *eslot > 0 && *eslot <= b->nnames;
    if (known)
        ;   /* the name's checks passed when its entry was found */
    else if (!valid_name(name))
        return tfail(b, "%s name '%s' is not a valid identifier (letters, digits, _; "
                        "at most %d characters)", what, name ? name : "(null)", TIR_NAME_LEN - 9);
    else if ((name[0] == 'p' && !strcmp(name, "pid")) ||
             (name[0] == 'n' && !strcmp(name, "num_programs")))
        return tfail(b, "%s name '%s' is reserved", what, name);
    if (!isa_dtype_valid(dtype))
        return tfail(b, "%s '%s': field 'dtype': invalid dtype %u", what, name, dtype);
    int maxd = is_tile(kind) ? 1 + ISA_MAX_FREE_DIMS : TIR_MAX_DIMS;
    if (!shape)
        return tfail(b, "%s '%s': field 'shape': missing", what, name);
    if (ndim < 1 || ndim > maxd)
        return tfail(b, "%s '%s': field 'shape': %d dimensions (1..%d allowed)", what, name,
                        ndim, maxd);
    int64_t elems = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 1 || shape[d] > ((int64_t)1 << 40))
            return tfail(b, "%s '%s': field 'shape': dimension %d is %lld (must be 1..2^40)",
                            what, name, d, (long long)shape[d]);
        if (shape[d] > ((int64_t)1 << 40) / elems)   /* before the product overflows */
            return tfail(b, "%s '%s': field 'shape': more than 2^40 elements", what, name);
        elems *= shape[d];
    }
    int entry = known ? *eslot - 1 : enc_name_entry(b, name);
    if (entry < 0)
        return tfail(b, "out of memory");
    if (eslot)
        *eslot = entry + 1;
    int existing = b->names[entry].head;
    if (b->names[entry].count > 0 && !is_tile(kind))
        return tfail(b, "%s '%s' is declared twice", what, name);
    if (existing >= 0 && !own && !is_tile(b->k->tensors[existing].kind))
        return tfail(b, "tile '%s' has the name of an HBM tensor", name);
    if (is_tile(kind)) {
        unsigned parts = b->target->partitions;
        if (shape[0] > (int64_t)parts)
            return tfail(b, "%s '%s': field 'shape': partition dim %lld > %u", what, name,
                            (long long)shape[0], parts);
        uint64_t bytes = (uint64_t)(elems / shape[0]) * isa_dtype_size(dtype);
        uint64_t cap = kind == TIR_T_SBUF ? b->target->sbuf_partition_bytes
                                           : b->target->psum_partition_bytes;
        if (bytes > cap && kind == TIR_T_SBUF)
            b->oversize++;   /* reloaded at its uses or refused (enc_builder_complete) */
        else if (bytes > cap)
            return tfail(b, "%s '%s': field 'shape': %llu bytes per partition exceed the "
                            "%s partition size (%llu bytes)", what, name,
                            (unsigned long long)bytes, kind == TIR_T_SBUF ? "SBUF" : "PSUM",
                            (unsigned long long)cap);
    }
    tir_tensor_t t;
    memset(&t, 0, sizeof t);
    char tname[TIR_NAME_LEN], tpath[TIR_PATH_LEN];   /* tir_add_tensor copies them */
    int inst = b->names[entry].count;
    size_t nl = 0;   /* "name#inst"'s uncut length */
    /* the first instance keeps its entry's copy of the name (the kernel's) */
    const char *owned = inst == 0 ? b->names[entry].name : inst_name_owned(b, &b->names[entry]);
    if (owned && inst > 0)
        nl = (size_t)b->names[entry].inst_len;
    else if (!owned)   /* "name#inst", as snprintf("%s#%d") without its cost (per loop tile) */
        nl = inst_name(b, &b->names[entry], name, inst, tname);
    t.name = owned ? owned : tname;
    t.kind = kind;
    t.dtype = dtype;
    t.ndim = ndim;
    for (int d = 0; d < ndim; d++)   /* (1..6 dims: no memcpy call) */
        t.shape[d] = shape[d];
    /* the caller's cache of the path interned (enc_set_path_slot), as op_path */
    const char **slot = b->path_slot;
    bool interned = slot && *slot && !strcmp(*slot, b->path);
    size_t plen = interned || !slot ? 0 : strlen(b->path);
    if (interned) {
        t.path = *slot;
    } else if (plen && plen < TIR_PATH_LEN) {   /* a new slot's (slot_copy) */
        if (!(t.path = *slot = slot_copy(b, plen)))
            return tfail(b, "out of memory");
        interned = true;   /* the kernel's already: kept as it is */
    } else {
        copy_path(tpath, b->path);
        t.path = tpath;
    }
    t.shared_with = -1;
    if (b->k->ntensors >= b->cap_tensor_info &&   /* room mostly (reserved, or doubled) */
        enc_grow_tensor_info(b, b->k->ntensors))
        return tfail(b, "out of memory");
    int id = tir_add_tensor_owned(b->k, &t, owned != NULL, interned);
    if (id < 0)
        return tfail(b, "out of memory");
    if (slot && !interned && b->path[0])
        *slot = b->k->tensors[id].path;
    b->tinfo[id].entry1 = entry + 1;
    b->tinfo[id].prev_same = b->names[entry].head;   /* own: the head kept (scope end) */
    if (!own)
        b->names[entry].head = id;
    b->names[entry].count++;
    /* the next instance's name bumps this one's (an uncut "name#N" only) */
    bool next_bumps = inst > 0 && nl < sizeof tname - 1;
    b->names[entry].inst_str = next_bumps ? b->k->tensors[id].name : NULL;
    b->names[entry].inst_len = next_bumps ? (int)nl : 0;
    return id;
}

int enc_input(enc_builder_t *b, const char *name, unsigned dtype, int ndim, const int64_t *shape)
{
    return add_tensor(b, name, TIR_T_INPUT, dtype, ndim, shape, NULL, false);
}

int enc_output(enc_builder_t *b, const char *name, unsigned dtype, int ndim, const int64_t *shape)
{
    return add_tensor(b, name, TIR_T_OUTPUT, dtype, ndim, shape, NULL, false);
}

int enc_scratch(enc_builder_t *b, const char *name, unsigned dtype, int ndim,
                const int64_t *shape)
{
    return add_tensor(b, name, TIR_T_SCRATCH, dtype, ndim, shape, NULL, false);
}

static int64_t tensor_elems(const tir_tensor_t *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

int enc_shared_constant(enc_builder_t *b, const char *name, unsigned dtype, int ndim,
                        const int64_t *shape, const void *data)
{
    int id = add_tensor(b, name, TIR_T_CONSTANT, dtype, ndim, shape, NULL, false);
    if (id < 0)
        return -1;
    tir_tensor_t *t = &b->k->tensors[id];
    size_t bytes = (size_t)tensor_elems(t) * isa_dtype_size(dtype);
    if (bytes > ((size_t)1 << 31))
        return tfail(b, "constant '%s': %zu bytes of inline data (at most 2 GiB)", name, bytes);
    t->const_data = malloc(bytes ? bytes : 1);
    if (!t->const_data)
        return tfail(b, "out of memory");
    if (data)
        memcpy(t->const_data, data, bytes);
    else
        memset(t->const_data, 0, bytes);
    return id;
}

int enc_shared_constant_file(enc_builder_t *b, const char *name, unsigned dtype, int ndim,
                             const int64_t *shape, const char *file)
{
    int id = add_tensor(b, name, TIR_T_CONSTANT, dtype, ndim, shape, NULL, false);
    if (id < 0)
        return -1;
    if (!file || strlen(file) >= TIR_CONST_PATH_MAX)
        return tfail(b, "constant '%s': field 'file': missing or too long", name);
    size_t n = strlen(file) + 1;
    char *copy = malloc(n);
    if (!copy)
        return tfail(b, "out of memory");
    b->k->tensors[id].const_path = memcpy(copy, file, n);
    return id;
}

/* Bit pattern of 1.0 in each dtype (for identity matrices). */
static void store_one(void *p, unsigned dtype)
{
    switch (dtype) {
    case ISA_DT_FP32: { float f = 1.0f; memcpy(p, &f, 4); break; }
    case ISA_DT_BF16: { uint16_t v = 0x3F80; memcpy(p, &v, 2); break; }
    case ISA_DT_FP16: { uint16_t v = 0x3C00; memcpy(p, &v, 2); break; }
    case ISA_DT_FP8E4M3: case ISA_DT_FP8E4M3IEEE: *(uint8_t *)p = 0x38; break;
    case ISA_DT_FP8E5M2: *(uint8_t *)p = 0x3C; break;
    case ISA_DT_INT8: case ISA_DT_UINT8: *(uint8_t *)p = 1; break;
    case ISA_DT_INT16: case ISA_DT_UINT16: { uint16_t v = 1; memcpy(p, &v, 2); break; }
    case ISA_DT_INT32: case ISA_DT_UINT32: { uint32_t v = 1; memcpy(p, &v, 4); break; }
    default: break;   /* the MX-only dtypes: refused by enc_shared_identity_matrix */
    }
}

int enc_shared_identity_matrix(enc_builder_t *b, const char *name, int64_t n, unsigned dtype)
{
    if (b->failed)
        return -1;
    if (n < 1 || n > 4096)
        return tfail(b, "identity '%s': size %lld (must be 1..4096)", name ? name : "?",
                        (long long)n);
    if (isa_dtype_mx_only(dtype))   /* a quad or an E8M0 scale has no 1 and 0 */
        return tfail(b, "identity '%s': field 'dtype': %s is an MX-only dtype, not a number "
                        "type", name ? name : "?", isa_dtype_numpy_name(dtype));
    int64_t shape[2] = {n, n};
    int id = enc_shared_constant(b, name, dtype, 2, shape, NULL);
    if (id < 0)
        return -1;
    tir_tensor_t *t = &b->k->tensors[id];
    unsigned sz = isa_dtype_size(dtype);
    for (int64_t i = 0; i < n; i++)
        store_one((uint8_t *)t->const_data + (size_t)(i * n + i) * sz, dtype);
    return id;
}

int enc_tile(enc_builder_t *b, const char *name, tir_tensor_kind_t buffer, unsigned dtype,
             int ndim, const int64_t *shape)
{
    return enc_tile_at(b, name, buffer, dtype, ndim, shape, NULL);
}

int enc_tile_at(enc_builder_t *b, const char *name, tir_tensor_kind_t buffer, unsigned dtype,
                int ndim, const int64_t *shape, int *slot)
{
    if (b->failed)
        return -1;
    if (!is_tile(buffer))
        return tfail(b, "tile '%s': field 'buffer': must be sbuf or psum", name ? name : "?");
    return add_tensor(b, name, buffer, dtype, ndim, shape, slot, false);
}

int enc_own_tile(enc_builder_t *b, const char *name, tir_tensor_kind_t buffer, unsigned dtype,
                 int ndim, const int64_t *shape)
{
    return add_tensor(b, name, buffer, dtype, ndim, shape, NULL, true);
}

int enc_own_output(enc_builder_t *b, const char *name, unsigned dtype, int ndim,
                   const int64_t *shape)
{
    return add_tensor(b, name, TIR_T_OUTPUT, dtype, ndim, shape, NULL, true);
}

void enc_scope_begin(enc_builder_t *b)
{
    if (b->depth == b->cap_scope) {
        int nc = b->cap_scope ? b->cap_scope * 2 : 16;
        int *p = realloc(b->scope_start, (size_t)nc * sizeof *p);
        if (!p) {
            enc_fail(b, "out of memory");
            return;
        }
        b->scope_start = p;
        b->cap_scope = nc;
    }
    b->scope_start[b->depth++] = b->k->ntensors;
}

void enc_scope_end(enc_builder_t *b)
{
    if (b->depth == 0)
        return;
    int start = b->scope_start[--b->depth];
    /* scopes nest, so this scope's tensors are the newest: retire them
     * newest first, restoring each name's previous declaration */
    for (int i = b->k->ntensors - 1; i >= start && i >= 0; i--) {
        struct enc_tensor_info *ti = i < b->cap_tensor_info ? &b->tinfo[i] : NULL;
        if (!ti || ti->entry1 <= 0)   /* not declared here, or retired */
            continue;
        b->names[ti->entry1 - 1].head = ti->prev_same;
        ti->entry1 = -ti->entry1;
    }
}

/* ---- access patterns ---- */

tir_ap_t enc_ap_none(void)
{
    return tir_ap_none;   /* tensor -1, all else zero */
}

enc_scalar_t enc_imm(double v)
{
    enc_scalar_t s;
    memset(&s, 0, sizeof s);
    s.imm = v;
    s.ap.tensor = -1;
    return s;
}

enc_scalar_t enc_scalar_ap(tir_ap_t ap)
{
    enc_scalar_t s;
    memset(&s, 0, sizeof s);
    s.is_ap = true;
    s.ap = ap;
    return s;
}

const tir_ap_t *enc_in(enc_builder_t *b, tir_ap_t ap)
{
    const tir_ap_t *r = tir_ap_intern(b->k, &ap);
    if (r)
        return r;
    enc_fail(b, "%s: out of memory", b->path[0] ? b->path : "op");
    return &tir_ap_none;
}

const tir_op_rare_t *enc_rare_in(enc_builder_t *b, const tir_op_rare_t *r)
{
    const tir_op_rare_t *p = tir_rare_intern(b->k, r);
    if (p)
        return p;
    enc_fail(b, "%s: out of memory", b->path[0] ? b->path : "op");
    return &tir_rare_default;
}

void enc_rare_put(enc_builder_t *b, tir_op_t *op, size_t off, const void *v, size_t n)
{
    if (off + n > sizeof(tir_op_rare_t) || !memcmp((const char *)op->rare + off, v, n))
        return;
    tir_op_rare_t r = *op->rare;
    memcpy((char *)&r + off, v, n);
    op->rare = enc_rare_in(b, &r);
}

int8_t enc_field_i8(enc_builder_t *b, tir_opkind_t kind, int v, const char *field)
{
    if (tir_fits_i8(v))
        return (int8_t)v;
    if (b->failed)
        return -1;
    if (b->path[0])   /* the path the op would have (op_path), "op[<index>]" for none */
        enc_fail(b, "%s (%s): field '%s': %d out of range", b->path, tir_op_name(kind), field, v);
    else
        enc_fail(b, "op[%d] (%s): field '%s': %d out of range", b->k->nops, tir_op_name(kind),
                 field, v);
    return -1;
}

tir_scalar_t enc_scalar_in(enc_builder_t *b, enc_scalar_t s)
{
    return (tir_scalar_t){.is_ap = s.is_ap, .imm = s.imm, .ap = enc_in(b, s.ap)};
}

#define PATHP(b) (b)->path, (b)->path[0] ? ": " : ""

static const char *fld(const char *field)
{
    return field ? field : "operand";
}

static bool tensor_ok(enc_builder_t *b, int tensor, const char *field)
{
    if (b->failed)
        return false;
    if (tensor < 0 || tensor >= b->k->ntensors) {
        enc_fail(b, "%s%sfield '%s': no such tensor (id %d)", PATHP(b), fld(field), tensor);
        return false;
    }
    return true;
}

/* NumPy slice normalisation for a non-negative extent n; returns the count. */
static int64_t slice_count(int64_t start, int64_t stop, int64_t step)
{
    if (step > 0)
        return stop > start ? (stop - start + step - 1) / step : 0;
    return start > stop ? (start - stop - step - 1) / (-step) : 0;
}

/* The whole of a tensor seen with shape[0..nd) and strides stride[], into
 * *a (tensor set, the rest zero): what the slice walk below makes of no
 * slices, when every dim has elements (else false: the walk words it). */
static bool whole(int nd, const int64_t *shape, const int64_t *stride, tir_ap_t *a)
{
    if (nd < 1)
        return false;
    for (int d = 0; d < nd; d++) {
        if (shape[d] < 1)
            return false;
        a->step[d] = stride[d];
        a->count[d] = shape[d];
    }
    a->ndim = nd;
    return true;
}

/* Slices over `tensor` seen with shape[0..nd) (its own, or an HBM
 * tensor's C-order reshape: the element order is unchanged, so only the
 * strides differ), into *a (tir_ap_none on an error).  Written in place:
 * this runs per fresh operand, and each copy of the 112-byte record was
 * ~15 instructions. */
static void ap_over(enc_builder_t *b, int tensor, int nd, const int64_t *shape, int nslices,
                    const enc_slice_t *s, const char *field, tir_ap_t *a)
{
    static const enc_slice_t all = ENC_ALL;
    *a = tir_ap_none;   /* the unused dims stay zero: interning compares whole records */
    const tir_tensor_t *t = &b->k->tensors[tensor];
    if (nslices < 0 || (nslices > 0 && !s)) {
        enc_fail(b, "%s%sfield '%s': no slices given", PATHP(b), fld(field));
        return;
    }
    if (nslices > nd) {
        enc_fail(b, "%s%sfield '%s': %d indices for '%s' which has %d dimensions", PATHP(b), fld(field),
                 nslices, t->name, nd);
        return;
    }
    int64_t stride[TIR_MAX_DIMS];
    int64_t acc = 1;
    for (int d = nd - 1; d >= 0; d--) {
        stride[d] = acc;
        acc *= shape[d];
    }
    bool tile = is_tile(t->kind);
    a->tensor = tensor;
    if (nslices == 0 && whole(nd, shape, stride, a))
        return;
    for (int d = 0; d < nd; d++) {
        const enc_slice_t *sl = d < nslices ? &s[d] : &all;
        int64_t n = shape[d];
        if (sl->kind == ENC_SL_INDEX) {
            if (sl->start < 0 || sl->start >= n) {
                enc_fail(b, "%s%sfield '%s': index %lld out of range for '%s' dimension %d (%lld)",
                         PATHP(b), fld(field), (long long)sl->start, t->name, d, (long long)n);
                *a = tir_ap_none;
                return;
            }
            a->offset += sl->start * stride[d];
            if (tile && d == 0) {   /* the partition dim is never dropped */
                a->step[a->ndim] = stride[d];
                a->count[a->ndim++] = 1;
            }
            continue;
        }
        int64_t start = 0, stop = n, step = 1;
        if (sl->kind == ENC_SL_RANGE) {
            step = sl->step;
            if (step == 0) {
                enc_fail(b, "%s%sfield '%s': slice step 0 for '%s' dimension %d", PATHP(b), fld(field), t->name, d);
                *a = tir_ap_none;
                return;
            }
            if (step < 0) {
                enc_fail(b, "%s%sfield '%s': negative slice step %lld for '%s' dimension %d "
                         "(use a raw access pattern)", PATHP(b), fld(field), (long long)step, t->name, d);
                *a = tir_ap_none;
                return;
            }
            start = sl->has_start ? sl->start : 0;
            stop = sl->has_stop ? sl->stop : n;
            if (start < 0 || stop < 0) {
                enc_fail(b, "%s%sfield '%s': negative slice bound %lld:%lld for '%s' dimension %d",
                         PATHP(b), fld(field), (long long)start, (long long)stop, t->name, d);
                *a = tir_ap_none;
                return;
            }
            if (stop > n)
                stop = n;          /* NumPy clipping: partial edge tiles */
        }
        int64_t cnt = slice_count(start, stop, step);
        if (cnt <= 0) {
            enc_fail(b, "%s%sfield '%s': slice %lld:%lld of '%s' dimension %d (%lld) is empty",
                     PATHP(b), fld(field), (long long)(sl->has_start ? sl->start : 0),
                     (long long)(sl->has_stop ? sl->stop : n), t->name, d, (long long)n);
            *a = tir_ap_none;
            return;
        }
        if (cnt == 1)
            step = 1;      /* one element: the step is irrelevant (and may be huge) */
        a->offset += start * stride[d];
        a->step[a->ndim] = step * stride[d];
        a->count[a->ndim++] = cnt;
    }
    if (a->ndim == 0) {   /* a single HBM element: keep one dim of count 1 */
        a->step[0] = 1;
        a->count[0] = 1;
        a->ndim = 1;
    }
}

void enc_ap_into(enc_builder_t *b, int tensor, int nslices, const enc_slice_t *s,
                 const char *field, tir_ap_t *out)
{
    if (!tensor_ok(b, tensor, field)) {
        *out = tir_ap_none;
        return;
    }
    const tir_tensor_t *t = &b->k->tensors[tensor];
    ap_over(b, tensor, t->ndim, t->shape, nslices, s, field, out);
}

tir_ap_t enc_ap(enc_builder_t *b, int tensor, int nslices, const enc_slice_t *s,
                const char *field)
{
    tir_ap_t a;
    enc_ap_into(b, tensor, nslices, s, field, &a);
    return a;
}

tir_ap_t enc_ap_view(enc_builder_t *b, int tensor, int ndim, const int64_t *shape, int nslices,
                     const enc_slice_t *s, const char *field)
{
    if (!tensor_ok(b, tensor, field))
        return enc_ap_none();
    const tir_tensor_t *t = &b->k->tensors[tensor];
    if (is_tile(t->kind)) {
        enc_fail(b, "%s%sfield '%s': reshape of tile '%s': only HBM tensors are reshaped (NKI "
                 "reshape views an HBM tensor)", PATHP(b), fld(field), t->name);
        return enc_ap_none();
    }
    int64_t n = 1, m = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    if (ndim < 1 || ndim > TIR_MAX_DIMS) {
        enc_fail(b, "%s%sfield '%s': reshape to %d dimensions (1..%d)", PATHP(b), fld(field), ndim,
                 TIR_MAX_DIMS);
        return enc_ap_none();
    }
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 1 || __builtin_mul_overflow(m, shape[d], &m)) {
            enc_fail(b, "%s%sfield '%s': reshape dimension %d is %lld", PATHP(b), fld(field), d,
                     (long long)shape[d]);
            return enc_ap_none();
        }
    }
    if (m != n) {
        enc_fail(b, "%s%sfield '%s': reshape of '%s' (%lld elements) to %lld elements",
                 PATHP(b), fld(field), t->name, (long long)n, (long long)m);
        return enc_ap_none();
    }
    tir_ap_t a;
    ap_over(b, tensor, ndim, shape, nslices, s, field, &a);
    return a;
}

tir_ap_t enc_ap_full(enc_builder_t *b, int tensor)
{
    return enc_ap(b, tensor, 0, NULL, NULL);
}

tir_ap_t enc_ap_raw(enc_builder_t *b, int tensor, int64_t offset, int ndim,
                    const int64_t pairs[][2], const char *field)
{
    return enc_ap_raw_view(b, tensor, 0, offset, ndim, pairs, field);
}

tir_ap_t enc_ap_raw_view(enc_builder_t *b, int tensor, unsigned view, int64_t offset, int ndim,
                         const int64_t pairs[][2], const char *field)
{
    tir_ap_t a = enc_ap_none();
    if (!tensor_ok(b, tensor, field))
        return a;
    tir_tensor_t vt;
    char vname[TIR_NAME_LEN + 32];
    const tir_tensor_t *t = &b->k->tensors[tensor];
    if (view) {   /* a dtype view: the pattern counts elements of that dtype */
        int vnd;
        int64_t vsh[TIR_MAX_DIMS];
        if (!tir_view_shape(t, view - 1u, &vnd, vsh)) {
            enc_fail(b, "%s%sfield '%s': '%s' (%s) viewed as %s: %s bytes are not a multiple of "
                     "its %u-byte elements", PATHP(b), fld(field), t->name,
                     isa_dtype_numpy_name(t->dtype), isa_dtype_numpy_name(view - 1u),
                     is_tile(t->kind) ? "a partition's" : "its",
                     isa_dtype_size(view - 1u));
            return a;
        }
        a.view = (uint8_t)view;
        t = tir_ap_tensor(t, &a, &vt);
        snprintf(vname, sizeof vname, "%s' viewed as '%s", t->name, isa_dtype_numpy_name(view - 1u));
        vt.name = vname;   /* the messages below: "'t' viewed as 'uint8'" */
    }
    if (ndim < 1 || ndim > TIR_MAX_DIMS) {
        enc_fail(b, "%s%sfield '%s': access pattern has %d [step, count] pairs (1..%d)", PATHP(b), fld(field),
                 ndim, TIR_MAX_DIMS);
        return a;
    }
    int64_t total = tensor_elems(t);
    if (offset < 0 || offset >= total) {
        enc_fail(b, "%s%sfield '%s': offset %lld outside '%s' (%lld elements)", PATHP(b),
                 fld(field), (long long)offset, t->name, (long long)total);
        return enc_ap_none();
    }
    int64_t lo = offset, hi = offset;
    for (int d = 0; d < ndim; d++) {
        int64_t st = pairs[d][0], c = pairs[d][1];
        if (c < 1 || c > ((int64_t)1 << 32) || st < -((int64_t)1 << 40) || st > ((int64_t)1 << 40)) {
            enc_fail(b, "%s%sfield '%s': access pattern pair %d [%lld, %lld]: count must be >= 1 "
                     "(at most 2^32) and |step| <= 2^40", PATHP(b), fld(field), d, (long long)st, (long long)c);
            return enc_ap_none();
        }
        int64_t span;
        if (__builtin_mul_overflow(st, c - 1, &span) || (span > 0 && __builtin_add_overflow(hi, span, &hi)) ||
            (span < 0 && __builtin_add_overflow(lo, span, &lo))) {
            enc_fail(b, "%s%sfield '%s': access pattern overflows", PATHP(b), fld(field));
            return enc_ap_none();
        }
        a.step[d] = st;
        a.count[d] = c;
    }
    if (lo < 0 || hi >= total) {
        enc_fail(b, "%s%sfield '%s': access pattern reaches elements %lld..%lld of '%s' which has "
                 "%lld elements", PATHP(b), fld(field), (long long)lo, (long long)hi, t->name,
                 (long long)total);
        return enc_ap_none();
    }
    if (is_tile(t->kind)) {
        int64_t row = total / t->shape[0];
        if (a.step[0] != row && a.count[0] > 1) {
            enc_fail(b, "%s%sfield '%s': on tile '%s' the first access pattern pair is the "
                     "partition dim: its step must be the row size %lld (got %lld)", PATHP(b), fld(field),
                     t->name, (long long)row, (long long)a.step[0]);
            return enc_ap_none();
        }
        if (a.count[0] > 1)
            a.step[0] = row;
        else
            a.step[0] = row;
        int64_t p0 = offset / row;
        if (p0 + a.count[0] > t->shape[0]) {
            enc_fail(b, "%s%sfield '%s': access pattern covers partitions %lld..%lld of tile '%s' "
                     "(%lld)", PATHP(b), fld(field), (long long)p0, (long long)(p0 + a.count[0] - 1),
                     t->name, (long long)t->shape[0]);
            return enc_ap_none();
        }
        if (ndim - 1 > ISA_MAX_FREE_DIMS) {
            enc_fail(b, "%s%sfield '%s': %d free dims (at most %d)", PATHP(b), fld(field), ndim - 1,
                     ISA_MAX_FREE_DIMS);
            return enc_ap_none();
        }
    }
    a.tensor = tensor;
    a.offset = offset;
    a.ndim = (int16_t)ndim;
    return a;
}

/* ---- the one append point ---- */

/* op->path: b->path interned in the kernel.  A statement executed once per
 * loop iteration emits the same path every time: the caller's slot keeps
 * the interned copy, checked by one comparison instead of hashing. */
static const char *op_path(enc_builder_t *b, char path[TIR_PATH_LEN])
{
    const char **slot = b->path_slot;
    if (slot && *slot && !strcmp(*slot, b->path))
        return *slot;   /* a path shorter than TIR_PATH_LEN: copy_path kept it whole */
    size_t len = slot ? strlen(b->path) : 0;
    if (len && len < TIR_PATH_LEN) {   /* a new slot's: a copy (slot_copy) */
        const char *p = slot_copy(b, len);
        if (p)
            *slot = p;
        else
            memcpy(path, b->path, len + 1);   /* for the message */
        return p;
    }
    if (b->path[0])
        copy_path(path, b->path);
    else
        snprintf(path, TIR_PATH_LEN, "op[%d]", b->k->nops);
    const char *p = tir_intern(b->k, path);
    if (slot && p && b->path[0])
        *slot = p;
    return p;
}

/* "<op>_<index>" for op index v into nm, its length returned: what
 * su_join_int(nm, TIR_NAME_LEN, tir_op_name(kind), -1, '_', v, 0) writes,
 * the index's digits those of the last name bumped by one where it was the
 * previous index (ops are emitted one after another), else formatted. */
static size_t gen_name(enc_builder_t *b, tir_opkind_t kind, int v, char nm[TIR_NAME_LEN])
{
    if (!(b->op_num_len && v == b->op_num_of + 1 && bump_decimal(b->op_num, b->op_num_len)))
        b->op_num_len = (int)su_long(b->op_num, v);
    b->op_num_of = v;
    const char *kn = tir_op_name(kind);
    size_t kl = strlen(kn), len = kl + 1 + (size_t)b->op_num_len;
    if (len >= TIR_NAME_LEN)   /* no op name is that long: cut as su_join_int cuts */
        return su_join_int(nm, TIR_NAME_LEN, kn, -1, '_', v, 0);
    tpb_copy_short(nm, kn, kl);
    nm[kl] = '_';
    tpb_copy_short(nm + kl + 1, b->op_num, (size_t)b->op_num_len);
    nm[len] = 0;
    return len;
}

/* -1 (the error recorded) when operand a of op names no tensor or a tile
 * whose scope ended; most operands are absent (one comparison each). */
static inline int in_scope(enc_builder_t *b, const tir_op_t *op, const tir_ap_t *a, int slot)
{
    if (a == &tir_ap_none)
        return 0;
    int t = a->tensor;
    if (t < -1 || t >= b->k->ntensors)
        return enc_fail(b, "%s (%s): field '%s': no such tensor (id %d)", op->path,
                        tir_op_name(op->kind), enc_operand_name(op->kind, slot), t);
    if (t >= 0 && t < b->cap_tensor_info && b->tinfo[t].entry1 < 0)   /* retired */
        return enc_fail(b, "%s (%s): field '%s': tile '%s' is used out of its scope "
                        "(declared at %s)", op->path, tir_op_name(op->kind),
                        enc_operand_name(op->kind, slot), b->k->tensors[t].name,
                        b->k->tensors[t].path);
    return 0;
}

int enc_emit(enc_builder_t *b, tir_op_t *op)
{
    if (b->failed)
        return -1;
    if (!op)
        return enc_fail(b, "%s: no op given", b->path[0] ? b->path : "op");
    if (b->k->nops >= b->max_ops)
        return enc_fail(b, "%s: the kernel unrolls to more than %lld ops (runaway loop?)",
                        b->path[0] ? b->path : "op", (long long)b->max_ops);
    char path[TIR_PATH_LEN];
    if (!(op->path = op_path(b, path)))
        return enc_fail(b, "%s: out of memory", path);
    /* a user name (the op's own, else the pending NKI name=): interned in
     * the kernel (loops repeat it; the caller's string need not outlive
     * the op); otherwise "<op>_<index>", unique: an exact-length copy */
    const char *user = op->name && op->name[0] ? op->name : b->next_name;
    char nm[TIR_NAME_LEN];   /* cut to TIR_NAME_LEN - 1 bytes, as the array held it */
    if (user[0]) {
        su_copy(nm, sizeof nm, user);
        op->name = tir_intern(b->k, nm);
    } else {
        size_t len = gen_name(b, op->kind, b->k->nops, nm);
        op->name = tir_name_n(b->k, nm, len < sizeof nm ? len : sizeof nm - 1);
    }
    b->next_name[0] = 0;
    if (!op->name)
        return enc_fail(b, "%s: out of memory", op->path);
    op->core = enc_field_i8(b, op->kind, b->core, "core");
    if (b->failed)
        return -1;
    /* tiles used after their scope ended (slots: as enc_operand_name's) */
    if (in_scope(b, op, op->dst, -1) || in_scope(b, op, op->dst2, -2) ||
        in_scope(b, op, op->src[0], 0) || in_scope(b, op, op->src[1], 1) ||
        in_scope(b, op, op->src[2], 2) || in_scope(b, op, op->src[3], 3) ||
        in_scope(b, op, op->index, -3) || in_scope(b, op, op->bias, -4) ||
        in_scope(b, op, op->s0.ap, 100) || in_scope(b, op, op->s1.ap, 101))
        return -1;
    /* an op only one engine can run names that engine in both front-ends */
    unsigned legal = enc_legal_engines(op->kind);
    if (op->engine == ISA_ENG_UNASSIGNED && legal && !(legal & (legal - 1)))
        op->engine = __builtin_ctz(legal);
    if (enc_acc_resolve(b, op))
        return -1;
    if (!b->check_memo && (b->check_memo = calloc(1, sizeof *b->check_memo)))
        b->check_memo->owner = b;   /* NULL after out-of-memory: validated without it */
    /* a plain load or store passes cheaper than the statement's last pass
     * (builder_check.c) is compared */
    enc_op_check_t *rec = b->op_check;
    if (enc_direct_dma(op) && enc_validate_quick(b->k, b->target, op, b->check_memo)) {
        ;
    } else if (rec && enc_op_check_hit(b, rec, op)) {
        b->op_check_hits++;
    } else {
        tpb_err_t verr;
        if (enc_validate_op_full(b->k, b->target, op, b->check_memo, &verr))
            return enc_fail(b, "%s", verr.msg);
        if (rec)
            enc_op_check_keep(b, rec, op);
    }
    int id = tir_add_op(b->k, op);
    if (id < 0)
        return enc_fail(b, "out of memory appending op %d", b->k->nops);
    int rc = enc_acc_note(b, op);
    b->acc_dst = NULL;   /* one-shot (enc_set_acc_dst) */
    return rc ? -1 : id;
}
