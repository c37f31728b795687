/* lnc_report.c - what bir_linker reports about a linked module, recorded
 * in sgLnk/link.json (library code never prints; docs/multicore.md "Link
 * report"):
 *   "log"         the linker's diagnostic lines (seed 003 run(), step 2):
 *                 "Num Module Definitions <n>", "runModuleDefPasses
 *                 numModules <n>" and one "Module Instance <idx> DefID
 *                 <def>" per dispatcher call.  "DMA Descriptor ReUse
 *                 Enabled" is gated on descriptor reuse, which tpbsim does
 *                 not do, so it never appears; "bir_linker cwd" is left out
 *                 so the artifact does not depend on the working directory.
 *   "mmt_report"  PostLinkMmtReport: per core function, its matmuls, their
 *                 multiply-accumulates and the PE array utilisation they
 *                 ask for: sum(K x M x N) / sum(128 x 128 x N), K = moving
 *                 partitions (array rows), M = output partitions (array
 *                 columns), N = moving free elements -- a compile-time
 *                 figure, next to the simulator's measured PE busy time. */
#include "lnc.h"

#include <stdio.h>
#include <string.h>

#include "cJSON.h"

static void log_line(cJSON *a, const char *fmt, int x, int y)
{
    char buf[96];
    snprintf(buf, sizeof buf, fmt, x, y);
    cJSON_AddItemToArray(a, cJSON_CreateString(buf));
}

struct cJSON *lnc_link_log_json(const lnc_module_t *m)
{
    cJSON *a = cJSON_CreateArray();
    int nmods = 0, ndefs = 0;   /* the modules linked; their definitions */
    for (int f = 0; f < m->nfuncs; f++)
        if (m->funcs[f].core >= 0) {
            ndefs++;
            nmods += m->funcs[f].ninsts > 0 ? m->funcs[f].ninsts : 1;
        }
    if (m->desc_reuse)   /* gated on enableDmaDescReuse */
        cJSON_AddItemToArray(a, cJSON_CreateString("DMA Descriptor ReUse Enabled"));
    log_line(a, "runModuleDefPasses numModules %d", nmods, 0);
    log_line(a, "Num Module Definitions %d", ndefs, 0);
    if (m->nfuncs > 0 && m->funcs[0].nblocks > 0) {
        const lnc_block_t *d = &m->funcs[0].blocks[0];
        for (int i = 0; i < d->n; i++)
            if (d->insts[i].opc == LNC_OPC_CALL && d->insts[i].callee >= 0) {
                const lnc_func_t *def = &m->funcs[d->insts[i].callee];
                log_line(a, "Module Instance %d DefID %d", d->insts[i].call_inst,
                         def->ninsts > 0 ? def->def_id : def->core);
            }
    }
    return a;
}

/* K x M and N of a matmul instruction; false for anything else. */
static bool matmul_shape(const isa_inst_t *in, uint64_t *km, uint64_t *n)
{
    const isa_tap_t *mv, *dst;
    if (in->op == ISA_OP_MATMUL || in->op == ISA_OP_MATMUL_SPARSE)
        mv = &in->f.MM.moving, dst = &in->f.MM.dst;
    else if (in->op == ISA_OP_MATMUL_MX)
        mv = &in->f.MMMX.moving, dst = &in->f.MMMX.dst;
    else
        return false;
    *km = (uint64_t)mv->nparts * dst->nparts;
    *n = isa_tap_free_elems(mv);
    return true;
}

struct cJSON *lnc_post_link_mmt_report(const lnc_module_t *m)
{
    cJSON *a = cJSON_CreateArray();
    for (int f = 0; f < m->nfuncs; f++) {
        const lnc_func_t *fn = &m->funcs[f];
        if (fn->core < 0)
            continue;   /* the dispatcher */
        uint64_t count = 0, macs = 0, peak = 0;
        for (int b = 0; b < fn->nblocks; b++)
            for (int i = 0; i < fn->blocks[b].n; i++) {
                uint64_t km, n;
                if (!matmul_shape(&fn->blocks[b].insts[i].isa, &km, &n))
                    continue;
                count++;
                macs += km * n;
                peak += 128ull * 128ull * n;
            }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "function", fn->name);
        cJSON_AddNumberToObject(o, "NeuronCoreId", fn->core);
        cJSON_AddNumberToObject(o, "instances", fn->ninsts > 0 ? fn->ninsts : 1);
        cJSON_AddNumberToObject(o, "matmuls", (double)count);
        cJSON_AddNumberToObject(o, "macs", (double)macs);
        cJSON_AddNumberToObject(o, "array_utilisation", peak ? (double)macs / (double)peak : 0.0);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}
