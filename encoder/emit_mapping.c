/* emit_mapping.c - assertAsmMappingsCorrect, the Generator's check after
 * its walk that every debug entry (pc -> instruction) names the bundle
 * written at that pc: read from the streams' opcode columns (the header
 * byte of every bundle as it went to the file, by its file position), or
 * where a stream has none, from the file read back. */
#include "backend.h"

#include <errno.h>
#include <string.h>

#include "prefetch.h"

/* A stream read front to back in blocks of bundles (the entries' pcs
 * rise): bundles [first, first + n) are in buf; or, with col, its opcode
 * column (ncol bundles). */
#define READBACK_BUNDLES 256
typedef struct {
    FILE *f;
    const uint8_t *col;
    long ncol;
    long first, n;
    uint8_t buf[READBACK_BUNDLES][ISA_BUNDLE_BYTES];
} readback_t;

/* The opcode byte of bundle pc (not below the block held); false when the
 * stream ends first. */
static bool read_bundle_l2(readback_t *r, long pc, uint8_t *byte)
{
    if (r->col) {
        if (pc < 0 || pc >= r->ncol)
            return false;
        *byte = r->col[pc];
        return true;
    }
    while (pc >= r->first + r->n) {
        r->first += r->n;
        r->n = (long)fread(r->buf, ISA_BUNDLE_BYTES, READBACK_BUNDLES, r->f);
        if (r->n <= 0)
            return false;
    }
    if (pc < r->first)
        return false;
    *byte = r->buf[pc - r->first][0];
    return true;
}

#define MAPPING_AHEAD 16

int gen_check_asm_mappings(gen_t *g, tpb_err_t *err)
{
    const bir_block_t *b = &g->m->funcs[0].blocks[0];
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!g->ndbg[e])
            continue;
        if (!g->bin[e] || gen_drain(g, e) || fflush(g->bin[e]) != 0)
            return tpb_errf(err, "assembly mapping: %s has debug entries but no open stream",
                            isa_engine_name((isa_engine_t)e));
        /* the stream's opcode column, else the stream read back from its
         * (still temporary) file */
        readback_t rb;   /* buf (16 KiB) is filled by fread before it is read */
        rb.f = NULL;
        rb.col = g->col[e];
        rb.ncol = g->ncol[e];
        rb.first = rb.n = 0;
        if (!rb.col && !(rb.f = fopen(g->bin_path[e], "rb")))
            return tpb_errf(err, "assembly mapping: %s: cannot read back: %s", g->bin_path[e],
                            strerror(errno));
        /* the entries' pcs rise: read the stream front to back (a seek
         * per entry costs a system call each) */
        int prev = -1, rc = 0;
        for (int i = 0; i < g->ndbg[e]; i++) {
            const gen_debug_t *d = &g->dbg[e][i];
            const bir_inst_t *in = d->inst >= 0 && d->inst < b->ninsts ? &b->insts[d->inst] : NULL;
            /* the records are met in no order a prefetcher follows: ask
             * for one a few entries ahead (prefetch.h) */
            if (i + MAPPING_AHEAD < g->ndbg[e]) {
                int ahead = g->dbg[e][i + MAPPING_AHEAD].inst;
                if (ahead >= 0 && ahead < b->ninsts) {
                    TPB_PREFETCH(&b->insts[ahead].engine);
                    TPB_PREFETCH(&b->insts[ahead].isa);
                }
            }
            uint8_t byte = 0;
            const char *why = NULL;
            if (!in)
                why = "an instruction that does not exist";
            else if (in->engine != e)
                why = "an instruction of another engine";
            else if (d->pc <= prev || d->pc < 0 || (unsigned)d->pc >= g->pcs[e])
                why = "a pc out of order or outside the stream";
            else if (!read_bundle_l2(&rb, d->pc, &byte))
                why = "a bundle that cannot be read back";
            else if (byte != isa_ops[in->isa.op].l2)
                why = "a bundle with another opcode";
            if (why) {
                rc = tpb_errf(err, "assembly mapping: %s pc %d (debug entry %d, instruction %d "
                                   "'%s') maps to %s",
                              isa_engine_name((isa_engine_t)e), d->pc, i, d->inst,
                              in ? in->name : "?", why);
                break;
            }
            prev = d->pc;
        }
        if (rb.f)
            fclose(rb.f);
        if (rc)
            return rc;
    }
    return 0;
}

