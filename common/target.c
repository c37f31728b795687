/* target.c - per-target parameter tables.  Sources: ../shared/docs/hardware-facts.md
 * (ARCH2 = trainium_inferentia2_arch, ARCH3 = trainium2_arch, ARCH4 =
 * trainium3_arch, DMA/DMABW = DMA overview and bandwidth guide, COST =
 * per-instruction cost docstrings). */
#include "target.h"

#include <stddef.h>
#include <string.h>

#include "isa.h"

/* DMA throughput against bytes per partition (p = 128), read off the
 * figure of the DMA overview (nki-dma-overview.rst, nki-dma-intro-1.jpg),
 * relative to its 32 KiB point, at 32, 64, ..., 32768 bytes.  The bandwidth
 * guide (DMABW) gives the same shape in words: < 256 B overhead-bound,
 * >= 2 KiB near peak, >= 4 KiB saturated.  Not generation-specific. */
static const uint16_t dma_row_eff[TPB_DMA_EFF_POINTS] = {
    14, 26, 50, 103, 209, 424, 813, 966, 983, 990, 1000,
};

static const tpb_target_t targets[] = {
    {
        .name = "trn1",
        .description = "Trainium1-like NeuronCore-v2",
        .partitions = 128,
        .sbuf_partition_bytes = 192 * 1024,   /* ARCH2: 24 MiB = 128 x 192 KiB */
        .psum_partition_bytes = 16 * 1024,    /* ARCH2: 2 MiB = 128 x 16 KiB */
        .psum_banks = 8,                      /* ARCH2: 8 banks x 2 KiB */
        .hbm_bytes = 1ull << 32,
        .max_cores = 8,
        .lnc_default = 1,
        .dma_engines = 16,                    /* DMA: 16 engines per NC */
        .dma_queues = 64,
        .dma_max_strides = 2,
        .dma_max_descriptors = 4096,
        .dma_desc_dims = 3,                   /* the ISA's PseudoDmaDirect3d (docs/compiler.md) */
        .dma_bytes_per_ns_per_engine = 17.0,  /* DMA/DMABW table: 17 B/ns (v2) */
        .dma_fixed_latency_ns = 1300.0,       /* DMABW: ~1300 ns fixed cost */
        .dma_transpose_hbm_permille = 0,      /* no hardware DMA transpose (ARCH3: a Trn2 feature) */
        .dma_transpose_sbuf_permille = 0,
        .dma_partitions_per_engine = 8,       /* DMA: each engine covers 8 partitions */
        .dge_on_vector_indirect_dma = false,
        .dge_hw_instances = 0,                /* DGE: hardware DGE is a v3 feature */
        .dge_hw_ns_per_dma = 0,
        .dma_queue_depth = 8,                 /* design choice (docs/timing.md) */
        .hbm_bytes_per_ns_per_core = 410.0,   /* ARCH2/TRN1: 820 GB/s per chip, 2 NCs */
        .dma_row_eff_permille = dma_row_eff,  /* DMA overview figure */
        .sbuf_max_buffers = 4,                /* design choice (docs/compiler.md) */
        .psum_max_buffers = 8,                /* ARCH2: 8 PSUM banks */
        .dge_on_dst_reduce = false,
        .clk_pe = 2.8, .clk_act = 1.4, .clk_pool = 1.4, .clk_dve = 1.12, .clk_sp = 1.4, /* ARCH2 */
        .clk_ref = 1.4,
        .pe_mm_init_latency = 64,             /* ARCH2/PERF: MM_INIT_LATENCY */
        .pe_fp32_factor = 4,                  /* ARCH2: fp32 4x */
        .pe_ls_speedup = 4,                   /* PERF: fast LS up to 4x */
        .pe_has_32_tiles = false,             /* COST: v2 cannot use 32x32 */
        .pe_double_row = false,
        .act_imm_bias = false,                /* NKI: a scalar bias from NeuronCore-v3 */
        .dve_pool_share_sbuf = true,          /* ARCH2: v2 serialises DVE and GpSimd on SBUF */
        .dve_act_share_psum = true,           /* ARCH2: ... and DVE and ACT on PSUM */
        .min_ii = 64,                         /* COST: MIN_II ~ 64 */
        .act_static_overhead = 100,           /* ARCH2: ~100 cycles static overhead */
        .dve_static_overhead = 100,
        .pool_static_overhead = 150,          /* COST: GpSimd ~150 + N */
        .dve_perf_mode_factor = 1,
        .act_perf_mode_factor = 1,
        .seq_issue_cycles = 4,
        .sem_latency_cycles = 8,
    },
    {
        .name = "trn2",
        .description = "Trainium2-like NeuronCore-v3",
        .partitions = 128,
        .sbuf_partition_bytes = 224 * 1024,   /* ARCH3: 28 MiB = 128 x 224 KiB */
        .psum_partition_bytes = 16 * 1024,
        .psum_banks = 8,
        .hbm_bytes = 1ull << 32,
        .max_cores = 8,
        .lnc_default = 2,                     /* LNC: trn2 default LNC=2 */
        .dma_engines = 16,
        .dma_queues = 64,
        .dma_max_strides = 2,
        .dma_max_descriptors = 16384,
        .dma_desc_dims = 3,
        .dma_bytes_per_ns_per_engine = 23.0,  /* DMA/DMABW table: 23 B/ns (v3) */
        .dma_fixed_latency_ns = 1300.0,
        .dma_transpose_hbm_permille = 900,    /* ARCH3: DMA transpose HBM->SBUF up to 90% */
        .dma_transpose_sbuf_permille = 500,   /* ARCH3: DMA transpose SBUF->SBUF up to 50% */
        .dma_partitions_per_engine = 8,
        .dge_on_vector_indirect_dma = true,
        .dge_hw_instances = 2,                /* DGE (v3): 2 hardware DGE instances per NC */
        .dge_hw_ns_per_dma = 600.0,           /* DGE (v3): about 600 ns per DGE DMA instruction */
        .dma_queue_depth = 8,
        .hbm_bytes_per_ns_per_core = 362.5,   /* TRN2: 2.9 TB/s per chip, 8 NCs */
        .dma_row_eff_permille = dma_row_eff,
        .sbuf_max_buffers = 4,
        .psum_max_buffers = 8,                /* ARCH3: 8 PSUM banks */
        .dge_on_dst_reduce = true,
        .clk_pe = 2.4, .clk_act = 1.2, .clk_pool = 1.2, .clk_dve = 0.96, .clk_sp = 1.2, /* ARCH3 */
        .clk_ref = 1.2,
        .pe_mm_init_latency = 64,
        .pe_fp32_factor = 4,
        .pe_ls_speedup = 4,
        .pe_has_32_tiles = true,
        .pe_double_row = true,                /* ARCH3: perf_mode=double_row */
        .pe_transpose_mode = true,            /* NKI nc_matmul: is_transpose from NeuronCore-v3 */
        .act_imm_bias = true,                 /* NKI: a scalar bias from NeuronCore-v3 */
        .act_ts_affine_only = true,           /* NKI tensor_scalar: "the Scalar Engine on trn2" */
        .pe_ocp_fp8 = true,
        .min_ii = 64,
        .act_static_overhead = 100,
        .dve_static_overhead = 100,
        .pool_static_overhead = 150,
        .dve_perf_mode_factor = 2,            /* ARCH3: 2x/4x DVE perf mode */
        .dve_perf_pool_bus = true,            /* ARCH3: perf mode shares GpSimd's bus */
        .dve_act_psum_banks = true,           /* ARCH3: DVE/ACT PSUM parallel, not on one bank */
        .act_perf_mode_factor = 1,
        .seq_issue_cycles = 4,
        .sem_latency_cycles = 8,
    },
    {
        /* What hardware-facts gives for v4 differs from trn2 in these
         * fields; the rest (DMA row efficiency, DGE, transposes, cost
         * envelopes) has no v4 figure and keeps the v3 value
         * (docs/timing.md "Targets"). */
        .name = "trn3",
        .description = "Trainium3-like NeuronCore-v4",
        .partitions = 128,
        .sbuf_partition_bytes = 256 * 1024,   /* ARCH4: 32 MiB = 128 x 256 KiB */
        .psum_partition_bytes = 16 * 1024,    /* ARCH4: PSUM as v2/v3 */
        .psum_banks = 8,
        .hbm_bytes = 1ull << 32,
        .max_cores = 8,
        .lnc_default = 2,                     /* LNC: Trn2/Trn3 LNC=2 */
        .dma_engines = 16,                    /* DMA: 16 engines per NC (v4 too) */
        .dma_queues = 64,
        .dma_max_strides = 2,
        .dma_max_descriptors = 16384,
        .dma_desc_dims = 3,
        .dma_bytes_per_ns_per_engine = 33.0,  /* DMA/DMABW table: 33 B/ns (v4) */
        .dma_fixed_latency_ns = 1300.0,
        .dma_transpose_hbm_permille = 900,    /* no v4 figure: ARCH3's */
        .dma_transpose_sbuf_permille = 500,
        .dma_partitions_per_engine = 8,
        .dge_on_vector_indirect_dma = true,
        .dge_hw_instances = 2,                /* no v4 figure: DGE (v3) */
        .dge_hw_ns_per_dma = 600.0,
        .dma_queue_depth = 8,
        .hbm_bytes_per_ns_per_core = 587.5,   /* ARCH4: 4.7 TB/s per chip, 8 NCs */
        .dma_row_eff_permille = dma_row_eff,
        .sbuf_max_buffers = 4,
        .psum_max_buffers = 8,
        .dge_on_dst_reduce = true,
        .clk_pe = 2.4, .clk_act = 1.2, .clk_pool = 1.2, .clk_dve = 1.2, .clk_sp = 1.2, /* ARCH4 */
        .clk_ref = 1.2,
        .pe_mm_init_latency = 64,
        .pe_fp32_factor = 4,
        .pe_ls_speedup = 4,
        .pe_has_32_tiles = true,
        .pe_double_row = true,
        .pe_transpose_mode = true,
        .act_imm_bias = true,
        .pe_ocp_fp8 = true,                   /* NKI: OCP float8_e4m3fn matmul is v4 */
        .pe_v4_matmul = true,                 /* NKI nc_matmul: bf16 dst, moving up to 8x PSUM banks */
        .min_ii = 64,
        .act_static_overhead = 100,
        .dve_static_overhead = 100,
        .pool_static_overhead = 150,
        .dve_perf_mode_factor = 2,            /* ARCH4: 512 bf16/fp16/fp8 else 256, as v3 */
        .dve_perf_pool_bus = true,            /* as v3 (ARCH3; ARCH4 says nothing else) */
        .dve_act_psum_banks = true,
        .act_perf_mode_factor = 2,            /* ARCH4: ScalarE 256 bf16/fp16/fp8 else 128 */
        .perf_mode_fp8 = true,                /* ARCH4: fp8 in both perf modes */
        .seq_issue_cycles = 4,
        .sem_latency_cycles = 8,
    },
};

const tpb_target_t *tpb_target_get(const char *name)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (strcmp(targets[i].name, name) == 0)
            return &targets[i];
    return NULL;
}

const tpb_target_t *tpb_target_default(void) { return &targets[1]; }

const char *tpb_target_names(void) { return "trn1, trn2, trn3"; }

/* DMA efficiency (permille of peak) of a contiguous run of `run` bytes:
 * the table, linear between its points (docs/timing.md "DMA", rule 5). */
unsigned tpb_dma_row_eff_permille(const tpb_target_t *t, uint64_t run)
{
    const uint16_t *e = t->dma_row_eff_permille;
    if (!e)
        return 1000;
    if (run >= (32ull << (TPB_DMA_EFF_POINTS - 1)))
        return e[TPB_DMA_EFF_POINTS - 1];
    if (run < 32)
        return e[0];   /* below the figure: see sim_dma_row_cost */
    /* the segment [32 << k, 32 << (k + 1)) holding run: k = floor(log2(run)) - 5
     * (run >= 32 here, so the count of leading zeros is at most 58) */
    unsigned k = (unsigned)(63 - __builtin_clzll(run)) - 5;
    uint64_t lo = 32ull << k;
    /* linear between the two points around run */
    return (unsigned)(e[k] + (uint64_t)(e[k + 1] - e[k]) * (run - lo) / lo);
}

double tpb_target_engine_ghz(const tpb_target_t *t, int engine)
{
    switch (engine) {
    case ISA_ENG_PE: return t->clk_pe;
    case ISA_ENG_ACT: return t->clk_act;
    case ISA_ENG_POOL: return t->clk_pool;
    case ISA_ENG_DVE: return t->clk_dve;
    default: return t->clk_sp;
    }
}
