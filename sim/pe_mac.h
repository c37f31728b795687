/* pe_mac.h - the PE's multiply-accumulate kernel (functional matmul).
 *
 * out[c][j] (=|+=) sum over the segments s, rows r = 0..k-1, in that order,
 * of w[s][r][c] * x[s][r][j]: fp32, one sequential sum per output element,
 * exactly the order of the scalar loop (docs/semantics.md "PE").  The
 * vector variants are register-blocked over output columns and elements
 * and chosen at run time (AVX-512F, AVX2+FMA, portable C); every variant
 * gives the scalar loop's bits.  Fused multiply-add is used only when the
 * caller proved every product exact (sim_pe_mac_exact), where it rounds
 * exactly as a multiply then an add.  Design: docs/performance.md. */
#ifndef TPB_SIM_PE_MAC_H
#define TPB_SIM_PE_MAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a scan learned about a set of fp32 values, enough to bound their
 * products: or_mant = OR of the mantissa fields (trailing zeros common to
 * all), emin = smallest exponent field of a non-zero value (a subnormal
 * counts as 1; 255 when all are zero), emax = largest exponent field
 * (255: some value is inf or NaN). */
typedef struct {
    uint32_t or_mant;
    uint32_t emin, emax;
} sim_pe_fstats_t;

void sim_pe_stats_init(sim_pe_fstats_t *st);
/* Fold n fp32 values into st. */
void sim_pe_stats_f32(sim_pe_fstats_t *st, const float *x, size_t n);
/* dst[i] = the fp32 value of n little-endian bf16 / fp32 elements at src,
 * folding them into st in the same pass. */
void sim_pe_load_bf16(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st);
void sim_pe_load_f32(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st);
/* True when every product of a value described by w and one described by
 * x is finite and exact in fp32 (so a fused multiply-add rounds as the
 * multiply-then-add does), and no input is inf or NaN. */
bool sim_pe_mac_exact(const sim_pe_fstats_t *w, const sim_pe_fstats_t *x);
/* No input is inf or NaN. */
bool sim_pe_stats_finite(const sim_pe_fstats_t *st);

typedef struct {
    const float *w[2];   /* w[s] + r * wstride + c */
    const float *x[2];   /* x[s] + r * xstride + j */
    size_t wstride, xstride;
    unsigned nseg;       /* 1 or 2 segments of k rows each */
    unsigned k, m;
    uint32_t n;
    float *out;          /* out + c * ostride + j */
    size_t ostride;
    bool accumulate;     /* out = out + sum (else out = sum) */
    bool fma;            /* products proven exact: fused multiply-add allowed */
} sim_pe_mac_t;

typedef enum {
    SIM_PE_SCALAR,       /* the reference loop (one output column at a time) */
    SIM_PE_PORTABLE,     /* register-blocked plain C */
    SIM_PE_AVX2,         /* AVX2 + FMA */
    SIM_PE_AVX512,       /* AVX-512F */
    SIM_PE_NVARIANTS
} sim_pe_variant_t;

/* Whether this build and this CPU can run variant v. */
bool sim_pe_mac_have(sim_pe_variant_t v);
/* The best variant this CPU has. */
sim_pe_variant_t sim_pe_mac_best(void);
void sim_pe_mac_run(const sim_pe_mac_t *a, sim_pe_variant_t v);
/* The scans with a given variant (SCALAR and PORTABLE: plain C). */
void sim_pe_stats_f32_with(sim_pe_fstats_t *st, const float *x, size_t n, sim_pe_variant_t v);
void sim_pe_load_bf16_with(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st,
                           sim_pe_variant_t v);
/* sim_pe_mac_run with the best variant. */
void sim_pe_mac(const sim_pe_mac_t *a);

#endif
