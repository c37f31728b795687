/* lazy.h - the 0xFF sentinel of SBUF and PSUM, written on first use.
 *
 * A fresh SBUF/PSUM image is all 0xFF (NaN in every float dtype; see
 * docs/simulator.md).  Filling 24-28 MiB per core up front dominated short
 * runs (the kernel zeroes every page, then the fill writes it again), so
 * the image is cut into cells of one partition x SIM_LAZY_CHUNK bytes and a
 * cell is filled the first time any access may touch it: operand
 * resolution (tap.c) and every DMA descriptor side or index tap (dma.c)
 * call sim_lazy_touch with a range that covers everything they read or
 * write, before they do.  Bytes never touched are never read, so every
 * observable byte is what the up-front fill gave.  docs/performance.md. */
#ifndef TPB_SIM_LAZY_H
#define TPB_SIM_LAZY_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_LAZY_CHUNK 4096u
#define SIM_LAZY_PARTS 128u

typedef struct {
    uint8_t *mem;          /* partition p at mem + p * pb */
    uint32_t pb;
    unsigned parts;        /* partitions in the image (at most SIM_LAZY_PARTS) */
    uint32_t nchunks;      /* ceil(pb / SIM_LAZY_CHUNK) */
    uint64_t left;         /* cells not filled yet; 0: nothing to do */
    uint64_t (*done)[2];   /* [nchunks]: bit p = cell (p, chunk) filled */
} sim_lazy_t;

/* mem of parts (<= 128) partitions x pb bytes, nothing filled; false when
 * out of memory.  An image that is never lazily filled (--timing-only) is kept
 * zeroed with z->left = 0. */
bool sim_lazy_init(sim_lazy_t *z, uint8_t *mem, unsigned parts, uint32_t pb);
void sim_lazy_free(sim_lazy_t *z);

void sim_lazy_fill(sim_lazy_t *z, unsigned p0, unsigned np, int64_t lo, int64_t hi);

/* Make partitions [p0, p0 + np) x bytes [lo, hi) of each hold their
 * sentinel unless already used (ranges are clamped to the image). */
static inline void sim_lazy_touch(sim_lazy_t *z, unsigned p0, unsigned np, int64_t lo, int64_t hi)
{
    if (z && z->left)
        sim_lazy_fill(z, p0, np, lo, hi);
}

/* The same for a 2-D DMA pattern in the linear on-chip address space
 * (partition * pitch + byte): base, steps in bytes, counts in elements of
 * esize bytes. */
void sim_lazy_touch_dap(sim_lazy_t *z, int64_t base, const int32_t step[2],
                        const uint32_t count[2], unsigned esize, int64_t pitch);

#endif
