/* alu.c - the ALU op table shared by DVE, Activation (fused reduce,
 * Activate2) and Pool bodies.  Semantics: docs/semantics.md "ALU ops". */
#include <math.h>

#include "ops.h"

enum { SV_F = 0, SV_INT = 1, SV_BITS = 2, SV_IMM = 3 };

bool sim_alu_valid(unsigned op) { return op <= ISA_ALU_FMOD; }

bool sim_alu_is_bitwise(unsigned op) { return isa_alu_is_bitwise(op); }

bool sim_alu_is_unary(unsigned op)
{
    return isa_alu_is_unary(op);
}

bool sim_alu_is_reduce(unsigned op)
{
    switch (op) {
    case ISA_ALU_ADD: case ISA_ALU_SUBTRACT: case ISA_ALU_MULTIPLY:
    case ISA_ALU_MAX: case ISA_ALU_MIN: case ISA_ALU_ABS_MAX: case ISA_ALU_ABS_MIN:
    case ISA_ALU_LOGICAL_AND: case ISA_ALU_LOGICAL_OR: case ISA_ALU_LOGICAL_XOR:
    case ISA_ALU_BITWISE_AND: case ISA_ALU_BITWISE_OR: case ISA_ALU_BITWISE_XOR:
        return true;
    default:
        return false;
    }
}

sim_val_t sim_val_f(float f)
{
    sim_val_t v = { f, 0, SV_F, 32 };
    return v;
}

static sim_val_t val_bits(int64_t i, unsigned width)
{
    sim_val_t v = { (float)i, i, SV_BITS, (uint8_t)width };
    return v;
}

sim_val_t sim_val_load(const uint8_t *p, unsigned dt)
{
    if (isa_dtype_kind(dt) == ISA_DK_F)
        return sim_val_f(num_load_f32(p, dt));
    int64_t i = num_load_i64(p, dt);
    sim_val_t v = { (float)i, i, SV_INT, (uint8_t)(8 * isa_dtype_size(dt)) };
    return v;
}

sim_val_t sim_val_imm(uint32_t bits)
{
    sim_val_t v = { sim_f32_from_bits(bits), (int32_t)bits, SV_IMM, 32 };
    return v;
}

float sim_val_as_f(sim_val_t v)
{
    return (v.is_int == SV_INT || v.is_int == SV_BITS) ? (float)v.i : v.f;
}

/* Integer view for bitwise ops: integers as they are, immediates as their
 * 32-bit pattern, floats converted to int32 (RNE, saturate, NaN -> 0). */
static int64_t as_int(sim_val_t v)
{
    if (v.is_int != SV_F)
        return v.i;
    uint8_t buf[4];
    num_store_f32(buf, ISA_DT_INT32, v.f);
    return num_load_i64(buf, ISA_DT_INT32);
}

void sim_val_store(uint8_t *p, unsigned dt, sim_val_t v)
{
    if (v.is_int == SV_BITS)
        num_store_i64_wrap(p, dt, v.i);
    else if (v.is_int == SV_INT && isa_dtype_kind(dt) != ISA_DK_F) {
        /* exact integer value: saturate to the destination range */
        int64_t lo, hi;
        unsigned bits = 8 * isa_dtype_size(dt);
        if (isa_dtype_kind(dt) == ISA_DK_U) {
            lo = 0;
            hi = (int64_t)((1ull << bits) - 1);
        } else {
            lo = -(1ll << (bits - 1));
            hi = (1ll << (bits - 1)) - 1;
        }
        num_store_i64_wrap(p, dt, v.i < lo ? lo : v.i > hi ? hi : v.i);
    } else
        num_store_f32(p, dt, sim_val_as_f(v));
}

static float fmaxp(float a, float b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return a > b ? a : b;
}

static float fminp(float a, float b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return a < b ? a : b;
}

/* Python/NumPy mod: result has the sign of the divisor. */
static float fmod_floor(float a, float b)
{
    float r = fmodf(a, b);
    if (r != 0.0f && ((r < 0.0f) != (b < 0.0f)))
        r += b;
    return r;
}

float sim_alu_f(unsigned op, float a, float b)
{
    switch (op) {
    case ISA_ALU_BYPASS: return a;
    case ISA_ALU_ADD: return a + b;
    case ISA_ALU_SUBTRACT: return a - b;
    case ISA_ALU_MULTIPLY: return a * b;
    case ISA_ALU_DIVIDE: return a / b;
    case ISA_ALU_MAX: return fmaxp(a, b);
    case ISA_ALU_MIN: return fminp(a, b);
    case ISA_ALU_ABS_MAX: return fmaxp(fabsf(a), fabsf(b));
    case ISA_ALU_ABS_MIN: return fminp(fabsf(a), fabsf(b));
    case ISA_ALU_POWER: return powf(a, b);
    case ISA_ALU_EQUAL: return a == b ? 1.0f : 0.0f;
    case ISA_ALU_NOT_EQUAL: return a != b ? 1.0f : 0.0f;
    case ISA_ALU_IS_GE: return a >= b ? 1.0f : 0.0f;
    case ISA_ALU_IS_GT: return a > b ? 1.0f : 0.0f;
    case ISA_ALU_IS_LE: return a <= b ? 1.0f : 0.0f;
    case ISA_ALU_IS_LT: return a < b ? 1.0f : 0.0f;
    case ISA_ALU_LOGICAL_AND: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
    case ISA_ALU_LOGICAL_OR: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
    case ISA_ALU_LOGICAL_XOR: return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
    case ISA_ALU_MOD: return fmod_floor(a, b);
    case ISA_ALU_ABS: return fabsf(a);
    case ISA_ALU_RSQRT: return 1.0f / sqrtf(a);
    case ISA_ALU_RECIPROCAL: return 1.0f / a;
    case ISA_ALU_FLOOR: return floorf(a);
    case ISA_ALU_CEIL: return ceilf(a);
    case ISA_ALU_TRUNC: return truncf(a);
    case ISA_ALU_SIGN: return isnan(a) ? a : (float)((a > 0.0f) - (a < 0.0f));
    case ISA_ALU_NEGATIVE: return -a;
    case ISA_ALU_FMOD: return fmodf(a, b);
    default: return NAN; /* bitwise ops are handled by sim_alu() */
    }
}

static sim_val_t alu_bitwise(unsigned op, sim_val_t a, sim_val_t b)
{
    int64_t x = as_int(a), y = as_int(b);
    unsigned wa = a.is_int == SV_F ? 32 : a.width;
    unsigned wb = b.is_int == SV_F ? 32 : b.width;
    unsigned w = wa > wb ? wa : wb;
    switch (op) {
    case ISA_ALU_BITWISE_AND: return val_bits(x & y, w);
    case ISA_ALU_BITWISE_OR: return val_bits(x | y, w);
    case ISA_ALU_BITWISE_XOR: return val_bits(x ^ y, w);
    case ISA_ALU_BITWISE_NOT: return val_bits(~x, wa);
    case ISA_ALU_LEFT_SHIFT:
        if (y < 0 || y >= 32)
            return val_bits(0, wa);
        return val_bits((int64_t)(((uint64_t)x << y) & 0xFFFFFFFFu), wa);
    default: { /* RIGHT_SHIFT: logical, in the width of the first operand */
        if (y < 0 || y >= 32)
            return val_bits(0, wa);
        uint64_t mask = wa >= 64 ? ~0ull : ((1ull << wa) - 1);
        return val_bits((int64_t)(((uint64_t)x & mask) >> y), wa);
    }
    }
}

sim_val_t sim_alu(unsigned op, sim_val_t a, sim_val_t b)
{
    if (op == ISA_ALU_BYPASS)
        return a;
    if (sim_alu_is_bitwise(op))
        return alu_bitwise(op, a, b);
    return sim_val_f(sim_alu_f(op, sim_val_as_f(a), sim_val_as_f(b)));
}

/* GpSimd's native integer TensorTensor (NKI: int32/uint32 tiles, exact for
 * all 32-bit values): the ops with an obvious integer meaning.  Operands
 * are the integer values (uint32 unsigned); add, subtract and multiply
 * wrap modulo 2^32 (two's complement, in uint64 so no signed overflow);
 * max/min and the comparisons are exact.  docs/semantics.md §3. */
bool sim_alu_native_int_op(unsigned op)
{
    switch (op) {
    case ISA_ALU_ADD: case ISA_ALU_SUBTRACT: case ISA_ALU_MULTIPLY:
    case ISA_ALU_MAX: case ISA_ALU_MIN:
    case ISA_ALU_EQUAL: case ISA_ALU_NOT_EQUAL:
    case ISA_ALU_IS_GE: case ISA_ALU_IS_GT: case ISA_ALU_IS_LE: case ISA_ALU_IS_LT:
        return true;
    default:
        return false;
    }
}

sim_val_t sim_alu_native_int(unsigned op, int64_t a, int64_t b)
{
    uint64_t x = (uint64_t)a, y = (uint64_t)b;
    switch (op) {
    case ISA_ALU_ADD: return val_bits((int64_t)((x + y) & 0xFFFFFFFFu), 32);
    case ISA_ALU_SUBTRACT: return val_bits((int64_t)((x - y) & 0xFFFFFFFFu), 32);
    case ISA_ALU_MULTIPLY: return val_bits((int64_t)((x * y) & 0xFFFFFFFFu), 32);
    case ISA_ALU_MAX: return val_bits(a > b ? a : b, 32);
    case ISA_ALU_MIN: return val_bits(a < b ? a : b, 32);
    case ISA_ALU_EQUAL: return val_bits(a == b, 32);
    case ISA_ALU_NOT_EQUAL: return val_bits(a != b, 32);
    case ISA_ALU_IS_GE: return val_bits(a >= b, 32);
    case ISA_ALU_IS_GT: return val_bits(a > b, 32);
    case ISA_ALU_IS_LE: return val_bits(a <= b, 32);
    default: return val_bits(a < b, 32);   /* IS_LT */
    }
}

sim_val_t sim_alu_identity(unsigned op)
{
    switch (op) {
    case ISA_ALU_MULTIPLY: case ISA_ALU_LOGICAL_AND: return sim_val_f(1.0f);
    case ISA_ALU_MAX: return sim_val_f(-INFINITY);
    case ISA_ALU_MIN: case ISA_ALU_ABS_MIN: return sim_val_f(INFINITY);
    case ISA_ALU_BITWISE_AND: return val_bits(-1, 32);
    case ISA_ALU_BITWISE_OR: case ISA_ALU_BITWISE_XOR: return val_bits(0, 8);
    default: return sim_val_f(0.0f);
    }
}
