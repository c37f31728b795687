/* numeric.h - dtype conversions shared by the simulator, the compiler
 * (constant bit patterns) and the checker.  Semantics are stated in
 * docs/semantics.md and mirrored by golden/lowp.py.
 *
 * Float narrowing rounds to nearest, ties to even.  bf16/fp16 overflow to
 * +-inf; fp8e5m2 overflows to +-inf; fp8e4m3 (the "fn" variant: no inf,
 * max 448) overflows to NaN; fp8e4m3ieee (NKI's legacy float8_e4m3: inf
 * and NaN at exponent 1111, max 240) overflows to +-inf.  NaN stays NaN.
 * Float -> integer: round to nearest even, saturate to the type's range,
 * NaN -> 0.  Integer -> float: exact where representable, else RNE. */
#ifndef TPB_NUMERIC_H
#define TPB_NUMERIC_H

#include <stddef.h>
#include <stdint.h>

uint16_t num_f32_to_bf16(float f);
float num_bf16_to_f32(uint16_t h);
uint16_t num_f32_to_f16(float f);
float num_f16_to_f32(uint16_t h);
uint8_t num_f32_to_fp8e4m3(float f);
float num_fp8e4m3_to_f32(uint8_t v);
uint8_t num_f32_to_fp8e4m3ieee(float f);
float num_fp8e4m3ieee_to_f32(uint8_t v);
uint8_t num_f32_to_fp8e5m2(float f);
float num_fp8e5m2_to_f32(uint8_t v);
/* E8M0 (OCP MX block scale, NKI float8_e8m0fnu): byte b is 2^(b - 127),
 * 0xFF NaN; no sign, no zero.  To E8M0: the nearest power of two (ties --
 * 1.5 * 2^e -- to the even exponent field); 0 and magnitudes below 2^-127
 * give 0x00, past 2^127 (rounded) or negative, NaN or inf give 0xFF. */
uint8_t num_f32_to_fp8e8m0(float f);
float num_fp8e8m0_to_f32(uint8_t v);

/* Read one element of isa dtype `dt` at p, as float (integers converted). */
float num_load_f32(const void *p, unsigned dt);
/* Store float v to one element of dtype dt at p with the rules above. */
void num_store_f32(void *p, unsigned dt, float v);
/* Whole arrays of n elements: exactly num_load_f32 / num_store_f32 per
 * element, with the dtype switch outside the loop (loading and saving
 * tensors; no libm call for any float dtype). */
void num_load_f32_array(float *dst, const void *src, unsigned dt, size_t n);
void num_store_f32_array(void *dst, unsigned dt, const float *src, size_t n);
/* Integer views (for bitwise ALU ops and iota): load as int64 / store with
 * wrap-around to the dtype width (bit pattern semantics). */
int64_t num_load_i64(const void *p, unsigned dt);
void num_store_i64_wrap(void *p, unsigned dt, int64_t v);
/* Packed MX quads (the *_x4 dtypes, isa/dtypes.def): lane 0..3 of the
 * element at p as float (fp8 lanes byte by byte, fp4 lanes nibble by nibble
 * from the low nibble of byte 0; fp4 e2m1fn has no inf or NaN, largest 6);
 * num_store_x4 writes an fp8 lane with the fp8 rules above (fp4: nothing,
 * no instruction writes it).  num_load_f32 of a quad is NaN,
 * num_load_i64 0 and the stores write nothing: a quad is no one number,
 * and the decoder refuses it outside the MX operands. */
float num_load_x4(const void *p, unsigned dt, unsigned lane);
void num_store_x4(void *p, unsigned dt, unsigned lane, float v);
/* Round v to what dtype dt can hold and back (e.g. for golden comparisons). */
float num_round_to(float v, unsigned dt);

#endif
