/* dma_timing_ref.h - the DMA timing formula of docs/timing.md written out
 * independently of sim/dma.c, shared by the simulator DMA tests. */
#ifndef TPB_TEST_DMA_TIMING_REF_H
#define TPB_TEST_DMA_TIMING_REF_H

#include <math.h>
#include <stdint.h>

#include "target.h"

static inline const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* Row efficiency per docs/timing.md, written out independently: the DMA
 * overview figure's points at 32, 64, ..., 32768 bytes, linear between. */
static inline double row_eff(double run)
{
    static const double pts[11] = { .014, .026, .050, .103, .209, .424, .813, .966, .983, .990, 1.0 };
    if (run >= 32768)
        return 1.0;
    int k = (int)floor(log2(run / 32.0) + 1e-12);
    double lo = 32.0 * pow(2.0, k);
    return floor((pts[k] + (pts[k + 1] - pts[k]) * (run - lo) / lo) * 1000.0 + 1e-9) / 1000.0;
}

/* Data time in ps of `bytes` in rows of `run` bytes on one trn2 engine */
static inline uint64_t data_ps(double bytes, double run, double extra)
{
    double ns = bytes / (trn2()->dma_bytes_per_ns_per_engine * row_eff(run) * extra);
    return (uint64_t)ceil(ns * 1000.0 - 1e-6);
}

/* DMA duration in ps: fixed latency + the busiest engine's data time */
static inline uint64_t dma_ps(uint64_t busiest_engine_bytes, double run)
{
    return (uint64_t)(trn2()->dma_fixed_latency_ns * 1000.0) +
           (busiest_engine_bytes ? data_ps((double)busiest_engine_bytes, run, 1.0) : 0);
}

static inline uint64_t ref_cycles_ceil(uint64_t ps) { return (uint64_t)ceil(ps * trn2()->clk_ref / 1000.0 - 1e-6); }

#endif
