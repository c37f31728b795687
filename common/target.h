/* target.h - one description per target, used by the compiler and the
 * simulator alike.  Every timing parameter cites its public source in
 * target.c and docs/timing.md (start: ../shared/docs/hardware-facts.md). */
#ifndef TPB_TARGET_H
#define TPB_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#define TPB_DMA_EFF_POINTS 11   /* 32 B .. 32 KiB, powers of two */

typedef struct {
    const char *name;            /* "trn1", "trn2", "trn3" */
    const char *description;

    /* memories */
    unsigned partitions;         /* 128 */
    uint32_t sbuf_partition_bytes;   /* 192 KiB trn1-like, 224 KiB trn2-like */
    uint32_t psum_partition_bytes;   /* 16 KiB */
    unsigned psum_banks;             /* 8 banks of 2 KiB */
    uint64_t hbm_bytes;              /* simulated HBM capacity */
    unsigned max_cores;              /* physical cores the simulator accepts */
    unsigned lnc_default;            /* 1 on trn1-like, 2 on trn2-like */

    /* DMA */
    unsigned dma_engines;            /* per core: 16 */
    unsigned dma_queues;             /* queue ids per core */
    unsigned dma_max_strides;        /* neuron_max_strides: strided dims one descriptor side can express */
    unsigned dma_max_descriptors;    /* descriptors one DMA op may expand to */
    unsigned dma_desc_dims;          /* joint dims one descriptor holds: 3 = PseudoDmaDirect3d, 2 = 2-D only */
    double dma_bytes_per_ns_per_engine; /* 17 (v2) / 23 (v3) B/ns */
    double dma_fixed_latency_ns;     /* ~1300 ns descriptor/sync/semaphore-to-start */
    /* hardware DMA transpose (2-/4-byte elements): permille of the DMA
     * bandwidth with the source in HBM / on chip; 0 = no hardware
     * transpose (the DMA moves each element on its own) */
    unsigned dma_transpose_hbm_permille;
    unsigned dma_transpose_sbuf_permille;
    unsigned dma_partitions_per_engine; /* 8: each engine covers 8 partitions */
    bool dge_on_vector_indirect_dma; /* enable_dge_on_vector_indirect_dma */
    bool dge_on_dst_reduce;          /* enable_dge_on_dst_reduce */
    /* hardware DGE (descriptor generation engine): instances per core and
     * the cost of one DGE DMA instruction on an instance; 0 instances = no
     * HW-DGE timing (the DMA's fixed latency only) */
    unsigned dge_hw_instances;
    double dge_hw_ns_per_dma;
    unsigned dma_queue_depth;        /* transfers in flight per queue (latency overlap) */
    double hbm_bytes_per_ns_per_core;   /* chip HBM bandwidth / cores per chip */
    /* DMA efficiency per contiguous row: permille of the engine peak for
     * rows of 32, 64, ..., 32768 bytes (DMA overview throughput figure) */
    const uint16_t *dma_row_eff_permille;   /* [TPB_DMA_EFF_POINTS] */
    /* compiler: rotating buffers per loop-declared tile (upper bound) */
    unsigned sbuf_max_buffers, psum_max_buffers;

    /* clocks (GHz) */
    double clk_pe, clk_act, clk_pool, clk_dve, clk_sp;
    double clk_ref;                  /* reference clock in which `cycles` are reported */

    /* compute cost parameters (engine cycles) */
    unsigned pe_mm_init_latency;     /* MM_INIT_LATENCY = 64 */
    unsigned pe_fp32_factor;         /* fp32 matmul costs 4x */
    unsigned pe_ls_speedup;          /* fast LoadStationary: 4x */
    bool pe_has_32_tiles;            /* v3+: 32x32 PE tiles */
    bool pe_double_row;              /* v3: perf_mode double_row */
    /* nc_matmul takes OCP float8_e4m3fn (NKI: NeuronCore-v4).  trn2 says
     * yes: it also runs the v4 forms tpbsim models (MX); trn1 (v2) no */
    bool pe_ocp_fp8;
    /* NKI nc_matmul from NeuronCore-v4: dst float32 or bfloat16 and a
     * moving free size up to the whole PSUM (4096 float32 / 8192 bfloat16
     * columns; v2/v3: float32 and 512), lowered as one Matmul per <= 512
     * columns inside one PSUM bank (encoder/lower_matmul.c).  nc_matmul_mx
     * (a v4 instruction) takes these limits on every target */
    bool pe_v4_matmul;
    /* NKI nc_matmul is_transpose: the PE's transpose mode from
     * NeuronCore-v3; on v2 the flag only tags the instruction for the
     * profiler, so the matmul is a plain one (stationary.T @ moving) */
    bool pe_transpose_mode;
    /* NKI activation: bias a compile-time scalar (NeuronCore-v3 on; v2
     * takes only a [P, 1] vector) -- the ACT instruction's immediate bias */
    bool act_imm_bias;
    /* NKI tensor_scalar on the Scalar engine: "on trn2 only" op0=multiply
     * with op1=add, op0=multiply alone, op0=add alone (the Activation's
     * scale and bias); other targets also run the other arithmetic ops with
     * immediates there (a TensorScalar on ACT) */
    bool act_ts_affine_only;
    /* v2: DVE and GpSimd cannot use SBUF at the same time, the compiler
     * serialises them (ARCH2; v3 lifts it, ARCH3): the engine balancing
     * (encoder/sched_engine.c) then gains nothing from moving DVE work
     * to Pool and does not */
    bool dve_pool_share_sbuf;
    /* v2: nor DVE and Activation PSUM (ARCH2; lifted on v3 except within
     * one bank, ARCH3): the simulator makes an instruction that needs a
     * port the other engine holds wait for it (sim/port.c) */
    bool dve_act_share_psum;
    /* v3: DVE and GpSimd access SBUF in parallel, but DVE's perf mode
     * uses a bus shared with GpSimd, which the hardware arbitrates; DVE
     * and Activation access PSUM in parallel unless on the same bank
     * (ARCH3; sim/port.c) */
    bool dve_perf_pool_bus;
    bool dve_act_psum_banks;
    unsigned min_ii;                 /* MIN_II ~ 64 cycles floor for DVE/ACT */
    unsigned act_static_overhead;    /* ACT fixed overhead per instruction */
    unsigned dve_static_overhead;
    unsigned pool_static_overhead;   /* GpSimd ~150 cycles startup */
    unsigned dve_perf_mode_factor;   /* v3: 2x/4x perf mode for bf16/fp16 (1 = off) */
    /* v4: ScalarE runs 256 bf16/fp16/fp8 elements per cycle against 128
     * for other dtypes (ARCH4): Activation work / this factor (1 = off) */
    unsigned act_perf_mode_factor;
    bool perf_mode_fp8;              /* v4: the perf modes also take fp8 (ARCH4) */
    unsigned seq_issue_cycles;       /* sequencer cost of control / descriptor bundles */
    unsigned sem_latency_cycles;     /* semaphore update -> visible to waiter */
} tpb_target_t;

/* The clock (GHz) of engine `engine` (an isa_engine_t: PE, Activation,
 * Pool, DVE; any other, SP's sequencer clock). */
double tpb_target_engine_ghz(const tpb_target_t *t, int engine);
/* Look up by name ("trn1", "trn2", "trn3"); NULL if unknown. */
const tpb_target_t *tpb_target_get(const char *name);
const tpb_target_t *tpb_target_default(void);      /* trn2 */
/* Comma-separated list of known names, for --help and errors. */
const char *tpb_target_names(void);
/* DMA efficiency (permille of the engine peak) of a contiguous run of
 * `run` bytes (dma_row_eff_permille, linear between its points; runs under
 * 32 B read the 32 B point). */
unsigned tpb_dma_row_eff_permille(const tpb_target_t *t, uint64_t run);

#endif
