/* sim_testlib.h - build small artifact directories in tests with the isa
 * encoder (tensor-map.json + nc<i>/sg0/<Engine>.bin) and run them. */
#ifndef TPB_SIM_TESTLIB_H
#define TPB_SIM_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa.h"
#include "npy.h"
#include "sim.h"
#include "target.h"

#define TB_MAX_CORES 8
#define TB_MAX_TENSORS 16

typedef struct {
    char name[64];
    char kind[16];
    unsigned dtype;
    int ndim;
    int64_t shape[4];
    uint64_t addr, bytes;
} tb_tensor_t;

typedef struct {
    char dir[256];
    unsigned ncores;
    const char *target;
    isa_inst_t *prog[TB_MAX_CORES][5];
    size_t n[TB_MAX_CORES][5];
    tb_tensor_t tensors[TB_MAX_TENSORS];
    unsigned ntensors;
    uint64_t hbm_bytes;      /* 0 = end of the last tensor */
    uint64_t next_addr;
    bool no_tensor_map;
    /* target used by tb_load/tb_run when the options name none: trn2 with
     * 32 KiB SBUF partitions (same timing, less memory to allocate) */
    tpb_target_t tgt;
} tb_t;

void tb_init(tb_t *b, unsigned ncores);
void tb_free(tb_t *b);                      /* removes the directory */
/* engine is the slot in isa_tpb_engines: 0 PE, 1 ACT, 2 POOL, 3 DVE, 4 SP */
enum { TB_PE = 0, TB_ACT = 1, TB_POOL = 2, TB_DVE = 3, TB_SP = 4 };
/* Append; returns the bundle index (pc) of the instruction. */
uint32_t tb_add(tb_t *b, unsigned core, unsigned eng, isa_inst_t in);
uint64_t tb_tensor(tb_t *b, const char *name, const char *kind, unsigned dtype, int ndim,
                   const int64_t *shape);
/* Write the directory (tensor map + streams). Asserts on failure. */
void tb_write(tb_t *b);
/* Overwrite one stream file with raw bytes. */
void tb_write_raw(tb_t *b, unsigned core, unsigned eng, const void *data, size_t len);
void tb_write_file(tb_t *b, const char *rel, const char *text);

isa_inst_t tb_op(isa_op_t op);
isa_inst_t tb_dma(isa_dap_t dst, isa_dap_t src, unsigned queue);
isa_inst_t tb_trig(unsigned queue, unsigned ndesc);
isa_inst_t tb_jump(isa_op_t op, uint32_t target);
isa_inst_t tb_reg(isa_op_t op, unsigned reg, int32_t imm);
isa_inst_t tb_barrier(unsigned id, unsigned cores);
isa_dap_t tb_hbm(uint64_t addr, unsigned dtype, int32_t step0, uint32_t n0, int32_t step1, uint32_t n1);
isa_dap_t tb_sb(unsigned part, uint32_t off, unsigned dtype, int32_t step0, uint32_t n0,
                int32_t step1, uint32_t n1);
void tb_wait(isa_inst_t *in, unsigned sem, uint32_t val);
void tb_upd(isa_inst_t *in, unsigned sem, unsigned op, unsigned val, bool at_read);
void tb_upd_remote(isa_inst_t *in, unsigned core, unsigned sem, unsigned op, unsigned val);

/* Load with options (NULL = defaults); asserts load succeeds. */
sim_t *tb_load(tb_t *b, const sim_options_t *o);
/* Bind a float32 array of n values to input `name`. */
void tb_input_f32(sim_t *s, const char *name, const float *v, int ndim, const int64_t *shape);
/* Load + run; returns sim_run's result, *out = the sim (caller frees). */
int tb_run(tb_t *b, const sim_options_t *o, sim_t **out, tpb_err_t *err);
uint64_t tb_cycles(const sim_t *s);
/* Path of the tpb binary for CLI-style tests. */
const char *tb_tpb(void);

/* A small deterministic generator (64-bit LCG, the high bits) for
 * randomised shapes and data in the simulator tests. */
typedef struct {
    uint64_t x;
} lcg_t;

static inline uint32_t lcg_next(lcg_t *g, uint32_t mod)
{
    g->x = g->x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((g->x >> 33) % mod);
}

#endif
