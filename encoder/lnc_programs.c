/* lnc_programs.c - the programs the split receives (lnc_split.c): whether
 * they are uniform (every program declares the same tensors and runs the
 * same op kinds: one tensor list serves them all, slot copies of the
 * tiles), or diverge on the program id (Python control flow or a kernel
 * `if` / `for` on pid), and what diverging programs must still share: the
 * HBM tensors, and the same sequence of core barriers, sendrecvs and
 * collectives, so that the cores meet at every exchange.
 * See docs/multicore.md "Launch grids and the front-end". */
#include "lnc.h"
#include "collective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_local(const tir_tensor_t *t)
{
    return t->kind == TIR_T_SBUF || t->kind == TIR_T_PSUM;
}

/* Ops the cores meet at: matched across programs by their order. */
static bool is_exchange(tir_opkind_t k)
{
    return k == TIR_CORE_BARRIER || k == TIR_SENDRECV || enc_is_collective(k);
}

static bool same_tensors(const tir_kernel_t *a, const tir_kernel_t *b)
{
    if (a->ntensors != b->ntensors)
        return false;
    for (int t = 0; t < a->ntensors; t++)
        if (strcmp(a->tensors[t].name, b->tensors[t].name) ||
            a->tensors[t].kind != b->tensors[t].kind)
            return false;
    return true;
}

static bool same_ops(const tir_kernel_t *a, const tir_kernel_t *b)
{
    if (a->nops != b->nops)
        return false;
    for (int o = 0; o < a->nops; o++)
        if (a->ops[o].kind != b->ops[o].kind)
            return false;
    return true;
}

/* The next HBM (non-local) tensor of k from index *t on, or -1. */
static int next_shared(const tir_kernel_t *k, int *t)
{
    while (*t < k->ntensors && is_local(&k->tensors[*t]))
        (*t)++;
    return *t < k->ntensors ? (*t)++ : -1;
}

/* Diverging program p must declare program 0's HBM tensors in its order. */
static int check_shared(const tir_kernel_t *k0, const tir_kernel_t *k, int p, tpb_err_t *err)
{
    int i0 = 0, i = 0;
    for (;;) {
        int a = next_shared(k0, &i0), b = next_shared(k, &i);
        if (a < 0 && b < 0)
            return 0;
        if (a < 0 || b < 0 || strcmp(k0->tensors[a].name, k->tensors[b].name) ||
            k0->tensors[a].kind != k->tensors[b].kind)
            return tpb_errf(err, "kernel '%s': programs 0 and %d declare different HBM tensors "
                                 "('%s' and '%s'): every program must declare the same inputs, "
                                 "outputs, constants and scratch tensors",
                            k0->name, p, a < 0 ? "(none)" : k0->tensors[a].name,
                            b < 0 ? "(none)" : k->tensors[b].name);
    }
}

/* Diverging program p must meet the other cores at the same exchanges. */
static int check_exchanges(const tir_kernel_t *k0, const tir_kernel_t *k, int p, tpb_err_t *err)
{
    int o0 = 0, o = 0, j = 0;
    for (;; j++) {
        while (o0 < k0->nops && !is_exchange(k0->ops[o0].kind))
            o0++;
        while (o < k->nops && !is_exchange(k->ops[o].kind))
            o++;
        if (o0 == k0->nops && o == k->nops)
            return 0;
        if (o0 == k0->nops || o == k->nops || k0->ops[o0].kind != k->ops[o].kind)
            return tpb_errf(err, "kernel '%s': control flow diverges on the program id: "
                                 "exchange %d (core barrier, sendrecv or collective) is %s in "
                                 "program %d but %s in program 0 (every program must run the "
                                 "same exchanges in the same order)",
                            k0->name, j, o == k->nops ? "missing" : tir_op_name(k->ops[o].kind),
                            p, o0 == k0->nops ? "missing" : tir_op_name(k0->ops[o0].kind));
        o0++, o++;
    }
}

int lnc_check_programs(const tir_kernel_t *p, int n, bool *uniform, tpb_err_t *err)
{
    const tir_kernel_t *k0 = &p[0];
    *uniform = true;
    if (k0->num_programs != n)
        return tpb_errf(err, "kernel '%s': %d programs parsed but the grid has %d", k0->name, n,
                        k0->num_programs);
    if (k0->num_cores < 1 || k0->num_cores > LNC_MAX_CORES)
        return tpb_errf(err, "kernel '%s': %d cores (the multi-core link supports 1..%d)",
                        k0->name, k0->num_cores, LNC_MAX_CORES);
    if (k0->nops == 0)
        return tpb_errf(err, "kernel '%s' has no ops", k0->name);
    for (int i = 0; i < n; i++) {
        const tir_kernel_t *k = &p[i];
        if (k->program_id != i || k->num_cores != k0->num_cores)
            return tpb_errf(err, "kernel '%s': program %d was parsed as program %d of %d cores",
                            k0->name, i, k->program_id, k->num_cores);
        if (k->nops == 0)
            return tpb_errf(err, "kernel '%s': program %d has no ops (its control flow on the "
                                 "program id skips every op)", k0->name, i);
        for (int o = 0; o < k->nops; o++)
            if (k->ops[o].core != k->ops[0].core)
                return tpb_errf(err, "kernel '%s': program %d: op %d is on core %d, op 0 on "
                                     "core %d",
                                k0->name, i, o, k->ops[o].core, k->ops[0].core);
        if (k->ops[0].core < 0 || k->ops[0].core >= k0->num_cores)
            return tpb_errf(err, "kernel '%s': program %d is mapped to core %d of %d", k0->name,
                            i, k->ops[0].core, k0->num_cores);
        if (!same_tensors(k0, k) || !same_ops(k0, k))
            *uniform = false;
    }
    for (int i = 1; i < n && !*uniform; i++)
        if (check_shared(k0, &p[i], i, err) || check_exchanges(k0, &p[i], i, err))
            return -1;
    return 0;
}

int lnc_exchange_index(const tir_kernel_t *p, int n, int **out, int *nx, tpb_err_t *err)
{
    int cnt = 0;
    for (int o = 0; o < p[0].nops; o++)
        cnt += p[0].ops[o].kind == TIR_SENDRECV || enc_is_collective(p[0].ops[o].kind);
    *nx = cnt;
    *out = malloc((size_t)(n * cnt + 1) * sizeof **out);
    if (!*out)
        return tpb_errf(err, "out of memory (split)");
    for (int i = 0; i < n; i++) {
        int j = 0;
        for (int o = 0; o < p[i].nops && j < cnt; o++)
            if (p[i].ops[o].kind == TIR_SENDRECV || enc_is_collective(p[i].ops[o].kind))
                (*out)[i * cnt + j++] = o;
    }
    return 0;
}

int lnc_program_maps(const tir_kernel_t *p, int n, tir_kernel_t *out, int **off, int **map,
                     tpb_err_t *err)
{
    size_t total = 0;
    *map = NULL;
    if (!(*off = malloc((size_t)(n + 1) * sizeof **off)))
        return tpb_errf(err, "out of memory (split)");
    for (int i = 0; i < n; i++) {
        (*off)[i] = (int)total;
        total += (size_t)p[i].ntensors;
    }
    if (!(*map = malloc((total + 1) * sizeof **map)))
        return tpb_errf(err, "out of memory (split)");
    const tir_kernel_t *k0 = &p[0];
    int *shared = *map;   /* program 0's map: its HBM tensors in order, then its tiles */
    for (int t = 0; t < k0->ntensors; t++) {
        if (tir_add_tensor(out, &k0->tensors[t]) < 0)
            return tpb_errf(err, "out of memory (split)");
        shared[t] = t;
    }
    for (int i = 1; i < n; i++) {
        int *m = *map + (*off)[i], s0 = 0;
        for (int t = 0; t < p[i].ntensors; t++) {
            const tir_tensor_t *tt = &p[i].tensors[t];
            if (!is_local(tt)) {   /* the same HBM tensor as program 0's (check_shared) */
                m[t] = next_shared(k0, &s0);
                continue;
            }
            tir_tensor_t c = *tt;
            char name[TIR_NAME_LEN];   /* tir_add_tensor copies it */
            snprintf(name, sizeof name, "%.50s@p%d", tt->name, i);
            c.name = name;
            if ((m[t] = tir_add_tensor(out, &c)) < 0)
                return tpb_errf(err, "out of memory (split)");
        }
    }
    return 0;
}
