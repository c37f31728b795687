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
 * observable byte is what the up-front fill gave.  Cells are 4 KiB, or
 * wider so that a partition has at most 64 (one mask word per partition).
 * docs/performance.md. */
#ifndef TPB_SIM_LAZY_H
#define TPB_SIM_LAZY_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_LAZY_CHUNK 4096u  /* smallest cell width; wider when a partition has > 64 */
#define SIM_LAZY_PARTS 128u

typedef struct {
    uint8_t *mem;          /* partition p at mem + p * pb */
    uint32_t pb;
    unsigned parts;        /* partitions in the image (at most SIM_LAZY_PARTS) */
    unsigned shift;        /* cell width 1 << shift bytes: at most 64 cells per partition */
    uint32_t nchunks;      /* cells per partition: ceil(pb >> shift) */
    uint64_t left;         /* cells not filled yet; 0: nothing to do */
    uint64_t full;         /* bit c: cell c filled in every partition */
    uint64_t done[SIM_LAZY_PARTS]; /* [p] bit c: cell (p, c) filled */
    uint32_t cov[SIM_LAZY_PARTS][64]; /* cell (p, c) not filled yet: its first cov
                                         bytes were written whole (sim_lazy_cover),
                                         its fill starts after them */
} sim_lazy_t;

/* mem of parts (<= 128) partitions x pb bytes, nothing filled.  An image
 * that is never lazily filled (--timing-only) stays zeroed with left = 0. */
void sim_lazy_init(sim_lazy_t *z, uint8_t *mem, unsigned parts, uint32_t pb);

void sim_lazy_fill(sim_lazy_t *z, unsigned p0, unsigned np, int64_t lo, int64_t hi);

/* Make partitions [p0, p0 + np) x bytes [lo, hi) of each hold their
 * sentinel unless already used (ranges are clamped to the image).  Inline
 * part: the usual case (every cell already filled) in a few instructions,
 * as it runs for every operand of every instruction. */
static inline void sim_lazy_touch(sim_lazy_t *z, unsigned p0, unsigned np, int64_t lo, int64_t hi)
{
    if (!z || !z->left)
        return;
    if (lo >= 0 && hi > lo && hi <= (int64_t)z->pb) {
        uint64_t want = (~0ull >> (63 - ((uint64_t)(hi - 1) >> z->shift))) &
                        (~0ull << ((uint64_t)lo >> z->shift));
        if ((z->full & want) == want || (np == 1 && p0 < z->parts && (z->done[p0] & want) == want))
            return;
    }
    sim_lazy_fill(z, p0, np, lo, hi);
}

/* Partition p bytes [lo, hi) are about to be written completely (a DMA
 * row copy, before any other access).  A cell not filled yet whose written
 * prefix the range extends keeps the longer prefix and is not filled for
 * it; a cell whose prefix reaches its end counts as filled without ever
 * being filled (the writes replaced every byte).  A cell the range reaches
 * past a gap is filled as by sim_lazy_touch.  So rows written one after
 * another into a fresh cell (two 2 KiB rows of a 4 KiB cell) skip the
 * fill, and every byte not written still reads as the sentinel. */
void sim_lazy_cover(sim_lazy_t *z, unsigned p, int64_t lo, int64_t hi);

/* sim_lazy_cover(z, p0 + j * q, lo, hi) for j = 0 .. n - 1 in that order
 * (the rows of a DMA plane that step by whole partitions, each at the same
 * bytes): a range every partition already has filled returns at once, a
 * partition that has it filled is skipped; the rest go through
 * sim_lazy_cover, so the cells end exactly as after the row loop.
 * Partitions outside [0, parts) are skipped as sim_lazy_cover does. */
void sim_lazy_cover_rows(sim_lazy_t *z, int64_t p0, int64_t q, uint32_t n, int64_t lo, int64_t hi);

/* The same for a 2-D DMA pattern in the linear on-chip address space
 * (partition * pitch + byte): base, steps in bytes, counts in elements of
 * esize bytes. */
void sim_lazy_touch_dap(sim_lazy_t *z, int64_t base, const int32_t step[2],
                        const uint32_t count[2], unsigned esize, int64_t pitch);

#endif
