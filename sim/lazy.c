/* lazy.c - SBUF/PSUM sentinel cells filled on first use (lazy.h). */
#include "lazy.h"

#include <string.h>

void sim_lazy_init(sim_lazy_t *z, uint8_t *mem, unsigned parts, uint32_t pb)
{
    memset(z, 0, sizeof *z);
    z->mem = mem;
    z->pb = pb;
    z->parts = parts < SIM_LAZY_PARTS ? parts : SIM_LAZY_PARTS;
    z->shift = 12; /* SIM_LAZY_CHUNK */
    while (((uint64_t)pb + (1ull << z->shift) - 1) >> z->shift > 64)
        z->shift++;
    z->nchunks = (uint32_t)(((uint64_t)pb + (1ull << z->shift) - 1) >> z->shift);
    z->left = (uint64_t)z->nchunks * z->parts;
}

static void update_full(sim_lazy_t *z)
{
    uint64_t all = ~0ull;
    for (unsigned p = 0; p < z->parts; p++)
        all &= z->done[p];
    z->full = all;
}

void sim_lazy_fill(sim_lazy_t *z, unsigned p0, unsigned np, int64_t lo, int64_t hi)
{
    if (p0 >= z->parts || np == 0 || hi <= lo || hi <= 0 || lo >= (int64_t)z->pb)
        return;
    if (np > z->parts - p0)
        np = z->parts - p0;
    uint64_t c0 = lo < 0 ? 0 : (uint64_t)lo >> z->shift;
    uint64_t c1 = ((hi > (int64_t)z->pb ? z->pb : (uint64_t)hi) - 1) >> z->shift;
    uint64_t want = (~0ull >> (63 - c1)) & (~0ull << c0);
    uint64_t cw = 1ull << z->shift;
    bool changed = false;
    for (unsigned p = p0; p < p0 + np; p++) {
        uint64_t miss = want & ~z->done[p];
        if (!miss)
            continue;
        z->done[p] |= miss;
        changed = true;
        while (miss) { /* the cells not filled yet */
            uint64_t c = (uint64_t)__builtin_ctzll(miss);
            miss &= miss - 1;
            uint64_t off = c << z->shift, w = z->pb - off < cw ? z->pb - off : cw;
            uint64_t k = z->cov[p][c]; /* bytes already written whole (sim_lazy_cover) */
            memset(z->mem + (size_t)p * z->pb + off + k, 0xFF, w - k);
            z->left--;
        }
    }
    if (changed)
        update_full(z);
}

void sim_lazy_cover(sim_lazy_t *z, unsigned p, int64_t lo, int64_t hi)
{
    if (!z || !z->left || p >= z->parts)
        return;
    if (lo < 0)
        lo = 0;
    if (hi > (int64_t)z->pb)
        hi = z->pb;
    if (hi <= lo)
        return;
    uint64_t c0 = (uint64_t)lo >> z->shift, c1 = (uint64_t)(hi - 1) >> z->shift;
    uint64_t cw = 1ull << z->shift, filled = 0;
    for (uint64_t c = c0; c <= c1; c++) {
        if (z->done[p] >> c & 1)
            continue;
        uint64_t cs = c << z->shift, ce = z->pb - cs < cw ? z->pb : cs + cw;
        uint64_t from = (uint64_t)lo > cs ? (uint64_t)lo - cs : 0;
        uint64_t to = ((uint64_t)hi < ce ? (uint64_t)hi : ce) - cs;
        if (from > z->cov[p][c]) { /* a gap before the write: fill as usual */
            sim_lazy_fill(z, p, 1, (int64_t)cs, (int64_t)ce);
            continue;
        }
        if (to > z->cov[p][c])
            z->cov[p][c] = (uint32_t)to;
        if (z->cov[p][c] == ce - cs) {
            z->done[p] |= 1ull << c;
            z->left--;
            filled++;
        }
    }
    if (filled)
        update_full(z);
}

void sim_lazy_cover_rows(sim_lazy_t *z, int64_t p0, int64_t q, uint32_t n, int64_t lo, int64_t hi)
{
    if (!z || !z->left)
        return;
    int64_t a = lo < 0 ? 0 : lo, b = hi > (int64_t)z->pb ? (int64_t)z->pb : hi;
    if (b <= a)
        return;
    uint64_t want = (~0ull >> (63 - ((uint64_t)(b - 1) >> z->shift))) &
                    (~0ull << ((uint64_t)a >> z->shift));
    if ((z->full & want) == want)
        return;
    for (uint32_t j = 0; j < n && z->left; j++) {
        int64_t p = p0 + (int64_t)j * q;
        if (p < 0 || p >= (int64_t)z->parts || (z->done[p] & want) == want)
            continue;
        sim_lazy_cover(z, (unsigned)p, lo, hi);
    }
}

/* Extremes of base + i0 * s0 + i1 * s1 split into partition and byte: each
 * step is q * pitch + r with |r| <= pitch / 2; when the byte part stays in
 * [0, pitch) for every index (no carry between the two), partitions and
 * bytes are bounded separately; otherwise every byte of the partitions the
 * whole address range spans. */
void sim_lazy_touch_dap(sim_lazy_t *z, int64_t base, const int32_t step[2],
                        const uint32_t count[2], unsigned esize, int64_t pitch)
{
    if (!z || !z->left || !count[0] || !count[1] || base < 0)
        return;
    int64_t pmin = base / pitch, pmax = pmin, bmin = base % pitch, bmax = bmin;
    int64_t amin = base, amax = base;
    for (unsigned d = 0; d < 2; d++) {
        int64_t s = step[d], n = (int64_t)count[d] - 1;
        int64_t q = s / pitch, r = s % pitch;
        if (r > pitch / 2) {
            r -= pitch;
            q++;
        } else if (r < -pitch / 2) {
            r += pitch;
            q--;
        }
        *(q < 0 ? &pmin : &pmax) += q * n;
        *(r < 0 ? &bmin : &bmax) += r * n;
        *(s < 0 ? &amin : &amax) += s * n;
    }
    bmax += esize;
    if (bmin < 0 || bmax > pitch) { /* carries: the whole partitions */
        pmin = amin / pitch;
        pmax = (amax + (int64_t)esize - 1) / pitch;
        bmin = 0;
        bmax = z->pb;
    }
    if (pmin < 0)
        pmin = 0;
    if (pmax >= (int64_t)z->parts)
        pmax = (int64_t)z->parts - 1;
    if (pmax >= pmin)
        sim_lazy_fill(z, (unsigned)pmin, (unsigned)(pmax - pmin + 1), bmin, bmax);
}
