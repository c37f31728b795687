/* sched_conflict.c - overlap tests and their cache per pair of access
 * sets (sched_conflict.h). */
#include "sched_conflict.h"

#include <stdlib.h>
#include <string.h>

#include "sched_pix.h"

/* The smallest power of 2 >= want, within [16, max]. */
static uint32_t table_slots(size_t want, uint32_t max)
{
    uint32_t n = 16;
    while (n < max && n < want)
        n *= 2;
    return n;
}

/* Only the keys of the two tables are cleared: a slot's other fields are
 * read only under a key written with them, so the pages of set_hash,
 * set_inst and pair_hit fault in only where sets land.  The answer table
 * gets 8 slots per instruction (pairs outnumber sets). */
sconf_t *sconf_new(int ninsts)
{
    size_t n = ninsts > 0 ? (size_t)ninsts : 1;
    uint32_t ns = table_slots(2 * n, SCONF_SETS), np = table_slots(8 * n, SCONF_PAIRS);
    /* the 8-byte arrays first: every array stays aligned */
    size_t bytes = sizeof(sconf_t) + (size_t)ns * (sizeof(uint64_t) + sizeof(int) + sizeof(uint32_t)) +
                   (size_t)np * (sizeof(uint64_t) + sizeof(bool));
    sconf_t *c = malloc(bytes);
    if (!c)
        return NULL;
    c->set_hash = (uint64_t *)(c + 1);
    c->pair = c->set_hash + ns;
    c->set_inst = (int *)(c->pair + np);
    c->set_id = (uint32_t *)(c->set_inst + ns);
    c->pair_hit = (bool *)(c->set_id + ns);
    c->set_mask = ns - 1;
    c->pair_mask = np - 1;
    sconf_reset(c);
    c->tests = c->off_until = 0;
    c->asked = c->answered = 0;
    c->from_table = 0;
    return c;
}

void sconf_reset(sconf_t *c)
{
    memset(c->set_id, 0, (size_t)(c->set_mask + 1) * sizeof *c->set_id);
    memset(c->pair, 0, (size_t)(c->pair_mask + 1) * sizeof *c->pair);
    c->next_id = 0;
}

uint32_t sconf_id(sconf_t *c, const bir_inst_t *insts, int i)
{
    const bir_inst_t *in = &insts[i];
    uint64_t h = (uint64_t)in->nacc;
    for (int k = 0; k < in->nacc; k++) {   /* the 16 bytes of an access as two words */
        uint64_t wd[2];
        memcpy(wd, &in->acc[k], sizeof wd);
        h = (h ^ wd[0]) * 0x9e3779b97f4a7c15ull;
        h = (h ^ wd[1]) * 0xff51afd7ed558ccdull;
    }
    h ^= h >> 32;
    size_t slot = (size_t)(h >> 20) & c->set_mask;
    if (c->set_id[slot] && c->set_hash[slot] == h &&
        pix_same_accesses(in, &insts[c->set_inst[slot]]))
        return c->set_id[slot];
    if (c->next_id >= SCONF_MAX_ID)
        return 0;   /* no more ids: tested the long way */
    c->set_hash[slot] = h;
    c->set_inst[slot] = i;
    c->set_id[slot] = ++c->next_id;
    return c->set_id[slot];
}

void sconf_load(sconf_t *c, accs_t *x, const bir_inst_t *insts, int i)
{
    x->loaded = true;
    x->plain = false;
    x->in = &insts[i];
    x->id = c->tests + 1 >= c->off_until ? sconf_id(c, insts, i) : 0;
}

static void unpack(accs_t *x)
{
    const bir_inst_t *in = x->in;
    x->n = in->nacc < BIR_MAX_ACCESS ? in->nacc : BIR_MAX_ACCESS;
    for (int k = 0; k < x->n; k++) {
        const bir_access_t *y = &in->acc[k];
        x->a[k].lo = y->lo, x->a[k].hi = y->hi;
        x->a[k].space = (unsigned)y->space, x->a[k].p0 = (unsigned)y->p0;
        x->a[k].p1 = (unsigned)y->p1, x->a[k].write = y->write != 0;
    }
    x->plain = true;
}

bool sconf_overlap(accs_t *x, const bir_inst_t *b)
{
    if (!x->plain)
        unpack(x);
    for (int j = 0; j < b->nacc; j++) {
        const bir_access_t *y = &b->acc[j];
        unsigned space = (unsigned)y->space, p0 = (unsigned)y->p0, p1 = (unsigned)y->p1;
        bool wr = y->write != 0;
        for (int i = 0; i < x->n; i++) {
            const acc_plain_t *a = &x->a[i];
            /* the 48-bit byte bounds are read only past the cheap tests */
            if ((a->write || wr) && a->space == space && a->p1 > p0 && p1 > a->p0 &&
                a->lo < (uint64_t)y->hi && (uint64_t)y->lo < a->hi)
                return true;
        }
    }
    return false;
}

bool sconf_test_slow(sconf_t *c, accs_t *x, const bir_inst_t *b, size_t slot, uint64_t key)
{
    bool hit = sconf_overlap(x, b);
    c->pair[slot] = key;
    c->pair_hit[slot] = hit;
    return hit;
}

void sconf_window_end(sconf_t *c)
{
    if (c->answered < SCONF_WINDOW / 4)
        c->off_until = c->tests + SCONF_OFF;
    c->asked = c->answered = 0;
}
