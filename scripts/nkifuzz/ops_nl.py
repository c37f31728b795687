"""Op families of nki.language: element-wise binary and unary ops,
reductions, where, broadcast_to and softmax.  Each family is a function of
a Prog that emits one op and records its check."""
import numpy as np

from .models import alu, promote_model, reduce_model, unary
from .numerics import F32, FLOATS, INTS, st

ARITH = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "mod", "fmod"]
INT_OPS = ["add", "subtract", "multiply", "maximum", "minimum", "bitwise_and", "bitwise_or",
           "bitwise_xor", "left_shift", "right_shift", "equal", "less"]
CMPS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
# y's data kind by op: positive divisors, small powers
Y_KIND = {"divide": "pos", "mod": "pos", "fmod": "pos", "power": "small"}


def _pick_binary(p):
    """(family, dtype, op)"""
    fam = p.choice(["arith", "arith", "cmp", "logic", "int"])
    if fam == "int":
        return fam, p.choice(INTS), p.choice(INT_OPS)
    if fam == "cmp":
        return fam, p.choice(FLOATS), p.choice(CMPS)
    if fam == "logic":
        return fam, p.choice(FLOATS + ["uint8"]), p.choice(["logical_and", "logical_or", "logical_xor"])
    return fam, p.choice(FLOATS), p.choice(ARITH)


def _binary_kinds(fam, dtype, op):
    """Data kinds of x and y.  uint8 add/sub/mul use small values: NKI does
    not say whether uint8 overflow wraps or saturates."""
    kx = "bool" if fam == "logic" else ("pos" if op == "power" else "normal")
    ky = Y_KIND.get(op, kx)
    if fam == "int" and op in ("left_shift", "right_shift"):
        kx, ky = ("normal" if dtype == "uint8" else "pos"), "shift"
    if fam == "int" and dtype == "uint8" and op in ("add", "subtract", "multiply"):
        kx = ky = "shift"
    return kx, ky


def _scalar_y(p, fam, dtype, op, ky):
    """A Python number for y."""
    if dtype in INTS:
        if op in ("left_shift", "right_shift"):
            return p.randint(0, 8)
        if op in ("add", "subtract", "multiply", "maximum", "minimum") and p.r() < 0.4:
            return float(p.choice([0.5, 2.5, -1.5, 0.25, 3.75]))   # int tile, float scalar
        return p.randint(0, 50) if dtype == "uint8" else p.randint(-50, 50)
    if fam == "logic":
        return float(p.choice([0.0, 1.0]))
    if ky == "pos":
        return float(F32(p.rng.uniform(0.25, 4)))
    if op == "power":
        return p.choice([2.0, 0.5, -1.0, 3.0, 1.5])
    return p.fscalar()


def _binary_y(p, form, shape, ydt, fam, dtype, op, ky):
    """(source text, value(env)) of y in a form: tile, [P,1] column, [1,F] row, scalar."""
    if form == "tt":
        y = p.operand(shape, ydt, ky)
    elif form == "col":
        y = p.load((shape[0], 1) if len(shape) == 2 else (shape[0], 1, 1), dtype, ky)
    elif form == "row":
        y = p.load((1,) + shape[1:], dtype, ky)
    else:
        v = _scalar_y(p, fam, dtype, op, ky)
        return repr(v), (lambda env, v=v: np.float64(v))
    return y.name, (lambda env, y=y: y.get(env))


def _binary_out(p, fam, dtype, ydt, op):
    """(dtype= argument or None, the result's dtype): NKI's promotion rule
    for mixed operands, fp32 for an int divide."""
    outdt = p.choice(FLOATS) if p.r() < 0.3 and fam != "int" else None
    implicit = promote_model(dtype, ydt) if ydt != dtype and outdt is None else None
    if fam == "cmp" and p.r() < 0.3:
        outdt = "uint8"
    default = ("float32" if dtype in INTS else dtype) if op == "divide" else dtype
    return outdt, outdt or implicit or default


def nl_binary(p):
    fam, dtype, op = _pick_binary(p)
    shape = p.shape()
    kx, ky = _binary_kinds(fam, dtype, op)
    x = p.operand(shape, dtype, kx)
    form = p.choice(["tt", "tt", "col", "row", "scalar", "rscalar"])
    ydt = dtype
    if form == "tt" and fam == "arith" and p.r() < 0.3:
        ydt = p.choice(FLOATS + ["int32"])
    yname, yval = _binary_y(p, form, shape, ydt, fam, dtype, op, ky)
    outdt, tdt = _binary_out(p, fam, dtype, ydt, op)
    a, b = (yname, x.name) if form == "rscalar" else (x.name, yname)
    t = p.new_tile(shape, tdt)
    p.emit("%s = nl.%s(%s, %s%s)" % (t.name, op, a, b, (", dtype=nl.%s" % outdt) if outdt else ""))
    rev = form == "rscalar"

    def model(env):
        xa, ya = x.get(env), yval(env)
        if rev:
            xa, ya = ya, xa
        return alu(op, xa, ya, t.dtype, dtype)
    p.check("nl.%s[%s %s %s%s->%s]" % (op, form, shape, dtype, ("," + ydt) if ydt != dtype else "",
                                       t.dtype), t, model)


# function -> input data kind
UNARY_FNS = {"exp": "small", "log": "pos", "sqrt": "pos", "rsqrt": "pos", "tanh": "normal",
             "sigmoid": "normal", "relu": "normal", "gelu": "normal",
             "gelu_apprx_tanh": "normal", "gelu_apprx_sigmoid": "normal", "silu": "normal",
             "softplus": "normal", "mish": "normal", "erf": "normal", "abs": "normal",
             "negative": "normal", "square": "normal", "sign": "normal", "floor": "normal",
             "ceil": "normal", "trunc": "normal", "reciprocal": "pos", "sin": "small",
             "cos": "small", "arctan": "normal", "copy": "normal", "gelu_dx": "normal",
             "silu_dx": "normal", "erf_dx": "normal", "tan": "small"}


def _unary(p, fn, kind):
    shape = p.shape()
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype, kind)
    outdt = p.choice(FLOATS) if p.r() < 0.3 else None
    t = p.new_tile(shape, outdt or dtype)
    p.emit("%s = nl.%s(%s%s)" % (t.name, fn, x.name, (", dtype=nl.%s" % outdt) if outdt else ""))
    p.check("nl.%s[%s %s->%s]" % (fn, shape, dtype, t.dtype), t,
            lambda env: unary(fn, x.get(env), t.dtype))


def nl_unary(p):
    fn = p.choice(sorted(UNARY_FNS))
    _unary(p, fn, UNARY_FNS[fn])


def nl_logical_not(p):
    _unary(p, "logical_not", "bool")


def nl_reduce(p):
    fn = p.choice(["sum", "max", "min", "mean", "prod"])
    shape = p.shape()
    dtype = p.choice(FLOATS) if fn in ("mean", "prod") or p.r() < 0.8 else "int32"
    if dtype == "int32" and fn == "sum":
        fn = "max"
    x = p.operand(shape, dtype, "near1" if fn == "prod" else "normal")
    axes = [1] if len(shape) == 2 else p.choice([[2], [1, 2]])
    if len(axes) == 1:   # every spelling of the axis argument
        axs = p.choice(["%d" % axes[0], "%s" % (tuple(axes),), "%s" % (axes,)])
    else:
        axs = p.choice(["%s" % (tuple(axes),), "%s" % (axes,)])
    keep = p.r() < 0.5
    outdt = "float32" if (p.r() < 0.3 and dtype != "int32") else None
    t = p.new_tile(reduced_shape(shape, axes, keep), outdt or dtype)
    p.emit("%s = nl.%s(%s, axis=%s%s%s)" % (t.name, fn, x.name, axs,
                                           ", keepdims=True" if keep else "",
                                           (", dtype=nl.%s" % outdt) if outdt else ""))
    p.check("nl.%s[%s axis=%s keep=%s %s->%s]" % (fn, shape, axes, keep, dtype, t.dtype), t,
            lambda env: reduce_model(fn, x.get(env), tuple(axes), keep, t.dtype))


def reduced_shape(shape, axes, keep):
    if keep:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def nl_where(p):
    shape = p.shape()
    dtype = p.choice(FLOATS)
    c = p.operand(shape, dtype, "normal")
    thr = p.fscalar()
    cmpop = p.choice(["greater", "less", "greater_equal"])
    cond = p.new_tile(shape, dtype)
    p.emit("%s = nl.%s(%s, %r)" % (cond.name, cmpop, c.name, thr))
    p.check("nl.%s[cond %s]" % (cmpop, shape), cond,
            lambda env: alu(cmpop, c.get(env), np.float64(thr), cond.dtype, cond.dtype))
    x = p.operand(shape, dtype)
    yform = p.choice(["tile", "scalar"])
    if yform == "tile":
        y = p.operand(shape, dtype)
        ys, yv = y.name, (lambda env: y.get(env))
    else:
        v = p.fscalar()
        ys, yv = repr(v), (lambda env: np.float64(v))
    t = p.new_tile(shape, dtype)
    p.emit("%s = nl.where(%s, %s, %s)" % (t.name, cond.name, x.name, ys))
    p.check("nl.where[%s %s y=%s]" % (shape, dtype, yform), t,
            lambda env: (st(np.where(cond.get(env) != 0, x.get(env), yv(env)), t.dtype), "exact", None))


def broadcast(p):
    shape = p.shape(nd=2)
    dtype = p.choice(FLOATS + INTS)
    src = p.load((shape[0], 1) if p.r() < 0.5 else (1, shape[1]), dtype)
    t = p.new_tile(shape, dtype)
    p.emit("%s = nl.broadcast_to(%s, %s)" % (t.name, src.name, shape))
    p.check("nl.broadcast_to[%s->%s %s]" % (src.shape, shape, dtype), t,
            lambda env: (np.broadcast_to(src.get(env), shape).astype(np.float64), "exact", None))


def softmax(p):
    """nl.softmax: relative 1e-5 (its exp and sum order are not documented)."""
    shape = p.shape(nd=2)
    dtype = p.choice(["float32", "bfloat16"])
    x = p.operand(shape, dtype, "small")
    t = p.new_tile(shape, "float32")
    p.emit("%s = nl.softmax(%s, axis=1, dtype=nl.float32)" % (t.name, x.name))

    def model(env):
        z = x.get(env)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        r = e / e.sum(axis=1, keepdims=True)
        return r, "abs", 1e-5 * r + 1e-7
    p.check("nl.softmax[%s %s]" % (shape, dtype), t, model)
