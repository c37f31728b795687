"""Per-op NumPy models.  Each returns (expected, kind, arg): kind "exact"
(bit-exact, NaN matching NaN), "abs" (|got - expected| <= arg, elementwise)
or "ulp" (arg ulps of the output dtype).  Sources: NKI's isa/language
docstrings and docs/semantics.md sections 3-5; see docs/reliability.md for
why each tolerance is what it is."""
import math

import numpy as np

from .numerics import EPS, F32, INT32S, f32, fp32op, st, ulp, wrap

CMP = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less,
       "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal}
LOGIC = {"logical_and": np.logical_and, "logical_or": np.logical_or,
         "logical_xor": np.logical_xor}
NATIVE_INT_OPS = ("add", "subtract", "multiply", "maximum", "minimum")


def promote_model(a, b):
    """NKI type promotion of two operand dtypes: (float, float) the wider,
    fp16 with bf16 fp32; (float, int) the float."""
    width = {"float32": 32, "bfloat16": 16, "float16": 16}
    if a in width and b in width:
        if width[a] != width[b]:
            return a if width[a] > width[b] else b
        return a if a == b else "float32"
    return a if a in width else b


def bitwise(op, x, y, indt, outdt):
    """Bit-vector ops: the operands' bit patterns, no conversion (NKI)."""
    bits = 8 if indt == "uint8" else 32
    xi = x.astype(np.int64)
    yi = y.astype(np.int64)
    if op == "bitwise_and":
        r = xi & yi
    elif op == "bitwise_or":
        r = xi | yi
    elif op == "bitwise_xor":
        r = xi ^ yi
    elif op == "left_shift":
        r = (xi << yi) & 0xFFFFFFFF
    else:   # right_shift: logical, on the operand's own width
        r = (xi & ((1 << bits) - 1)) >> yi
    return wrap(r, outdt), "exact", None


def native_int(op, x, y, dtype):
    """tensor_tensor on all-int32 / all-uint32 tiles (NKI: GpSimd, native
    integer arithmetic, exact for all 32-bit values); add, subtract and
    multiply wrap modulo 2^32."""
    if op in ("maximum", "minimum"):
        r = (np.maximum if op == "maximum" else np.minimum)(x, y)
        return r.astype(np.float64), "exact", None
    # uint64 arithmetic wraps modulo 2^64, so its low 32 bits are exact
    xu = x.astype(np.int64).astype(np.uint64)
    yu = y.astype(np.int64).astype(np.uint64)
    r = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}[op](xu, yu)
    return wrap((r & np.uint64(0xFFFFFFFF)).astype(np.int64), dtype), "exact", None


def alu(op, x, y, outdt, indt, native=False):
    """nl binary ops and nisa.tensor_tensor.  native: the native-integer path
    applies (the caller decides from the tiles, engine and buffers)."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    if op in CMP:
        return st(CMP[op](f32(x), f32(y)).astype(np.float64), outdt), "exact", None
    if op in LOGIC:
        return st(LOGIC[op](x != 0, y != 0).astype(np.float64), outdt), "exact", None
    if op.startswith("bitwise") or op.endswith("shift"):
        return bitwise(op, x, y, indt, outdt)
    if native and indt in INT32S and outdt == indt and op in NATIVE_INT_OPS:
        return native_int(op, x, y, indt)
    if op == "power":
        # libm's powf and a double pow can differ: 2 ulps
        with np.errstate(all="ignore"):
            e = np.power(f32(x).astype(np.float64), f32(y).astype(np.float64))
        return st(e, outdt), "ulp", 2
    return st(fp32op(op, x, y), outdt), "exact", None


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sig(v):
    return 1 / (1 + np.exp(-v))


def _softplus(v):
    return np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))


UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v),
    "tanh": np.tanh, "sigmoid": _sig,
    # relu keeps NaN (docs/semantics.md section 5)
    "relu": lambda v: np.where((v > 0) | np.isnan(v), v, 0.0),
    "gelu": lambda v: 0.5 * v * (1 + _erf(v / np.sqrt(2))),
    "gelu_dx": lambda v: 0.5 * (1 + _erf(v / np.sqrt(2))) + v * np.exp(-v * v / 2) / np.sqrt(2 * np.pi),
    "gelu_apprx_tanh": lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))),
    "gelu_apprx_sigmoid": lambda v: v * _sig(1.702 * v),
    "silu": lambda v: v * _sig(v), "silu_dx": lambda v: _sig(v) * (1 + v * (1 - _sig(v))),
    "softplus": _softplus, "mish": lambda v: v * np.tanh(_softplus(v)), "erf": _erf,
    "erf_dx": lambda v: 2 / np.sqrt(np.pi) * np.exp(-v * v),
    "abs": np.abs, "negative": np.negative, "square": lambda v: v * v, "sign": np.sign,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "reciprocal": lambda v: 1 / v,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "arctan": np.arctan, "copy": lambda v: v,
    # NKI: "implemented as XOR with 1" on a 0/1 input
    "logical_not": lambda v: (v == 0).astype(np.float64),
}
EXACT_UNARY = frozenset("relu abs negative square sign floor ceil trunc copy logical_not".split())


def unary(fn, x, outdt):
    """f evaluated in double on the fp32 input, rounded once to fp32, then
    stored (docs/semantics.md section 5)."""
    z = np.asarray(f32(x), np.float64)
    with np.errstate(all="ignore"):
        r = UNARY[fn](z)
        if fn == "square":   # one fp32 multiply
            r = (f32(z) * f32(z)).astype(np.float64)
    r32 = r.astype(F32).astype(np.float64)
    if fn in EXACT_UNARY:
        return st(r32, outdt), "exact", None
    # 2 fp32 ulps for libm differences, 1 ulp of outdt for a double-rounding tie
    tol = 2 * ulp(r, "float32") + (ulp(r, outdt) if outdt != "float32" else 0)
    if fn.startswith("gelu"):
        # 1 + tanh / 1 + erf cancels below -2: the double formula is itself off
        tol = tol + 8 * np.abs(z) * 2.0**-52
    return st(r32, outdt), "abs", tol


def _bitwise_reduce(fn, x, axes, keep):
    f = np.bitwise_or.reduce if fn == "or" else np.bitwise_and.reduce
    r = x.astype(np.int64)
    for a in sorted(axes, reverse=True):
        r = f(r, axis=a, keepdims=True)
    if not keep:
        r = r.reshape([s for i, s in enumerate(r.shape) if i not in axes])
    return r.astype(np.float64), "exact", None


def reduce_model(fn, x, axes, keep, outdt, neg=False):
    """Reductions.  NKI does not document the accumulation order, so sums
    allow (n+2)*eps32*sum|x| and prod (n+2)*eps32*|p|; max/min are exact."""
    if fn in ("or", "and"):   # bit patterns: never through fp32 (int32 past 2^24)
        return _bitwise_reduce(fn, np.asarray(x, np.float64), axes, keep)
    x = np.asarray(f32(x), np.float64)
    n = int(np.prod([x.shape[a] for a in axes]))
    g = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}[fn]
    e = g(x, axis=axes, keepdims=keep)
    if neg:
        e = -e
    if fn in ("max", "min"):
        return st(e, outdt), "exact", None
    if fn in ("sum", "mean"):
        tol = (n + 2) * EPS["float32"] * np.abs(x).sum(axis=axes, keepdims=keep)
        if fn == "mean":
            tol = tol / n + 2 * ulp(e, "float32")
    else:
        tol = (n + 2) * EPS["float32"] * np.abs(e)
    tol = tol * (1 + EPS.get(outdt, 0)) + ulp(e, outdt) + 1e-30
    return st(e, outdt), "abs", tol
