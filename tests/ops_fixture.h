/* ops_fixture.h - a small simulated core (SBUF/PSUM buffers, PE state,
 * accumulators, registers, rng) for the per-op unit tests.  Instructions
 * are built by hand as isa_decoded_t and run through sim_opimpl(). */
#ifndef TPB_TESTS_OPS_FIXTURE_H
#define TPB_TESTS_OPS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "exec.h"
#include "isa.h"
#include "numeric.h"
#include "target.h"

#define FX_SBUF_PB 4096u
#define FX_PSUM_PB 16384u /* 8 banks of 2 KiB, as on trn1/trn2 */

typedef struct {
    sim_exec_ctx_t ctx;
    sim_pe_state_t pe;
    float acc[128];
    uint32_t regs[64];
    sim_rng_t rng;
    sim_scratch_t scratch;
    tpb_err_t err;
} fx_t;

static inline fx_t *fx_new(const char *target, isa_engine_t eng)
{
    fx_t *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->ctx.target = tpb_target_get(target);
    assert_non_null(fx->ctx.target);
    fx->ctx.engine = eng;
    fx->ctx.sbuf_pb = FX_SBUF_PB;
    fx->ctx.psum_pb = FX_PSUM_PB;
    fx->ctx.sbuf = calloc(128, FX_SBUF_PB);
    fx->ctx.psum = calloc(128, FX_PSUM_PB);
    assert_non_null(fx->ctx.sbuf);
    assert_non_null(fx->ctx.psum);
    fx->ctx.pe = &fx->pe;
    fx->ctx.acc = fx->acc;
    fx->ctx.regs = fx->regs;
    sim_rng_seed(&fx->rng, 1);
    fx->ctx.rng = &fx->rng;
    fx->ctx.err = &fx->err;
    fx->ctx.scratch = &fx->scratch;
    return fx;
}

static inline void fx_free(fx_t *fx)
{
    free(fx->ctx.sbuf);
    free(fx->ctx.psum);
    free(fx->ctx.sbuf_init);
    free(fx->ctx.psum_init);
    sim_scratch_free(&fx->scratch);
    free(fx);
}

/* Enable --check-uninit maps (all bytes unwritten). */
static inline void fx_check_uninit(fx_t *fx)
{
    fx->ctx.sbuf_init = calloc(128, FX_SBUF_PB);
    fx->ctx.psum_init = calloc(128, FX_PSUM_PB);
}

static inline isa_tap_t tap1(unsigned space, unsigned dt, uint32_t addr, unsigned start,
                             unsigned nparts, uint32_t count0)
{
    isa_tap_t t = { .addr = addr, .dtype = dt, .space = space, .start = start,
                    .nparts = nparts, .ndims = 1, .step = { 1 }, .count = { count0 } };
    return t;
}

static inline isa_tap_t tap2(unsigned space, unsigned dt, uint32_t addr, unsigned start,
                             unsigned nparts, uint32_t c0, int32_t s0, uint32_t c1, int32_t s1)
{
    isa_tap_t t = { .addr = addr, .dtype = dt, .space = space, .start = start,
                    .nparts = nparts, .ndims = 2, .step = { s0, s1 }, .count = { c0, c1 } };
    return t;
}

static inline isa_ptr_t ptr(unsigned space, unsigned dt, uint32_t addr)
{
    isa_ptr_t p = { addr, dt, space };
    return p;
}

static inline uint32_t ptr_bits(unsigned space, unsigned dt, uint32_t addr)
{
    return addr | (dt << 24) | (space << 28);
}

static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline uint8_t *fx_at(fx_t *fx, unsigned space, unsigned p, uint32_t addr)
{
    return space == ISA_SPACE_PSUM ? fx->ctx.psum + (size_t)p * FX_PSUM_PB + addr
                                   : fx->ctx.sbuf + (size_t)p * FX_SBUF_PB + addr;
}

/* Contiguous elements of partition p starting at byte addr. */
static inline void fx_put(fx_t *fx, unsigned space, unsigned p, uint32_t addr, unsigned dt,
                          const float *v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        num_store_f32(fx_at(fx, space, p, addr + i * isa_dtype_size(dt)), dt, v[i]);
}

static inline float fx_get(fx_t *fx, unsigned space, unsigned p, uint32_t addr, unsigned dt,
                           unsigned i)
{
    return num_load_f32(fx_at(fx, space, p, addr + i * isa_dtype_size(dt)), dt);
}

static inline int64_t fx_geti(fx_t *fx, unsigned space, unsigned p, uint32_t addr, unsigned dt,
                              unsigned i)
{
    return num_load_i64(fx_at(fx, space, p, addr + i * isa_dtype_size(dt)), dt);
}

static inline void fx_puti(fx_t *fx, unsigned space, unsigned p, uint32_t addr, unsigned dt,
                           const int64_t *v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        num_store_i64_wrap(fx_at(fx, space, p, addr + i * isa_dtype_size(dt)), dt, v[i]);
}

static inline isa_decoded_t mk(isa_op_t op)
{
    isa_decoded_t d;
    memset(&d, 0, sizeof d);
    d.inst.op = op;
    d.inst.l2 = isa_ops[op].l2;
    return d;
}

static inline int fx_run(fx_t *fx, const isa_decoded_t *d)
{
    const sim_opimpl_t *impl = sim_opimpl(d->inst.op);
    assert_non_null(impl);
    fx->err.msg[0] = 0;
    sim_scratch_reset(&fx->scratch); /* as the scheduler does before each instruction */
    return impl->exec(&fx->ctx, d);
}

static inline uint64_t fx_cost(const char *target, isa_engine_t e, const isa_decoded_t *d)
{
    const sim_opimpl_t *impl = sim_opimpl(d->inst.op);
    assert_non_null(impl);
    return impl->cost(tpb_target_get(target), e, d);
}

/* Run expecting failure whose message contains every given fragment. */
#define FX_FAILS(fx, d, ...)                                                          \
    do {                                                                              \
        assert_int_equal(fx_run((fx), (d)), -1);                                      \
        const char *frags_[] = { __VA_ARGS__ };                                       \
        for (size_t k_ = 0; k_ < sizeof frags_ / sizeof frags_[0]; k_++)              \
            if (!strstr((fx)->err.msg, frags_[k_]))                                   \
                fail_msg("error \"%s\" lacks \"%s\"", (fx)->err.msg, frags_[k_]);     \
    } while (0)

#define assert_feq(a, b) assert_true((float)(a) == (float)(b))
#define assert_fnear(a, b, tol)                                                       \
    do {                                                                              \
        double a_ = (a), b_ = (b);                                                    \
        if (!(fabs(a_ - b_) <= (tol) * (fabs(b_) > 1 ? fabs(b_) : 1)))                \
            fail_msg("%.9g != %.9g", a_, b_);                                          \
    } while (0)

#endif
