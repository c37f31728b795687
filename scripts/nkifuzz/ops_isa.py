"""Op families of nki.isa on the Vector / Scalar / GpSimd engines:
tensor_tensor (float and the int32/uint32 native-integer family),
tensor_scalar, activation, tensor_reduce and tensor_copy."""
import numpy as np

from .models import alu, reduce_model, unary
from .numerics import EPS, F32, FLOATS, INT32S, INTS, as64, f32, fp32op, st, st_from
from .ops_nl import reduced_shape

TT_FLOAT_OPS = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                "greater_equal", "not_equal"]
TT_INT_OPS = ["add", "subtract", "multiply", "maximum", "minimum", "bitwise_and", "bitwise_xor"]


def _tensor_tensor_emit(p, t, x, y, op, extra=""):
    p.ndarray(t)
    p.emit("nisa.tensor_tensor(dst=%s, data1=%s, data2=%s, op=nl.%s%s)" % (t.name, x.name, y.name, op, extra))


def tensor_tensor(p):
    """Float tiles: fp32 math, one rounding to dst (NKI).  One operand or dst
    may be in PSUM (not for power, which runs on GpSimd)."""
    shape = p.shape()
    dtype = p.choice(FLOATS)
    op = p.choice(TT_FLOAT_OPS)
    outdt = p.choice(FLOATS)
    x = p.operand(shape, dtype, "pos" if op == "power" else "normal", psum_ok=op != "power")
    y = p.operand(shape, dtype, {"divide": "pos", "power": "small"}.get(op, "normal"))
    psum = op != "power" and len(shape) == 2 and shape[1] <= 512 and p.r() < 0.2
    t = p.new_tile(shape, outdt, "psum" if psum else "sbuf")
    _tensor_tensor_emit(p, t, x, y, op)
    p.check("tensor_tensor.%s[%s %s%s->%s %s]" % (op, shape, dtype, "(psum)" if x.buf == "psum" else "",
                                                  outdt, t.buf), t,
            lambda env: alu(op, x.get(env), y.get(env), t.dtype, dtype))


def _psum_copy(p, x):
    """x copied into a PSUM tile of its dtype."""
    t = p.new_tile(x.shape, x.dtype, "psum", record=False)
    p.ndarray(t)
    p.emit("nisa.tensor_copy(dst=%s, src=%s)" % (t.name, x.name))
    return Copy(t, x)


class Copy:
    """A tile whose values are another's (an exact copy), for the models."""

    def __init__(self, tile, of):
        self.name, self.shape, self.dtype, self.buf = tile.name, tile.shape, tile.dtype, tile.buf
        self.of = of

    def get(self, env):
        return self.of.get(env)


def tensor_tensor_int(p):
    """All tiles int32 or all uint32.  NKI: with no engine given this runs
    on GpSimd in native integer arithmetic, exact for all 32-bit values;
    engine=vector, or an operand in PSUM (GpSimd cannot reach it), takes
    the fp32 path of float tiles instead."""
    shape = p.shape(nd=2, maxf=512)
    dtype = p.choice(INT32S)
    op = p.choice(TT_INT_OPS)
    kind = p.choice(["normal", "big"])
    x = p.operand(shape, dtype, kind)
    y = p.operand(shape, dtype, kind)
    how = p.choice(["default", "default", "default", "vector", "psum"])
    extra = ", engine=nisa.engine.vector" if how == "vector" else ""
    if how == "psum":
        x = _psum_copy(p, x)
    t = p.new_tile(shape, dtype)
    _tensor_tensor_emit(p, t, x, y, op, extra)
    p.check("tensor_tensor.%s[%s %s %s %s]" % (op, shape, dtype, kind, how), t,
            lambda env: alu(op, x.get(env), y.get(env), dtype, dtype, native=how == "default"))


def _ts_operand(p, P, op0):
    """tensor_scalar's operand: a number, a [P,1] tile or a column view."""
    if p.r() < 0.5:
        arith = op0 in ("add", "subtract", "multiply", "maximum", "minimum")
        c = p.column(P, p.choice(["pos", "small"]) if arith else "pos")
        return c.name, (lambda env: c.get(env))
    v = float(F32(p.rng.uniform(0.25, 3)))
    return repr(v), (lambda env: np.float64(v))


def _column_of(a, nd):
    """A [P,1] operand shaped to broadcast over an nd-dimensional tile."""
    a = f32(a)
    return a.reshape(a.shape[:1] + (1,) * (nd - 1)) if a.ndim else a


def _ts_place(p, shape, dtype, outdt):
    """dst in SBUF, in PSUM (fp32, 2-D, <= 512 columns) or in place."""
    place = p.choice(["sbuf", "sbuf", "psum", "inplace"])
    if place == "psum" and (len(shape) != 2 or shape[1] > 512):
        place = "sbuf"
    if place == "psum":
        outdt = "float32"
    if place == "inplace":
        outdt = dtype
    return place, outdt


def tensor_scalar(p):
    """One or two ops with reverse flags, in fp32 ("automatically casts
    data.dtype to float32"), one rounding to dst."""
    ops = ["add", "subtract", "multiply", "maximum", "minimum", "divide"]
    shape = p.shape()
    dtype = p.choice(FLOATS + ["int32"])
    x = p.operand(shape, dtype, psum_ok=True)
    op0 = p.choice(ops)
    s0, v0 = _ts_operand(p, shape[0], op0)
    r0 = p.r() < 0.4
    two = p.r() < 0.6
    op1 = p.choice(ops) if two else None
    s1, v1 = _ts_operand(p, shape[0], op0) if two else (None, None)
    r1 = two and p.r() < 0.4
    outdt = p.choice(FLOATS + ["int32"]) if dtype != "int32" else p.choice(["int32", "float32"])
    place, outdt = _ts_place(p, shape, dtype, outdt)
    t = p.new_tile(shape, outdt, "psum" if place == "psum" else "sbuf")
    p.ndarray(t)
    data = x.name
    if place == "inplace":
        p.emit("nisa.tensor_copy(dst=%s, src=%s)" % (t.name, x.name))
        data = t.name
    s = "nisa.tensor_scalar(dst=%s, data=%s, op0=nl.%s, operand0=%s, reverse0=%s" % (t.name, data, op0, s0, r0)
    if two:
        s += ", op1=nl.%s, operand1=%s, reverse1=%s" % (op1, s1, r1)
    p.emit(s + ")")

    def model(env):
        xa = f32(x.get(env))
        a0 = _column_of(v0(env), xa.ndim)
        m = fp32op(op0, a0, xa) if r0 else fp32op(op0, xa, a0)
        if two:
            a1 = _column_of(v1(env), xa.ndim)
            m = fp32op(op1, a1, m) if r1 else fp32op(op1, m, a1)
        return st(m, t.dtype), "exact", None
    p.check("tensor_scalar[%s%s,%s%s %s %s->%s %s]" % (op0, "(r)" if r0 else "", op1, "(r)" if r1 else "",
                                                      shape, dtype, outdt, place), t, model)


def ts_bitwise(p):
    """tensor_scalar bit-vector ops on int32 / uint8 with integer immediates."""
    shape = p.shape()
    dtype = p.choice(INTS)
    x = p.operand(shape, dtype)
    op0 = p.choice(["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"])
    v0 = p.randint(0, 8) if op0.endswith("shift") else p.randint(0, 256)
    two = p.r() < 0.5
    op1 = p.choice(["bitwise_and", "bitwise_or", "bitwise_xor"]) if two else None
    v1 = p.randint(0, 256) if two else None
    t = p.new_tile(shape, dtype)
    p.ndarray(t)
    s = "nisa.tensor_scalar(dst=%s, data=%s, op0=nl.%s, operand0=%d" % (t.name, x.name, op0, v0)
    if two:
        s += ", op1=nl.%s, operand1=%d" % (op1, v1)
    p.emit(s + ")")

    def model(env):
        r = alu(op0, x.get(env), np.float64(v0), dtype, dtype)[0]
        if two:
            r = alu(op1, r, np.float64(v1), dtype, dtype)[0]
        return r, "exact", None
    p.check("tensor_scalar.bitwise[%s,%s %s %s]" % (op0, op1, shape, dtype), t, model)


# activation function -> input data kind
ACT_FNS = {"exp": "small", "tanh": "normal", "sigmoid": "normal", "relu": "normal",
           "gelu": "normal", "silu": "normal", "copy": "normal", "square": "normal",
           "abs": "normal", "log": "pos", "sqrt": "pos", "rsqrt": "pos",
           "gelu_apprx_tanh": "normal", "softplus": "normal", "reciprocal": "pos"}


def _act_scale(p, P, pos):
    """(argument text, value(env)) of scale: none, a number, a [P,1] tile."""
    how = p.choice(["none", "num", "tile"])
    if how == "num":
        v = float(F32(p.rng.uniform(0.5, 1.5) if pos else p.rng.uniform(-1.5, 1.5)))
        return how, ", scale=%r" % v, (lambda env: np.float64(v))
    if how == "tile":
        c = p.load((P, 1), "float32", "near1") if pos else p.column(P, "small")
        return how, ", scale=%s" % c.name, (lambda env: c.get(env))
    return how, "", (lambda env: np.float64(1.0))


def _act_bias(p, P, pos):
    """(argument text, value(env)) of bias: none, a number, a [P,1] fp32/bf16 tile."""
    how = p.choice(["none", "num", "tile"])
    if how == "num":
        v = float(F32(p.rng.uniform(0.05, 0.5) if pos else p.rng.uniform(-1, 1)))
        return how, ", bias=%r" % v, (lambda env: np.float64(v))
    if how == "tile":
        b = p.load((P, 1), p.choice(["float32", "bfloat16"]), "pos" if pos else "small")
        return how, ", bias=%s" % b.name, (lambda env: b.get(env))
    return how, "", (lambda env: np.float64(0.0))


def _act_reduce_check(p, fn, zval, outdt, rr, shape):
    """reduce_op=add: NKI documents neither the order nor whether the sum is
    of the fp32 results or of dst's rounded values, so both are allowed."""
    def rmodel(env):
        o = unary(fn, as64(zval(env)), "float32")[0]
        mag = np.abs(o).sum(axis=1, keepdims=True)
        tol = (o.shape[1] + 6) * EPS["float32"] * mag + \
            np.abs(o - st(o, outdt)).sum(axis=1, keepdims=True) + 1e-30
        return o.sum(axis=1, keepdims=True), "abs", tol
    p.check("activation.%s.reduce_add[%s]" % (fn, shape), rr, rmodel)


def activation(p):
    """f(data * scale + bias), f in double on the fp32 z, one rounding."""
    fn = p.choice(sorted(ACT_FNS))
    shape = p.shape()
    dtype = p.choice(FLOATS)
    x = p.operand(shape, dtype, ACT_FNS[fn], psum_ok=True)
    P = shape[0]
    pos = ACT_FNS[fn] == "pos"
    sc, sarg, svf = _act_scale(p, P, pos)
    bi, barg, bvf = _act_bias(p, P, pos)
    args = sarg + barg
    red = p.r() < 0.35 and len(shape) == 2
    outdt = p.choice(FLOATS)
    psum = len(shape) == 2 and shape[1] <= 512 and p.r() < 0.25
    if psum:
        outdt = p.choice(["float32", "bfloat16"])
    t = p.new_tile(shape, outdt, "psum" if psum else "sbuf")
    p.ndarray(t)
    rr = None
    if red:
        rr = p.new_tile((P, 1), "float32")
        p.ndarray(rr)
        args += ", reduce_op=nl.add, reduce_res=%s, reduce_cmd=nisa.reduce_cmd.reset_reduce" % rr.name
    p.emit("nisa.activation(dst=%s, op=nl.%s, data=%s%s)" % (t.name, fn, x.name, args))

    def zval(env):
        xa = f32(x.get(env))
        return (xa * _column_of(svf(env), xa.ndim)).astype(F32) + _column_of(bvf(env), xa.ndim)
    p.check("activation.%s[%s %s%s sc=%s bi=%s ->%s %s]" % (fn, shape, dtype, "(psum)" if x.buf == "psum" else "",
                                                             sc, bi, outdt, t.buf), t,
            lambda env: unary(fn, as64(zval(env)), t.dtype))
    if red:
        _act_reduce_check(p, fn, zval, outdt, rr, shape)


def tensor_reduce(p):
    shape = p.shape()
    if p.r() < 0.2:
        dtype, op = "int32", p.choice(["bitwise_or", "bitwise_and", "maximum", "minimum"])
    else:
        dtype, op = p.choice(FLOATS), p.choice(["add", "maximum", "minimum", "multiply"])
    if dtype == "int32" and p.r() < 0.5:   # full range: arithmetic ops round through fp32 (NKI)
        x = p.load(shape, dtype, "big")
    else:
        x = p.operand(shape, dtype, "near1" if op == "multiply" else "normal", psum_ok=True)
    axes = [1] if len(shape) == 2 else p.choice([[2], [1, 2]])
    keep = p.r() < 0.5
    neg = p.r() < 0.3 and dtype != "int32"
    outdt = dtype if dtype == "int32" else p.choice(FLOATS)
    t = p.new_tile(reduced_shape(shape, axes, keep), outdt)
    p.ndarray(t)
    p.emit("nisa.tensor_reduce(dst=%s, op=nl.%s, data=%s, axis=%s, negate=%s, keepdims=%s)" %
           (t.name, op, x.name, tuple(axes), neg, keep))
    fn = {"add": "sum", "maximum": "max", "minimum": "min", "multiply": "prod",
          "bitwise_or": "or", "bitwise_and": "and"}[op]
    p.check("tensor_reduce.%s[%s axis=%s keep=%s neg=%s %s->%s]" % (op, shape, axes, keep, neg, dtype, outdt), t,
            lambda env: reduce_model(fn, x.get(env), tuple(axes), keep, t.dtype, neg))


def tensor_copy(p):
    """Between every pair of dtypes, on each engine, from SBUF or PSUM."""
    shape = p.shape()
    dtype = p.choice(FLOATS + INTS)
    outdt = p.choice(FLOATS + INTS)
    x = p.operand(shape, dtype, "normal", psum_ok=True)
    t = p.new_tile(shape, outdt)
    eng = p.choice(["", "", ", engine=nisa.engine.vector", ", engine=nisa.engine.gpsimd",
                    ", engine=nisa.engine.scalar"])
    p.ndarray(t)
    p.emit("nisa.tensor_copy(dst=%s, src=%s%s)" % (t.name, x.name, eng))
    p.check("tensor_copy[%s %s->%s%s]" % (shape, dtype, outdt, eng), t,
            lambda env: (st_from(x.get(env), dtype, t.dtype), "exact", None))
