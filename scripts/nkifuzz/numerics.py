"""The numerics model: dtype tables and rounding, written from
docs/semantics.md section 1 (fp32 internal arithmetic, one rounding to the
output dtype, round-to-nearest-even for bf16/fp16, float -> int by rint and
saturation with NaN giving 0, integer -> integer exact and saturating)."""
import numpy as np

import tpbsim.nki.language as nl

F32 = np.float32
FLOATS = ["float32", "bfloat16", "float16"]
INTS = ["int32", "uint8"]
INT32S = ["int32", "uint32"]          # tensor_tensor's native-integer family
NPDT = {"float32": np.float32, "float16": np.float16, "bfloat16": nl.bfloat16,
        "int32": np.int32, "uint8": np.uint8, "uint32": np.uint32}
INT_RANGE = {"int32": (-2**31, 2**31 - 1), "uint8": (0, 255), "uint32": (0, 2**32 - 1)}
EPS = {"float32": 2.0**-23, "bfloat16": 2.0**-7, "float16": 2.0**-10}
TINY = {"float32": 2.0**-149, "bfloat16": 2.0**-133, "float16": 2.0**-24}


def is_int(dtype):
    return dtype in INT_RANGE


def bf16_rne(x32):
    """fp32 -> bf16 (round to nearest even, NaN kept) as fp32 values, from the
    bits -- deliberately not tpbsim's own dtype module."""
    x32 = np.asarray(x32, F32)
    b = x32.view(np.uint32).astype(np.uint64)
    # uint64 constants: a 0-d b and a Python int promote to float64 (NumPy 1.x)
    u = np.uint64
    r = ((b + u(0x7FFF) + ((b >> u(16)) & u(1))) >> u(16)) << u(16)
    out = r.astype(np.uint32).view(F32)
    return np.where(np.isnan(x32), np.float32(np.nan), out)


def st(x, dtype):
    """Store an fp32-computed value into dtype; returns float64 values."""
    x32 = np.asarray(x, np.float64).astype(F32)
    if dtype == "float32":
        return x32.astype(np.float64)
    if dtype == "bfloat16":
        return bf16_rne(x32).astype(np.float64)
    if dtype == "float16":
        with np.errstate(over="ignore"):
            return x32.astype(np.float16).astype(np.float64)
    lo, hi = INT_RANGE[dtype]
    v = np.rint(x32.astype(np.float64))
    return np.where(np.isnan(v), 0, np.clip(v, lo, hi))


def st_from(x, src, dtype):
    """A conversion src -> dtype (copy or DMA): integer -> integer exact and
    saturating, everything else through fp32 (NKI: "intermediate FP32 cast
    when data types differ")."""
    if is_int(src) and is_int(dtype):
        lo, hi = INT_RANGE[dtype]
        return np.clip(np.asarray(x, np.float64), lo, hi)
    return st(x, dtype)


def wrap(r, dtype):
    """Integer results wrapped to dtype's width (two's complement)."""
    r = np.asarray(r, np.int64)
    if dtype == "uint8":
        return (r & 0xFF).astype(np.float64)
    if dtype == "uint32":
        return (r & 0xFFFFFFFF).astype(np.float64)
    return (((r & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000).astype(np.float64)


def ulp(e, dtype):
    """One unit in the last place of |e| in dtype (0 for integers)."""
    e = np.abs(np.asarray(e, np.float64))
    if is_int(dtype):
        return np.zeros_like(e)
    with np.errstate(divide="ignore"):
        ex = np.floor(np.log2(np.where(e > 0, e, 1.0)))
    return np.maximum(np.exp2(ex) * EPS[dtype], TINY[dtype])


def as64(a):
    """Any array as float64 values (bf16 through fp32; integers exactly)."""
    a = np.asarray(a)
    if a.dtype == np.float64:
        return a
    if a.dtype.kind in "iub":
        return a.astype(np.float64)
    return a.astype(np.float32).astype(np.float64)


def f32(a):
    return np.asarray(a, np.float64).astype(F32)


def fp32op(op, a, b):
    """One ALU op in fp32 math (docs/semantics.md section 3)."""
    a = f32(a)
    b = f32(b)
    with np.errstate(all="ignore"):
        r = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
             "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum,
             "power": np.power, "mod": np.mod, "fmod": np.fmod}[op](a, b)
    return np.asarray(r).astype(F32)
