/* lazy.c - SBUF/PSUM sentinel cells filled on first use (lazy.h). */
#include "lazy.h"

#include <stdlib.h>
#include <string.h>

bool sim_lazy_init(sim_lazy_t *z, uint8_t *mem, unsigned parts, uint32_t pb)
{
    z->mem = mem;
    z->pb = pb;
    z->parts = parts < SIM_LAZY_PARTS ? parts : SIM_LAZY_PARTS;
    z->nchunks = (pb + SIM_LAZY_CHUNK - 1) / SIM_LAZY_CHUNK;
    z->left = (uint64_t)z->nchunks * z->parts;
    z->done = calloc(z->nchunks ? z->nchunks : 1, sizeof *z->done);
    return z->done != NULL;
}

void sim_lazy_free(sim_lazy_t *z)
{
    free(z->done);
    z->done = NULL;
    z->left = 0;
}

void sim_lazy_fill(sim_lazy_t *z, unsigned p0, unsigned np, int64_t lo, int64_t hi)
{
    if (p0 >= z->parts || np == 0 || hi <= lo || hi <= 0 || lo >= (int64_t)z->pb)
        return;
    if (np > z->parts - p0)
        np = z->parts - p0;
    uint64_t want[2] = { 0, 0 };
    for (unsigned w = 0; w < 2; w++) { /* bits p0 .. p0 + np - 1 */
        unsigned a = p0 > 64 * w ? p0 - 64 * w : 0, b = p0 + np - 64 * w;
        if (p0 + np <= 64 * w || p0 >= 64 * (w + 1))
            continue;
        b = b > 64 ? 64 : b;
        want[w] = (b - a == 64 ? ~0ull : ((1ull << (b - a)) - 1)) << a;
    }
    uint32_t c0 = lo < 0 ? 0 : (uint32_t)(lo / SIM_LAZY_CHUNK);
    uint32_t c1 = (uint32_t)((hi > (int64_t)z->pb ? z->pb : (uint64_t)hi) - 1) / SIM_LAZY_CHUNK;
    for (uint32_t c = c0; c <= c1; c++) {
        uint32_t off = c * SIM_LAZY_CHUNK;
        size_t len = z->pb - off < SIM_LAZY_CHUNK ? z->pb - off : SIM_LAZY_CHUNK;
        for (unsigned w = 0; w < 2; w++) {
            uint64_t miss = want[w] & ~z->done[c][w];
            z->done[c][w] |= miss;
            while (miss) {
                unsigned p = 64 * w + (unsigned)__builtin_ctzll(miss);
                miss &= miss - 1;
                memset(z->mem + (size_t)p * z->pb + off, 0xFF, len);
                z->left--;
            }
        }
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
